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
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"
import * as SchemaAST from "effect/SchemaAST"
import type { JudgeReview } from "../review/Records.js"
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

/** A draft citation is by number when its `source` is a number: that shape alone picks the member. */
const isNumbered = (input: unknown): boolean =>
  typeof input === "object" && input !== null && typeof (input as { readonly source?: unknown }).source === "number"

/**
 * A citation by URL and digest, or by number. Decoded by the member the input's shape selects (a
 * numeric `source` is a `NumberedCitation`, anything else a `Citation`), so an error names only the
 * branch that applies: a plain union would also list the other member's complaints. Accepts the same
 * inputs as `Schema.Union(Citation, NumberedCitation)`, whose JSON Schema it keeps.
 */
export const DraftCitation: Schema.Schema<
  Citation | NumberedCitation,
  typeof Citation.Encoded | typeof NumberedCitation.Encoded
> = Schema.declare<
  Citation | NumberedCitation,
  typeof Citation.Encoded | typeof NumberedCitation.Encoded,
  readonly [typeof Citation, typeof NumberedCitation]
>(
  [Citation, NumberedCitation],
  {
    decode: (explicit, numbered) => (input, options) =>
      isNumbered(input) ? ParseResult.decodeUnknown(numbered)(input, options) : ParseResult.decodeUnknown(explicit)(input, options),
    encode: (explicit, numbered) => (input, options) =>
      isNumbered(input) ? ParseResult.encodeUnknown(numbered)(input, options) : ParseResult.encodeUnknown(explicit)(input, options)
  },
  { [SchemaAST.SurrogateAnnotationId]: Schema.Union(Citation, NumberedCitation).ast }
)
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

/**
 * A claim of a bound answer. Provider formats add `documents` (document-level citations resolved to
 * an approved capture) and `unresolved` (citations that failed before matching, with their typed
 * error); both are set on every claim of a provider answer. A claim's citation indices count
 * `citations`, then `documents`, then `unresolved`.
 */
export interface BoundClaim {
  readonly id: string
  readonly text: string
  readonly citations: ReadonlyArray<Citation>
  readonly documents?: ReadonlyArray<DocumentCitation> | undefined
  readonly unresolved?: ReadonlyArray<{ readonly citation: DocumentCitation | UnresolvedCitation; readonly error: CitationError }> | undefined
}

/** An answer whose every citation names an exact source and capture: what the Answers service verifies. */
export interface BoundAnswer {
  readonly manifest: Sha256Hex | null
  readonly claims: ReadonlyArray<BoundClaim>
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

// ---------------------------------------------------------------------------
// Document-level citations (provider formats: docs/answers.md, "Provider formats")
// ---------------------------------------------------------------------------

/**
 * `answers.citations`: a citation naming a whole document (no quote) is a `CoarseCitation` failure
 * (`quote`, the default) or accepted as its own labelled outcome (`document`), never a verified quote.
 */
export const CitationsPolicy = Schema.Literal("quote", "document")
export type CitationsPolicy = typeof CitationsPolicy.Type

/** The label every rendering puts on an accepted document-level citation. */
export const documentLevelLabel = "document-level: no quote verified" as const

/** A citation naming a whole document, resolved to an approved source (exact URL or declared document id) and its capture. */
export const DocumentCitation = Schema.Struct({
  level: Schema.Literal("document"),
  /** The answer format it came from (`openai`, `cohere`, `gemini`, `bedrock`). */
  format: Schema.String,
  /** What the provider named: a URL, a file or document id. */
  document: Schema.String,
  source: Schema.String,
  captureSha256: Sha256Hex
}).annotations({ ...strict, identifier: "DocumentCitation" })
export type DocumentCitation = typeof DocumentCitation.Type

/** A provider citation whose document could not be tied to an approved source: what it named. */
export const UnresolvedCitation = Schema.Struct({
  level: Schema.Literal("unresolved"),
  format: Schema.String,
  document: Schema.String
}).annotations({ ...strict, identifier: "UnresolvedCitation" })
export type UnresolvedCitation = typeof UnresolvedCitation.Type

/** An accepted document-level citation (`answers.citations: "document"`), labelled so; `index` is its position in the claim. */
export const DocumentLevelCitation = Schema.Struct({
  index: Schema.NonNegativeInt,
  citation: DocumentCitation,
  label: Schema.Literal(documentLevelLabel)
}).annotations({ ...strict, identifier: "DocumentLevelCitation" })
export type DocumentLevelCitation = typeof DocumentLevelCitation.Type

/** A failed citation (one entry per failure). */
export const RetractedCitation = Schema.Struct({
  index: Schema.NonNegativeInt,
  citation: Schema.Union(Citation, DocumentCitation, UnresolvedCitation),
  error: CitationError
}).annotations({ identifier: "RetractedCitation" })
export type RetractedCitation = typeof RetractedCitation.Type

/** A claim with at least one verified citation; its failed citations are listed as retracted. */
export const GroundedClaim = Schema.Struct({
  index: Schema.NonNegativeInt,
  id: Schema.String,
  text: Schema.String,
  citations: Schema.NonEmptyArray(VerifiedAnswerCitation),
  retracted: Schema.Array(RetractedCitation),
  /** Its accepted document-level citations (provider formats under `answers.citations: "document"`): never counted as verified. */
  documents: Schema.optional(Schema.Array(DocumentLevelCitation))
}).annotations({ identifier: "GroundedClaim" })
export type GroundedClaim = typeof GroundedClaim.Type

/**
 * A claim with no verified quote whose document-level citations were accepted (`answers.citations:
 * "document"`): kept, but apart from grounded claims and labelled "document-level: no quote verified".
 */
export const DocumentLevelClaim = Schema.Struct({
  index: Schema.NonNegativeInt,
  id: Schema.String,
  text: Schema.String,
  label: Schema.Literal(documentLevelLabel),
  documents: Schema.NonEmptyArray(DocumentLevelCitation),
  retracted: Schema.Array(RetractedCitation)
}).annotations({ identifier: "DocumentLevelClaim" })
export type DocumentLevelClaim = typeof DocumentLevelClaim.Type

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
  citationsVerified: Schema.NonNegativeInt,
  /** Provider formats: claims kept on document-level citations only, and accepted document-level citations (never verified quotes). */
  claimsDocumentLevel: Schema.optional(Schema.NonNegativeInt),
  citationsDocumentLevel: Schema.optional(Schema.NonNegativeInt)
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
  /** Provider formats: the citation policy applied and the claims kept on document-level citations only. */
  citationsPolicy: Schema.optional(CitationsPolicy),
  documentLevel: Schema.optional(Schema.Array(DocumentLevelClaim)),
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
    // --- semantic review hooks: each outcome its own section, never merged with provenance ---
    /** The entailment judge's review (`review.judge`), when one ran. */
    readonly judge?: JudgeReview | undefined
  }
  Rejected: { readonly error: AnswerError; readonly matching?: string | undefined }
}>
export const AnswerRendering = Data.taggedEnum<AnswerRendering>()
