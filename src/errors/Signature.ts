/**
 * Errors of signed exports: DSSE envelopes over an in-toto Statement, signed with Ed25519
 * (`run-pipeline export --sign-key`, `run-pipeline verify-signature`, src/evidence/Signatures.ts).
 * No message ever holds key material: a key is named by its file and its key id only.
 *
 * @since 0.3.0
 */
import * as Schema from "effect/Schema"
import { TaggedError } from "./TaggedError.js"

/** A key file is not what it must be (an Ed25519 key in PEM, within the size limit); its content is never shown. */
export class SigningKeyInvalid extends TaggedError<SigningKeyInvalid>()("SigningKeyInvalid", {
  path: Schema.String,
  detail: Schema.String
}) {
  override get message() {
    return `The key file ${this.path} cannot be used: ${this.detail}`
  }
}

/** The envelope is not a DSSE envelope citegate checks (size, JSON, base64, payload type, statement). */
export class EnvelopeMalformed extends TaggedError<EnvelopeMalformed>()("EnvelopeMalformed", {
  detail: Schema.String
}) {
  override get message() {
    return `The signature envelope is malformed: ${this.detail}`
  }
}

/** No signature of the envelope is by a trusted key (the key ids it names are listed). */
export class UnknownSigningKey extends TaggedError<UnknownSigningKey>()("UnknownSigningKey", {
  keyids: Schema.Array(Schema.String),
  /** The capture whose attestation this is (absent for an export's envelope). */
  source: Schema.optional(Schema.String)
}) {
  override get message() {
    const of = this.source === undefined ? "" : `The attestation of ${this.source}: `
    return of + (this.keyids.length === 0
      ? "The envelope names no key id and no trusted key verifies it"
      : `No trusted key has the key id${this.keyids.length === 1 ? "" : "s"} the envelope names: ${this.keyids.join(", ")}`)
  }
}

/** A trusted key's signature does not verify: the payload or the signature was changed. */
export class SignatureInvalid extends TaggedError<SignatureInvalid>()("SignatureInvalid", {
  /** The key whose check failed; empty when the envelope could not be read far enough to name one. */
  keyid: Schema.String,
  /** The capture whose attestation this is (absent for an export's envelope). */
  source: Schema.optional(Schema.String),
  /**
   * Why, when it is not the Ed25519 check itself: a malformed envelope, or a valid signature over a
   * statement about another capture (a replayed envelope).
   */
  detail: Schema.optional(Schema.String)
}) {
  override get message() {
    const of = this.source === undefined ? "" : `The attestation of ${this.source}: `
    if (this.detail !== undefined) return `${of}${this.detail}`
    return `${of}The signature by key ${this.keyid} does not verify: the signed statement or the signature was altered`
  }
}

/**
 * A capture has no attestation while the policy (`verify.signatures`) checks them: it was captured
 * without a signing key, by a store that keeps none, or its attestation was removed.
 */
export class UnsignedCapture extends TaggedError<UnsignedCapture>()("UnsignedCapture", {
  source: Schema.String
}) {
  override get message() {
    return `The capture of ${this.source} carries no signed attestation`
  }
}

/** The signature verifies, but the file is not the one the statement names (other bytes, or another export's envelope). */
export class SubjectMismatch extends TaggedError<SubjectMismatch>()("SubjectMismatch", {
  path: Schema.String,
  signedSha256: Schema.String,
  fileSha256: Schema.String
}) {
  override get message() {
    return `${this.path} is not the signed file: its SHA-256 is ${this.fileSha256}, the statement names ${this.signedSha256}`
  }
}

/** Why a signature could not be made or did not check out. */
export const SignatureError = Schema.Union(
  SigningKeyInvalid,
  EnvelopeMalformed,
  UnknownSigningKey,
  SignatureInvalid,
  SubjectMismatch,
  UnsignedCapture
)
export type SignatureError = typeof SignatureError.Type

/** Why a capture's attestation does not hold under `verify.signatures` (a fact failure under `require`). */
export const CaptureSignatureError = Schema.Union(UnsignedCapture, SignatureInvalid, UnknownSigningKey)
export type CaptureSignatureError = typeof CaptureSignatureError.Type
