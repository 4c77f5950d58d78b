/**
 * The records of a streamed answer: its limits, its options and the events it
 * emits (ids 1, 2, 3, …; exactly one `done`, last). Schemas only: no logic.
 *
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"
import { type CitationRule, type CitationsPolicy, documentLevelLabel } from "../../answer/Records.js"
import { HiddenKind, MatchMethod, Visibility } from "../../Domain.js"
import {
  AnswerLimitExceeded,
  AnswerRejected,
  AnswerTooLarge,
  CitationError,
  Evi1Invalid,
  InvalidAnswer,
  ProviderEventInvalid,
  ProviderStreamError,
  ProviderStreamIncomplete,
  StaleManifest,
  StreamDeadline,
  StreamLimitExceeded,
  StreamLineInvalid,
  StreamProducerLost,
  UncitedSentence,
  VerificationTimeout
} from "../../Errors.js"
import type { Manifest } from "../../Manifest.js"

// ---------------------------------------------------------------------------
// Limits
// ---------------------------------------------------------------------------

/**
 * The bounds of one stream, each checked before the work it bounds.
 *
 * @since 0.1.0
 * @category models
 */
export interface StreamLimits {
  /** Bytes of one NDJSON input line (checked while the line arrives, before it is decoded). */
  readonly maxLineBytes: number
  /** Bytes of NDJSON input in total (blank lines and JSON syntax included). */
  readonly maxInputBytes: number
  /** UTF-16 code units of answer text in total (at most the answers' 16 Mi limit). */
  readonly maxAnswerChars: number
  /** Claims (`{cX}` markers). */
  readonly maxClaims: number
  /** Citations (`[n]` of all claims: the footnotes). */
  readonly maxCitations: number
  /** Milliseconds from the stream's start to its `done`: input, parsing and verification together. */
  readonly deadlineMs: number
}

/** @since 0.1.0 */
export const defaultLimits: StreamLimits = {
  maxLineBytes: 64 * 1024,
  maxInputBytes: 8 * 1024 * 1024,
  maxAnswerChars: 1024 * 1024,
  maxClaims: 1_000,
  maxCitations: 4_000,
  deadlineMs: 120_000
}

// ---------------------------------------------------------------------------
// Options
// ---------------------------------------------------------------------------

/**
 * @since 0.1.0
 * @category models
 */
export interface StreamOptions {
  readonly manifest: Manifest
  /** The manifest digest the answer was drafted against, when the caller names it (else the appendix's MANIFEST line). */
  readonly manifestDigest?: string | undefined
  /** `drop` (default): failed citations are retracted. `reject`: any retraction makes the answer rejected. */
  readonly mode?: "drop" | "reject" | undefined
  readonly uncited?: "report" | "reject" | undefined
  /** Which uncited sentences need a citation (`answers.needsCitation`; the documented default when absent). */
  readonly needsCitation?: CitationRule | undefined
  /**
   * `answers.citations` for provider streams whose citations may be document-level (`bedrock-stream`):
   * `quote` (default) retracts them with `CoarseCitation`, `document` accepts them as `document` events.
   */
  readonly citations?: CitationsPolicy | undefined
}

// ---------------------------------------------------------------------------
// Events
// ---------------------------------------------------------------------------

const Id = Schema.Int.pipe(Schema.greaterThanOrEqualTo(1))
const Offset = Schema.NonNegativeInt
const Span = Schema.Struct({ start: Offset, end: Offset })

/** A placeholder marker `[^footnote]` at `at` (UTF-16 offset in the whole streamed text). */
export const FootnoteMark = Schema.Struct({
  footnote: Id,
  claimId: Schema.String,
  /** The manifest's source number (absent for a provider citation that names no approved source: it will be retracted). */
  source: Schema.optional(Id),
  at: Offset
}).annotations({ identifier: "FootnoteMark" })

export const DeltaEvent = Schema.Struct({
  id: Id,
  type: Schema.Literal("delta"),
  text: Schema.String,
  footnotes: Schema.Array(FootnoteMark)
}).annotations({ identifier: "DeltaEvent" })

export const CitationEvent = Schema.Struct({
  id: Id,
  type: Schema.Literal("citation"),
  footnote: Id,
  claimId: Schema.String,
  /** The manifest's source number, and that source's URL and capture digest. */
  sourceNumber: Id,
  source: Schema.String,
  captureSha256: Schema.String,
  quote: Schema.String,
  /** Where the quote occurs in the capture's text (UTF-16 code units, end exclusive). */
  span: Span,
  occurrences: Id,
  page: Schema.optional(Id),
  /** How the quote was matched (`exact`, or `normalized/2` under that policy: NOT verbatim). Always sent. */
  method: Schema.optional(MatchMethod),
  /** The capture's own text at `span`, sent when `method` is not `exact` (the quote is not that text). */
  captureText: Schema.optional(Schema.String),
  /** Whether a reader sees the quote on the page: `ocr` or `hidden` as the evidence says; absent means visible. */
  visibility: Schema.optional(Visibility),
  /** Why the quote is not visible (sent with `ocr` and `hidden`). */
  hiddenBy: Schema.optional(Schema.NonEmptyArray(HiddenKind))
}).annotations({ identifier: "CitationEvent" })

export const RetractionEvent = Schema.Struct({
  id: Id,
  type: Schema.Literal("retraction"),
  footnote: Id,
  claimId: Schema.String,
  /** The claim's sentence (markers removed). */
  claim: Schema.String,
  /** The claim's sentence with its markers in the streamed text (UTF-16 offsets, end exclusive). */
  sentence: Span,
  /** The claim has no citation left: remove its sentence, not only the marker. */
  removeSentence: Schema.Boolean,
  reasons: Schema.NonEmptyArray(CitationError)
}).annotations({ identifier: "RetractionEvent" })

/**
 * Footnote k is a document-level citation accepted under `answers.citations: "document"`
 * (`bedrock-stream`: a citation naming an approved document without a cited passage). No quote was
 * verified: it never grounds its claim, and clients show it apart from `citation` events.
 */
export const DocumentEvent = Schema.Struct({
  id: Id,
  type: Schema.Literal("document"),
  footnote: Id,
  claimId: Schema.String,
  /** The manifest's source number, and that source's URL and capture digest. */
  sourceNumber: Id,
  source: Schema.String,
  captureSha256: Schema.String,
  /** The answer format, and the document as the provider named it. */
  format: Schema.String,
  document: Schema.String,
  label: Schema.Literal(documentLevelLabel)
}).annotations({ identifier: "DocumentEvent" })

/** Why a stream ended early, or was rejected at its end. */
export const StreamFailure = Schema.Union(
  StreamLineInvalid,
  StreamLimitExceeded,
  StreamDeadline,
  StaleManifest,
  Evi1Invalid,
  AnswerTooLarge,
  AnswerLimitExceeded,
  AnswerRejected,
  VerificationTimeout,
  // Provider streams (`format=anthropic-sse`): a citation the mapping refuses, the event stream itself.
  InvalidAnswer,
  ProviderEventInvalid,
  ProviderStreamError,
  ProviderStreamIncomplete,
  // Replicas over PostgreSQL: the replica producing the stream stopped; another one closed it.
  StreamProducerLost
)
export type StreamFailure = typeof StreamFailure.Type

export const ErrorEvent = Schema.Struct({
  id: Id,
  type: Schema.Literal("error"),
  error: StreamFailure
}).annotations({ identifier: "ErrorEvent" })

export const Summary = Schema.Struct({
  claims: Offset,
  claimsGrounded: Offset,
  claimsRemoved: Offset,
  citations: Offset,
  citationsVerified: Offset,
  citationsRetracted: Offset,
  /** Provider streams with document-level citations (`bedrock-stream`): claims with accepted documents only, and those citations. */
  claimsDocumentLevel: Schema.optional(Offset),
  citationsDocumentLevel: Schema.optional(Offset)
}).annotations({ identifier: "StreamSummary" })
export type Summary = typeof Summary.Type

export const DoneState = Schema.Literal("grounded", "no_evidence", "rejected")
export type DoneState = typeof DoneState.Type

export const DoneEvent = Schema.Struct({
  id: Id,
  type: Schema.Literal("done"),
  state: DoneState,
  summary: Summary,
  /** Factual-looking sentences without citation (known at the end). */
  uncited: Schema.Array(UncitedSentence)
}).annotations({ identifier: "DoneEvent" })

/**
 * @since 0.1.0
 * @category models
 */
export const StreamEvent = Schema.Union(DeltaEvent, CitationEvent, DocumentEvent, RetractionEvent, ErrorEvent, DoneEvent)
export type StreamEvent = typeof StreamEvent.Type

const encodeStreamEvent = Schema.encodeSync(StreamEvent, { onExcessProperty: "ignore" })

/** One event as JSON (typed errors encoded with their `_tag`). */
export const encodeEvent = (event: StreamEvent): string => JSON.stringify(encodeStreamEvent(event))

/** An event from its JSON, strictly (for clients and tests). */
export const decodeEvent = (text: string): StreamEvent =>
  Schema.decodeUnknownSync(StreamEvent, { onExcessProperty: "error" })(JSON.parse(text))
