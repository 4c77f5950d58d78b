/**
 * Answers' errors: prose with inline citations (citegate.answer/1, EVI1, Anthropic), per citation (`CitationError`) and per answer (`AnswerError`).
 *
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"
import { CoarseCitation, UnresolvableSource } from "./Provider.js"
import { ProviderEventInvalid, ProviderStreamError, ProviderStreamIncomplete } from "./ProviderStream.js"
import { formatIssues, Issue, Omitted, short } from "./Shared.js"
import { CorruptCapture, LegacyCapture, MissingCapture } from "./Store.js"
import { AmbiguousSnippet, AnchorMismatch, DigestMismatch, NotApproved, SnippetAbsent, VerificationTimeout } from "./Verify.js"
import { SnippetCutsToken } from "./Boundaries.js"
import { HiddenEvidence } from "./Visibility.js"
import { SignatureInvalid, UnknownSigningKey, UnsignedCapture } from "./Signature.js"
import { TaggedError } from "./TaggedError.js"

// ---------------------------------------------------------------------------
// Answers: prose with inline citations (citegate.answer/1, EVI1, Anthropic)
// ---------------------------------------------------------------------------

/** The quote occurs in the capture, but not where the citation's character indices say it is. */
export class SpanMismatch extends TaggedError<SpanMismatch>()("SpanMismatch", {
  source: Schema.String,
  captureSha256: Schema.String,
  quote: Schema.String,
  /** The claimed span, in Unicode code points, end exclusive. */
  claimedStart: Schema.NonNegativeInt,
  claimedEnd: Schema.NonNegativeInt,
  /** Where the quote first occurs, in code points. */
  foundStart: Schema.NonNegativeInt,
  occurrences: Schema.Int
}) {
  override get message() {
    return `The quote occurs in capture ${short(this.captureSha256)}… of ${this.source} at code point ${this.foundStart}` +
      ` (${this.occurrences === 1 ? "1 occurrence" : "more than one occurrence"}), not at the claimed ${this.claimedStart}–${this.claimedEnd}`
  }
}

export const AnchorKind = Schema.Literal("page", "heading", "content-block")
export type AnchorKind = typeof AnchorKind.Type

/**
 * The citation names a page, heading or content block, but captures carry no
 * anchors yet (plain text): the anchor cannot be checked, so it is not accepted.
 */
export class AnchorUnsupported extends TaggedError<AnchorUnsupported>()("AnchorUnsupported", {
  source: Schema.String,
  anchor: AnchorKind,
  value: Schema.String
}) {
  override get message() {
    return `The citation of ${this.source} names a ${this.anchor} (${this.value}), but no capture has that kind of anchor ` +
      "(captures carry PDF pages and heading paths, never content blocks): cite the quote with its page or heading, or without an anchor"
  }
}

/** Why one citation of an answer failed: a report fact's capture and search failures, or a location failure. */
export const CitationError = Schema.Union(
  NotApproved,
  MissingCapture,
  CorruptCapture,
  LegacyCapture,
  DigestMismatch,
  SnippetAbsent,
  SpanMismatch,
  AnchorUnsupported,
  // From the shared matching path: produced only for citations that name a page or heading.
  AnchorMismatch,
  // From the shared matching path: several occurrences and nothing picks one.
  AmbiguousSnippet,
  // From the shared matching path: text no reader sees, under verify.hidden: "reject".
  HiddenEvidence,
  // From the shared matching path: only inside a longer number or word, under verify.boundaries: "tokens".
  SnippetCutsToken,
  CoarseCitation, UnresolvableSource,
  // From the shared matching path: the capture's attestation, under verify.signatures: "require".
  UnsignedCapture, SignatureInvalid, UnknownSigningKey
)
export type CitationError = typeof CitationError.Type

/** A failed citation: the claim (0-based position and id) and the citation's 0-based position in it. */
export const CitationRejection = Schema.Struct({
  claimIndex: Schema.NonNegativeInt,
  claimId: Schema.String,
  citationIndex: Schema.NonNegativeInt,
  error: CitationError
}).annotations({ identifier: "CitationRejection" })
export type CitationRejection = typeof CitationRejection.Type

/** A sentence that needs a citation (it states a quantity, or is long and of no exempt kind: docs/answers.md) and cites nothing. */
export class UncitedSentence extends TaggedError<UncitedSentence>()("UncitedSentence", {
  sentence: Schema.String,
  /** 1-based line of the drafted text where the sentence starts, when the format has lines (EVI1). */
  line: Schema.NullOr(Schema.Int)
}) {
  override get message() {
    return `An uncited sentence${this.line === null ? "" : ` on line ${this.line}`} looks factual: ${JSON.stringify(this.sentence.slice(0, 80))}`
  }
}

/** The answer is not a valid answer (schema, or a numbered handle the manifest does not hold): every issue. */
export class InvalidAnswer extends TaggedError<InvalidAnswer>()("InvalidAnswer", {
  issues: Schema.NonEmptyArray(Issue),
  omitted: Omitted
}) {
  override get message() {
    return `The answer is invalid: ${formatIssues(this.issues, this.omitted)}`
  }
}

/**
 * The answer was drafted against another manifest than this run's (or names
 * none where one is required): its numbered handles are never re-bound to
 * other captures.
 */
export class StaleManifest extends TaggedError<StaleManifest>()("StaleManifest", {
  /** The manifest digest the answer names, or null when it names none. */
  named: Schema.NullOr(Schema.String),
  current: Schema.String
}) {
  override get message() {
    return this.named === null
      ? `The answer names no manifest; this run's manifest is ${this.current} (name it to cite by number)`
      : `The answer was drafted against manifest ${short(this.named)}…, not this run's ${this.current}`
  }
}

// EVI1 line issues: plain tagged records (not errors), collected into one Evi1Invalid. Lines are 1-based.

/** A line of the appendix (or a citation group) that does not follow the protocol. */
export const Evi1MalformedLine = Schema.TaggedStruct("Evi1MalformedLine", {
  line: Schema.Int,
  detail: Schema.String
})
/** A `{cX}` used by a second claim. */
export const Evi1DuplicateClaimId = Schema.TaggedStruct("Evi1DuplicateClaimId", {
  line: Schema.Int,
  claimId: Schema.String,
  firstLine: Schema.Int
})
/** A second evidence line for the same claim and source. */
export const Evi1DuplicateEvidence = Schema.TaggedStruct("Evi1DuplicateEvidence", {
  line: Schema.Int,
  claimId: Schema.String,
  source: Schema.Int,
  firstLine: Schema.Int
})
/** A claim cites a source `[n]` but no evidence line `cX|n|…` gives its quote. */
export const Evi1MissingEvidence = Schema.TaggedStruct("Evi1MissingEvidence", {
  line: Schema.Int,
  claimId: Schema.String,
  source: Schema.Int
})
/** An evidence line whose claim does not cite that source (or does not exist). */
export const Evi1UnusedEvidence = Schema.TaggedStruct("Evi1UnusedEvidence", {
  line: Schema.Int,
  claimId: Schema.String,
  source: Schema.Int
})
/** A source number outside the manifest's 1…n. */
export const Evi1SourceOutOfRange = Schema.TaggedStruct("Evi1SourceOutOfRange", {
  line: Schema.Int,
  claimId: Schema.String,
  source: Schema.Int,
  sources: Schema.Int
})
/** A source the manifest lists as missing in this run: the model was told not to cite it. */
export const Evi1SourceUnavailable = Schema.TaggedStruct("Evi1SourceUnavailable", {
  line: Schema.Int,
  claimId: Schema.String,
  source: Schema.Int,
  url: Schema.String
})
/** A `{cX}` with no citation group `[n]` directly before it. */
export const Evi1OrphanMarker = Schema.TaggedStruct("Evi1OrphanMarker", {
  line: Schema.Int,
  claimId: Schema.String
})
/**
 * A second `EVI1` line: an answer has one appendix, starting at its first `EVI1` line. A block
 * written into the body (or after the appendix) is never read as prose or as a second appendix.
 */
export const Evi1ExtraAppendix = Schema.TaggedStruct("Evi1ExtraAppendix", {
  line: Schema.Int,
  /** The line of the first `EVI1` (where the appendix starts). */
  firstLine: Schema.Int
})

export const Evi1Issue = Schema.Union(
  Evi1MalformedLine,
  Evi1DuplicateClaimId,
  Evi1DuplicateEvidence,
  Evi1MissingEvidence,
  Evi1UnusedEvidence,
  Evi1SourceOutOfRange,
  Evi1SourceUnavailable,
  Evi1OrphanMarker,
  Evi1ExtraAppendix
)
export type Evi1Issue = typeof Evi1Issue.Type

/** The EVI1 text breaks the protocol: every issue, in line order. */
export class Evi1Invalid extends TaggedError<Evi1Invalid>()("Evi1Invalid", {
  /** The first 100 issues, in line order. */
  issues: Schema.NonEmptyArray(Evi1Issue),
  omitted: Omitted
}) {
  override get message() {
    return `The EVI1 answer is invalid: ${this.issues.map((i) => `line ${i.line}: ${i._tag}`).join(", ")}` +
      (this.omitted === undefined || this.omitted === 0 ? "" : `; and ${this.omitted} more issue${this.omitted === 1 ? "" : "s"} not listed`)
  }
}

/** The drafted text is longer than the documented limit; nothing of it was parsed past the limit. */
export class AnswerTooLarge extends TaggedError<AnswerTooLarge>()("AnswerTooLarge", {
  maxChars: Schema.Int,
  receivedChars: Schema.Int
}) {
  override get message() {
    return `The answer has more than ${this.maxChars} characters (received at least ${this.receivedChars})`
  }
}

export const AnswerLimit = Schema.Literal("claims", "citations", "citations-per-claim", "uncited-sentences")
export type AnswerLimit = typeof AnswerLimit.Type

/**
 * The answer passed a documented count limit (claims, citations in total, citations of one claim);
 * counted while the text is scanned, so nothing past the limit was parsed, bound or verified.
 */
export class AnswerLimitExceeded extends TaggedError<AnswerLimitExceeded>()("AnswerLimitExceeded", {
  limit: AnswerLimit,
  max: Schema.Int,
  /** How many had been counted when the scan stopped (at least max + 1). */
  received: Schema.Int
}) {
  override get message() {
    const what = this.limit === "citations-per-claim"
      ? "citations in one claim"
      : this.limit === "uncited-sentences"
      ? "uncited sentences that need a citation"
      : this.limit
    return `The answer has more than ${this.max} ${what} (counted ${this.received} before stopping)`
  }
}

/** Reject mode (or `answers.uncited: "reject"`): at least one citation or sentence failed; every failure listed. */
export class AnswerRejected extends TaggedError<AnswerRejected>()("AnswerRejected", {
  citations: Schema.Array(CitationRejection),
  uncited: Schema.Array(UncitedSentence)
}) {
  override get message() {
    return `The answer was rejected: ${this.citations.length} failed citation(s), ${this.uncited.length} uncited sentence(s)`
  }
}

/** Why a whole answer was not accepted. */
export const AnswerError = Schema.Union(
  InvalidAnswer,
  StaleManifest,
  Evi1Invalid,
  AnswerTooLarge,
  AnswerLimitExceeded,
  AnswerRejected,
  VerificationTimeout,
  ProviderEventInvalid, ProviderStreamError, ProviderStreamIncomplete
)
export type AnswerError = typeof AnswerError.Type
