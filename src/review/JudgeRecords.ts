/**
 * The entailment judge's records: the closed vocabulary of verdicts with their confidence bands, what
 * is asked (a claim and a verified quote), and the review every rendering shows beside provenance.
 *
 * A verdict says whether a quote (already proved verbatim) supports a claim. It never changes
 * provenance: a citation judged `contradicted` is still a verified excerpt, and a citation the judge
 * failed on is `error` with no score, never support.
 *
 * @since 0.3.0
 */
import * as Schema from "effect/Schema"
import { JudgeFailure } from "../errors/Judge.js"

/** The verdicts a judge may return. */
export const Verdict = Schema.Literal("entailed", "partially_entailed", "overstated", "insufficient", "contradicted")
export type Verdict = typeof Verdict.Type

/** Each verdict's confidence band, inclusive. A confidence outside its verdict's band is refused. */
export const bands: { readonly [V in Verdict]: readonly [number, number] } = {
  entailed: [0.9, 1.0],
  partially_entailed: [0.5, 0.8],
  overstated: [0.3, 0.6],
  insufficient: [0.1, 0.4],
  contradicted: [0.0, 0.0]
}

/** Verdicts that count as support (of a claim by a citation). Nothing else ever does, `error` least of all. */
export const supporting: ReadonlySet<string> = new Set<Verdict>(["entailed", "partially_entailed"])

/** The verdict of one citation, or `error` (the judge failed; no score). */
export const Outcome = Schema.Literal(...Verdict.literals, "error")
export type Outcome = typeof Outcome.Type

/** The prompt's version: printed by `run-pipeline judge-prompt`, recorded in every review. */
export const promptVersion = "judge/1" as const

export const judgeReviewFormat = "citegate.judge-review/1" as const

/** One question to the judge: does `quote` support `claim`? `id` is echoed back. */
export interface JudgeItem {
  readonly id: string
  readonly claim: string
  readonly quote: string
}

/** The judge's answer for one item: a verdict in its band, or the failure that left it unjudged. */
export type JudgeResult =
  | { readonly id: string; readonly verdict: Verdict; readonly confidence: number }
  | { readonly id: string; readonly verdict: "error"; readonly error: JudgeFailure }

/** One judged citation. `score` = min(textMatch, confidence); null when the judge failed. */
export const CitationJudgement = Schema.Struct({
  /** Index of the claim in the drafted answer (of the fact in the drafted report). */
  claimIndex: Schema.NonNegativeInt,
  claimId: Schema.String,
  /** Index of the citation in its claim (0 for a report's fact). */
  citationIndex: Schema.NonNegativeInt,
  verdict: Outcome,
  confidence: Schema.NullOr(Schema.Number.pipe(Schema.between(0, 1))),
  /** 1 for a verbatim match; the normalised similarity (quote vs the capture's text at the span) otherwise. */
  textMatch: Schema.Number.pipe(Schema.between(0, 1)),
  score: Schema.NullOr(Schema.Number.pipe(Schema.between(0, 1))),
  /** Whether the claim or the quote was cut to the judge's limit before it was sent. */
  cut: Schema.Boolean,
  error: Schema.optional(JudgeFailure)
}).annotations({ identifier: "CitationJudgement" })
export type CitationJudgement = typeof CitationJudgement.Type

/** A claim's summary: supported when at least one of its citations is judged `entailed` or `partially_entailed`. */
export const ClaimJudgement = Schema.Struct({
  claimIndex: Schema.NonNegativeInt,
  claimId: Schema.String,
  citations: Schema.NonNegativeInt,
  supported: Schema.Boolean,
  /** The best score of its citations (null when every one is `error`). */
  bestScore: Schema.NullOr(Schema.Number.pipe(Schema.between(0, 1))),
  /** The verdict of its best-scored citation (`error` when none was judged). */
  verdict: Outcome
}).annotations({ identifier: "ClaimJudgement" })
export type ClaimJudgement = typeof ClaimJudgement.Type

export const JudgeSummary = Schema.Struct({
  citations: Schema.NonNegativeInt,
  entailed: Schema.NonNegativeInt,
  partially_entailed: Schema.NonNegativeInt,
  overstated: Schema.NonNegativeInt,
  insufficient: Schema.NonNegativeInt,
  contradicted: Schema.NonNegativeInt,
  error: Schema.NonNegativeInt,
  claims: Schema.NonNegativeInt,
  claimsSupported: Schema.NonNegativeInt,
  /** The lowest claim's best score: the answer is as supported as its weakest claim (null: some claim has no judged citation). */
  minClaimScore: Schema.NullOr(Schema.Number.pipe(Schema.between(0, 1))),
  /** Every claim supported and no citation `error`. */
  supported: Schema.Boolean
}).annotations({ identifier: "JudgeSummary" })
export type JudgeSummary = typeof JudgeSummary.Type

/** The judge's outcome of one verification: its own section, never merged with provenance. */
export const JudgeReview = Schema.Struct({
  format: Schema.Literal(judgeReviewFormat),
  prompt: Schema.Literal(promptVersion),
  provider: Schema.String,
  model: Schema.String,
  /** `require`: an unsupported claim fails the run (exit 1); `report`: shown only. */
  mode: Schema.Literal("report", "require"),
  citations: Schema.Array(CitationJudgement),
  claims: Schema.Array(ClaimJudgement),
  summary: JudgeSummary,
  /** What a verdict is: a model's reading, not proof. Provenance is proved separately. */
  proves: Schema.Literal("nothing: a model's judgement of support, beside provenance")
}).annotations({ identifier: "JudgeReview" })
export type JudgeReview = typeof JudgeReview.Type
