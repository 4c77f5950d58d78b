/**
 * Signed exports: a DSSE envelope (https://github.com/secure-systems-lab/dsse, protocol v1) whose
 * payload is an in-toto Statement v1 naming the exported file by its SHA-256, signed with Ed25519
 * (RFC 8032, `node:crypto`, no network). Whoever receives a WARC file or an annotation document with
 * its envelope checks, offline and with the public key alone, that citegate's operator produced
 * exactly those bytes.
 *
 * - Payload type `application/vnd.in-toto+json`; the signature is over DSSE's pre-authentication
 *   encoding `PAE(type, payload)`, never over the payload alone, so a payload cannot be replayed
 *   under another type.
 * - Key id: the SHA-256 (hex) of the public key's DER SubjectPublicKeyInfo, so the id follows from
 *   the key and several trusted keys (a rotation) are told apart without configuration.
 * - Verification follows DSSE: size, strict JSON and base64 first, then the signatures (a trusted
 *   key's id, the Ed25519 check over PAE), and only then is the payload parsed (strict Schema).
 *   The file is then hashed and compared with the statement's subject.
 *
 * Key material is never logged: keys are `KeyObject`s (whose inspection shows no bytes) and errors
 * name the key file or the key id only.
 *
 * @since 0.3.0
 */
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"
import { createHash, createPrivateKey, createPublicKey, type KeyObject, sign, verify } from "node:crypto"
import * as fs from "node:fs"
import { EnvelopeMalformed, SignatureInvalid, SigningKeyInvalid, SubjectMismatch, UnknownSigningKey } from "../Errors.js"
import { keyIdOf } from "../internal/keyId.js"
import { errorText, readRegularFile } from "../internal/safeRead.js"
import * as StrictJson from "../internal/strictJson.js"
import { version } from "../version.js"

/** DSSE payload type of an in-toto Statement. */
export const payloadType = "application/vnd.in-toto+json"
/** in-toto Statement v1. */
export const statementType = "https://in-toto.io/Statement/v1"
/** citegate's predicate: what kind of export the subject is, and what made it (versioned). */
export const predicateType = "urn:citegate:predicate:export:v1"

/** Largest key file read (a PEM Ed25519 key is about 120 bytes). */
export const maxKeyFileBytes = 16 * 1024
/** Largest envelope read; ours are under 1 KiB. */
export const maxEnvelopeBytes = 64 * 1024
/** Most signatures one envelope may carry (each costs one Ed25519 check). */
export const maxSignatures = 16
/** Most Ed25519 checks one envelope may cost (signatures without a key id are tried against every trusted key). */
export const maxSignatureChecks = 32
/** Longest key id taken from an envelope. */
export const maxKeyIdLength = 256

const strict = { parseOptions: { onExcessProperty: "error" as const } }
const Sha256Hex = Schema.String.pipe(Schema.pattern(/^[0-9a-f]{64}$/))
// Standard or URL-safe base64 (DSSE allows both), padded or not; Buffer.from ignores junk, so check first.
const base64Pattern = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}(?:==)?|[A-Za-z0-9+/]{3}=?)?$/
const base64UrlPattern = /^(?:[A-Za-z0-9_-]{4})*(?:[A-Za-z0-9_-]{2}(?:==)?|[A-Za-z0-9_-]{3}=?)?$/
const Base64 = Schema.String.pipe(
  Schema.filter((s) => base64Pattern.test(s) || base64UrlPattern.test(s), { message: () => "not base64" })
)

/** The export formats a statement can name. */
export const ExportFormat = Schema.Literal("warc", "annotations")
export type ExportFormat = typeof ExportFormat.Type

/** The subject of a statement: one name and its digests (strict). */
export const statementSubject = <const Digest extends Schema.Struct.Fields>(
  digest: Digest,
  maxNameLength = 4096
) =>
  Schema.Struct({
    name: Schema.String.pipe(Schema.maxLength(maxNameLength)),
    digest: Schema.Struct(digest).annotations(strict)
  }).annotations(strict)

/** A subject named by the SHA-256 of its bytes alone (exports, results). */
const sha256Subject = statementSubject({ sha256: Sha256Hex })

/**
 * An in-toto Statement v1 with one subject and the given predicate, decoded strictly: every
 * citegate statement (export, capture, result) is this shape with its own predicate.
 */
export const statementSchema = <
  const PredicateType extends string,
  Predicate extends Schema.Schema.Any,
  Subject extends Schema.Schema.Any = typeof sha256Subject
>(predicateType: PredicateType, predicate: Predicate, subject?: Subject) =>
  Schema.Struct({
    _type: Schema.Literal(statementType),
    subject: Schema.Tuple((subject ?? sha256Subject) as Subject),
    predicateType: Schema.Literal(predicateType),
    predicate
  }).annotations(strict)

/** An in-toto Statement v1 with citegate's export predicate, decoded strictly. */
export const Statement = statementSchema(
  predicateType,
  Schema.Struct({
    format: ExportFormat,
    /** Captures (WARC) or annotations in the file. */
    items: Schema.NonNegativeInt,
    producer: Schema.String.pipe(Schema.maxLength(256))
  }).annotations(strict)
)
export type Statement = typeof Statement.Type

/** A DSSE envelope (JSON form), decoded strictly. */
export const Envelope = Schema.Struct({
  payloadType: Schema.String.pipe(Schema.maxLength(256)),
  payload: Base64,
  signatures: Schema.Array(
    Schema.Struct({
      keyid: Schema.optional(Schema.String.pipe(Schema.maxLength(maxKeyIdLength))),
      sig: Base64
    }).annotations(strict)
  ).pipe(Schema.minItems(1), Schema.maxItems(maxSignatures))
}).annotations(strict)
export type Envelope = typeof Envelope.Type

/** An Ed25519 key and its id. */
export interface SigningKey {
  readonly keyid: string
  readonly privateKey: KeyObject
}

export interface PublicKey {
  readonly keyid: string
  readonly publicKey: KeyObject
}

/** The key id of a public key: SHA-256 (hex) of its DER SubjectPublicKeyInfo. */
export { keyIdOf }

/**
 * DSSE's pre-authentication encoding: `"DSSEv1" SP LEN(type) SP type SP LEN(body) SP body`, lengths as
 * ASCII decimal byte counts.
 */
export const pae = (type: string, body: Uint8Array): Buffer => {
  const typeBytes = Buffer.from(type, "utf8")
  return Buffer.concat([
    Buffer.from(`DSSEv1 ${typeBytes.byteLength} `, "ascii"),
    typeBytes,
    Buffer.from(` ${body.byteLength} `, "ascii"),
    body
  ])
}

const readKeyFile = (file: string) =>
  readRegularFile(file, maxKeyFileBytes).pipe(
    Effect.mapError((failure) => new SigningKeyInvalid({ path: file, detail: failure.detail }))
  )

const ed25519 = (file: string, key: () => KeyObject, what: string): Either.Either<KeyObject, SigningKeyInvalid> => {
  let object: KeyObject
  try {
    object = key()
  } catch {
    // Node's parse errors say nothing of the bytes, but a fixed text is certain never to.
    return Either.left(new SigningKeyInvalid({ path: file, detail: `not a PEM ${what}` }))
  }
  return object.asymmetricKeyType === "ed25519"
    ? Either.right(object)
    : Either.left(new SigningKeyInvalid({ path: file, detail: `a ${object.asymmetricKeyType ?? "non-asymmetric"} key, not Ed25519` }))
}

/**
 * Reads an Ed25519 private key (PKCS#8 PEM, unencrypted) from a file of at most `maxKeyFileBytes`.
 *
 * @since 0.3.0
 * @category keys
 */
export const loadSigningKey = Effect.fn("Signatures.loadSigningKey")(function*(file: string) {
  const pem = yield* readKeyFile(file)
  const privateKey = yield* ed25519(file, () => createPrivateKey({ key: pem, format: "pem" }), "PKCS#8 private key")
  if (privateKey.type !== "private") return yield* new SigningKeyInvalid({ path: file, detail: "not a private key" })
  return { keyid: keyIdOf(createPublicKey(privateKey)), privateKey } satisfies SigningKey
})

/**
 * Reads an Ed25519 public key (SubjectPublicKeyInfo PEM) from a file of at most `maxKeyFileBytes`.
 *
 * @since 0.3.0
 * @category keys
 */
export const loadPublicKey = Effect.fn("Signatures.loadPublicKey")(function*(file: string) {
  const pem = yield* readKeyFile(file)
  if (pem.includes("PRIVATE KEY")) {
    return yield* new SigningKeyInvalid({ path: file, detail: "a private key: pass the public key (SPKI PEM) to verify" })
  }
  const publicKey = yield* ed25519(file, () => createPublicKey({ key: pem, format: "pem" }), "public key")
  return { keyid: keyIdOf(publicKey), publicKey } satisfies PublicKey
})

/** The statement of an export file. */
export const statementOf = (subject: {
  readonly name: string
  readonly sha256: string
  readonly format: ExportFormat
  readonly items: number
}): Statement => ({
  _type: statementType,
  subject: [{ name: subject.name, digest: { sha256: subject.sha256 } }],
  predicateType,
  predicate: { format: subject.format, items: subject.items, producer: `citegate/${version}` }
})

/**
 * Signs a statement: the DSSE envelope, one Ed25519 signature over PAE.
 *
 * @since 0.3.0
 * @category signing
 */
export const signStatement = (statement: Statement, key: SigningKey): Envelope => signStatementOf(Statement)(statement, key)

/**
 * `signStatement` for any statement schema.
 *
 * @since 0.3.0
 * @category signing
 */
export const signStatementOf = <A, I>(schema: Schema.Schema<A, I>) => (statement: A, key: SigningKey): Envelope => {
  const payload = Buffer.from(JSON.stringify(Schema.encodeSync(schema)(statement)), "utf8")
  const sig = sign(null, pae(payloadType, payload), key.privateKey)
  return { payloadType, payload: payload.toString("base64"), signatures: [{ keyid: key.keyid, sig: sig.toString("base64") }] }
}

/** The envelope as the text written beside an export. */
export const renderEnvelope = (envelope: Envelope): string => JSON.stringify(envelope, null, 2) + "\n"

const malformed = (detail: string) => new EnvelopeMalformed({ detail })

const decodeEnvelope = (text: string, maxBytes: number): Either.Either<Envelope, EnvelopeMalformed> => {
  // A string longer than the limit in UTF-16 units is longer in bytes too: no need to count them.
  if (text.length > maxBytes || Buffer.byteLength(text, "utf8") > maxBytes) {
    return Either.left(malformed(`more than ${maxBytes} bytes`))
  }
  const parsed = StrictJson.parse(text)
  if (parsed._tag === "Left") return Either.left(malformed(parsed.issue.message))
  return Schema.decodeUnknownEither(Envelope, { errors: "all", onExcessProperty: "error" })(parsed.value).pipe(
    Either.mapLeft((error) => malformed(ParseResult.TreeFormatter.formatErrorSync(error)))
  )
}

const decodeBase64 = (text: string): Buffer => Buffer.from(text, base64Pattern.test(text) ? "base64" : "base64url")

/**
 * Checks an envelope against trusted keys and returns its statement. In order: size and strict
 * decoding (`EnvelopeMalformed`), the payload type, a signature by a trusted key
 * (`UnknownSigningKey` when none names one; a signature without a key id is tried against every
 * trusted key), the Ed25519 check over PAE (`SignatureInvalid`), and last the payload as a
 * Statement (`EnvelopeMalformed`). Pure.
 *
 * @since 0.3.0
 * @category verifying
 */
export const verifyEnvelope = (
  text: string,
  trusted: ReadonlyArray<PublicKey>
): Either.Either<
  { readonly statement: Statement; readonly keyid: string },
  EnvelopeMalformed | UnknownSigningKey | SignatureInvalid
> => verifyEnvelopeOf(Statement)(text, trusted)

/**
 * `verifyEnvelope` for any statement schema (a capture's attestation, a verification's): the same
 * checks in the same order, the payload decoded strictly with `schema` last. `maxBytes` (default
 * `maxEnvelopeBytes`) is the largest envelope text taken, checked before it is parsed.
 *
 * @since 0.3.0
 * @category verifying
 */
export const verifyEnvelopeOf = <A, I>(schema: Schema.Schema<A, I>, options?: { readonly maxBytes?: number | undefined }) =>
(
  text: string,
  trusted: ReadonlyArray<PublicKey>
): Either.Either<
  { readonly statement: A; readonly keyid: string },
  EnvelopeMalformed | UnknownSigningKey | SignatureInvalid
> =>
  Either.gen(function*() {
    const envelope = yield* decodeEnvelope(text, options?.maxBytes ?? maxEnvelopeBytes)
    if (envelope.payloadType !== payloadType) {
      return yield* Either.left(malformed(`payload type ${JSON.stringify(envelope.payloadType)}, expected ${payloadType}`))
    }
    const payload = decodeBase64(envelope.payload)
    const message = pae(envelope.payloadType, payload)
    let failedKey: string | undefined
    let verifiedKey: string | undefined
    let checks = 0
    for (const signature of envelope.signatures) {
      const keys = signature.keyid === undefined ? trusted : trusted.filter((k) => k.keyid === signature.keyid)
      for (const key of keys) {
        if (++checks > maxSignatureChecks) {
          return yield* Either.left(malformed(`verifying it would take more than ${maxSignatureChecks} signature checks`))
        }
        if (verify(null, message, key.publicKey, decodeBase64(signature.sig))) verifiedKey = key.keyid
        else failedKey ??= key.keyid
        if (verifiedKey !== undefined) break
      }
      if (verifiedKey !== undefined) break
    }
    if (verifiedKey === undefined) {
      return yield* Either.left(
        failedKey !== undefined
          ? new SignatureInvalid({ keyid: failedKey })
          : new UnknownSigningKey({ keyids: envelope.signatures.flatMap((s) => (s.keyid === undefined ? [] : [s.keyid])) })
      )
    }
    const parsed = StrictJson.parse(payload.toString("utf8"))
    if (parsed._tag === "Left") return yield* Either.left(malformed(`the signed payload: ${parsed.issue.message}`))
    const statement = yield* Schema.decodeUnknownEither(schema, { errors: "all", onExcessProperty: "error" })(parsed.value).pipe(
      Either.mapLeft((error) => malformed(`the signed statement: ${ParseResult.TreeFormatter.formatErrorSync(error)}`))
    )
    return { statement, keyid: verifiedKey }
  })

/** SHA-256 (hex) of a file, streamed: memory stays one chunk whatever its size. */
export const fileSha256 = (file: string): Effect.Effect<string, EnvelopeMalformed> =>
  Effect.async<string, EnvelopeMalformed>((resume) => {
    const hash = createHash("sha256")
    const stream = fs.createReadStream(file)
    stream.on("data", (chunk) => hash.update(chunk))
    stream.on("error", (error) => resume(Effect.fail(malformed(`the signed file cannot be read: ${errorText(error)}`))))
    stream.on("end", () => resume(Effect.succeed(hash.digest("hex"))))
    return Effect.sync(() => stream.destroy())
  })

/**
 * Checks an export file against its envelope: the envelope as `verifyEnvelope` checks it, then the
 * file's SHA-256 against the statement's subject (`SubjectMismatch`: other bytes, or the envelope of
 * another export).
 *
 * @since 0.3.0
 * @category verifying
 */
export const verifyFile = Effect.fn("Signatures.verifyFile")(function*(options: {
  readonly file: string
  readonly envelope: string
  readonly trusted: ReadonlyArray<PublicKey>
}) {
  const bytes = yield* readRegularFile(options.envelope, maxEnvelopeBytes).pipe(
    Effect.mapError((failure) => malformed(`${options.envelope}: ${failure.detail}`))
  )
  const checked = yield* verifyEnvelope(bytes.toString("utf8"), options.trusted)
  const sha256 = yield* fileSha256(options.file)
  const subject = checked.statement.subject[0]
  if (subject.digest.sha256 !== sha256) {
    return yield* new SubjectMismatch({ path: options.file, signedSha256: subject.digest.sha256, fileSha256: sha256 })
  }
  return { ...checked, sha256 }
})
