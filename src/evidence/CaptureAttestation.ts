/**
 * Signed captures: the capture stage signs an attestation for every record it writes, a DSSE
 * envelope over an in-toto Statement v1 whose subject is the source URL with the SHA-256 of the body
 * as fetched (`sha256`) and of the extracted text (`text-sha256`), and whose predicate
 * (`urn:citegate:predicate:capture:v1`) carries the rest of what the record says about the fetch.
 * Signed with the operator's Ed25519 key (src/evidence/Signatures.ts), kept beside the record by the
 * store (`CaptureStore.writeAttestation`), checked by the Verifier under `verify.signatures`.
 *
 * What it adds: a store writer without the key can no longer replace a record and its digests
 * together unnoticed, nor move an attestation onto another record (every field is compared with
 * the record read). What it does not prove: docs/threat-model.md, "Signed captures".
 *
 * @since 0.3.0
 */
import * as Either from "effect/Either"
import * as Schema from "effect/Schema"
import { type CaptureRecord, captureFormat, ExtractionId, recordExtraction } from "../Domain.js"
import { type CaptureSignatureError, SignatureInvalid, UnknownSigningKey, UnsignedCapture } from "../Errors.js"
import { version } from "../version.js"
import {
  type Envelope,
  maxEnvelopeBytes,
  type PublicKey,
  renderEnvelope,
  type SigningKey,
  signStatementOf,
  statementSchema,
  statementSubject,
  statementType,
  verifyEnvelopeOf
} from "./Signatures.js"

/** citegate's capture predicate (versioned: a change of its fields is a new version). */
export const capturePredicateType = "urn:citegate:predicate:capture:v1"

/** Largest attestation a store keeps or a verifier reads (ours are about 1 KiB). */
export const maxAttestationBytes = maxEnvelopeBytes

const strict = { parseOptions: { onExcessProperty: "error" as const } }
const Sha256Hex = Schema.String.pipe(Schema.pattern(/^[0-9a-f]{64}$/))

/** The statement of one capture, decoded strictly. */
export const CaptureStatement = statementSchema(
  capturePredicateType,
  Schema.Struct({
    accessedAt: Schema.String.pipe(Schema.maxLength(64)),
    contentType: Schema.String.pipe(Schema.maxLength(256)),
    extraction: Schema.Struct({ id: ExtractionId, version: Schema.Int.pipe(Schema.between(1, 1000)) }).annotations(strict),
    /** Bytes of the body as fetched. */
    byteLength: Schema.NonNegativeInt,
    producer: Schema.String.pipe(Schema.maxLength(256))
  }).annotations(strict),
  statementSubject({ "sha256": Sha256Hex, "text-sha256": Sha256Hex }, 8192)
)
export type CaptureStatement = typeof CaptureStatement.Type

/** What a record says about its fetch, in the statement's terms (the producer aside). */
const factsOf = (record: CaptureRecord) => {
  const extraction = recordExtraction(record)
  return record.format === captureFormat
    ? {
      bodySha256: record.sha256,
      // A text/plain body is its text: the same bytes, one digest.
      textSha256: record.sha256,
      accessedAt: record.accessedAt,
      contentType: record.contentType,
      extraction,
      byteLength: record.byteLength
    }
    : {
      bodySha256: record.body.sha256,
      textSha256: record.sha256,
      accessedAt: record.accessedAt,
      contentType: record.body.contentType,
      extraction,
      byteLength: record.body.byteLength
    }
}

const extractionVersion = (id: ExtractionId): number => Number(id.slice(id.indexOf("/") + 1))

/** The statement the capture stage signs for a record. */
export const statementOf = (record: CaptureRecord): CaptureStatement => {
  const facts = factsOf(record)
  return {
    _type: statementType,
    subject: [{ name: record.source, digest: { "sha256": facts.bodySha256, "text-sha256": facts.textSha256 } }],
    predicateType: capturePredicateType,
    predicate: {
      accessedAt: facts.accessedAt,
      contentType: facts.contentType,
      extraction: { id: facts.extraction, version: extractionVersion(facts.extraction) },
      byteLength: facts.byteLength,
      producer: `citegate/${version}`
    }
  }
}

/**
 * The attestation of a record: the envelope's text, as a store keeps it.
 *
 * @since 0.3.0
 * @category signing
 */
export const sign = (record: CaptureRecord, key: SigningKey): string =>
  renderEnvelope(signStatementOf(CaptureStatement)(statementOf(record), key) satisfies Envelope)

const verifyCaptureEnvelope = verifyEnvelopeOf(CaptureStatement)

/** The first field where a signed statement and the record read differ, or `undefined`. */
const difference = (signed: CaptureStatement, record: CaptureRecord): string | undefined => {
  const expected = statementOf(record)
  const [s] = signed.subject
  const [e] = expected.subject
  if (s.name !== e.name) return "source"
  if (s.digest.sha256 !== e.digest.sha256) return "body SHA-256"
  if (s.digest["text-sha256"] !== e.digest["text-sha256"]) return "text SHA-256"
  for (const field of ["accessedAt", "contentType", "byteLength"] as const) {
    if (signed.predicate[field] !== expected.predicate[field]) return field
  }
  if (signed.predicate.extraction.id !== expected.predicate.extraction.id) return "extraction"
  return undefined
}

/**
 * Checks a record's attestation (its envelope text, `undefined` when the store has none) against
 * the trusted keys: `UnsignedCapture` when there is none, `UnknownSigningKey` when no trusted key
 * signed it, `SignatureInvalid` when the signature does not verify, the envelope is malformed, or it
 * attests another capture (an envelope replayed from another record or run). Returns the key id. Pure.
 *
 * @since 0.3.0
 * @category verifying
 */
export const check = (
  record: CaptureRecord,
  envelope: string | undefined,
  trusted: ReadonlyArray<PublicKey>
): Either.Either<string, CaptureSignatureError> => {
  const source = record.source
  if (envelope === undefined) return Either.left(new UnsignedCapture({ source }))
  return Either.flatMap(
    Either.mapLeft(verifyCaptureEnvelope(envelope, trusted), (error): CaptureSignatureError => {
      switch (error._tag) {
        case "EnvelopeMalformed":
          return new SignatureInvalid({ keyid: "", source, detail: `the attestation is malformed: ${error.detail}` })
        case "SignatureInvalid":
          return new SignatureInvalid({ keyid: error.keyid, source })
        case "UnknownSigningKey":
          return new UnknownSigningKey({ keyids: error.keyids, source })
      }
    }),
    ({ keyid, statement }) => {
      const field = difference(statement, record)
      return field === undefined ? Either.right(keyid) : Either.left(
        new SignatureInvalid({
          keyid,
          source,
          detail: `the signature is valid but attests another capture (its ${field} differs from this record's): a replayed attestation`
        })
      )
    }
  )
}
