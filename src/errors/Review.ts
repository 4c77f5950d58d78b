/**
 * Semantic review's failures. Provenance failures stay in their own family:
 * a `SemanticMismatch` says the excerpt IS in the capture but states another
 * metric, period, value kind or unit than the label's catalogue entry.
 *
 * @since 0.3.0
 */
import * as Schema from "effect/Schema"
import { Mismatch } from "../review/Records.js"
import { TaggedError } from "./TaggedError.js"

/**
 * Under `review.numbers: "require"`, the number adapter found that a verified excerpt does not state the
 * label's metric, period, value kind or unit (every disagreeing aspect listed, the first is the headline).
 * The excerpt's provenance is not in question.
 */
export class SemanticMismatch extends TaggedError<SemanticMismatch>()("SemanticMismatch", {
  source: Schema.String,
  captureSha256: Schema.String,
  mismatches: Schema.NonEmptyArray(Mismatch)
}) {
  override get message() {
    const first = this.mismatches[0]
    const found = first.found.map((t) => JSON.stringify(t)).join(", ")
    return `The excerpt (verified in ${this.captureSha256.slice(0, 12)}… of ${this.source}) states another ${first.aspect} ` +
      `than the label: expected ${first.expected.join(" / ")}, found ${found === "" ? "none" : found}` +
      (this.mismatches.length > 1 ? ` (and ${this.mismatches.slice(1).map((m) => m.aspect).join(", ")})` : "")
  }
}

/** Why semantic review failed a fact. */
export const ReviewError = Schema.Union(SemanticMismatch)
export type ReviewError = typeof ReviewError.Type
