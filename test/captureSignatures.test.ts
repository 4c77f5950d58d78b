/**
 * Signed captures (src/evidence/CaptureAttestation.ts, src/verify/CaptureSignatures.ts): Ed25519
 * against RFC 8032's section 7.1 vectors (keys loaded from the vectors as node KeyObjects), the
 * capture attestation's DSSE pre-authentication encoding against an implementation written here
 * from the DSSE spec, then captures through a loopback server with a signing key, verified by the
 * Gate under `verify.signatures`: unsigned, tampered, untrusted, truncated and replayed attestations
 * each refused with their typed error under `require`, reported under `check`, and two trusted keys
 * (a rotation) both accepted.
 */
import { assert, describe, it } from "@effect/vitest"
import { Context, Effect, Either, Layer } from "effect"
import { createHash, createPrivateKey, createPublicKey, generateKeyPairSync, type KeyObject, sign, verify } from "node:crypto"
import * as fsp from "node:fs/promises"
import * as path from "node:path"
import * as Capture from "../src/capture/Capture.js"
import { type CaptureRef, makeCaptureRecord, type Rfc3339Utc, type SourceUrl } from "../src/Domain.js"
import { ReportRejected, SignatureInvalid, UnknownSigningKey, UnsignedCapture } from "../src/Errors.js"
import * as CaptureAttestation from "../src/evidence/CaptureAttestation.js"
import * as Signatures from "../src/evidence/Signatures.js"
import * as SignatureNotesSection from "../src/render/SignatureNotesSection.js"
import * as CaptureStore from "../src/store/CaptureStore.js"
import * as MemoryStore from "../src/store/Memory.js"
import * as Config from "../src/Config.js"
import * as Gate from "../src/verify/Gate.js"
import * as Policy from "../src/verify/Policy.js"
import * as Verifier from "../src/verify/Verifier.js"
import { type Handler, testServer } from "./httpServer.js"
import { tempDirectory } from "./support.js"

// RFC 8032, section 7.1: TEST 1, 2, 3 and SHA(abc) (secret key, public key, message, signature; hex).
const rfc8032 = [
  {
    name: "TEST 1",
    secret: "9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60",
    public: "d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a",
    message: "",
    signature: "e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e065224901555fb8821590a33bacc61e39701cf9b46bd25bf5f0595bbe24655141438e7a100b"
  },
  {
    name: "TEST 2",
    secret: "4ccd089b28ff96da9db6c346ec114e0f5b8a319f35aba624da8cf6ed4fb8a6fb",
    public: "3d4017c3e843895a92b70aa74d1b7ebc9c982ccf2ec4968cc0cd55f12af4660c",
    message: "72",
    signature: "92a009a9f0d4cab8720e820b5f642540a2b27b5416503f8fb3762223ebdb69da085ac1e43e15996e458f3613d0f11d8c387b2eaeb4302aeeb00d291612bb0c00"
  },
  {
    name: "TEST 3",
    secret: "c5aa8df43f9f837bedb7442f31dcb7b166d38535076f094b85ce3a2e0b4458f7",
    public: "fc51cd8e6218a1a38da47ed00230f0580816ed13ba3303ac5deb911548908025",
    message: "af82",
    signature: "6291d657deec24024827e69c3abe01a30ce548a284743a445e3680d7db5ac3ac18ff9b538d16f290ae67f760984dc6594a7c15e9716ed28dc027beceea1ec40a"
  }
] as const

// The fixed DER prefixes of an Ed25519 PKCS#8 private key and SubjectPublicKeyInfo (RFC 8410).
const pkcs8Prefix = "302e020100300506032b657004220420"
const spkiPrefix = "302a300506032b6570032100"

const privateKeyOf = (secretHex: string): KeyObject =>
  createPrivateKey({ key: Buffer.from(pkcs8Prefix + secretHex, "hex"), format: "der", type: "pkcs8" })
const publicKeyOf = (publicHex: string): KeyObject =>
  createPublicKey({ key: Buffer.from(spkiPrefix + publicHex, "hex"), format: "der", type: "spki" })

/**
 * PAE as the DSSE spec (protocol.md, "Signature definition") defines it, written independently of
 * the module: "DSSEv1" SP LEN(type) SP type SP LEN(body) SP body, LEN as ASCII decimal byte counts.
 */
const specPae = (type: string, body: Buffer): Buffer => {
  const t = Buffer.from(type, "utf8")
  return Buffer.concat([Buffer.from("DSSEv1 " + t.length + " "), t, Buffer.from(" " + body.length + " "), body])
}

const keysOf = (privateKey: KeyObject) => {
  const publicKey = createPublicKey(privateKey)
  const keyid = Signatures.keyIdOf(publicKey)
  return { signing: { keyid, privateKey } satisfies Signatures.SigningKey, trusted: { keyid, publicKey } satisfies Signatures.PublicKey }
}

const freshKeys = () => keysOf(generateKeyPairSync("ed25519").privateKey)

const record = (source: string, text: string, at = "2026-11-02T10:00:00.000Z") =>
  makeCaptureRecord({ source: source as SourceUrl, text, accessedAt: at as Rfc3339Utc, contentType: "text/plain; charset=utf-8" })

type Mutable = { payloadType: string; payload: string; signatures: Array<{ keyid?: string; sig: string }> }

describe("Ed25519 (RFC 8032 section 7.1) and DSSE, for capture attestations", () => {
  it("each vector: the public key follows from the secret, the signature is the RFC's, and it verifies", () => {
    for (const vector of rfc8032) {
      const privateKey = privateKeyOf(vector.secret)
      const publicKey = publicKeyOf(vector.public)
      const message = Buffer.from(vector.message, "hex")
      assert.strictEqual(
        createPublicKey(privateKey).export({ type: "spki", format: "der" }).toString("hex"),
        spkiPrefix + vector.public,
        vector.name
      )
      assert.strictEqual(sign(null, message, privateKey).toString("hex"), vector.signature, vector.name)
      assert.isTrue(verify(null, message, publicKey, Buffer.from(vector.signature, "hex")), vector.name)
      const flipped = Buffer.from(vector.signature, "hex")
      flipped[0] = flipped[0]! ^ 1
      assert.isFalse(verify(null, message, publicKey, flipped), vector.name)
      // The key id names the public key: its SPKI DER's SHA-256.
      assert.strictEqual(
        Signatures.keyIdOf(publicKey),
        createHash("sha256").update(Buffer.from(spkiPrefix + vector.public, "hex")).digest("hex")
      )
    }
  })

  it("a capture attestation signed with an RFC key is Ed25519 over the spec's PAE, byte for byte", () => {
    for (const vector of rfc8032) {
      const { signing, trusted } = keysOf(privateKeyOf(vector.secret))
      const rec = record("https://example.test/caf%C3%A9.txt", "Caf\u00e9 sales were 4,210 units.\n")
      const text = CaptureAttestation.sign(rec, signing)
      const envelope: Mutable = JSON.parse(text)
      assert.strictEqual(envelope.payloadType, "application/vnd.in-toto+json")
      assert.deepStrictEqual(envelope.signatures.map((s) => s.keyid), [trusted.keyid])
      const payload = Buffer.from(envelope.payload, "base64")
      assert.deepStrictEqual(Signatures.pae(envelope.payloadType, payload), specPae(envelope.payloadType, payload))
      // Ed25519 is deterministic: the signature is exactly the RFC key's signature over the spec's PAE.
      assert.strictEqual(envelope.signatures[0]!.sig, sign(null, specPae(envelope.payloadType, payload), privateKeyOf(vector.secret)).toString("base64"))
      assert.isTrue(verify(null, specPae(envelope.payloadType, payload), publicKeyOf(vector.public), Buffer.from(envelope.signatures[0]!.sig, "base64")))
      assert.isFalse(verify(null, payload, publicKeyOf(vector.public), Buffer.from(envelope.signatures[0]!.sig, "base64")), "not over the bare payload")
      assert.deepStrictEqual(JSON.parse(payload.toString("utf8")), {
        _type: "https://in-toto.io/Statement/v1",
        subject: [{ name: rec.source, digest: { "sha256": rec.sha256, "text-sha256": rec.sha256 } }],
        predicateType: "urn:citegate:predicate:capture:v1",
        predicate: {
          accessedAt: rec.accessedAt,
          contentType: "text/plain; charset=utf-8",
          extraction: { id: "text/1", version: 1 },
          byteLength: Buffer.byteLength(rec.text, "utf8"),
          producer: CaptureAttestation.statementOf(rec).predicate.producer
        }
      })
      assert.deepStrictEqual(CaptureAttestation.check(rec, text, [trusted]), Either.right(trusted.keyid))
    }
  })

  it("PAE of the spec's example and of non-ASCII types: byte lengths, not characters", () => {
    assert.strictEqual(
      Signatures.pae("http://example.com/HelloWorld", Buffer.from("hello world")).toString("utf8"),
      "DSSEv1 29 http://example.com/HelloWorld 11 hello world"
    )
    for (const [type, body] of [["", ""], ["t\u00e9", "\u{1F600}"], ["a b", " "]] as const) {
      assert.deepStrictEqual(Signatures.pae(type, Buffer.from(body)), specPae(type, Buffer.from(body)))
    }
  })
})

describe("CaptureAttestation.check: each way an attestation can be wrong", () => {
  const rfc = keysOf(privateKeyOf(rfc8032[0].secret))
  const a = record("https://example.test/a.txt", "Net sales were 4,210 units.\n")
  const b = record("https://example.test/b.txt", "Inventory was 1,180 units.\n")
  const signedA = CaptureAttestation.sign(a, rfc.signing)
  const left = (result: Either.Either<string, unknown>) => {
    if (Either.isRight(result)) return assert.fail("the attestation verified")
    return result.left
  }

  it("none: UnsignedCapture", () => {
    const error = left(CaptureAttestation.check(a, undefined, [rfc.trusted]))
    assert.instanceOf(error, UnsignedCapture)
    assert.strictEqual(error.source, a.source)
  })

  it("a tampered payload (the signed statement changed, signature kept): SignatureInvalid", () => {
    const envelope: Mutable = JSON.parse(signedA)
    const statement = JSON.parse(Buffer.from(envelope.payload, "base64").toString("utf8"))
    statement.predicate.accessedAt = "2026-11-03T10:00:00.000Z"
    envelope.payload = Buffer.from(JSON.stringify(statement)).toString("base64")
    const error = left(CaptureAttestation.check(a, JSON.stringify(envelope), [rfc.trusted]))
    assert.instanceOf(error, SignatureInvalid)
    assert.strictEqual(error.keyid, rfc.trusted.keyid)
    assert.isUndefined(error.detail)
  })

  it("a key id no trusted key has: UnknownSigningKey naming it; signed by another key: UnknownSigningKey", () => {
    const other = freshKeys()
    const byOther = left(CaptureAttestation.check(a, CaptureAttestation.sign(a, other.signing), [rfc.trusted]))
    assert.instanceOf(byOther, UnknownSigningKey)
    assert.deepStrictEqual(byOther.keyids, [other.trusted.keyid])
    assert.strictEqual(byOther.source, a.source)
    const envelope: Mutable = JSON.parse(signedA)
    envelope.signatures[0]!.keyid = "f".repeat(64)
    const renamed = left(CaptureAttestation.check(a, JSON.stringify(envelope), [rfc.trusted]))
    assert.instanceOf(renamed, UnknownSigningKey)
    assert.deepStrictEqual(renamed.keyids, ["f".repeat(64)])
  })

  it("truncated base64 (payload or signature): SignatureInvalid, never a defect", () => {
    const original: Mutable = JSON.parse(signedA)
    let dataCuts = 0
    for (const field of ["payload", "sig"] as const) {
      for (const cut of [1, 2, 3, 4, 40]) {
        const envelope: Mutable = JSON.parse(signedA)
        if (field === "payload") envelope.payload = envelope.payload.slice(0, -cut)
        else envelope.signatures[0]!.sig = envelope.signatures[0]!.sig.slice(0, -cut)
        const cutValue = field === "payload" ? envelope.payload : envelope.signatures[0]!.sig
        const originalValue = field === "payload" ? original.payload : original.signatures[0]!.sig
        const result = CaptureAttestation.check(a, JSON.stringify(envelope), [rfc.trusted])
        // DSSE allows unpadded base64: a cut of the padding alone leaves the same bytes, still validly signed.
        if (/^[A-Za-z0-9+/]*$/.test(cutValue) && Buffer.from(cutValue, "base64").equals(Buffer.from(originalValue, "base64"))) {
          assert.isTrue(Either.isRight(result), `${field} cut by ${cut} (padding only)`)
          continue
        }
        dataCuts++
        assert.instanceOf(left(result), SignatureInvalid, `${field} cut by ${cut}`)
      }
    }
    assert.isAtLeast(dataCuts, 8)
    // The envelope text itself cut short: not JSON any more.
    const cutText = left(CaptureAttestation.check(a, signedA.slice(0, signedA.length / 2), [rfc.trusted]))
    assert.instanceOf(cutText, SignatureInvalid)
    assert.match(cutText.detail ?? "", /malformed/)
  })

  it("an envelope replayed from another record (or from an older capture of the same source): SignatureInvalid", () => {
    const replayed = left(CaptureAttestation.check(b, signedA, [rfc.trusted]))
    assert.instanceOf(replayed, SignatureInvalid)
    assert.strictEqual(replayed.source, b.source)
    assert.match(replayed.detail ?? "", /attests another capture \(its source differs/)
    const older = record(a.source, a.text, "2026-10-01T00:00:00.000Z")
    const stale = left(CaptureAttestation.check(a, CaptureAttestation.sign(older, rfc.signing), [rfc.trusted]))
    assert.instanceOf(stale, SignatureInvalid)
    assert.match(stale.detail ?? "", /accessedAt differs/)
    const edited = record(a.source, a.text.replace("4,210", "4,290"), a.accessedAt)
    const body = left(CaptureAttestation.check(edited, signedA, [rfc.trusted]))
    assert.instanceOf(body, SignatureInvalid)
    assert.match(body.detail ?? "", /body SHA-256 differs/)
  })

  it("rotation: of two trusted keys, either one verifies its own attestations", () => {
    const next = freshKeys()
    const both = [rfc.trusted, next.trusted]
    assert.deepStrictEqual(CaptureAttestation.check(a, signedA, both), Either.right(rfc.trusted.keyid))
    assert.deepStrictEqual(CaptureAttestation.check(b, CaptureAttestation.sign(b, next.signing), both), Either.right(next.trusted.keyid))
  })
})

// ---------------------------------------------------------------------------------------------
// Through capture and the Gate
// ---------------------------------------------------------------------------------------------

const bodies: Record<string, string> = {
  "/sales.txt": "Q3 2026 report.\nNet sales for Q3 2026 were 4,210 units.\n",
  "/stock.txt": "Inventory at the end of Q3 2026 was 1,180 units.\n"
}

const serveBodies: Handler = (request, response) => {
  const body = bodies[request.url ?? ""]
  if (body === undefined) {
    response.writeHead(404).end()
    return
  }
  response.writeHead(200, { "content-type": "text/plain; charset=utf-8" })
  response.end(body)
}

/** Captures the sources into `directory` (a fresh one by default), signed when a key is given. */
const captureInto = (sources: ReadonlyArray<string>, signingKey: Signatures.SigningKey | undefined, directory?: string) =>
  Effect.gen(function*() {
    const runDirectory = directory ?? (yield* tempDirectory)
    const context = yield* Layer.build(
      Capture.layer({ approved: sources, allowLoopbackHttp: true, timeoutMs: 5_000, signingKey }).pipe(
        Layer.provide(CaptureStore.layerFileSystem({ directory: runDirectory }))
      )
    )
    const capture = Context.get(context, Capture.Capture)
    const refs = []
    for (const source of sources) refs.push(yield* capture.capture(source))
    return { directory: runDirectory, refs }
  }).pipe(Effect.orDie)

const setup = Effect.gen(function*() {
  const server = yield* testServer(serveBodies)
  const sales = server.url("/sales.txt")
  const stock = server.url("/stock.txt")
  return { sales, stock }
})

const pem = (key: Signatures.PublicKey) => key.publicKey.export({ type: "spki", format: "pem" }).toString()

const configOf = (
  sources: ReadonlyArray<string>,
  signatures: "off" | "check" | "require",
  trusted: ReadonlyArray<Signatures.PublicKey>
) => ({
  sources,
  labels: ["sales", "stock"],
  verify: {
    maxFacts: 10,
    mode: "reject",
    signatures,
    trustedKeys: Object.fromEntries(trusted.map((k) => [k.keyid, pem(k)]))
  }
})

const reportOf = (refs: ReadonlyArray<CaptureRef>) => ({
  facts: [
    { state: "cited", label: "sales", source: refs[0]!.source, captureSha256: refs[0]!.sha256, snippet: "4,210 units" },
    { state: "cited", label: "stock", source: refs[1]!.source, captureSha256: refs[1]!.sha256, snippet: "1,180 units" }
  ]
})

const gateCheck = (directory: string, config: unknown, report: unknown) =>
  Effect.flatMap(Gate.Gate, (gate) => Effect.either(gate.checkJsonWithCaptures(JSON.stringify(report)))).pipe(
    Effect.provide(Gate.layer({ runDirectory: directory, config }).pipe(Layer.orDie))
  )

const rejectedTags = (outcome: Either.Either<Gate.Checked, unknown>) => {
  if (Either.isRight(outcome)) return assert.fail("the report was accepted")
  assert.instanceOf(outcome.left, ReportRejected)
  return outcome.left.failures.map((f) => [f.index, f.error._tag])
}

/** Replaces a (read-only) attestation file with other text. */
const replaceAttestation = (directory: string, source: string, text: string) =>
  Effect.promise(async () => {
    const file = path.join(directory, CaptureStore.attestationFileName(source))
    await fsp.rm(file)
    await fsp.writeFile(file, text, { mode: 0o444 })
  })

const readAttestation = (directory: string, source: string) =>
  Effect.promise(() => fsp.readFile(path.join(directory, CaptureStore.attestationFileName(source)), "utf8"))

describe("signed captures, captured through a loopback server and verified by the Gate", () => {
  it.scopedLive("a capture with a signing key writes an attestation beside each record; require accepts it", () =>
    Effect.gen(function*() {
      const { sales, stock } = yield* setup
      const key = freshKeys()
      const { directory, refs } = yield* captureInto([sales, stock], key.signing)
      const names = (yield* Effect.promise(() => fsp.readdir(directory))).sort()
      const expected = [sales, stock].flatMap((s) => [CaptureStore.recordFileName(s), CaptureStore.attestationFileName(s)]).sort()
      assert.deepStrictEqual(names, expected)
      for (const source of [sales, stock]) {
        const file = path.join(directory, CaptureStore.attestationFileName(source))
        assert.strictEqual((yield* Effect.promise(() => fsp.stat(file))).mode & 0o222, 0, "written read-only, like the record")
        const statement = JSON.parse(Buffer.from(JSON.parse(yield* readAttestation(directory, source)).payload, "base64").toString())
        assert.strictEqual(statement.subject[0].name, source)
      }
      const outcome = yield* gateCheck(directory, configOf([sales, stock], "require", [key.trusted]), reportOf(refs))
      assert.isTrue(Either.isRight(outcome), String(Either.isLeft(outcome) && outcome.left))
      if (Either.isRight(outcome)) {
        assert.strictEqual(outcome.right.report.outcome, "grounded")
        assert.deepStrictEqual(outcome.right.signatureNotes, [])
      }
    }))

  it.scopedLive("require refuses an unsigned capture (UnsignedCapture); check passes it and returns the note; off ignores it", () =>
    Effect.gen(function*() {
      const { sales, stock } = yield* setup
      const key = freshKeys()
      const { directory, refs } = yield* captureInto([sales], key.signing)
      // The second source captured into the same run without the key: a record with no attestation.
      const unsigned = yield* captureInto([stock], undefined, directory)
      const allRefs = [refs[0]!, unsigned.refs[0]!]
      const required = yield* gateCheck(directory, configOf([sales, stock], "require", [key.trusted]), reportOf(allRefs))
      assert.deepStrictEqual(rejectedTags(required), [[1, "UnsignedCapture"]])
      // Drop mode: the unsigned capture's fact is retracted, the signed one stays.
      const requiredConfig = configOf([sales, stock], "require", [key.trusted])
      const dropped = yield* gateCheck(directory, { ...requiredConfig, verify: { ...requiredConfig.verify, mode: "drop" } }, reportOf(allRefs))
      if (Either.isLeft(dropped)) return assert.fail(String(dropped.left))
      assert.deepStrictEqual(dropped.right.report.retractions.map((r) => [r.index, r.error._tag]), [[1, "UnsignedCapture"]])
      assert.deepStrictEqual(dropped.right.report.facts.map((f) => f.fact.label), ["sales"])

      const checked = yield* gateCheck(directory, configOf([sales, stock], "check", [key.trusted]), reportOf(allRefs))
      if (Either.isLeft(checked)) return assert.fail(String(checked.left))
      assert.strictEqual(checked.right.report.outcome, "grounded")
      assert.deepStrictEqual(checked.right.signatureNotes?.map((n) => [n._tag, n.source]), [["UnsignedCapture", stock]])

      const off = yield* gateCheck(directory, configOf([sales, stock], "off", [key.trusted]), reportOf(allRefs))
      if (Either.isLeft(off)) return assert.fail(String(off.left))
      assert.deepStrictEqual(off.right.signatureNotes, [])
    }))

  it.scopedLive("require refuses a tampered payload, a wrong key id, truncated base64 and a replayed envelope", () =>
    Effect.gen(function*() {
      const { sales, stock } = yield* setup
      const key = freshKeys()
      const config = configOf([sales, stock], "require", [key.trusted])
      const cases: Array<[string, (original: Mutable, other: string) => string, string]> = [
        ["tampered payload", (e) => {
          const statement = JSON.parse(Buffer.from(e.payload, "base64").toString())
          statement.predicate.byteLength += 1
          return JSON.stringify({ ...e, payload: Buffer.from(JSON.stringify(statement)).toString("base64") })
        }, "SignatureInvalid"],
        ["wrong key id", (e) => JSON.stringify({ ...e, signatures: [{ ...e.signatures[0], keyid: "0".repeat(64) }] }), "UnknownSigningKey"],
        ["truncated base64", (e) => JSON.stringify({ ...e, signatures: [{ ...e.signatures[0], sig: e.signatures[0]!.sig.slice(0, -3) }] }), "SignatureInvalid"],
        ["replayed from the other record", (_e, other) => other, "SignatureInvalid"]
      ]
      for (const [what, change, tag] of cases) {
        const { directory, refs } = yield* captureInto([sales, stock], key.signing)
        const original: Mutable = JSON.parse(yield* readAttestation(directory, stock))
        yield* replaceAttestation(directory, stock, change(original, yield* readAttestation(directory, sales)))
        const outcome = yield* gateCheck(directory, config, reportOf(refs))
        assert.deepStrictEqual(rejectedTags(outcome), [[1, tag]], what)
        // Under check the same attestation is a note, and the report still passes.
        const checked = yield* gateCheck(directory, { ...config, verify: { ...config.verify, signatures: "check" } }, reportOf(refs))
        if (Either.isLeft(checked)) return assert.fail(`${what}: ${checked.left}`)
        assert.deepStrictEqual(checked.right.signatureNotes?.map((n) => n._tag), [tag], what)
      }
    }))

  it.scopedLive("rotation: captures signed by the old and the new key both verify while both are trusted; the old one dropped, its captures are refused", () =>
    Effect.gen(function*() {
      const { sales, stock } = yield* setup
      const old = freshKeys()
      const next = freshKeys()
      const { directory, refs } = yield* captureInto([sales], old.signing)
      const later = yield* captureInto([stock], next.signing, directory)
      const allRefs = [refs[0]!, later.refs[0]!]
      const both = yield* gateCheck(directory, configOf([sales, stock], "require", [old.trusted, next.trusted]), reportOf(allRefs))
      assert.isTrue(Either.isRight(both), String(Either.isLeft(both) && both.left))
      const onlyNew = yield* gateCheck(directory, configOf([sales, stock], "require", [next.trusted]), reportOf(allRefs))
      assert.deepStrictEqual(rejectedTags(onlyNew), [[0, "UnknownSigningKey"]])
    }))

  it.scopedLive("a signing key with a store that keeps no attestations fails the capture (never an unsigned record passed as signed)", () =>
    Effect.gen(function*() {
      const { sales } = yield* setup
      const key = freshKeys()
      const base = yield* Effect.orDie(MemoryStore.make({}))
      const store = CaptureStore.CaptureStore.of({ read: base.read, write: base.write, readBody: base.readBody, list: base.list })
      const context = yield* Layer.build(
        Capture.layer({ approved: [sales], allowLoopbackHttp: true, timeoutMs: 5_000, signingKey: key.signing }).pipe(
          Layer.provide(Layer.succeed(CaptureStore.CaptureStore, store))
        )
      )
      const error = yield* Effect.flip(Context.get(context, Capture.Capture).capture(sales))
      assert.strictEqual(error._tag, "CaptureWriteFailed")
      assert.include(error.message, "keeps no attestations")
    }))
})

describe("the check-mode section of renderings", () => {
  // A key id comes from the envelope, which a store writer controls: it is data in every format.
  const hostile = "<script>alert(1)</script> **bold** [x](javascript:y) \u001b[31mred\u001b[0m\nsecond line"
  const notes = [
    new UnknownSigningKey({ keyids: [hostile], source: "https://example.test/a.txt" }),
    new UnsignedCapture({ source: "https://example.test/b.txt" })
  ]

  it("text, Markdown and HTML show each note after the page, escaped; JSON, JSON-LD and an empty list leave the page alone", () => {
    const text = SignatureNotesSection.withSignatureNotes("text", "PAGE\n", notes)
    assert.isTrue(text.startsWith("PAGE\n\nCapture signatures (verify.signatures: check):\n  2 captures"))
    assert.include(text, "  UnknownSigningKey: Capture signed by an untrusted key\n    source: https://example.test/a.txt\n")
    assert.notInclude(text, "\u001b")
    assert.strictEqual(text.split("\n").filter((line) => line.startsWith("second line")).length, 0)

    const markdown = SignatureNotesSection.withSignatureNotes("markdown", "# Page\n\n", notes)
    assert.include(markdown, "## Capture signatures (verify.signatures: check)")
    assert.notInclude(markdown, "<script>")
    assert.notInclude(markdown, "**bold**")
    assert.notInclude(markdown, "[x](javascript")
    assert.include(markdown, "\\[x\\](javascript")
    assert.notInclude(markdown, "\u001b")

    const html = SignatureNotesSection.withSignatureNotes("html", "<html><body><h1>x</h1></body></html>", notes)
    assert.match(html, /<section class="signature-notes" id="signature-notes">[\s\S]*<\/section>\n<\/body><\/html>$/)
    assert.notInclude(html, "<script>")
    assert.include(html, "&lt;script&gt;")
    assert.include(html, `data-tag="UnsignedCapture"`)

    assert.strictEqual(SignatureNotesSection.withSignatureNotes("json", "{}", notes), "{}")
    // JSON-LD carries the notes in its graph; a text section after it would make the file unparseable.
    assert.strictEqual(SignatureNotesSection.withSignatureNotes("jsonld", "{}\n", notes), "{}\n")
    assert.strictEqual(SignatureNotesSection.withSignatureNotes("text", "PAGE\n", []), "PAGE\n")
  })
})

describe("the citation path (answers) under verify.signatures", () => {
  it.scopedLive("require fails every citation of an unsigned capture; each attestation is read once however many citations name it", () =>
    Effect.gen(function*() {
      const { sales, stock } = yield* setup
      const key = freshKeys()
      const { directory, refs } = yield* captureInto([sales], key.signing)
      const unsigned = yield* captureInto([stock], undefined, directory)
      const files = yield* CaptureStore.makeFileSystem({ directory })
      const reads: Array<string> = []
      // The real store, its attestation reads counted.
      const store = CaptureStore.CaptureStore.of({
        ...files,
        readAttestation: (source) => Effect.zipRight(Effect.sync(() => reads.push(source)), files.readAttestation!(source))
      })
      const config = yield* Effect.orDie(Config.decode(configOf([sales, stock], "require", [key.trusted])))
      const checked = yield* Effect.flatMap(Verifier.Verifier, (verifier) =>
        verifier.checkCitations([
          { source: sales, captureSha256: refs[0]!.sha256, snippet: "4,210 units" },
          { source: stock, captureSha256: unsigned.refs[0]!.sha256, snippet: "1,180 units" },
          { source: sales, captureSha256: refs[0]!.sha256, snippet: "Net sales" },
          { source: stock, captureSha256: unsigned.refs[0]!.sha256, snippet: "Inventory" }
        ])).pipe(
          Effect.provide(Verifier.layer.pipe(Layer.provide(Policy.layer(config)), Layer.provide(Layer.succeed(CaptureStore.CaptureStore, store))))
        )
      assert.deepStrictEqual(
        checked.results.map((r) => (Either.isRight(r) ? "verified" : r.left.map((f) => f._tag).join(","))),
        ["verified", "UnsignedCapture", "verified", "UnsignedCapture"]
      )
      assert.deepStrictEqual([...reads].sort(), [sales, stock].sort())
      assert.deepStrictEqual(checked.signatureNotes?.map((n) => n._tag), ["UnsignedCapture"])
    }))
})

describe("attestation files in a run directory", () => {
  it.scopedLive("never replaced (CaptureExists); one over 64 KiB or a symbolic link is refused unread under require", () =>
    Effect.gen(function*() {
      const { sales, stock } = yield* setup
      const key = freshKeys()
      const { directory, refs } = yield* captureInto([sales, stock], key.signing)
      const store = yield* CaptureStore.makeFileSystem({ directory })
      const before = yield* readAttestation(directory, sales)
      const stockOwn = yield* readAttestation(directory, stock)
      const record = yield* Effect.orDie(store.read(sales as SourceUrl))
      const again = yield* Effect.flip(store.writeAttestation!(sales as SourceUrl, CaptureAttestation.sign(record, freshKeys().signing)))
      assert.strictEqual(again._tag, "CaptureExists")
      assert.strictEqual(yield* readAttestation(directory, sales), before)
      const tooBig = yield* Effect.flip(store.writeAttestation!(stock as SourceUrl, "x".repeat(CaptureStore.maxAttestationBytes + 1)))
      assert.strictEqual(tooBig._tag, "CaptureWriteFailed")

      const config = configOf([sales, stock], "require", [key.trusted])
      // Over the limit: refused on its size (a file of 64 KiB + 1 byte of spaces would otherwise parse).
      yield* replaceAttestation(directory, stock, stockOwn + " ".repeat(CaptureStore.maxAttestationBytes))
      const large = yield* gateCheck(directory, config, reportOf(refs))
      if (Either.isRight(large)) return assert.fail("accepted")
      assert.instanceOf(large.left, ReportRejected)
      const error = large.left.failures[0]!.error
      assert.instanceOf(error, SignatureInvalid)
      assert.match(error.detail ?? "", /cannot be read/)
      // A symbolic link to a valid attestation is not read (the store reads regular files only).
      const link = path.join(directory, CaptureStore.attestationFileName(stock))
      yield* Effect.promise(async () => {
        await fsp.rm(link)
        await fsp.writeFile(path.join(directory, "elsewhere.json"), stockOwn)
        await fsp.symlink("elsewhere.json", link)
      })
      const linked = yield* gateCheck(directory, config, reportOf(refs))
      assert.deepStrictEqual(rejectedTags(linked), [[1, "SignatureInvalid"]])
      // The same bytes as a regular file verify: it was the link that was refused.
      yield* replaceAttestation(directory, stock, stockOwn)
      assert.isTrue(Either.isRight(yield* gateCheck(directory, config, reportOf(refs))))
    }))
})

describe("configuration of signatures", () => {
  const base = { sources: ["https://example.test/a.txt"], labels: ["a"] }
  const decodeError = (value: unknown) => Effect.flip(Config.decode(value))

  it.effect("trusted keys must be Ed25519 under their own id, at most 16; capture.signing is strict", () =>
    Effect.gen(function*() {
      const key = freshKeys()
      const other = freshKeys()
      const ok = yield* Config.decode({ ...base, verify: { signatures: "check", trustedKeys: { [key.trusted.keyid]: pem(key.trusted) } } })
      assert.strictEqual(Config.resolvedSignatures(ok), "check")
      assert.strictEqual(Config.resolvedSignatures(yield* Config.decode(base)), "off")

      const mislabelled = yield* decodeError({ ...base, verify: { trustedKeys: { [key.trusted.keyid]: pem(other.trusted) } } })
      assert.include(JSON.stringify(mislabelled.issues), `is the key with id ${other.trusted.keyid}, not ${key.trusted.keyid}`)
      const rsa = generateKeyPairSync("rsa", { modulusLength: 1024 }).publicKey
      const rsaId = Signatures.keyIdOf(rsa)
      const notEd25519 = yield* decodeError({ ...base, verify: { trustedKeys: { [rsaId]: rsa.export({ type: "spki", format: "pem" }).toString() } } })
      assert.include(JSON.stringify(notEd25519.issues), "not Ed25519")
      const badId = yield* decodeError({ ...base, verify: { trustedKeys: { "ABC": pem(key.trusted) } } })
      // Under strict decoding a key outside the id pattern is reported as unexpected, naming the pattern.
      assert.include(badId.issues.map((i) => i.message).join(), "^[0-9a-f]{64}$")
      const many = Object.fromEntries(Array.from({ length: 17 }, () => freshKeys()).map((k) => [k.trusted.keyid, pem(k.trusted)]))
      const tooMany = yield* decodeError({ ...base, verify: { trustedKeys: many } })
      assert.include(JSON.stringify(tooMany.issues), "at most 16 keys")
      const extra = yield* decodeError({ ...base, capture: { signing: { keyFile: "k.pem", key: "inline" } } })
      assert.deepInclude(extra.issues.map((i) => i.path.join(".")), "capture.signing.key")
      const mode = yield* decodeError({ ...base, verify: { signatures: "sometimes" } })
      assert.strictEqual(mode._tag, "InvalidConfig")
    }))
})
