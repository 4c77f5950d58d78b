/**
 * The records of verification shared by the Verifier and its steps (load,
 * digests, search, anchors, evidence): what a citation to check is, and what
 * checking it yields. Types only; `Verifier.ts` re-exports the public ones.
 *
 * @since 0.3.0
 */
import type * as Either from "effect/Either"
import type { CaptureRecord, Evidence, SourceUrl, VerifiedEntry } from "../Domain.js"
import type { CaptureSignatureError, DuplicateLabel, FactError, FactRejection, SemanticMismatch, UnknownLabel } from "../Errors.js"

/**
 * Every fact's result: the entries that passed (report order) and the facts
 * that failed, each with all of its failures.
 *
 * @since 0.1.0
 * @category models
 */
export interface Verification {
  readonly entries: ReadonlyArray<VerifiedEntry>
  readonly rejections: ReadonlyArray<FactRejection>
  /** The captures as read (and verified) by this call, for renderers: never read twice. */
  readonly captures: ReadonlyMap<SourceUrl, CaptureRecord>
  /**
   * Under `verify.signatures: "check"` (or `require`): the captures whose signed attestation does not
   * hold, one note each. Under `check` their facts still verify; under `require` they failed too.
   */
  readonly signatureNotes?: ReadonlyArray<CaptureSignatureError> | undefined
}

/**
 * One citation to check: the exact source, the capture digest it names, and
 * the text that must occur verbatim in that capture.
 *
 * @since 0.1.0
 * @category models
 */
export interface CitationInput {
  readonly source: string
  readonly captureSha256: string
  readonly snippet: string
  /** A PDF page the snippet must lie on. */
  readonly page?: number | undefined
  /** PDF pages the snippet must lie within: `start` to `end - 1` (1-based, end exclusive), as answers name them. */
  readonly pages?: { readonly start: number; readonly end: number } | undefined
  /** A heading path whose section the snippet must lie in. */
  readonly heading?: ReadonlyArray<string> | undefined
  /** Text right before the snippet in the capture: picks one of several occurrences. */
  readonly prefix?: string | undefined
  /** Text right after the snippet in the capture: picks one of several occurrences. */
  readonly suffix?: string | undefined
}

/** Why a bare citation fails: the fact errors that do not concern labels. */
export type CitationFailure = Exclude<FactError, UnknownLabel | DuplicateLabel | SemanticMismatch>

/** Where the snippet was found, or every reason the citation failed (never empty). */
export type CitationResult = Either.Either<Evidence, ReadonlyArray<CitationFailure>>

/**
 * @since 0.1.0
 * @category models
 */
export interface CitationsChecked {
  /** One result per citation, in input order. */
  readonly results: ReadonlyArray<CitationResult>
  /** The captures at least one citation was verified against, read once by this call. */
  readonly captures: ReadonlyMap<SourceUrl, CaptureRecord>
  /** The captures whose attestation does not hold (`verify.signatures`), as for reports. */
  readonly signatureNotes?: ReadonlyArray<CaptureSignatureError> | undefined
}

/**
 * The failures of one verification, by citation index, in the order the steps
 * find them. Each step appends to the lists of the citations it decides.
 */
export type Failures = ReadonlyArray<Array<CitationFailure>>
