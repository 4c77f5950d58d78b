/**
 * The documents hand-off's error: the run's capture texts passing the hand-off limit.
 *
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"
import { TaggedError } from "./TaggedError.js"

// ---------------------------------------------------------------------------
// The documents hand-off (`sources --format documents|anthropic|bedrock|evi1`, GET /v1/runs/{id}/documents)
// ---------------------------------------------------------------------------

/** The run's capture texts together pass the hand-off's character limit; reading stopped at the source that passed it. */
export class DocumentsTooLarge extends TaggedError<DocumentsTooLarge>()("DocumentsTooLarge", {
  maxChars: Schema.Int,
  /** UTF-16 code units of capture text read up to and including `source`. */
  chars: Schema.Int,
  /** The manifest number and URL of the source whose text passed the limit. */
  number: Schema.Int,
  source: Schema.String
}) {
  override get message() {
    return `The run's capture texts pass the hand-off limit of ${this.maxChars} characters at source ${this.number} ` +
      `(${this.source}): ${this.chars} characters so far. Hand the model fewer sources (a smaller configuration) or raise the limit`
  }
}
