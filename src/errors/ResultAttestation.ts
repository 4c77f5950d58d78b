/**
 * Errors of signed verification results (src/evidence/ResultAttestation.ts): `verify --sign-key`,
 * `verify-answer --sign-key`, `run-pipeline check-attestation` and the service's `?sign=1`. The
 * signature itself is checked with the signature family's errors (`EnvelopeMalformed`,
 * `UnknownSigningKey`, `SignatureInvalid`); these say what a valid signature does not cover.
 *
 * @since 0.4.0
 */
import * as Schema from "effect/Schema"
import { TaggedError } from "./TaggedError.js"

/** What a result attestation is about: a report or an answer. */
export const AttestedKind = Schema.Literal("report", "answer")
export type AttestedKind = typeof AttestedKind.Type

/**
 * The envelope's signature verifies, but it attests other bytes than the report or answer given:
 * another input (an envelope replayed for another report), or the same one edited since.
 */
export class AttestationSubjectMismatch extends TaggedError<AttestationSubjectMismatch>()("AttestationSubjectMismatch", {
  /** The file (or the name) of the report or answer checked. */
  path: Schema.String,
  signedSha256: Schema.String,
  actualSha256: Schema.String
}) {
  override get message() {
    return `${this.path} is not the attested input: its SHA-256 is ${this.actualSha256}, the signed result names ${this.signedSha256}`
  }
}

/**
 * The envelope's signature verifies, but its statement is not a verification result: a capture's
 * attestation, an export's, or another producer's statement presented in its place.
 */
export class AttestationTypeMismatch extends TaggedError<AttestationTypeMismatch>()("AttestationTypeMismatch", {
  expected: Schema.String,
  found: Schema.String
}) {
  override get message() {
    return `The signed statement is not a verification result: its predicate type is ${this.found}, expected ${this.expected}`
  }
}

/**
 * Checked against a run (`check-attestation --run`): a capture the signed result names is not in
 * the run, or its digests there differ from the signed ones.
 */
export class AttestationCaptureMismatch extends TaggedError<AttestationCaptureMismatch>()("AttestationCaptureMismatch", {
  source: Schema.String,
  detail: Schema.String
}) {
  override get message() {
    return `The signed result's capture of ${this.source} is not the run's: ${this.detail}`
  }
}

/** The service was asked to sign a result (`?sign=1`) but holds no result signing key (`verify.resultSigning`). */
export class ResultSigningUnavailable extends TaggedError<ResultSigningUnavailable>()("ResultSigningUnavailable", {}) {
  override get message() {
    return "This service signs no verification results: verify.resultSigning.keyFile is not configured"
  }
}

/** A result that did not pass the gate (a `no_evidence` outcome) was given to be signed: nothing is signed for it. */
export class ResultNotPassed extends TaggedError<ResultNotPassed>()("ResultNotPassed", {
  kind: AttestedKind,
  outcome: Schema.String
}) {
  override get message() {
    return `The ${this.kind} did not pass the gate (outcome ${this.outcome}): only a grounded result is signed`
  }
}

/** Why a signed result does not hold beyond its signature, or could not be signed. */
export const ResultAttestationError = Schema.Union(
  AttestationSubjectMismatch,
  AttestationTypeMismatch,
  AttestationCaptureMismatch,
  ResultNotPassed,
  ResultSigningUnavailable
)
export type ResultAttestationError = typeof ResultAttestationError.Type
