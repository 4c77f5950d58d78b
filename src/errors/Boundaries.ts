/**
 * Token boundaries: an excerpt found only as part of a longer number or word
 * (`4,210` inside `4,210,000`), refused under `verify.boundaries: "tokens"`.
 * Under the default `"substring"` such an occurrence verifies: the core
 * property is that the excerpt occurs verbatim. docs/verification.md, token boundaries.
 *
 * @since 0.4.0
 */
import * as Schema from "effect/Schema"
import { TaggedError } from "./TaggedError.js"

/**
 * The snippet occurs in the capture, but each occurrence the verifier may use starts or ends inside a
 * number or word, and the policy is `verify.boundaries: "tokens"`. `span` is the first such
 * occurrence and `token` the text there widened to the whole tokens it cuts (at most 64 code units
 * each side), e.g. `4,210,000` for a quoted `4,210`.
 */
export class SnippetCutsToken extends TaggedError<SnippetCutsToken>()("SnippetCutsToken", {
  source: Schema.String,
  captureSha256: Schema.String,
  snippet: Schema.String,
  span: Schema.Struct({ start: Schema.NonNegativeInt, end: Schema.NonNegativeInt }),
  token: Schema.String
}) {
  override get message() {
    return `The snippet occurs in capture ${this.captureSha256.slice(0, 12)}… of ${this.source} only as part of a longer ` +
      `number or word (characters ${this.span.start}–${this.span.end}, within ${JSON.stringify(this.token)}); ` +
      `the policy is verify.boundaries: "tokens": quote whole numbers and words`
  }
}

/** The boundaries family: the one failure it adds to a fact's errors. */
export const BoundariesError = SnippetCutsToken
export type BoundariesError = SnippetCutsToken
