/**
 * What verification passes on: the report's facts as given, each cited fact
 * with the span where its excerpt occurs, and nothing that was not checked.
 *
 * It proves provenance only: each excerpt occurs verbatim in the exact capture
 * the report names. Whether the excerpt supports the fact's label (the right
 * metric, unit, period) is semantic review, which citegate does not perform.
 *
 * Output schemas carry no strictness annotation, because an annotation would
 * also apply when encoding the error instances inside (which own a `stack`).
 * Decode them with `decodeOptions` (unknown keys are errors) instead.
 *
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"
import { Mode, Outcome, VerifiedEntry, verifiedFormat } from "../Domain.js"
import { FactRejection } from "../Errors.js"
import { NumberReview } from "../review/Records.js"

export class VerifiedReport extends Schema.Class<VerifiedReport>("VerifiedReport")(
  {
    format: Schema.Literal(verifiedFormat),
    outcome: Outcome,
    mode: Mode,
    /** Accepted facts in report order; `index` is the position in the drafted report. */
    facts: Schema.Array(VerifiedEntry),
    /** In `drop` mode, the facts removed and why; always empty in `reject` mode. */
    retractions: Schema.Array(FactRejection),
    /** What was proved: verbatim provenance of each excerpt, nothing more. */
    proves: Schema.Literal("provenance-only"),
    /**
     * Provenance checking does not judge whether an excerpt means what its label says: `not-performed`,
     * unless the operator turned semantic review on (`review.numbers`), whose outcome is `numberReview`.
     */
    semanticReview: Schema.Literal("not-performed", "performed"),
    /** The structured-number adapter's outcome per verified citation (only under `review.numbers`). */
    numberReview: Schema.optional(NumberReview)
  }
) {}
