/**
 * The number adapter's evaluation (docs/review.md): the labelled cases of fixtures/review/cases.json
 * (written by scripts/review-cases.mjs) run through `reviewFact`, with precision and recall per class.
 */
import { readFileSync } from "node:fs"
import * as Schema from "effect/Schema"
import { compile } from "../src/review/Catalogue.js"
import { reviewFact } from "../src/review/Numbers.js"
import { LabelSpec } from "../src/review/Records.js"
import { fixturePath } from "./support.js"

export const classes = ["correct", "wrong-metric", "wrong-unit", "wrong-period", "wrong-value-kind", "missing"] as const
export type Class = typeof classes[number]

export interface Case {
  readonly id: string
  readonly class: Class
  readonly label: string
  readonly text: string
  readonly excerpt: string
  readonly note: string
}

const file = JSON.parse(readFileSync(fixturePath("review", "cases.json"), "utf8")) as {
  readonly catalogue: ReadonlyArray<unknown>
  readonly cases: ReadonlyArray<Case>
}
export const cases = file.cases
export const catalogue = compile(file.catalogue.map((spec) => Schema.decodeUnknownSync(LabelSpec)(spec)))

/** What the adapter said, as a class: its first mismatch's aspect, `missing`, `correct`, or `needs_review`. */
export type Predicted = Class | "needs_review"

export const predict = (c: Case): { readonly predicted: Predicted; readonly detail: string } => {
  const start = c.text.indexOf(c.excerpt)
  if (start < 0) throw new Error(`${c.id}: the excerpt is not in the text`)
  const review = reviewFact(catalogue, { index: 0, label: c.label }, c.text, { start, end: start + c.excerpt.length })
  switch (review.outcome) {
    case "consistent":
      return { predicted: "correct", detail: "consistent" }
    case "needs_review":
      return { predicted: "needs_review", detail: review.reasons.join("; ") }
    case "mismatch": {
      const first = review.mismatches[0]
      const predicted: Class = first.missing === true ? "missing" : `wrong-${first.aspect}` as Class
      return { predicted, detail: review.mismatches.map((m) => `${m.aspect}: expected ${m.expected.join(" / ")}, found ${m.found.join(", ")}`).join("; ") }
    }
  }
}

export interface Row {
  readonly class: Class
  readonly cases: number
  readonly predicted: number
  readonly truePositives: number
  readonly precision: number
  readonly recall: number
  readonly needsReview: number
}

export const evaluate = () => {
  const outcomes = cases.map((c) => ({ case: c, ...predict(c) }))
  const rows: Array<Row> = classes.map((cls) => {
    const actual = outcomes.filter((o) => o.case.class === cls)
    const predicted = outcomes.filter((o) => o.predicted === cls)
    const truePositives = predicted.filter((o) => o.case.class === cls).length
    return {
      class: cls,
      cases: actual.length,
      predicted: predicted.length,
      truePositives,
      precision: predicted.length === 0 ? 1 : truePositives / predicted.length,
      recall: actual.length === 0 ? 1 : truePositives / actual.length,
      needsReview: actual.filter((o) => o.predicted === "needs_review").length
    }
  })
  const errors = outcomes.filter((o) => o.predicted !== o.case.class)
  return { outcomes, rows, errors }
}
