/**
 * The service answers compact JSON: every JSON body (verification results, errors, run status,
 * hand-offs) is `JSON.stringify` of its value, without indentation or a trailing newline, and the
 * streamed events (SSE `data:` lines, NDJSON lines) are compact too. The CLI's `--format json` keeps
 * its indentation (test/server.test.ts compares the two).
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { call, type Call, report, sources, startService, tokens, waitForRun } from "./serverSupport.js"

const assertCompact = (response: Call, what: string) => {
  assert.strictEqual(response.headers.get("content-type")?.split(";")[0], "application/json", what)
  assert.isDefined(response.json, `${what}: ${response.text}`)
  assert.strictEqual(response.text, JSON.stringify(response.json), what)
}

describe("the service's JSON bodies are compact", () => {
  it.scopedLive("results, errors, run status and hand-offs; streamed events one compact line each", () =>
    Effect.gen(function*() {
      const { server } = yield* sources
      const sales = server.url("/q3-sales.txt")
      const service = yield* startService({ sources: [sales] })
      const started = yield* call(service, "/v1/runs", { method: "POST", token: tokens.admin })
      assertCompact(started, "startRun")
      const runId = started.json.id as string
      const events = yield* waitForRun(service, runId)
      const dataLines = events.split("\n").filter((line) => line.startsWith("data: ")).map((line) => line.slice(6))
      assert.isAbove(dataLines.length, 0)
      for (const line of dataLines) assert.strictEqual(line, JSON.stringify(JSON.parse(line)), "run event")
      const status = yield* call(service, `/v1/runs/${runId}`, { token: tokens.admin })
      assertCompact(status, "getRun")
      const digest = status.json.manifest.digest as string
      assertCompact(yield* call(service, `/v1/runs/${runId}/documents?format=evi1`, { token: tokens.admin }), "documents")
      const headers = { "content-type": "application/json" }
      // Twice each: the first builds the run's Gate, the second is answered warm (the server's lane).
      for (const round of [1, 2]) {
        const verified = yield* call(service, `/v1/verify/report?run=${runId}`, {
          token: tokens.admin,
          body: report(sales, ["Net sales for Q3 2026 were 4,210 units"]),
          headers
        })
        assertCompact(verified, `verified report, round ${round}`)
        assert.strictEqual(verified.json.status, "verified")
        const rejected = yield* call(service, `/v1/verify/report?run=${runId}`, { token: tokens.admin, body: report(sales, ["Net sales were 9,999 units"]), headers })
        assertCompact(rejected, `rejected report, round ${round}`)
        assert.strictEqual(rejected.json.status, "rejected")
      }
      const evi1 = yield* call(service, `/v1/verify/answer?run=${runId}&format=evi1&manifest=${digest}`, {
        token: tokens.admin,
        body: "Net sales were 4,210 units [1].\n"
      })
      assertCompact(evi1, "answer")
      assert.strictEqual(evi1.json.status, "verified", evi1.text)
      // Refusals.
      assertCompact(yield* call(service, `/v1/verify/report`, { token: tokens.admin, body: "{}" }), "400 without run")
      assertCompact(yield* call(service, `/v1/verify/report?run=${runId}`, { body: "{}" }), "401")
      assertCompact(yield* call(service, `/v1/runs/${"0".repeat(8)}`, { token: tokens.admin }), "404")
      // A streamed answer: NDJSON lines, each compact.
      const streamed = yield* call(service, `/v1/stream/answer?run=${runId}&manifest=${digest}`, {
        token: tokens.admin,
        body: JSON.stringify({ type: "delta", text: "Net sales were 4,210 units [1].\n" }) + "\n"
      })
      assert.strictEqual(streamed.status, 200, streamed.text)
      const lines = streamed.text.split("\n").filter((line) => line !== "")
      assert.isAbove(lines.length, 1)
      for (const line of lines) assert.strictEqual(line, JSON.stringify(JSON.parse(line)), "stream event")
    }))
})
