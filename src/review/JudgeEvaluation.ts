/**
 * The judge's evaluation: labelled cases (a claim, a verified quote, the verdicts a careful reader
 * accepts) run through a `Judge`, with agreement per expected class and every miss listed. Run against
 * a real endpoint with `scripts/judge-eval.ts` (docs/review.md); tested against a loopback endpoint.
 *
 * A judge `error` is a miss, never a pass: the evaluation counts it apart.
 *
 * @since 0.3.0
 */
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import type { JudgeShape } from "./Judge.js"
import { Verdict } from "./Records.js"

const strict = { parseOptions: { onExcessProperty: "error" } } as const

export const JudgeCase = Schema.Struct({
  id: Schema.String.pipe(Schema.pattern(/^[a-z0-9-]{1,64}$/)),
  claim: Schema.NonEmptyString,
  quote: Schema.NonEmptyString,
  expect: Schema.NonEmptyArray(Verdict)
}).annotations(strict)
export type JudgeCase = typeof JudgeCase.Type

export const JudgeCases = Schema.Struct({
  format: Schema.Literal("citegate.judge-cases/1"),
  note: Schema.optional(Schema.String),
  cases: Schema.NonEmptyArray(JudgeCase).pipe(Schema.maxItems(10_000))
}).annotations(strict)
export type JudgeCases = typeof JudgeCases.Type

export const decodeCases = Schema.decodeUnknownSync(Schema.parseJson(JudgeCases), { errors: "all", onExcessProperty: "error" })

export interface Evaluation {
  readonly cases: number
  readonly agreed: number
  readonly errors: number
  readonly misses: ReadonlyArray<{ readonly id: string; readonly expected: ReadonlyArray<string>; readonly got: string; readonly detail?: string }>
}

/** Runs every case through the judge (one call: its batches, concurrency and deadline apply). */
export const evaluate = (judge: JudgeShape, cases: ReadonlyArray<JudgeCase>): Effect.Effect<Evaluation> =>
  Effect.map(judge.judge(cases.map((c) => ({ id: c.id, claim: c.claim, quote: c.quote }))), (results) => {
    const misses: Array<Evaluation["misses"][number]> = []
    let errors = 0
    results.forEach((r, i) => {
      const c = cases[i]!
      if (r.verdict === "error") {
        errors++
        misses.push({ id: c.id, expected: c.expect, got: "error", detail: `${r.error._tag}: ${r.error.message}` })
      } else if (!(c.expect as ReadonlyArray<string>).includes(r.verdict)) {
        misses.push({ id: c.id, expected: c.expect, got: `${r.verdict} ${r.confidence}` })
      }
    })
    return { cases: cases.length, agreed: cases.length - misses.length, errors, misses }
  })

/** The evaluation as text: agreement, then every miss. */
export const report = (e: Evaluation): string =>
  [
    `agreement: ${e.agreed} of ${e.cases} cases (${e.errors} judge errors, counted as misses)`,
    ...e.misses.map((m) => `MISS ${m.id}: expected ${m.expected.join(" | ")}, got ${m.got}${m.detail === undefined ? "" : ` (${m.detail})`}`)
  ].join("\n") + "\n"
