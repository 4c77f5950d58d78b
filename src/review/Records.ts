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
