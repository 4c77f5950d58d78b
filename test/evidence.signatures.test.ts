/**
 * Signed exports (src/evidence/Signatures.ts): Ed25519 against RFC 8032's test vector, DSSE's
 * pre-authentication encoding against an implementation written here from the DSSE spec (and the
 * spec's own example), then every way an envelope can be wrong, each with its typed failure.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Either } from "effect"
import { createHash, createPrivateKey, createPublicKey, generateKeyPairSync, sign } from "node:crypto"
import * as fsp from "node:fs/promises"
import * as path from "node:path"
import { inspect } from "node:util"
import { EnvelopeMalformed, SignatureInvalid, SigningKeyInvalid, SubjectMismatch, UnknownSigningKey } from "../src/Errors.js"
import * as Signatures from "../src/evidence/Signatures.js"
import { tempDirectory } from "./support.js"

// RFC 8032, section 7.1, TEST 1 (the empty message).
const rfcSeed = "9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60"
const rfcPublic = "d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a"
const rfcSignature = "e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e065224901555fb8821590a33bacc61e39701cf9b46bd25bf5f0595bbe24655141438e7a100b"

// The fixed DER prefixes of an Ed25519 PKCS#8 private key and SubjectPublicKeyInfo (RFC 8410).
const pkcs8Prefix = "302e020100300506032b657004220420"
const spkiPrefix = "302a300506032b6570032100"

const pemOf = (label: string, derHex: string) =>
  `-----BEGIN ${label}-----\n${Buffer.from(derHex, "hex").toString("base64")}\n-----END ${label}-----\n`

/** PAE as the DSSE spec (protocol.md) defines it, written independently of the module. */
const specPae = (type: string, body: Buffer): Buffer => {
  const t = Buffer.from(type, "utf8")
  return Buffer.concat([Buffer.from("DSSEv1"), Buffer.from(" "), Buffer.from(String(t.length)), Buffer.from(" "), t, Buffer.from(" "), Buffer.from(String(body.length)), Buffer.from(" "), body])
}

const newKeys = Effect.gen(function*() {
  const directory = yield* tempDirectory
  const pair = generateKeyPairSync("ed25519")
  const privateFile = path.join(directory, "signing.pem")
  const publicFile = path.join(directory, "signing.pub.pem")
  yield* Effect.promise(() => fsp.writeFile(privateFile, pair.privateKey.export({ type: "pkcs8", format: "pem" })))
  yield* Effect.promise(() => fsp.writeFile(publicFile, pair.publicKey.export({ type: "spki", format: "pem" })))
  const signing = yield* Signatures.loadSigningKey(privateFile)
  const trusted = yield* Signatures.loadPublicKey(publicFile)
  return { directory, signing, trusted, privateFile, publicFile }
}).pipe(Effect.orDie)

const sha = (text: string) => createHash("sha256").update(text).digest("hex")

const statement = Signatures.statementOf({ name: "run.warc", sha256: sha("the export"), format: "warc", items: 2 })

type Mutable = { payloadType: string; payload: string; signatures: Array<{ keyid?: string; sig: string }> }
const envelopeJson = (key: Signatures.SigningKey): Mutable => JSON.parse(Signatures.renderEnvelope(Signatures.signStatement(statement, key)))

const failure = (text: string, trusted: ReadonlyArray<Signatures.PublicKey>) => {
  const result = Signatures.verifyEnvelope(text, trusted)
  if (Either.isRight(result)) return assert.fail("the envelope verified")
  return result.left
}

describe("Ed25519 and DSSE, against their specifications", () => {
  it.scoped("RFC 8032 TEST 1: the key loads, its id is the SPKI digest, the signature is the RFC's", () =>
    Effect.gen(function*() {
      const directory = yield* tempDirectory
      const keyFile = path.join(directory, "rfc.pem")
      yield* Effect.promise(() => fsp.writeFile(keyFile, pemOf("PRIVATE KEY", pkcs8Prefix + rfcSeed)))
      const key = yield* Signatures.loadSigningKey(keyFile)
      assert.strictEqual(key.keyid, createHash("sha256").update(Buffer.from(spkiPrefix + rfcPublic, "hex")).digest("hex"))
      assert.strictEqual(sign(null, Buffer.alloc(0), key.privateKey).toString("hex"), rfcSignature)
      const publicKey = createPublicKey(pemOf("PUBLIC KEY", spkiPrefix + rfcPublic))
      assert.strictEqual(Signatures.keyIdOf(publicKey), key.keyid)
    }))

  it("PAE is the spec's encoding: its example, byte lengths of non-ASCII types and bodies", () => {
    assert.strictEqual(
      Signatures.pae("http://example.com/HelloWorld", Buffer.from("hello world")).toString("utf8"),
      "DSSEv1 29 http://example.com/HelloWorld 11 hello world"
    )
    for (const [type, body] of [["", ""], ["t\u00e9", "caf\u00e9 \u{1F600}"], [Signatures.payloadType, "{}"]] as const) {
      assert.deepStrictEqual(Signatures.pae(type, Buffer.from(body)), specPae(type, Buffer.from(body)))
    }
  })

  it.scoped("the envelope's signature is Ed25519 over PAE(payloadType, payload), checked with the public key alone", () =>
    Effect.gen(function*() {
      const { signing, trusted } = yield* newKeys
      const envelope = envelopeJson(signing)
      assert.strictEqual(envelope.payloadType, "application/vnd.in-toto+json")
      assert.strictEqual(envelope.signatures[0]!.keyid, trusted.keyid)
      const payload = Buffer.from(envelope.payload, "base64")
      const { verify } = yield* Effect.promise(() => import("node:crypto"))
      assert.isTrue(verify(null, specPae(envelope.payloadType, payload), trusted.publicKey, Buffer.from(envelope.signatures[0]!.sig, "base64")))
      assert.isFalse(verify(null, payload, trusted.publicKey, Buffer.from(envelope.signatures[0]!.sig, "base64")), "not over the bare payload")
      assert.deepStrictEqual(JSON.parse(payload.toString("utf8")), {
        _type: "https://in-toto.io/Statement/v1",
        subject: [{ name: "run.warc", digest: { sha256: sha("the export") } }],
        predicateType: "urn:citegate:predicate:export:v1",
        predicate: { format: "warc", items: 2, producer: statement.predicate.producer }
      })
    }))
})

describe("verifying an envelope", () => {
  it.scoped("sign, then verify: the statement and the key id come back", () =>
    Effect.gen(function*() {
      const { signing, trusted } = yield* newKeys
      const text = Signatures.renderEnvelope(Signatures.signStatement(statement, signing))
      const checked = Signatures.verifyEnvelope(text, [trusted])
      assert.deepStrictEqual(checked, Either.right({ statement, keyid: trusted.keyid }))
    }))

  it.scoped("one flipped byte of the payload, or of the signature: SignatureInvalid", () =>
    Effect.gen(function*() {
      const { signing, trusted } = yield* newKeys
      const envelope = envelopeJson(signing)
      const payload = Buffer.from(envelope.payload, "base64")
      // The digit of `items`: the statement stays valid JSON and a valid Statement.
      const at = payload.indexOf('"items":2') + 8
      payload[at] = "3".charCodeAt(0)
      const tampered = { ...envelope, payload: payload.toString("base64") }
      const error = failure(JSON.stringify(tampered), [trusted])
      assert.instanceOf(error, SignatureInvalid)
      assert.strictEqual((error as SignatureInvalid).keyid, trusted.keyid)
      const sig = Buffer.from(envelope.signatures[0]!.sig, "base64")
      sig[10] = sig[10]! ^ 0x01
      const badSig = { ...envelope, signatures: [{ keyid: trusted.keyid, sig: sig.toString("base64") }] }
      assert.instanceOf(failure(JSON.stringify(badSig), [trusted]), SignatureInvalid)
    }))

  it.scoped("a key that is not trusted: UnknownSigningKey naming the key id; a forged key id: SignatureInvalid", () =>
    Effect.gen(function*() {
      const mine = yield* newKeys
      const theirs = yield* newKeys
      const text = Signatures.renderEnvelope(Signatures.signStatement(statement, theirs.signing))
      const error = failure(text, [mine.trusted])
      assert.instanceOf(error, UnknownSigningKey)
      assert.deepStrictEqual((error as UnknownSigningKey).keyids, [theirs.trusted.keyid])
      // Someone else's signature relabelled with the trusted key's id.
      const forged = envelopeJson(theirs.signing)
      forged.signatures[0]!.keyid = mine.trusted.keyid
      assert.instanceOf(failure(JSON.stringify(forged), [mine.trusted]), SignatureInvalid)
      // Rotation: with both keys trusted, either signature verifies.
      assert.isTrue(Either.isRight(Signatures.verifyEnvelope(text, [mine.trusted, theirs.trusted])))
    }))

  it.scoped("a signature without a key id is tried against every trusted key", () =>
    Effect.gen(function*() {
      const { signing, trusted } = yield* newKeys
      const other = yield* newKeys
      const envelope = envelopeJson(signing)
      const anonymous = { ...envelope, signatures: [{ sig: envelope.signatures[0]!.sig }] }
      assert.isTrue(Either.isRight(Signatures.verifyEnvelope(JSON.stringify(anonymous), [other.trusted, trusted])))
      assert.instanceOf(failure(JSON.stringify(anonymous), [other.trusted]), SignatureInvalid)
    }))

  it.scoped("anonymous signatures against many trusted keys: at most maxSignatureChecks Ed25519 checks, then EnvelopeMalformed", () =>
    Effect.gen(function*() {
      const { signing, trusted } = yield* newKeys
      const others = Array.from({ length: 8 }, () => {
        const pair = generateKeyPairSync("ed25519")
        return { keyid: Signatures.keyIdOf(pair.publicKey), publicKey: pair.publicKey }
      })
      const envelope = envelopeJson(signing)
      const anonymous = { sig: envelope.signatures[0]!.sig }
      // 4 × 8 = 32 checks: allowed (all fail); 5 × 8 = 40: refused before the 33rd.
      assert.instanceOf(failure(JSON.stringify({ ...envelope, signatures: Array(4).fill(anonymous) }), others), SignatureInvalid)
      const error = failure(JSON.stringify({ ...envelope, signatures: Array(5).fill(anonymous) }), others)
      assert.instanceOf(error, EnvelopeMalformed)
      assert.include(error.message, "more than 32 signature checks")
      // The right key among them still verifies a single anonymous signature.
      assert.isTrue(Either.isRight(Signatures.verifyEnvelope(JSON.stringify({ ...envelope, signatures: [anonymous] }), [...others, trusted])))
    }))

  it.scoped("malformed envelopes: EnvelopeMalformed before any signature is checked", () =>
    Effect.gen(function*() {
      const { signing, trusted } = yield* newKeys
      const envelope = envelopeJson(signing)
      const cases: ReadonlyArray<[string, string, RegExp]> = [
        ["truncated base64", JSON.stringify({ ...envelope, payload: envelope.payload.slice(0, -3) }), /base64/],
        ["junk in base64", JSON.stringify({ ...envelope, payload: `${envelope.payload.slice(0, 8)}*${envelope.payload.slice(9)}` }), /base64/],
        ["truncated signature", JSON.stringify({ ...envelope, signatures: [{ keyid: trusted.keyid, sig: envelope.signatures[0]!.sig.slice(0, 5) }] }), /base64/],
        ["not JSON", Signatures.renderEnvelope(Signatures.signStatement(statement, signing)).slice(0, 40), /JSON/],
        ["an unknown key", JSON.stringify({ ...envelope, extra: 1 }), /extra/],
        ["a duplicate key", `{"payloadType":"x",${JSON.stringify(envelope).slice(1)}`, /payloadType/],
        ["another payload type", JSON.stringify({ ...envelope, payloadType: "application/json" }), /payload type/],
        ["no signature", JSON.stringify({ ...envelope, signatures: [] }), /signatures/],
        ["too many signatures", JSON.stringify({ ...envelope, signatures: Array(17).fill(envelope.signatures[0]) }), /signatures/],
        ["too large", JSON.stringify({ ...envelope, pad: "x".repeat(Signatures.maxEnvelopeBytes) }), /65536 bytes/]
      ]
      for (const [what, text, detail] of cases) {
        const error = failure(text, [trusted])
        assert.instanceOf(error, EnvelopeMalformed, what)
        assert.match(error.message, detail, what)
      }
    }))

  it.scoped("a correctly signed payload that is not citegate's statement is malformed, found after the signature check", () =>
    Effect.gen(function*() {
      const { signing, trusted } = yield* newKeys
      for (const payload of ['{"_type":"https://in-toto.io/Statement/v1"}', "[1,2", JSON.stringify({ ...statement, more: true })]) {
        const body = Buffer.from(payload)
        const sig = sign(null, Signatures.pae(Signatures.payloadType, body), signing.privateKey)
        const text = JSON.stringify({ payloadType: Signatures.payloadType, payload: body.toString("base64"), signatures: [{ keyid: signing.keyid, sig: sig.toString("base64") }] })
        const error = failure(text, [trusted])
        assert.instanceOf(error, EnvelopeMalformed, payload)
        assert.include(error.message, "the signed", payload)
      }
    }))
})

describe("verifying a file", () => {
  it.scoped("the file it names verifies; changed bytes, or the envelope of another file: SubjectMismatch", () =>
    Effect.gen(function*() {
      const { directory, signing, trusted } = yield* newKeys
      const file = path.join(directory, "a.jsonld")
      const other = path.join(directory, "b.jsonld")
      yield* Effect.promise(() => fsp.writeFile(file, "the export"))
      yield* Effect.promise(() => fsp.writeFile(other, "another export"))
      const envelope = path.join(directory, "a.jsonld.dsse.json")
      yield* Effect.promise(() => fsp.writeFile(envelope, Signatures.renderEnvelope(Signatures.signStatement(statement, signing))))
      const ok = yield* Signatures.verifyFile({ file, envelope, trusted: [trusted] })
      assert.strictEqual(ok.sha256, sha("the export"))
      const replayed = yield* Effect.flip(Signatures.verifyFile({ file: other, envelope, trusted: [trusted] }))
      assert.instanceOf(replayed, SubjectMismatch)
      assert.deepInclude(replayed, { signedSha256: sha("the export"), fileSha256: sha("another export") })
      yield* Effect.promise(() => fsp.writeFile(file, "the exporT"))
      assert.instanceOf(yield* Effect.flip(Signatures.verifyFile({ file, envelope, trusted: [trusted] })), SubjectMismatch)
      const missing = yield* Effect.flip(Signatures.verifyFile({ file, envelope: path.join(directory, "none"), trusted: [trusted] }))
      assert.instanceOf(missing, EnvelopeMalformed)
    }))
})

describe("key files", () => {
  it.scoped("only Ed25519 PEM keys of bounded size load; errors never show the file's content", () =>
    Effect.gen(function*() {
      const { directory, privateFile, publicFile, signing } = yield* newKeys
      const secretPem = yield* Effect.promise(() => fsp.readFile(privateFile, "utf8"))
      const secretBody = secretPem.split("\n")[1]!
      const write = (name: string, content: string | Buffer) =>
        Effect.promise(() => fsp.writeFile(path.join(directory, name), content)).pipe(Effect.as(path.join(directory, name)))
      const rsa = generateKeyPairSync("rsa", { modulusLength: 1024 }).privateKey.export({ type: "pkcs8", format: "pem" })
      const cases: ReadonlyArray<[string, Effect.Effect<unknown, SigningKeyInvalid>, RegExp]> = [
        ["an RSA key", Signatures.loadSigningKey(yield* write("rsa.pem", rsa)), /rsa key, not Ed25519/],
        ["garbage holding the key's text", Signatures.loadSigningKey(yield* write("junk.pem", `junk ${secretBody}`)), /not a PEM/],
        ["a public key to sign", Signatures.loadSigningKey(publicFile), /not a PEM|not a private key/],
        ["a private key to verify", Signatures.loadPublicKey(privateFile), /a private key/],
        ["a huge file", Signatures.loadSigningKey(yield* write("huge.pem", Buffer.alloc(Signatures.maxKeyFileBytes + 1, 65))), /exceeds/],
        ["no file", Signatures.loadSigningKey(path.join(directory, "none.pem")), /no such file/]
      ]
      for (const [what, load, detail] of cases) {
        const error = yield* Effect.flip(load)
        assert.instanceOf(error, SigningKeyInvalid, what)
        assert.match(error.message, detail, what)
        assert.notInclude(error.message, secretBody.slice(0, 20), what)
      }
      // A loaded key shows no key material when logged or inspected.
      const seed = createPrivateKey(secretPem).export({ format: "jwk" }).d!
      for (const shown of [inspect(signing, { depth: 10 }), JSON.stringify(signing), String(signing.privateKey)]) {
        assert.notInclude(shown, seed)
        assert.notInclude(shown, secretBody.slice(0, 20))
      }
    }))
})
