/** The service over loopback: health, OpenAPI, request ids, body limits, deadlines, verification, shutdown draining. */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Fiber } from "effect"
import * as fsp from "node:fs/promises"
import * as path from "node:path"
import { cli } from "./cliProcess.js"
import { assertSameJson, call, rawRequest, report, sources, startService, tokens, waitForRun } from "./serverSupport.js"

const endpoints = [
  ["/healthz", "get"],
  ["/readyz", "get"],
  ["/v1/runs", "post"],
  ["/v1/runs/{id}", "get"],
  ["/v1/runs/{id}/events", "get"],
  ["/v1/verify/report", "post"],
  ["/v1/verify/answer", "post"]
] as const

/** A service whose one run (captured over HTTP) holds the sales capture. */
const withRun = (server: { maxBodyBytes?: number; requestTimeoutMs?: number } = {}) =>
  Effect.gen(function*() {
    const { server: source } = yield* sources
    const sales = source.url("/q3-sales.txt")
    const service = yield* startService({ sources: [sales], server })
    const started = yield* call(service, "/v1/runs", { method: "POST", token: tokens.admin })
    const runId: string = started.json.id
    yield* waitForRun(service, runId)
    return { service, sales, runId, runDir: path.join(service.runRoot, runId) }
  })

describe("service basics", () => {
  it.scopedLive("healthz and readyz answer 200 without a token; every response carries its own request id", () =>
    Effect.gen(function*() {
      const service = yield* startService({ sources: ["https://reports.northwind.test/a.txt"] })
      const health = yield* call(service, "/healthz")
      const ready = yield* call(service, "/readyz")
      assert.deepStrictEqual([health.status, health.json], [200, { status: "ok" }])
      assert.deepStrictEqual([ready.status, ready.json], [200, { status: "ok" }])
      const ids = [health.headers.get("x-request-id"), ready.headers.get("x-request-id")]
      for (const id of ids) assert.match(id ?? "", /^[0-9a-f-]{36}$/)
      assert.notStrictEqual(ids[0], ids[1])
      const unknown = yield* call(service, "/v1/nothing-here", { token: tokens.admin })
      assert.strictEqual(unknown.status, 404)
      assert.match(unknown.headers.get("x-request-id") ?? "", /^[0-9a-f-]{36}$/)
    }))

  it.scopedLive("serves the OpenAPI document at /openapi.json naming every endpoint", () =>
    Effect.gen(function*() {
      const service = yield* startService({ sources: ["https://reports.northwind.test/a.txt"] })
      const response = yield* call(service, "/openapi.json")
      assert.strictEqual(response.status, 200)
      const document = JSON.parse(response.text)
      assert.match(document.openapi, /^3\./)
      for (const [route, method] of endpoints) {
        assert.isObject(document.paths[route]?.[method], `${method.toUpperCase()} ${route} is documented`)
      }
      // Typed errors are documented with their status codes.
      assert.property(document.paths["/v1/runs"].post.responses, "401")
      assert.property(document.paths["/v1/runs"].post.responses, "403")
      assert.property(document.paths["/v1/runs/{id}"].get.responses, "404")
    }))

  it.scopedLive("a body announcing more than maxBodyBytes is refused with 413 before it is read; one without Content-Length with 411", () =>
    Effect.gen(function*() {
      const { runId, service } = yield* withRun({ maxBodyBytes: 1_000 })
      const big = yield* call(service, `/v1/verify/report?run=${runId}`, {
        token: tokens.admin,
        body: "x".repeat(1_001),
        headers: { "content-type": "application/json" }
      })
      assert.strictEqual(big.status, 413)
      assert.deepStrictEqual(big.json, { _tag: "PayloadTooLarge", maxBytes: 1_000, declaredBytes: 1_001 })
      // Announcing a large body and sending none of it: the answer comes without waiting for the body.
      const announced = yield* rawRequest(service, {
        method: "POST",
        path: `/v1/verify/report?run=${runId}`,
        headers: { authorization: `Bearer ${tokens.admin}`, "content-length": String(10 * 1024 * 1024) },
        chunks: [],
        gapMs: 0
      }).pipe(Effect.timeout("5 seconds"))
      assert.strictEqual(announced.status, 413)
      const chunked = yield* rawRequest(service, {
        method: "POST",
        path: `/v1/verify/report?run=${runId}`,
        headers: { authorization: `Bearer ${tokens.admin}`, "transfer-encoding": "chunked" },
        chunks: ["{\"facts\":", "[]}"],
        gapMs: 10
      })
      assert.strictEqual(chunked.status, 411)
      assert.deepStrictEqual(JSON.parse(chunked.body), { _tag: "LengthRequired", maxBytes: 1_000 })
      // At the limit exactly, the body is read and verified.
      const body = JSON.stringify({ facts: [] }).padEnd(1_000, " ")
      const exact = yield* call(service, `/v1/verify/report?run=${runId}`, { token: tokens.admin, body })
      assert.strictEqual(exact.status, 200, exact.text)
      assert.strictEqual(exact.json.format, "citegate.result/1")
    }))

  it.scopedLive("a request past requestTimeoutMs is answered 503 RequestTimeout (a body trickling in)", () =>
    Effect.gen(function*() {
      const { runId, service } = yield* withRun({ requestTimeoutMs: 300 })
      const started = Date.now()
      const slow = yield* rawRequest(service, {
        method: "POST",
        path: `/v1/verify/report?run=${runId}`,
        headers: { authorization: `Bearer ${tokens.admin}`, "content-length": "20" },
        chunks: ["{\"facts\":", "[]}        "],
        gapMs: 1_500
      })
      assert.strictEqual(slow.status, 503, JSON.stringify(slow))
      assert.deepStrictEqual(JSON.parse(slow.body), { _tag: "RequestTimeout", timeoutMs: 300 })
      assert.isBelow(Date.now() - started, 1_400)
    }))
})

describe("POST /v1/verify/report and /v1/verify/answer", () => {
  it.scopedLive("answer what the CLI's JSON format prints, as compact JSON, grounded and rejected alike", () =>
    Effect.gen(function*() {
      const { runDir, runId, sales, service } = yield* withRun()
      for (const [snippets, code] of [[["Net sales for Q3 2026 were 4,210 units"], 0], [["Net sales were 9,999 units"], 1]] as const) {
        const text = report(sales, snippets)
        const response = yield* call(service, `/v1/verify/report?run=${runId}`, {
          token: tokens.admin,
          body: text,
          headers: { "content-type": "application/json" }
        })
        assert.strictEqual(response.status, 200, response.text)
        assert.strictEqual(response.headers.get("content-type"), "application/json")
        const file = path.join(service.work, `report-${code}.json`)
        yield* Effect.promise(() => fsp.writeFile(file, text))
        const ran = yield* cli(["verify", "--config", service.configFile, "--run-dir", runDir, "--report", file, "--format", "json"])
        assert.strictEqual(ran.code, code, ran.stderr)
        assertSameJson(response.text, ran.stdout)
      }
      const rejected = yield* call(service, `/v1/verify/report?run=${runId}`, { token: tokens.admin, body: report(sales, ["Net sales were 9,999 units"]) })
      assert.strictEqual(rejected.json.status, "rejected")
      assert.strictEqual(rejected.json.error._tag, "ReportRejected")
      assert.strictEqual(rejected.json.error.failures[0].error._tag, "SnippetAbsent")
      // drop mode from the query: the failed fact is retracted instead.
      const dropped = yield* call(service, `/v1/verify/report?run=${runId}&mode=drop`, { token: tokens.admin, body: report(sales, ["Net sales were 9,999 units"]) })
      assert.strictEqual(dropped.json.status, "verified")
      assert.strictEqual(dropped.json.report.outcome, "no_evidence")
    }))

  it.scopedLive("verifies an answer (json and evi1) against the run's manifest like verify-answer", () =>
    Effect.gen(function*() {
      const { runDir, runId, service } = yield* withRun()
      const info = yield* call(service, `/v1/runs/${runId}`, { token: tokens.admin })
      const digest: string = info.json.manifest.digest
      const answer = JSON.stringify({
        format: "citegate.answer/1",
        manifest: digest,
        claims: [
          { id: "a", text: "Net sales were 4,210 units.", citations: [{ source: 1, quote: "4,210 units" }] },
          { id: "b", text: "Sales tripled.", citations: [{ source: 1, quote: "tripled overnight" }] }
        ]
      })
      const file = path.join(service.work, "answer.json")
      yield* Effect.promise(() => fsp.writeFile(file, answer))
      for (const mode of ["reject", "drop"] as const) {
        const response = yield* call(service, `/v1/verify/answer?run=${runId}&format=json&mode=${mode}`, { token: tokens.admin, body: answer })
        assert.strictEqual(response.status, 200, response.text)
        const ran = yield* cli(["verify-answer", "--answer", file, "--config", service.configFile, "--run-dir", runDir, "--format", "json", "--mode", mode])
        assertSameJson(response.text, ran.stdout)
      }
      const rejected = yield* call(service, `/v1/verify/answer?run=${runId}`, { token: tokens.admin, body: answer })
      assert.strictEqual(rejected.json.status, "rejected", rejected.text)
      assert.strictEqual(rejected.json.error._tag, "AnswerRejected")
      // A stale manifest digest is the typed StaleManifest, as in the CLI.
      const stale = yield* call(service, `/v1/verify/answer?run=${runId}`, {
        token: tokens.admin,
        body: answer.replace(digest, "0".repeat(64))
      })
      assert.strictEqual(stale.json.error._tag, "StaleManifest")
      const evi1Text = "Net sales were 4,210 units [1].\n"
      const evi1File = path.join(service.work, "answer.evi1")
      yield* Effect.promise(() => fsp.writeFile(evi1File, evi1Text))
      const evi1 = yield* call(service, `/v1/verify/answer?run=${runId}&format=evi1&manifestDigest=${digest}`, {
        token: tokens.admin,
        body: evi1Text
      })
      const evi1Cli = yield* cli([
        "verify-answer", "--answer", evi1File, "--format-in", "evi1", "--manifest-digest", digest,
        "--config", service.configFile, "--run-dir", runDir, "--format", "json"
      ])
      assertSameJson(evi1.text, evi1Cli.stdout)
    }))

  it.scopedLive("a bad query (no run, an unknown format) is a 400 with the decode issue", () =>
    Effect.gen(function*() {
      const { runId, service } = yield* withRun()
      const noRun = yield* call(service, `/v1/verify/report`, { token: tokens.admin, body: "{}" })
      assert.strictEqual(noRun.status, 400, noRun.text)
      const badFormat = yield* call(service, `/v1/verify/answer?run=${runId}&format=yaml`, { token: tokens.admin, body: "{}" })
      assert.strictEqual(badFormat.status, 400, badFormat.text)
    }))
})

describe("shutdown", () => {
  it.scopedLive("drains: stops accepting, lets an open SSE stream finish its run, then closes", () =>
    Effect.gen(function*() {
      const { release, server } = yield* sources
      const service = yield* startService({ sources: [server.url("/held.txt")], server: { shutdownGraceMs: 10_000 } })
      const started = yield* call(service, "/v1/runs", { method: "POST", token: tokens.admin })
      const runId: string = started.json.id
      const stream = yield* Effect.fork(Effect.zip(waitForRun(service, runId), Effect.sync(() => Date.now())))
      yield* Effect.sleep("200 millis")
      const closing = yield* Effect.fork(Effect.zip(service.close, Effect.sync(() => Date.now())))
      yield* Effect.sleep("300 millis")
      // Draining: the open stream keeps the server from closing; new connections are refused.
      assert.isUndefined(yield* Fiber.poll(closing).pipe(Effect.map((o) => o._tag === "Some" ? o.value : undefined)))
      const refused = yield* Effect.promise(() => fetch(`${service.base}/healthz`).then(() => "answered", () => "refused"))
      assert.strictEqual(refused, "refused")
      const releasedAt = Date.now()
      release()
      const [text] = yield* Fiber.join(stream)
      const [, closed] = yield* Fiber.join(closing)
      // The stream was served to its end (the run's done), and the server closed only after that.
      assert.include(text, "event: captured")
      assert.include(text, "\"status\":\"completed\"")
      assert.isAtLeast(closed, releasedAt)
    }))

  it.scopedLive("past shutdownGraceMs a run still capturing is interrupted: its stream ends with done (interrupted)", () =>
    Effect.gen(function*() {
      const { server } = yield* sources
      const service = yield* startService({ sources: [server.url("/held.txt")], server: { shutdownGraceMs: 300 } })
      const started = yield* call(service, "/v1/runs", { method: "POST", token: tokens.admin })
      const stream = yield* Effect.fork(waitForRun(service, started.json.id))
      yield* Effect.sleep("200 millis")
      const before = Date.now()
      yield* service.close
      assert.isBelow(Date.now() - before, 3_000)
      const text = yield* Fiber.join(stream)
      assert.include(text, "\"status\":\"interrupted\"")
      assert.notInclude(text, "event: captured")
    }))
})
