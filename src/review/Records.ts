/**
 * The records of semantic review by the structured-number adapter: the label
 * catalogue an operator writes (what each label means: metric, unit or
 * currency, period, value kind, missing-value conventions) and the outcome per
 * verified fact. Semantic review is its own outcome, never part of provenance.
 *
 * @since 0.3.0
 */
import * as Schema from "effect/Schema"
import { Label, NonBlankString } from "../Domain.js"
import { JudgeFailure } from "../errors/Judge.js"

const strict = { parseOptions: { onExcessProperty: "error" } } as const

/** Bounds of the catalogue (checked by its Schema, before any fact is reviewed). */
export const catalogueLimits = {
  labels: 1_000,
  terms: 16,
  aliases: 32,
  units: 16,
  missing: 16,
  termLength: 64,
  /** Words in one term: metric terms are matched as word n-grams up to this length. */
  termWords: 6,
  periodLength: 32
} as const

const boundedList = (max: number, what: string) =>
  <A, I>(item: Schema.Schema<A, I, never>) =>
    Schema.Array(item).pipe(
      Schema.filter((items) => items.length <= max || `must hold at most ${max} ${what}, got ${items.length}`)
    )

/** A term (metric term, alias, unit or missing-value marker): 1 to 64 characters, at most 6 words, one line. */
export const Term = NonBlankString.pipe(
  Schema.filter((s) =>
    s.length > catalogueLimits.termLength
      ? `must be at most ${catalogueLimits.termLength} characters`
      : /[\u0000-\u001f\u007f]/u.test(s)
      ? "must not contain control characters"
      : (s.match(/[\p{L}\p{N}]+/gu)?.length ?? 0) <= catalogueLimits.termWords ||
        `must have at most ${catalogueLimits.termWords} words`
  )
)

/** What the value of a label is. */
export const ValueKind = Schema.Literal("integer", "decimal", "percent", "currency-amount")
export type ValueKind = typeof ValueKind.Type

/** An ISO 4217 currency code the adapter recognises in text (symbol, code or word). */
export const Currency = Schema.Literal("USD", "EUR", "GBP", "JPY", "CHF", "CAD", "AUD", "INR", "CNY")
export type Currency = typeof Currency.Type

/** The missing-value conventions used when a label gives none. */
export const defaultMissing: ReadonlyArray<string> = ["n/a", "—", "not reported", "not available"]

/**
 * One label's meaning. `period` is a value (`Q3 2026`, `H1 2026`, `2026`, `FY2026`, `September 2026`,
 * `30 September 2026`, `2026-09-30`) or a pattern with `*` for the year (`Q3 *`) or the quarter (`Q* 2026`);
 * its grammar is checked where the catalogue is decoded (src/Config.ts).
 */
export const LabelSpec = Schema.Struct({
  label: Label,
  metric: Schema.Struct({
    terms: Schema.NonEmptyArray(Term).pipe(
      Schema.filter((t) => t.length <= catalogueLimits.terms || `must hold at most ${catalogueLimits.terms} terms`)
    ),
    aliases: Schema.optional(boundedList(catalogueLimits.aliases, "aliases")(Term))
  }).annotations({ ...strict, identifier: "MetricSpec" }),
  valueKind: ValueKind,
  /** Units a count or measure is stated in (`units`, `orders`); for integer and decimal values. */
  units: Schema.optional(boundedList(catalogueLimits.units, "units")(Term)),
  /** The currency of a `currency-amount`. */
  currency: Schema.optional(Currency),
  period: Schema.optional(NonBlankString.pipe(Schema.maxLength(catalogueLimits.periodLength))),
  /** Markers that mean "no value" (default: n/a, —, not reported, not available). */
  missing: Schema.optional(boundedList(catalogueLimits.missing, "missing-value markers")(Term))
}).annotations({ ...strict, identifier: "LabelSpec" })
export type LabelSpec = typeof LabelSpec.Type

/** `review.numbers`: off (default), report the outcome, or require consistency (a mismatch fails the fact). */
export const NumbersPolicy = Schema.Literal("off", "report", "require")
export type NumbersPolicy = typeof NumbersPolicy.Type

export const Aspect = Schema.Literal("metric", "period", "value-kind", "unit")
export type Aspect = typeof Aspect.Type

/**
 * One aspect that disagrees: what the catalogue expects, and the tokens found in the capture
 * (as written). `missing` is set when the capture states no value (a missing-value marker).
 */
export const Mismatch = Schema.Struct({
  aspect: Aspect,
  expected: Schema.Array(Schema.String),
  found: Schema.Array(Schema.String),
  missing: Schema.optional(Schema.Boolean)
}).annotations({ identifier: "NumberMismatch" })
export type Mismatch = typeof Mismatch.Type

/** The tokens the adapter read in the excerpt and its sentence, per aspect (empty when none). */
export const FoundTokens = Schema.Struct({
  metric: Schema.Array(Schema.String),
  period: Schema.Array(Schema.String),
  value: Schema.Array(Schema.String),
  unit: Schema.Array(Schema.String)
}).annotations({ identifier: "FoundTokens" })
export type FoundTokens = typeof FoundTokens.Type

const factFields = {
  index: Schema.NonNegativeInt,
  label: Schema.String,
  found: FoundTokens
}

export const Consistent = Schema.Struct({ outcome: Schema.Literal("consistent"), ...factFields })
export const Mismatched = Schema.Struct({
  outcome: Schema.Literal("mismatch"),
  ...factFields,
  /** Every aspect that disagrees, in a fixed order (metric, period, value-kind, unit); the first is the headline. */
  mismatches: Schema.NonEmptyArray(Mismatch)
})
export const NeedsReview = Schema.Struct({
  outcome: Schema.Literal("needs_review"),
  ...factFields,
  /** Why the adapter cannot decide (never a guess). */
  reasons: Schema.NonEmptyArray(Schema.String)
})
export const FactReview = Schema.Union(Consistent, Mismatched, NeedsReview)
export type FactReview = typeof FactReview.Type

export const adapterId = "numbers/1" as const

/** The adapter's outcome for one report: one entry per verified citation, in report order. */
export const NumberReview = Schema.Struct({
  adapter: Schema.Literal(adapterId),
  policy: Schema.Literal("report", "require"),
  facts: Schema.Array(FactReview)
}).annotations({ identifier: "NumberReview" })
export type NumberReview = typeof NumberReview.Type

// ---------------------------------------------------------------------------
// The entailment judge
// ---------------------------------------------------------------------------
/*
 * The entailment judge's records: the closed vocabulary of verdicts with their confidence bands, what
 * is asked (a claim and a verified quote), and the review every rendering shows beside provenance.
 *
 * A verdict says whether a quote (already proved verbatim) supports a claim. It never changes
 * provenance: a citation judged `contradicted` is still a verified excerpt, and a citation the judge
 * failed on is `error` with no score, never support.
 *
 */

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

// ---------------------------------------------------------------------------
// Recorded human review
// ---------------------------------------------------------------------------
/*
 * A reviewer's decision about one verified fact: does the excerpt (proved verbatim in its capture)
 * support the fact's label? Decisions are appended to the run's review log and never edited: a later
 * decision about the same fact supersedes the earlier one by being appended after it, and both stay.
 * A decision is bound to what was verified (the report's digest, the fact's label, source, capture
 * digest and span), so it can never drift onto another excerpt.
 */

export const decisionFormat = "citegate.review-decision/1" as const
export const decisionsFormat = "citegate.review-decisions/1" as const
export const humanReviewFormat = "citegate.human-review/1" as const

/** What a reviewer may decide about a verified fact. */
export const Decision = Schema.Literal(
  "supported",
  "wrong-metric",
  "wrong-unit",
  "wrong-period",
  "wrong-value-kind",
  "not-supported",
  "unsure"
)
export type Decision = typeof Decision.Type

/** Bounds of a decision (checked by its Schema before anything is verified or written). */
export const decisionLimits = {
  /** Code units of a note. */
  note: 2_000,
  /** Code units of a reviewer's identity. */
  reviewer: 200,
  /** Code units of the capture's text at the span kept in the decision (longer: cut, `excerptCut`). */
  excerpt: 1_000,
  /** Decisions one run's log holds; the next append is refused (`DecisionLogFull`). */
  perRun: 10_000,
  /** Bytes of one stored decision read back. */
  recordBytes: 64 * 1024
} as const

const controlExceptLineBreaks = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/u

/** A reviewer's note: at most 2,000 characters, well-formed, no control characters but tab and newline. */
export const DecisionNote = Schema.String.pipe(
  Schema.filter((s) =>
    s.length > decisionLimits.note
      ? `must be at most ${decisionLimits.note} characters, got ${s.length}`
      : !s.isWellFormed()
      ? "must be well-formed Unicode (no lone surrogates)"
      : !controlExceptLineBreaks.test(s) || "must not contain control or bidirectional-override characters (tab and newline are allowed)"
  )
)

/** Who decided: the service's token name, or the CLI's `--reviewer`. One line, 1 to 200 characters. */
export const Reviewer = NonBlankString.pipe(
  Schema.filter((s) =>
    s.length > decisionLimits.reviewer
      ? `must be at most ${decisionLimits.reviewer} characters`
      : !/[\u0000-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/u.test(s) || "must be one line without control characters"
  )
)

const Hex64 = Schema.String.pipe(Schema.filter((s) => /^[0-9a-f]{64}$/.test(s) || "must be 64 lowercase hex characters (SHA-256)"))

/** The fact a decision is about, as verification found it. */
export const DecisionFact = Schema.Struct({
  /** The fact's index in the drafted report (0-based, as in `citegate.result/1`). */
  index: Schema.NonNegativeInt,
  label: Schema.String,
  source: Schema.String,
  captureSha256: Hex64,
  span: Schema.Struct({ start: Schema.NonNegativeInt, end: Schema.NonNegativeInt }).annotations(strict),
  /** The capture's text at the span (what the reviewer judged), cut to `decisionLimits.excerpt`. */
  excerpt: Schema.String,
  excerptCut: Schema.Boolean
}).annotations({ ...strict, identifier: "DecisionFact" })
export type DecisionFact = typeof DecisionFact.Type

/** One recorded decision, as stored (filesystem file, PostgreSQL row) and decoded strictly. */
export const ReviewDecision = Schema.Struct({
  format: Schema.Literal(decisionFormat),
  id: Schema.UUID,
  run: Schema.String,
  /** What was reviewed: the SHA-256 of the drafted report's bytes. */
  report: Hex64,
  fact: DecisionFact,
  decision: Decision,
  note: DecisionNote,
  reviewer: Reviewer,
  recordedAt: Schema.String.pipe(
    Schema.filter((s) => /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/.test(s) || "must be an ISO 8601 UTC timestamp")
  )
}).annotations({ ...strict, identifier: "ReviewDecision" })
export type ReviewDecision = typeof ReviewDecision.Type

/** A decision with its place in the run's log (1, 2, …: the order of appending). */
export const RecordedDecision = Schema.Struct({
  seq: Schema.Int.pipe(Schema.greaterThanOrEqualTo(1)),
  record: ReviewDecision,
  /** The `seq` of the later decision about the same fact that supersedes this one (null: current). */
  supersededBy: Schema.NullOr(Schema.Int.pipe(Schema.greaterThanOrEqualTo(1)))
}).annotations({ identifier: "RecordedDecision" })
export type RecordedDecision = typeof RecordedDecision.Type

/** `run-pipeline review list --format json`, `GET /v1/runs/{id}/reviews`: the whole log, in order. */
export const DecisionLog = Schema.Struct({
  format: Schema.Literal(decisionsFormat),
  run: Schema.String,
  decisions: Schema.Array(RecordedDecision)
}).annotations({ identifier: "DecisionLog" })
export type DecisionLog = typeof DecisionLog.Type

/** The key of the fact a decision is about: a later decision with the same key supersedes an earlier one. */
export const decisionKey = (fact: {
  readonly label: string
  readonly source: string
  readonly captureSha256: string
  readonly span: { readonly start: number; readonly end: number }
}): string => JSON.stringify([fact.label, fact.source, fact.captureSha256, fact.span.start, fact.span.end])

/** The log in append order with `supersededBy` filled in. */
export const withHistory = (
  log: ReadonlyArray<{ readonly seq: number; readonly record: ReviewDecision }>
): ReadonlyArray<RecordedDecision> => {
  const latest = new Map<string, number>()
  const sorted = [...log].sort((a, b) => a.seq - b.seq)
  const out: Array<RecordedDecision> = []
  for (let i = sorted.length - 1; i >= 0; i--) {
    const entry = sorted[i]!
    const key = decisionKey(entry.record.fact)
    out.push({ ...entry, supersededBy: latest.get(key) ?? null })
    latest.set(key, entry.seq)
  }
  return out.reverse()
}

/** The decisions beside one verified report: per fact, its current decision and how many it superseded. */
export const HumanReview = Schema.Struct({
  format: Schema.Literal(humanReviewFormat),
  facts: Schema.Array(Schema.Struct({
    index: Schema.NonNegativeInt,
    current: RecordedDecision,
    /** Earlier decisions about the same fact, kept in the log. */
    superseded: Schema.NonNegativeInt
  })),
  proves: Schema.Literal("nothing: a person's recorded decision, beside provenance")
}).annotations({ identifier: "HumanReview" })
export type HumanReview = typeof HumanReview.Type
