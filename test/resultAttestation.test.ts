/**
 * Signed verification results (src/evidence/ResultAttestation.ts): a report verified by the Gate is
 * signed, the envelope checked by a DSSE verifier written here from the spec, then refused when
 * tampered with, signed by an unknown key, cut short, replayed for another report, or when a
 * capture's attestation is presented in its place; a no_evidence result is never signed. Then the
 * spawned CLI: verify --sign-key, check-attestation ok, one byte of the report changed refused.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Either, Layer } from "effect"
import { createPublicKey, generateKeyPairSync, verify } from "node:crypto"
import * as fsp from "node:fs/promises"
import * as path from "node:path"
import {
  AttestationCaptureMismatch,
  AttestationSubjectMismatch,
  AttestationTypeMismatch,
  EnvelopeMalformed,
  ResultNotPassed,
  SignatureInvalid,
  UnknownSigningKey
} from "../src/Errors.js"
import * as CaptureAttestation from "../src/evidence/CaptureAttestation.js"
import * as ResultAttestation from "../src/evidence/ResultAttestation.js"
import * as Signatures from "../src/evidence/Signatures.js"
import * as MemoryStore from "../src/store/Memory.js"
import * as CaptureStore from "../src/store/CaptureStore.js"
import * as Gate from "../src/verify/Gate.js"
import { cli } from "./cliProcess.js"
import { cited, fixturePath, inventoryRecord, runDirectoryWith, salesRecord, tempDirectory, unavailable } from "./support.js"

/** PAE as the DSSE spec defines it (protocol.md), written independently of the module. */
const specPae = (type: string, body: Buffer): Buffer => {
  const t = Buffer.from(type, "utf8")
  return Buffer.concat([Buffer.from("DSSEv1 " + t.length + " "), t, Buffer.from(" " + body.length + " "), body])
}

/** A DSSE verifier from the spec: decode the payload, check one signature over PAE, parse the statement. */
const specVerify = (text: string, publicKey: ReturnType<typeof createPublicKey>) => {
  const envelope = JSON.parse(text) as { payloadType: string; payload: string; signatures: Array<{ keyid: string; sig: string }> }
  const payload = Buffer.from(envelope.payload, "base64")
  const ok = envelope.signatures.some((s) => verify(null, specPae(envelope.payloadType, payload), publicKey, Buffer.from(s.sig, "base64")))
  return { ok, statement: JSON.parse(payload.toString("utf8")) }
}

const keys = () => {
  const pair = generateKeyPairSync("ed25519")
  const keyid = Signatures.keyIdOf(pair.publicKey)
  return { pair, signing: { keyid, privateKey: pair.privateKey }, trusted: { keyid, publicKey: pair.publicKey } }
}

const config = {
  sources: [salesRecord.source, inventoryRecord.source],
  labels: ["q3_net_sales", "q3_stock", "q3_margin"],
  verify: { mode: "reject" }
}

const reportText = JSON.stringify({
  facts: [
    cited("q3_net_sales", salesRecord, "Net sales for Q3 2026 were 4,210 units"),
    unavailable("q3_margin", "the sources do not state a margin")
  ]
})

/** Verifies `text` with the Gate over an in-memory store holding both captures. */
const checked = (text: string) =>
  Effect.gen(function*() {
    const gate = yield* Gate.Gate
    return [gate.policy, yield* gate.checkJsonWithCaptures(text)] as const
  }).pipe(
    Effect.provide(Gate.layerWithStore(config).pipe(Layer.provide(Layer.effect(CaptureStore.CaptureStore, Effect.gen(function*() {
      const store = yield* MemoryStore.make()
      yield* Effect.orDie(store.write(salesRecord))
      yield* Effect.orDie(store.write(inventoryRecord))
      return store
    })))))
  )

const signed = (text: string, key: ReturnType<typeof keys>) =>
  Effect.gen(function*() {
    const [policy, result] = yield* checked(text)
    const envelope = yield* ResultAttestation.signResult({ kind: "report", ...result }, {
      name: "report.json",
      input: text,
      policy,
      run: { id: "run-1", store: "memory" }
    }, key.signing)
    return ResultAttestation.render(envelope)
  })

describe("signed results: the attestation", () => {
  it.effect("a passed report is signed: the spec's DSSE verifier accepts it, the statement names the input, captures, policy, counts", () =>
    Effect.gen(function*() {
      const key = keys()
      const text = yield* signed(reportText, key)
      const spec = specVerify(text, key.pair.publicKey)
      assert.isTrue(spec.ok)
      assert.strictEqual(spec.statement.predicateType, "urn:citegate:predicate:verification-result:v1")
      assert.deepStrictEqual(spec.statement.subject, [{ name: "report.json", digest: { sha256: ResultAttestation.inputSha256(reportText) } }])
      const p = spec.statement.predicate
      assert.strictEqual(p.gate, "passed")
      assert.deepStrictEqual(p.counts, { verified: 1, unavailable: 1, documentLevel: 0, removed: 0, signatureNotes: 0 })
      const digest = CaptureAttestation.statementOf(salesRecord).subject[0].digest
      assert.deepStrictEqual(p.captures, [{ source: salesRecord.source, sha256: digest.sha256, "text-sha256": digest["text-sha256"] }])
      assert.deepStrictEqual(p.policy.signatures, { mode: "off", trustedKeys: [] })
      assert.strictEqual(p.policy.mode, "reject")
      assert.strictEqual(p.policy.matching, "exact")
      assert.deepStrictEqual(p.run, { id: "run-1", store: "memory" })

      const ok = ResultAttestation.checkResultAttestation({ envelope: text, input: reportText, name: "report.json", trusted: [key.trusted] })
      assert.isTrue(Either.isRight(ok))
      if (Either.isRight(ok)) assert.strictEqual(ok.right.keyid, key.signing.keyid)
    }))

  it.effect("tampered payload, unknown key, truncated base64, another report, a capture's attestation: each its typed error", () =>
    Effect.gen(function*() {
      const key = keys()
      const text = yield* signed(reportText, key)
      const check = (envelope: string, input = reportText, trusted = [key.trusted]) =>
        Either.flip(ResultAttestation.checkResultAttestation({ envelope, input, name: "report.json", trusted }))
      const envelope = JSON.parse(text)

      // Tampered: one count changed in the signed statement.
      const statement = JSON.parse(Buffer.from(envelope.payload, "base64").toString("utf8"))
      statement.predicate.counts.verified = 2
      const tampered = JSON.stringify({ ...envelope, payload: Buffer.from(JSON.stringify(statement)).toString("base64") })
      const e1 = check(tampered)
      assert.isTrue(Either.isRight(e1) && e1.right instanceof SignatureInvalid)

      // Another key id: no trusted key signed it.
      const e2 = check(text, reportText, [keys().trusted])
      assert.isTrue(Either.isRight(e2) && e2.right instanceof UnknownSigningKey)

      // Truncated base64 in the signature.
      const truncated = JSON.stringify({ ...envelope, signatures: [{ ...envelope.signatures[0], sig: envelope.signatures[0].sig.slice(0, -5) }] })
      const e3 = check(truncated)
      assert.isTrue(Either.isRight(e3) && (e3.right instanceof EnvelopeMalformed || e3.right instanceof SignatureInvalid))

      // Replayed for another report: the signature holds, the subject does not.
      const other = reportText.replace("q3_margin", "q3_stock")
      const e4 = check(text, other)
      assert.isTrue(Either.isRight(e4) && e4.right instanceof AttestationSubjectMismatch)
      if (Either.isRight(e4) && e4.right instanceof AttestationSubjectMismatch) {
        assert.strictEqual(e4.right.actualSha256, ResultAttestation.inputSha256(other))
      }

      // A capture's attestation by the same key, presented as a result.
      const capture = CaptureAttestation.sign(salesRecord, key.signing)
      const e5 = check(capture)
      assert.isTrue(Either.isRight(e5) && e5.right instanceof AttestationTypeMismatch)

      // Past the size limit: refused before it is parsed.
      const e6 = check(" ".repeat(ResultAttestation.maxResultAttestationBytes + 1))
      assert.isTrue(Either.isRight(e6) && e6.right instanceof EnvelopeMalformed)
    }))

  it.effect("a no_evidence result is not signed (ResultNotPassed)", () =>
    Effect.gen(function*() {
      const key = keys()
      const onlyUnavailable = JSON.stringify({ facts: [unavailable("q3_margin", "not stated")] })
      const [policy, result] = yield* checked(onlyUnavailable)
      assert.strictEqual(result.report.outcome, "no_evidence")
      const error = yield* Effect.flip(ResultAttestation.signResult({ kind: "report", ...result }, {
        name: "r",
        input: onlyUnavailable,
        policy,
        run: { id: "r", store: "memory" }
      }, key.signing))
      assert.instanceOf(error, ResultNotPassed)
    }))

  it.effect("checkCaptures: the run's captures match; another run's capture of the same source does not", () =>
    Effect.gen(function*() {
      const key = keys()
      const text = yield* signed(reportText, key)
      const ok = ResultAttestation.checkResultAttestation({ envelope: text, input: reportText, name: "r", trusted: [key.trusted] })
      if (Either.isLeft(ok)) return assert.fail(ok.left.message)
      const same = yield* MemoryStore.make()
      yield* Effect.orDie(same.write(salesRecord))
      assert.strictEqual(yield* ResultAttestation.checkCaptures(ok.right.statement, same), 1)
      const empty = yield* MemoryStore.make()
      const missing = yield* Effect.flip(ResultAttestation.checkCaptures(ok.right.statement, empty))
      assert.instanceOf(missing, AttestationCaptureMismatch)
    }))
})

const writeKeys = (directory: string) =>
  Effect.promise(async () => {
    const pair = generateKeyPairSync("ed25519")
    const other = generateKeyPairSync("ed25519")
    const privateFile = path.join(directory, "result.pem")
    const keyring = path.join(directory, "trusted.pem")
    const otherRing = path.join(directory, "other.pem")
    await fsp.writeFile(privateFile, pair.privateKey.export({ type: "pkcs8", format: "pem" }))
    await fsp.writeFile(keyring, pair.publicKey.export({ type: "spki", format: "pem" }))
    await fsp.writeFile(otherRing, other.publicKey.export({ type: "spki", format: "pem" }))
    return { privateFile, keyring, otherRing }
  })

describe("signed results through the program (spawned)", () => {
  it.scopedLive("verify --sign-key, then check-attestation: ok; one byte of the report changed: refused; a refused report: no envelope", () =>
    Effect.gen(function*() {
      const runDir = yield* runDirectoryWith([salesRecord, inventoryRecord])
      const work = yield* tempDirectory
      const k = yield* writeKeys(work)
      const report = path.join(work, "report.json")
      yield* Effect.promise(() => fsp.writeFile(report, JSON.stringify({ facts: [cited("q3_net_sales", salesRecord, "Net sales for Q3 2026 were 4,210 units")] })))
      const out = path.join(work, "result.json")
      const verified = yield* cli([
        "verify", "--config", fixturePath("pipeline.json"), "--run-dir", runDir, "--report", report, "--format", "json", "--out", out,
        "--sign-key", k.privateFile
      ])
      assert.strictEqual(verified.code, 0, verified.stderr)
      const attestation = `${out}.intoto.json`
      assert.include(verified.stderr, "result signed by key")

      const check = (args: ReadonlyArray<string>) => cli(["check-attestation", "--attestation", attestation, "--report", report, ...args])
      const ok = yield* check(["--trusted-keys", k.keyring, "--run", runDir])
      assert.strictEqual(ok.code, 0, ok.stderr)
      assert.match(ok.stdout, /^verified: .*report\.json \(sha256 [0-9a-f]{64}\), a report that passed the gate \(reject mode/)
      assert.include(ok.stdout, "holds the same 1 capture(s)")

      const unknown = yield* check(["--trusted-keys", k.otherRing])
      assert.strictEqual(unknown.code, 1)
      assert.match(unknown.stderr, /^UnknownSigningKey: /)

      // One byte of the report changed: the signature holds, the subject does not.
      const bytes = yield* Effect.promise(() => fsp.readFile(report))
      bytes[bytes.length - 2] = bytes[bytes.length - 2] === 0x5d ? 0x20 : bytes[bytes.length - 2]! ^ 1
      yield* Effect.promise(() => fsp.writeFile(report, bytes))
      const edited = yield* check(["--trusted-keys", k.keyring])
      assert.strictEqual(edited.code, 1)
      assert.match(edited.stderr, /^AttestationSubjectMismatch: /)

      // A refused report: exit 1 and no envelope.
      const bad = path.join(work, "bad.json")
      yield* Effect.promise(() => fsp.writeFile(bad, JSON.stringify({ facts: [cited("q3_net_sales", salesRecord, "not in the capture at all")] })))
      const badOut = path.join(work, "bad-result.json")
      const refused = yield* cli([
        "verify", "--config", fixturePath("pipeline.json"), "--run-dir", runDir, "--report", bad, "--format", "json", "--out", badOut,
        "--sign-key", k.privateFile
      ])
      assert.strictEqual(refused.code, 1)
      assert.include(refused.stderr, "not signed")
      const exists = yield* Effect.promise(() => fsp.lstat(`${badOut}.intoto.json`).then(() => true, () => false))
      assert.isFalse(exists)

      // Output on stdout and no --attestation-out: a usage error, nothing verified.
      const noPlace = yield* cli(["verify", "--config", fixturePath("pipeline.json"), "--run-dir", runDir, "--report", bad, "--sign-key", k.privateFile])
      assert.strictEqual(noPlace.code, 2)
      assert.include(noPlace.stderr, "--attestation-out")
    }), 120_000)
})
