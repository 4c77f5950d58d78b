/**
 * `review`: semantic review (the number adapter, the judge, the label catalogue).
 */
import * as Schema from "effect/Schema"
import { JudgeConfig } from "../review/JudgeConfig.js"
import { parseExpected } from "../review/Period.js"
import { catalogueLimits, LabelSpec, NumbersPolicy } from "../review/Records.js"
import { strict, unique } from "./Common.js"

/** One catalogue entry, with the checks that need more than one field: a readable period, a currency only for amounts. */
const CatalogueEntry = LabelSpec.pipe(
  Schema.filter((spec) =>
    spec.period !== undefined && parseExpected(spec.period) === undefined
      ? {
        path: ["period"],
        message: "must be a period such as `Q3 2026`, `H1 2026`, `2026`, `FY2026`, `September 2026`, " +
          "`30 September 2026`, `2026-09-30`, or a pattern `Q3 *` (any year) / `Q* 2026` (any quarter)"
      }
      : spec.valueKind === "currency-amount" && spec.currency === undefined
      ? { path: ["currency"], message: "a currency-amount label must name its currency" }
      : spec.valueKind !== "currency-amount" && spec.currency !== undefined
      ? { path: ["currency"], message: "only a currency-amount label has a currency" }
      : true
  )
)

/**
 * Semantic review (docs/review.md), kept apart from provenance. `numbers`: the structured-number
 * adapter, `off` (default: reports are exactly as without review), `report` (its outcome is shown
 * with every rendering) or `require` (a mismatch fails the fact: `SemanticMismatch`).
 */
export const ReviewOptions = Schema.Struct({
  numbers: Schema.optional(NumbersPolicy),
  /** The entailment judge (review/JudgeConfig.ts). */
  judge: Schema.optional(JudgeConfig),
  catalogue: Schema.optional(
    Schema.Array(CatalogueEntry).pipe(
      Schema.filter((c) =>
        c.length <= catalogueLimits.labels || `must hold at most ${catalogueLimits.labels} labels, got ${c.length}`
      ),
      Schema.filter((c) => unique("catalogue labels")(c.map((spec) => spec.label)))
    )
  )
}).annotations({ ...strict, identifier: "ReviewOptions" })
export type ReviewOptions = typeof ReviewOptions.Type
