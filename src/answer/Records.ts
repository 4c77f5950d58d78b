/**
 * The records of answers: prose claims with inline citations as a drafting
 * model proposes them (`citegate.answer/1`), and the verified answer citegate
 * returns. Strict like every citegate record: unknown keys are decode errors.
 *
 * A citation names its source either by URL and capture digest, or by its
 * number in the run's manifest (`[1]…[n]`); numbered handles are bound to
 * this run's captures only when the answer names this run's manifest digest.
 *
 * @since 0.1.0
 */
import * as Data from "effect/Data"
import * as Schema from "effect/Schema"
import { type CaptureRecord, Evidence, Mode, NonBlankString, Outcome, QuoteContext, Sha256Hex } from "../Domain.js"
import { type AnswerError, CitationError, UncitedSentence } from "../Errors.js"

const strict = { parseOptions: { onExcessProperty: "error" } } as const

export const answerFormat = "citegate.answer/1" as const
export const verifiedAnswerFormat = "citegate.verified-answer/1" as const

/** Limits checked before any expensive work (documented in docs/answers.md). */
export const limits = {
  /** UTF-16 code units of a drafted answer (EVI1 text, answer JSON, Anthropic response). */
  maxChars: 16 * 1024 * 1024,
  maxClaims: 10_000,
  /** Citations of all claims together: with the claim limit, this bounds every verified answer and its renderings. */
  maxCitations: 20_000,
  maxCitationsPerClaim: 100,
  /** Uncited sentences that need a citation: past it the answer is refused, so every list of findings is bounded. */
  maxUncitedFindings: 1_000
} as const

/** A half-open range `start…end` (end exclusive) of non-negative integers, at least `min`. */
const range = (min: number, identifier: string) =>
  Schema.Struct({
    start: Schema.Int.pipe(Schema.greaterThanOrEqualTo(min)),
    end: Schema.Int.pipe(Schema.greaterThanOrEqualTo(min))
  }).annotations({ ...strict, identifier }).pipe(
    Schema.filter((r) => r.end > r.start || "end must be greater than start (end is exclusive)")
  )

/**
 * Pages, 1-based, end exclusive (as Anthropic's `page_location`): the quote must lie within pages
 * `start` to `end - 1` of the capture (checked by the Verifier, as a report's `page`).
 */
export const PageRange = range(1, "PageRange")
/** Content blocks, 0-based, end exclusive. No capture has content blocks: `AnchorUnsupported`. */
export const BlockRange = range(0, "BlockRange")

const headingExpected =
  'expected the heading path in the same form as a report\'s "heading": an array of 1 to 6 heading texts, ' +
  'outermost first, each non-blank and at most 1000 characters, e.g. ["Results", "Q3"] (the paths are listed ' +
  "in the documents hand-off and the capture record's headings)"

/**
 * A heading path, in the same form as a report's `heading` (`Domain.CitedFact`): the quote must lie
 * in a section with exactly this path (checked by the Verifier).
 */
export const HeadingPath = Schema.NonEmptyArray(NonBlankString.pipe(Schema.maxLength(1_000))).pipe(
  Schema.maxItems(6),
  Schema.annotations({ identifier: "HeadingPath", message: () => ({ message: headingExpected, override: true }) })
)
/** Unicode code points of the capture text, 0-based, end exclusive: the quote must occur exactly there. */
export const CharRange = range(0, "CharRange")

const locationFields = {
  quote: NonBlankString,
  page: Schema.optional(PageRange),
  heading: Schema.optional(HeadingPath),
  blocks: Schema.optional(BlockRange),
  chars: Schema.optional(CharRange),
  /** Capture text right before the quote (as a TextQuoteSelector's): picks one of several occurrences. */
  prefix: Schema.optional(QuoteContext),
  /** Capture text right after the quote: picks one of several occurrences. */
  suffix: Schema.optional(QuoteContext)
}

/** A citation resolved to an exact source and capture. */
export const Citation = Schema.Struct({
  source: NonBlankString,
  captureSha256: Sha256Hex,
  ...locationFields
}).annotations({ ...strict, identifier: "Citation" })
export type Citation = typeof Citation.Type

/** A citation by its number in the run's manifest; source and digest are filled in from the manifest. */
export const NumberedCitation = Schema.Struct({
  source: Schema.Int.pipe(Schema.greaterThanOrEqualTo(1)),
  ...locationFields
}).annotations({ ...strict, identifier: "NumberedCitation" })
export type NumberedCitation = typeof NumberedCitation.Type

export const DraftCitation = Schema.Union(Citation, NumberedCitation)
export type DraftCitation = typeof DraftCitation.Type

export const ClaimId = NonBlankString.pipe(Schema.maxLength(200))

export const Claim = Schema.Struct({
  id: ClaimId,
  text: NonBlankString,
  citations: Schema.NonEmptyArray(DraftCitation).pipe(Schema.maxItems(limits.maxCitationsPerClaim))
}).annotations({ ...strict, identifier: "Claim" })
export type Claim = typeof Claim.Type

const uniqueIds = (claims: ReadonlyArray<{ readonly id: string }>) => {
  const seen = new Set<string>()
  for (const claim of claims) {
    if (seen.has(claim.id)) return `claim ids must be unique: ${JSON.stringify(claim.id)} appears more than once`
    seen.add(claim.id)
  }
  return true
}

/**
 * A drafted answer. `manifest` names the manifest the model drafted against;
 * required as soon as a citation is numbered. `uncited` holds the sentences the
 * drafter wrote without a citation (checked by the uncited-sentence rule).
 */
export const Answer = Schema.Struct({
  format: Schema.Literal(answerFormat),
  manifest: Schema.optional(Sha256Hex),
  claims: Schema.Array(Claim).pipe(Schema.maxItems(limits.maxClaims), Schema.filter(uniqueIds)),
  uncited: Schema.optional(Schema.Array(Schema.String))
}).annotations({ ...strict, identifier: "Answer" })
export type Answer = typeof Answer.Type

/** A sentence without a citation, with its 1-based line where the format has lines. */
export interface UncitedText {
  readonly text: string
  readonly line: number | null
}

/** An answer whose every citation names an exact source and capture: what the Answers service verifies. */
export interface BoundAnswer {
  readonly manifest: Sha256Hex | null
  readonly claims: ReadonlyArray<{ readonly id: string; readonly text: string; readonly citations: ReadonlyArray<Citation> }>
  readonly uncited: ReadonlyArray<UncitedText>
}

// ---------------------------------------------------------------------------
// Verified answers
// ---------------------------------------------------------------------------

// Output schemas holding error instances carry no strictness annotation (it would also apply when
// encoding the errors, which own a `stack`); decode them with `decodeOptions` instead.

/** A citation whose quote was found verbatim (and, with `chars`, exactly there). `index` is its position in the claim. */
export const VerifiedAnswerCitation = Schema.Struct({
  index: Schema.NonNegativeInt,
  citation: Citation,
  evidence: Evidence
}).annotations({ ...strict, identifier: "VerifiedAnswerCitation" })
export type VerifiedAnswerCitation = typeof VerifiedAnswerCitation.Type

/** A failed citation (one entry per failure). */
export const RetractedCitation = Schema.Struct({
  index: Schema.NonNegativeInt,
  citation: Citation,
  error: CitationError
}).annotations({ identifier: "RetractedCitation" })
export type RetractedCitation = typeof RetractedCitation.Type

/** A claim with at least one verified citation; its failed citations are listed as retracted. */
export const GroundedClaim = Schema.Struct({
  index: Schema.NonNegativeInt,
  id: Schema.String,
  text: Schema.String,
  citations: Schema.NonEmptyArray(VerifiedAnswerCitation),
  retracted: Schema.Array(RetractedCitation)
}).annotations({ identifier: "GroundedClaim" })
export type GroundedClaim = typeof GroundedClaim.Type

/** A claim that lost every citation: removed from the answer with its text, kept here for the audit. */
export const RemovedClaim = Schema.Struct({
  index: Schema.NonNegativeInt,
  id: Schema.String,
  text: Schema.String,
  reasons: Schema.NonEmptyArray(RetractedCitation)
}).annotations({ identifier: "RemovedClaim" })
export type RemovedClaim = typeof RemovedClaim.Type

export const AnswerSummary = Schema.Struct({
  claims: Schema.NonNegativeInt,
  claimsGrounded: Schema.NonNegativeInt,
  claimsRemoved: Schema.NonNegativeInt,
  citations: Schema.NonNegativeInt,
  citationsVerified: Schema.NonNegativeInt
}).annotations({ ...strict, identifier: "AnswerSummary" })
export type AnswerSummary = typeof AnswerSummary.Type

/**
 * The verified answer. `claims` is the answer that may be published (each
 * claim grounded); `removed` and every claim's `retracted` are the audit of
 * what drop mode took out; `uncited` lists the uncited sentences that need a
 * citation (under `answers.uncited: "report"`).
 */
export const VerifiedAnswer = Schema.Struct({
  format: Schema.Literal(verifiedAnswerFormat),
  outcome: Outcome,
  mode: Mode,
  manifest: Schema.NullOr(Sha256Hex),
  claims: Schema.Array(GroundedClaim),
  removed: Schema.Array(RemovedClaim),
  uncited: Schema.Array(UncitedSentence),
  summary: AnswerSummary,
  proves: Schema.Literal("provenance-only"),
  semanticReview: Schema.Literal("not-performed")
}).annotations({ identifier: "VerifiedAnswer" })
export type VerifiedAnswer = typeof VerifiedAnswer.Type

/**
 * Kinds of quantity-free sentences that need no citation (`answers.needsCitation.exempt`): a Markdown
 * heading, a question, a lead-in ending with `:`, a framing sentence (every word about the answer or
 * its sources: "Based on the documents, here is a summary."), a statement that the sources do not say
 * something ("The sources do not state the return rate."). A sentence stating a quantity is never exempt.
 */
export const Exemption = Schema.Literal("heading", "question", "lead-in", "framing", "unavailable")
export type Exemption = typeof Exemption.Type

/** Which uncited sentences need a citation (see `Sentences.needsCitation`). */
export interface CitationRule {
  /** A quantity-free sentence of at least this many code points needs a citation unless exempt. */
  readonly minLength: number
  readonly exempt: ReadonlyArray<Exemption>
}

export const defaultCitationRule: CitationRule = {
  minLength: 20,
  exempt: ["heading", "question", "lead-in", "framing", "unavailable"]
}

/** `answers.uncited` in pipeline.json: whether an uncited factual-looking sentence rejects the answer. */
export const UncitedPolicy = Schema.Literal("reject", "report")
export type UncitedPolicy = typeof UncitedPolicy.Type

/**
 * What an answer rendering shows: a verified answer with the captures it was
 * verified against, or why it was rejected. A record, so that the answer
 * renderers (answer/Render.ts) and the repair instructions (render/Repair.ts)
 * share it without one importing the other.
 */
export type AnswerRendering = Data.TaggedEnum<{
  Verified: {
    readonly answer: VerifiedAnswer
    readonly captures: ReadonlyMap<string, CaptureRecord>
    /** The matching policy in force (`verify.matching`): every page header states it when given. */
    readonly matching?: string | undefined
  }
  Rejected: { readonly error: AnswerError; readonly matching?: string | undefined }
}>
export const AnswerRendering = Data.taggedEnum<AnswerRendering>()
