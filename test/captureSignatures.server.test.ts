/**
 * Signed captures through the HTTP service on 127.0.0.1: a run started with `capture.signing` keeps
 * an attestation beside each record; `POST /v1/verify/report` under `verify.signatures: "require"`
 * verifies it, and refuses the capture once its attestation is gone (`UnsignedCapture`); under
 * `check` the response carries the problem as `signatureNotes` beside a verified result.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { generateKeyPairSync } from "node:crypto"
import * as fsp from "node:fs/promises"
import * as path from "node:path"
import { keyIdOf } from "../src/evidence/Signatures.js"
import * as CaptureStore from "../src/store/CaptureStore.js"
import { call, report, sources, startService, tokens, waitForRun } from "./serverSupport.js"
import { tempDirectory } from "./support.js"

const keys = Effect.gen(function*() {
  const work = yield* tempDirectory
  const pair = generateKeyPairSync("ed25519")
  const keyFile = path.join(work, "capture.pem")
  yield* Effect.promise(() => fsp.writeFile(keyFile, pair.privateKey.export({ type: "pkcs8", format: "pem" })))
  return { keyFile, keyid: keyIdOf(pair.publicKey), pem: pair.publicKey.export({ type: "spki", format: "pem" }).toString() }
})

const serviceWith = (sales: string, signatures: "check" | "require", key: Effect.Effect.Success<typeof keys>, sign: boolean) =>
  startService({
    sources: [sales],
    config: {
      capture: { timeoutMs: 10_000, ...(sign ? { signing: { keyFile: key.keyFile } } : {}) },
      verify: { signatures, trustedKeys: { [key.keyid]: key.pem } }
    }
  })

const capturedRun = (service: Effect.Effect.Success<ReturnType<typeof serviceWith>>) =>
  Effect.gen(function*() {
    const started = yield* call(service, "/v1/runs", { method: "POST", token: tokens.admin })
    assert.strictEqual(started.status, 202, started.text)
    const runId = started.json.id as string
    yield* waitForRun(service, runId)
    return runId
  })

const verify = (service: Effect.Effect.Success<ReturnType<typeof serviceWith>>, runId: string, sales: string) =>
  call(service, `/v1/verify/report?run=${runId}`, {
    token: tokens.admin,
    body: report(sales, ["Net sales for Q3 2026 were 4,210 units"]),
    headers: { "content-type": "application/json" }
  })

describe("signed captures in the service", () => {
  it.scopedLive("require: a signed run verifies; with its attestation removed the fact fails with UnsignedCapture", () =>
    Effect.gen(function*() {
      const { server } = yield* sources
      const sales = server.url("/q3-sales.txt")
      const key = yield* keys
      const service = yield* serviceWith(sales, "require", key, true)
      const runId = yield* capturedRun(service)
      const attestation = path.join(service.runRoot, runId, CaptureStore.attestationFileName(sales))
      const envelope = JSON.parse(yield* Effect.promise(() => fsp.readFile(attestation, "utf8")))
      assert.strictEqual(envelope.signatures[0].keyid, key.keyid)

      const ok = yield* verify(service, runId, sales)
      assert.strictEqual(ok.status, 200, ok.text)
      assert.strictEqual(ok.json.status, "verified", ok.text)
      assert.isUndefined(ok.json.signatureNotes)

      yield* Effect.promise(() => fsp.rm(attestation))
      const refused = yield* verify(service, runId, sales)
      assert.strictEqual(refused.json.status, "rejected", refused.text)
      assert.strictEqual(refused.json.error._tag, "ReportRejected")
      assert.deepStrictEqual(refused.json.error.failures.map((f: any) => [f.index, f.error._tag, f.error.source]), [[0, "UnsignedCapture", sales]])
    }))

  it.scopedLive("check: an unsigned run verifies and the response carries signatureNotes", () =>
    Effect.gen(function*() {
      const { server } = yield* sources
      const sales = server.url("/q3-sales.txt")
      const service = yield* serviceWith(sales, "check", yield* keys, false)
      const runId = yield* capturedRun(service)
      const checked = yield* verify(service, runId, sales)
      assert.strictEqual(checked.status, 200, checked.text)
      assert.strictEqual(checked.json.status, "verified", checked.text)
      assert.deepStrictEqual(checked.json.signatureNotes, [{ _tag: "UnsignedCapture", source: sales }])
    }))

  it.scopedLive("a signing key file removed after the service started aborts the next run (SigningKeyInvalid): nothing is captured unsigned", () =>
    Effect.gen(function*() {
      const { server } = yield* sources
      const sales = server.url("/q3-sales.txt")
      const key = yield* keys
      const service = yield* serviceWith(sales, "require", key, true)
      yield* Effect.promise(() => fsp.rm(key.keyFile))
      const started = yield* call(service, "/v1/runs", { method: "POST", token: tokens.admin })
      assert.strictEqual(started.status, 202, started.text)
      const events = yield* waitForRun(service, started.json.id)
      assert.include(events, "\"_tag\":\"aborted\"")
      assert.include(events, "SigningKeyInvalid")
      assert.notInclude(events, "\"_tag\":\"captured\"")
      const entries = yield* Effect.promise(() => fsp.readdir(path.join(service.runRoot, started.json.id)).catch(() => [] as Array<string>))
      assert.deepStrictEqual(entries.filter((name) => name.endsWith(".json")), [])
    }))
})
