/**
 * Visibility: an excerpt drawn from text no reader sees on the page, refused
 * under `verify.hidden: "reject"` (under the default `"mark"` it is accepted
 * and its evidence says `visibility: "hidden"`). docs/verification.md, hidden text.
 *
 * @since 0.4.0
 */
import * as Schema from "effect/Schema"
import { HiddenKind } from "../Domain.js"
import { TaggedError } from "./TaggedError.js"

/**
 * The excerpt occurs in the capture, but overlaps text a reader does not see
 * (`hiddenBy`: invisible, background-coloured, tiny or off-page text of a PDF),
 * and the policy is `verify.hidden: "reject"`. `span` is where it was found.
 */
export class HiddenEvidence extends TaggedError<HiddenEvidence>()("HiddenEvidence", {
  source: Schema.String,
  captureSha256: Schema.String,
  snippet: Schema.String,
  span: Schema.Struct({ start: Schema.NonNegativeInt, end: Schema.NonNegativeInt }),
  page: Schema.optional(Schema.Int),
  hiddenBy: Schema.NonEmptyArray(HiddenKind)
}) {
  override get message() {
    const where = this.page === undefined ? "" : ` on page ${this.page}`
    return `The snippet occurs in capture ${this.captureSha256.slice(0, 12)}… of ${this.source}${where} ` +
      `(characters ${this.span.start}–${this.span.end}), but as text no reader sees (${hiddenLabel(this.hiddenBy)}); ` +
      `the policy is verify.hidden: "reject": quote the text the page shows`
  }
}

/** The visibility family: the one failure it adds to a fact's errors. */
export const VisibilityError = HiddenEvidence
export type VisibilityError = HiddenEvidence

/** Words for the kinds of hidden text, for every rendering. */
export const hiddenKindLabels: Record<typeof HiddenKind.Type, string> = {
  ocr: "recognised text (OCR) of a scanned page, drawn invisibly over its image",
  invisible: "text drawn invisibly (PDF render mode 3 or no opacity) over no image",
  background: "text in the colour of what lies beneath it",
  tiny: "text smaller than 1 pt",
  offpage: "text outside the page's visible area"
}

export const hiddenLabel = (kinds: ReadonlyArray<typeof HiddenKind.Type>): string =>
  kinds.map((kind) => hiddenKindLabels[kind]).join("; ")
