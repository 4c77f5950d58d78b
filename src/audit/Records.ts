/**
 * The records of a drift audit (`citegate.audit/1`): for every citation of a
 * report or answer verified against an OLD run, one finding that says what
 * became of its excerpt in a NEW capture of the same source.
 *
 * Strict like every citegate record: unknown keys are decode errors, and a
 * JSON rendering of an `AuditResult` decodes with `AuditResult` (and
 * `decodeOptions`).
 *
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"
import { Rfc3339Utc, Sha256Hex, Span } from "../Domain.js"

const strict = { parseOptions: { onExcessProperty: "error" } } as const

export const auditFormat = "citegate.audit/1" as const

/** Bounds of the audit's own work (docs/audit.md#limits). The citation count is the audited report's or answer's. */
export const limits = {
  /**
   * UTF-16 code units of the longest excerpt the candidate search takes (the nearest-passage
   * search's own fuzzy limit): aligning a candidate is quadratic in the excerpt's length; quotes
   * are sentences, this is most of a page.
   */
  maxCandidateExcerpt: 1_000
} as const

/**
 * What every audit states about itself. The audit compares strings: it sees
 * which characters of a cited passage changed, never what they mean.
 */
export const auditNote =
  "This audit is lexical: it compares the cited excerpts with the text of the new captures character by character " +
  "and flags changed numbers, negations, dates and units by their tokens. It cannot see a change of meaning outside " +
  "the excerpt (a surrounding sentence that now reverses it, a table header or footnote that qualifies it), " +
  "synonyms and paraphrases, content that is not in the extracted text (images, scripts, layout), nor whether a " +
  "new source now contradicts the claim. A citation reported unchanged or relocated still needs its context read " +
  "by a person when the stakes call for it."

export const AuditStatus = Schema.Literal("unchanged", "relocated", "changed", "deleted", "source_missing")
export type AuditStatus = typeof AuditStatus.Type

/** The statuses that make an audit `drifted` (and their subjects `affected`). */
export const driftStatuses: ReadonlyArray<AuditStatus> = ["changed", "deleted", "source_missing"]

/** `stable`: every excerpt is still in its new capture verbatim. `drifted`: at least one is not. */
export const AuditOutcome = Schema.Literal("stable", "drifted")
export type AuditOutcome = typeof AuditOutcome.Type

// ---------------------------------------------------------------------------
// What was cited
// ---------------------------------------------------------------------------

/** A cited fact of a verified report: its position in the drafted report and its label. */
export const FactSubject = Schema.Struct({
  kind: Schema.Literal("fact"),
  index: Schema.NonNegativeInt,
  label: Schema.String
}).annotations({ ...strict, identifier: "FactSubject" })
export type FactSubject = typeof FactSubject.Type

/** One citation of a claim of a verified answer: the claim's position and id, the citation's position in it. */
export const ClaimSubject = Schema.Struct({
  kind: Schema.Literal("claim"),
  claimIndex: Schema.NonNegativeInt,
  claimId: Schema.String,
  citationIndex: Schema.NonNegativeInt
}).annotations({ ...strict, identifier: "ClaimSubject" })
export type ClaimSubject = typeof ClaimSubject.Type

export const Subject = Schema.Union(FactSubject, ClaimSubject)
export type Subject = typeof Subject.Type

/** Where an excerpt lies in a capture: its span (UTF-16 code units, end exclusive) and anchors when the capture has them. */
export const Location = Schema.Struct({
  captureSha256: Sha256Hex,
  accessedAt: Rfc3339Utc,
  span: Span,
  /** The PDF page the span starts on. */
  page: Schema.optional(Schema.Int.pipe(Schema.greaterThanOrEqualTo(1))),
  /** The innermost heading path whose section holds the span. */
  heading: Schema.optional(Schema.Array(Schema.String))
}).annotations({ ...strict, identifier: "Location" })
export type Location = typeof Location.Type

/** The new capture as a whole, when no span in it holds the excerpt. */
export const NewCapture = Schema.Struct({
  captureSha256: Sha256Hex,
  accessedAt: Rfc3339Utc
}).annotations({ ...strict, identifier: "NewCapture" })
export type NewCapture = typeof NewCapture.Type

// ---------------------------------------------------------------------------
// Candidates and material changes
// ---------------------------------------------------------------------------

/**
 * Where a candidate was searched: `anchor` inside the new sections with the
 * old excerpt's heading path (or its page), `document` in the whole new text.
 */
export const CandidateScope = Schema.Literal("anchor", "document")
export type CandidateScope = typeof CandidateScope.Type

/** The passage of the new text most similar to the old excerpt. */
export const Candidate = Schema.Struct({
  text: Schema.String,
  span: Span,
  /**
   * In [0, 1]: 1 for a `normalized/1` hit (only case, spacing, typography or line endings differ), else
   * one minus the edit distance of the normalised texts over the longer one (src/anchor/Similarity.ts).
   */
  similarity: Schema.Number.pipe(Schema.between(0, 1)),
  /** How the candidate was found (the nearest-passage search's own name for its method). */
  method: Schema.String,
  scope: CandidateScope,
  /** The threshold it was held to (depends on `scope`). */
  threshold: Schema.Number.pipe(Schema.between(0, 1)),
  page: Schema.optional(Schema.Int.pipe(Schema.greaterThanOrEqualTo(1))),
  heading: Schema.optional(Schema.Array(Schema.String))
}).annotations({ ...strict, identifier: "Candidate" })
export type Candidate = typeof Candidate.Type

export const MaterialKind = Schema.Literal("numbers", "negation", "dates", "units")
export type MaterialKind = typeof MaterialKind.Type

/**
 * A material change between the old excerpt and its candidate: the tokens of
 * this kind only the old side has, and those only the new side has (each side
 * in text order, counted as a multiset: `30 … 30` against `30` names one `30`).
 */
export const MaterialFlag = Schema.Struct({
  kind: MaterialKind,
  oldTokens: Schema.Array(Schema.String),
  newTokens: Schema.Array(Schema.String)
}).annotations({ ...strict, identifier: "MaterialFlag" })
export type MaterialFlag = typeof MaterialFlag.Type

// ---------------------------------------------------------------------------
// Findings
// ---------------------------------------------------------------------------

const findingHead = {
  subject: Subject,
  source: Schema.String,
  /** The excerpt as cited (and verified against the old capture). */
  snippet: Schema.String,
  old: Location
}

/** The excerpt is at the same span of the new text. */
export const UnchangedFinding = Schema.Struct({
  status: Schema.Literal("unchanged"),
  ...findingHead,
  new: Location
}).annotations({ ...strict, identifier: "UnchangedFinding" })
export type UnchangedFinding = typeof UnchangedFinding.Type

/** The excerpt is still in the new text verbatim, at another span (its first occurrence; the anchored one first). */
export const RelocatedFinding = Schema.Struct({
  status: Schema.Literal("relocated"),
  ...findingHead,
  new: Location
}).annotations({ ...strict, identifier: "RelocatedFinding" })
export type RelocatedFinding = typeof RelocatedFinding.Type

/** The excerpt is gone, but a passage passed the similarity threshold: it is the candidate. */
export const ChangedFinding = Schema.Struct({
  status: Schema.Literal("changed"),
  ...findingHead,
  new: NewCapture,
  candidate: Candidate,
  /** Material changes between excerpt and candidate; empty when none of the kinds changed. */
  material: Schema.Array(MaterialFlag)
}).annotations({ ...strict, identifier: "ChangedFinding" })
export type ChangedFinding = typeof ChangedFinding.Type

/** The excerpt is gone and no passage passed the threshold; `nearest` is the best one found, when any. */
export const DeletedFinding = Schema.Struct({
  status: Schema.Literal("deleted"),
  ...findingHead,
  new: NewCapture,
  nearest: Schema.optional(Candidate),
  /**
   * Present when no candidate was searched for: the excerpt is longer than the candidate search
   * takes (`limits.maxCandidateExcerpt`), so a changed passage cannot be told from a deleted one.
   */
  unsearched: Schema.optional(Schema.Literal("excerpt-too-long"))
}).annotations({ ...strict, identifier: "DeletedFinding" })
export type DeletedFinding = typeof DeletedFinding.Type

/**
 * Why there is no new text to search:
 * `not-captured`: the new run holds no capture of the source (never fetched,
 * or its capture failed, e.g. a body that failed extraction: a failed capture
 * writes nothing);
 * `capture-failed`: the same, with the capture's failure known to the caller;
 * `unreadable`: a capture is stored but cannot be trusted (corrupt, legacy,
 * its body missing or altered, its text not matching its digest).
 */
export const MissingReason = Schema.Literal("not-captured", "capture-failed", "unreadable")
export type MissingReason = typeof MissingReason.Type

/** The new run has no usable capture of the source. `errorTag` and `detail` say what was found instead. */
export const SourceMissingFinding = Schema.Struct({
  status: Schema.Literal("source_missing"),
  ...findingHead,
  reason: MissingReason,
  errorTag: Schema.String,
  detail: Schema.String
}).annotations({ ...strict, identifier: "SourceMissingFinding" })
export type SourceMissingFinding = typeof SourceMissingFinding.Type

export const Finding = Schema.Union(UnchangedFinding, RelocatedFinding, ChangedFinding, DeletedFinding, SourceMissingFinding)
export type Finding = typeof Finding.Type

// ---------------------------------------------------------------------------
// The result
// ---------------------------------------------------------------------------

/** A fact with a drifted citation (reports have one citation per fact). */
export const AffectedFact = Schema.Struct({
  kind: Schema.Literal("fact"),
  index: Schema.NonNegativeInt,
  label: Schema.String,
  status: Schema.Literal("changed", "deleted", "source_missing")
}).annotations({ ...strict, identifier: "AffectedFact" })
export type AffectedFact = typeof AffectedFact.Type

/** A claim with at least one drifted citation: which of its citations (positions in the claim) and their statuses. */
export const AffectedClaim = Schema.Struct({
  kind: Schema.Literal("claim"),
  claimIndex: Schema.NonNegativeInt,
  claimId: Schema.String,
  citations: Schema.NonEmptyArray(
    Schema.Struct({
      citationIndex: Schema.NonNegativeInt,
      status: Schema.Literal("changed", "deleted", "source_missing")
    }).annotations({ ...strict, identifier: "AffectedCitation" })
  )
}).annotations({ ...strict, identifier: "AffectedClaim" })
export type AffectedClaim = typeof AffectedClaim.Type

export const Affected = Schema.Union(AffectedFact, AffectedClaim)
export type Affected = typeof Affected.Type

/** How many findings have each status. */
export const AuditSummary = Schema.Struct({
  citations: Schema.NonNegativeInt,
  unchanged: Schema.NonNegativeInt,
  relocated: Schema.NonNegativeInt,
  changed: Schema.NonNegativeInt,
  deleted: Schema.NonNegativeInt,
  source_missing: Schema.NonNegativeInt,
  /** Changed findings with at least one material flag. */
  material: Schema.NonNegativeInt
}).annotations({ ...strict, identifier: "AuditSummary" })
export type AuditSummary = typeof AuditSummary.Type

/** The similarity thresholds a candidate was held to (docs/audit.md: how they were chosen). */
export const Thresholds = Schema.Struct({
  /** A candidate inside the old heading path or page. */
  anchor: Schema.Number.pipe(Schema.between(0, 1)),
  /** A candidate anywhere in the new text. */
  document: Schema.Number.pipe(Schema.between(0, 1))
}).annotations({ ...strict, identifier: "Thresholds" })
export type Thresholds = typeof Thresholds.Type

/**
 * The audit of one verified report or answer against a new run: one finding
 * per citation, in order (report facts in report order; answer claims in
 * order, each claim's citations in order).
 */
export const AuditResult = Schema.Struct({
  format: Schema.Literal(auditFormat),
  /** What was audited. */
  of: Schema.Literal("report", "answer"),
  outcome: AuditOutcome,
  thresholds: Thresholds,
  summary: AuditSummary,
  findings: Schema.Array(Finding),
  affected: Schema.Array(Affected),
  note: Schema.Literal(auditNote)
}).annotations({ ...strict, identifier: "AuditResult" })
export type AuditResult = typeof AuditResult.Type
