/**
 * Signed results for answers (src/evidence/ResultAttestation.ts through `verify-answer --sign-key`
 * and `POST /v1/verify/answer?sign=1`): a grounded citegate.answer/1 answer is signed over its exact
 * bytes, the envelope checked by `check-attestation` (with the run's captures) and its statement read
 * here independently (subject digest and capture digests computed with node:crypto); one byte of the
 * answer changed is refused; a refused answer gets no envelope. A binary format (bedrock-stream, not
 * valid UTF-8) is signed over its bytes, not a decoding of them, by the CLI and by the service. The
 * service signs on request only, and never a refused answer.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Either } from "effect"
import { createHash } from "node:crypto"
import * as fsp from "node:fs/promises"
import * as path from "node:path"
import * as ResultAttestation from "../src/evidence/ResultAttestation.js"
import { keyIdOf } from "../src/evidence/Signatures.js"
import * as CaptureStore from "../src/store/CaptureStore.js"
import * as Manifest from "../src/Manifest.js"
import { config, configJson, emojiRecord } from "./answerSupport.js"
import { cli } from "./cliProcess.js"
import { listen, setup as providerSetup } from "./providerEdges.js"
import { bedrockStreamGrounded } from "./providerMatrix.js"
import { CAFE, cafeText } from "./providerSupport.js"
import { call, startService, tokens } from "./serverSupport.js"
import { fixtureText, INVENTORY, inventoryRecord, runDirectoryWith, SALES, salesRecord, tempDirectory } from "./support.js"
import { signingService, writeSigningKeys } from "./support/resultSigning.js"

const sha256 = (bytes: string | Uint8Array) => createHash("sha256").update(bytes).digest("hex")

/** The signed statement of an envelope's text, read without the module (base64 payload, JSON). */
const statementOf = (envelopeText: string) => {
  const envelope = JSON.parse(envelopeText) as { payloadType: string; payload: string }
  assert.strictEqual(envelope.payloadType, "application/vnd.in-toto+json")
  return JSON.parse(Buffer.from(envelope.payload, "base64").toString("utf8"))
}

/** A text capture's body and text are the same bytes: one SHA-256 of the fixture's UTF-8, named twice. */
const textCapture = (source: string, text: string) => ({ source, sha256: sha256(text), "text-sha256": sha256(text) })

const exists = (file: string) => Effect.promise(() => fsp.lstat(file).then(() => true, () => false))

const netSales = "Net sales for Q3 2026 were 4,210 units"
const leeds = "The Leeds warehouse held 640 of those units."

describe("signed answers through the program (spawned)", () => {
  it.scopedLive("verify-answer --sign-key: a grounded answer's envelope names it and its captures; check-attestation ok; one byte changed refused; a refused answer: no envelope", () =>
    Effect.gen(function*() {
      const runDir = yield* runDirectoryWith([salesRecord, inventoryRecord, emojiRecord])
      const work = yield* tempDirectory
      const configFile = path.join(work, "pipeline.json")
      yield* Effect.promise(() => fsp.writeFile(configFile, JSON.stringify(configJson)))
      const manifest = yield* Manifest.make(config).pipe(Effect.provide(CaptureStore.layerFileSystem({ directory: runDir })))
      const k = yield* writeSigningKeys(work)
      const answerOf = (quote: string) =>
        JSON.stringify({
          format: "citegate.answer/1",
          manifest: manifest.digest,
          claims: [
            { id: "a", text: "Net sales were 4,210 units.", citations: [{ source: 1, quote }] },
            { id: "b", text: "Leeds held 640 of them.", citations: [{ source: 2, quote: leeds }] }
          ]
        })
      const answer = path.join(work, "answer.json")
      yield* Effect.promise(() => fsp.writeFile(answer, answerOf(netSales)))
      const answerBytes = yield* Effect.promise(() => fsp.readFile(answer))
      const out = path.join(work, "verified.json")
      const verified = yield* cli([
        "verify-answer", "--answer", answer, "--config", configFile, "--run-dir", runDir, "--format", "json", "--out", out,
        "--sign-key", k.privateFile
      ])
      assert.strictEqual(verified.code, 0, verified.stderr)
      assert.match(verified.stderr, /verify-answer: GROUNDED \(reject mode, 2 of 2 claims, 0 removed\)/)
      assert.include(verified.stderr, `verify-answer: result signed by key ${keyIdOf(k.pair.publicKey)}`)
      const attestation = `${out}.intoto.json`
      const envelope = yield* Effect.promise(() => fsp.readFile(attestation, "utf8"))

      // The statement, read independently: this answer's bytes, kind answer, the two captures it cites.
      const statement = statementOf(envelope)
      assert.strictEqual(statement.predicateType, "urn:citegate:predicate:verification-result:v1")
      assert.deepStrictEqual(statement.subject, [{ name: "answer.json", digest: { sha256: sha256(answerBytes) } }])
      const p = statement.predicate
      assert.deepStrictEqual([p.gate, p.kind, p.outcome, p.proves], ["passed", "answer", "grounded", "provenance-only"])
      assert.deepStrictEqual(p.captures, [
        textCapture(INVENTORY, fixtureText("q3-inventory.txt")),
        textCapture(SALES, fixtureText("q3-sales.txt"))
      ])
      assert.deepStrictEqual(p.counts, { verified: 2, unavailable: 0, documentLevel: 0, removed: 0, signatureNotes: 0 })
      assert.strictEqual(p.manifest, manifest.digest)
      assert.deepStrictEqual(p.policy.answers, { citations: "quote", uncited: "report" })
      assert.strictEqual(p.policy.mode, "reject")
      assert.deepStrictEqual(p.run, { id: path.basename(runDir), store: "filesystem" })

      const check = (args: ReadonlyArray<string>) =>
        cli(["check-attestation", "--attestation", attestation, "--report", answer, "--trusted-keys", k.keyring, ...args])
      const ok = yield* check(["--run", runDir])
      assert.strictEqual(ok.code, 0, ok.stderr)
      assert.match(ok.stdout, new RegExp(`^verified: .*answer\\.json \\(sha256 ${sha256(answerBytes)}\\), an answer that passed the gate \\(reject mode`))
      assert.include(ok.stdout, "2 verified, 0 unavailable, 0 document-level, 0 removed")
      assert.include(ok.stdout, "holds the same 2 capture(s)")

      // A run without the sales capture: the signature and subject hold, the captures do not.
      const otherRun = yield* runDirectoryWith([inventoryRecord, emojiRecord])
      const missing = yield* check(["--run", otherRun])
      assert.strictEqual(missing.code, 1)
      assert.match(missing.stderr, /^AttestationCaptureMismatch: /)

      // One byte of the answer changed (a character of the claim's text): refused, with both digests.
      const edited = Buffer.from(answerBytes)
      const at = edited.indexOf("Net sales were")
      edited[at] = "M".charCodeAt(0)
      yield* Effect.promise(() => fsp.writeFile(answer, edited))
      const refusedEdit = yield* check([])
      assert.strictEqual(refusedEdit.code, 1)
      assert.match(refusedEdit.stderr, /^AttestationSubjectMismatch: /)
      assert.include(refusedEdit.stderr, sha256(edited))
      assert.include(refusedEdit.stderr, sha256(answerBytes))

      // A refused answer (a fabricated quote, reject mode): exit 1, nothing signed, no envelope.
      const fabricated = path.join(work, "fabricated.json")
      yield* Effect.promise(() => fsp.writeFile(fabricated, answerOf("Net sales for Q3 2026 were 9,999 units")))
      const badOut = path.join(work, "fabricated-result.json")
      const refused = yield* cli([
        "verify-answer", "--answer", fabricated, "--config", configFile, "--run-dir", runDir, "--format", "json", "--out", badOut,
        "--sign-key", k.privateFile
      ])
      assert.strictEqual(refused.code, 1, refused.stderr)
      assert.match(refused.stderr, /verify-answer: REJECTED/)
      assert.include(refused.stderr, "verify-answer: not signed")
      assert.isFalse(yield* exists(`${badOut}.intoto.json`))
    }), 120_000)

  it.scopedLive("bedrock-stream (bytes, not UTF-8): signed over the file's exact bytes; check-attestation against that file passes", () =>
    Effect.gen(function*() {
      const s = yield* providerSetup("quote")
      const k = yield* writeSigningKeys(s.work)
      const bytes = Buffer.from(bedrockStreamGrounded)
      // The body is not valid UTF-8: hashing any decoding of it instead of the bytes would name other bytes.
      assert.notStrictEqual(sha256(Buffer.from(bytes.toString("utf8"), "utf8")), sha256(bytes))
      const answer = yield* s.write("answer.eventstream", bytes)
      const out = path.join(s.work, "verified.json")
      const attestation = path.join(s.work, "signed.intoto.json")
      const verified = yield* cli([
        "verify-answer", "--answer", answer, "--format-in", "bedrock-stream", "--config", s.configFile, "--run-dir", s.runDir,
        "--manifest-digest", s.manifest.digest, "--format", "json", "--out", out, "--sign-key", k.privateFile, "--attestation-out", attestation
      ])
      assert.strictEqual(verified.code, 0, verified.stderr)
      assert.isFalse(yield* exists(`${out}.intoto.json`))
      const statement = statementOf(yield* Effect.promise(() => fsp.readFile(attestation, "utf8")))
      assert.deepStrictEqual(statement.subject, [{ name: "answer.eventstream", digest: { sha256: sha256(bytes) } }])
      assert.strictEqual(statement.predicate.kind, "answer")
      assert.deepStrictEqual(statement.predicate.captures, [textCapture(CAFE, cafeText)])
      assert.strictEqual(statement.predicate.counts.verified, 2)
      assert.strictEqual(statement.predicate.manifest, s.manifest.digest)

      const ok = yield* cli(["check-attestation", "--attestation", attestation, "--report", answer, "--trusted-keys", k.keyring, "--run", s.runDir])
      assert.strictEqual(ok.code, 0, ok.stderr)
      assert.include(ok.stdout, `(sha256 ${sha256(bytes)}), an answer that passed the gate`)
    }), 120_000)
})

describe("signed answers in the service", () => {
  it.scopedLive("POST /v1/verify/answer?sign=1: a grounded answer carries its signed result over the posted body; without sign=1 none; a refused answer none", () =>
    Effect.gen(function*() {
      const { keys, runId, sales, service } = yield* signingService
      const salesText = fixtureText("q3-sales.txt")
      const answerOf = (quote: string) =>
        JSON.stringify({
          format: "citegate.answer/1",
          claims: [{ id: "s", text: "Net sales were 4,210 units.", citations: [{ source: sales, captureSha256: sha256(salesText), quote }] }]
        })
      const post = (query: string, body: string) =>
        call(service, `/v1/verify/answer?run=${runId}${query}`, { token: tokens.admin, body, headers: { "content-type": "application/json" } })
      const trusted = keys.trusted

      const body = answerOf(netSales)
      const signed = yield* post("&sign=1", body)
      assert.strictEqual(signed.status, 200, signed.text)
      assert.strictEqual(signed.json.status, "verified")
      const envelope = JSON.stringify(signed.json.attestation)
      const checked = ResultAttestation.checkResultAttestation({ envelope, input: body, name: "answer", trusted })
      if (Either.isLeft(checked)) return assert.fail(checked.left.message)
      const statement = statementOf(envelope)
      assert.deepStrictEqual(statement.subject, [{ name: "answer", digest: { sha256: sha256(Buffer.from(body, "utf8")) } }])
      assert.strictEqual(statement.predicate.kind, "answer")
      assert.deepStrictEqual(statement.predicate.captures, [textCapture(sales, salesText)])
      assert.deepStrictEqual(statement.predicate.run, { id: runId, store: "filesystem" })
      assert.strictEqual(statement.predicate.counts.verified, 1)
      // Another body (one byte changed) is not what was signed.
      const other = body.replace("4,210 units.", "4,211 units.")
      const mismatch = ResultAttestation.checkResultAttestation({ envelope, input: other, name: "answer", trusted })
      assert.isTrue(Either.isLeft(mismatch) && mismatch.left._tag === "AttestationSubjectMismatch")

      const unsigned = yield* post("", body)
      assert.strictEqual(unsigned.json.status, "verified")
      assert.isFalse("attestation" in unsigned.json)
      const refused = yield* post("&sign=1", answerOf("Net sales for Q3 2026 were 9,999 units"))
      assert.strictEqual(refused.status, 200, refused.text)
      assert.strictEqual(refused.json.status, "rejected")
      assert.isFalse("attestation" in refused.json)

      const plain = yield* startService({ sources: [sales], work: service.work })
      const noKey = yield* call(plain, `/v1/verify/answer?run=${runId}&sign=1`, { token: tokens.admin, body, headers: { "content-type": "application/json" } })
      assert.deepStrictEqual([noKey.status, noKey.json._tag], [409, "ResultSigningUnavailable"])
    }), 60_000)

  it.scopedLive("sign=1 on a text body: the subject is the posted bytes, also with a BOM and with bytes that are not UTF-8", () =>
    Effect.gen(function*() {
      const { keys, runId, sales, service } = yield* signingService
      const salesText = fixtureText("q3-sales.txt")
      const answer = (claim: Uint8Array) =>
        Buffer.concat([
          Buffer.from(`{"format":"citegate.answer/1","claims":[{"id":"s","text":"`),
          claim,
          Buffer.from(`","citations":[${JSON.stringify({ source: sales, captureSha256: sha256(salesText), quote: netSales })}]}]}`)
        ])
      const post = (body: Uint8Array) =>
        Effect.promise(async () => {
          const r = await fetch(`${service.base}/v1/verify/answer?run=${runId}&sign=1`, {
            method: "POST",
            headers: { authorization: `Bearer ${tokens.admin}`, "content-type": "application/json" },
            body
          })
          return { status: r.status, json: (await r.json()) as any }
        })
      // 0xFF is never UTF-8: a decoding replaces it with U+FFFD, whose UTF-8 is other bytes.
      const notUtf8 = answer(Buffer.from([0x4e, 0x65, 0x74, 0xff, 0x20, 0x73, 0x61, 0x6c, 0x65, 0x73]))
      assert.notStrictEqual(sha256(Buffer.from(notUtf8.toString("utf8"), "utf8")), sha256(notUtf8))
      const statuses: Array<string> = []
      for (const body of [notUtf8, Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), answer(Buffer.from("Net sales"))])]) {
        const response = yield* post(body)
        statuses.push(`${response.status} ${response.json.status ?? response.json._tag}`)
        if (response.json.status !== "verified") continue
        const envelope = JSON.stringify(response.json.attestation)
        assert.deepStrictEqual(statementOf(envelope).subject, [{ name: "answer", digest: { sha256: sha256(body) } }])
        const checked = ResultAttestation.checkResultAttestation({ envelope, input: body, name: "answer", trusted: keys.trusted })
        assert.isTrue(Either.isRight(checked), Either.isLeft(checked) ? checked.left.message : "")
      }
      assert.strictEqual(statuses[0], "200 verified")
    }), 60_000)

  it.scopedLive("POST /v1/verify/answer?format=bedrock-stream&sign=1: signed over the posted bytes, not a decoding of them", () =>
    Effect.gen(function*() {
      const s = yield* providerSetup("quote")
      const keys = yield* writeSigningKeys(s.work)
      const { port, token } = yield* listen(s, { verify: { resultSigning: { keyFile: keys.privateFile } } })
      const bytes = Buffer.from(bedrockStreamGrounded)
      const response = yield* Effect.promise(async () => {
        const r = await fetch(`http://127.0.0.1:${port}/v1/verify/answer?run=run-1&format=bedrock-stream&manifest=${s.manifest.digest}&sign=1`, {
          method: "POST",
          headers: { authorization: `Bearer ${token}`, "content-type": "application/vnd.amazon.eventstream" },
          body: bytes
        })
        return { status: r.status, json: (await r.json()) as any }
      })
      assert.strictEqual(response.status, 200, JSON.stringify(response.json))
      assert.strictEqual(response.json.status, "verified")
      const envelope = JSON.stringify(response.json.attestation)
      const statement = statementOf(envelope)
      assert.deepStrictEqual(statement.subject, [{ name: "answer", digest: { sha256: sha256(bytes) } }])
      assert.deepStrictEqual(statement.predicate.captures, [textCapture(CAFE, cafeText)])
      const checked = ResultAttestation.checkResultAttestation({ envelope, input: bytes, name: "answer", trusted: keys.trusted })
      assert.isTrue(Either.isRight(checked), Either.isLeft(checked) ? checked.left.message : "")
    }), 60_000)
})
