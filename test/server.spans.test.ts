/**
 * What a request costs the service in spans when nothing exports them (telemetry off, Effect's
 * in-process tracer): none. Not the platform's `http.server POST`, not `Auth.authenticate`,
 * `Runs.get`, `Gate.checkJsonWithCaptures`, `Verifier.checkJson` or `Render.json`: nothing reads
 * them, and each cost tens of microseconds per request. With telemetry on they are all exported
 * (test/telemetry.test.ts). Counted, not timed.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { countingInProcess } from "./support/spans.js"
import { call, report, sources, startService, tokens, waitForRun } from "./serverSupport.js"

describe("service spans without telemetry", () => {
  it.scopedLive("verification and status requests make no span at all once the run's Gates are kept; they still verify", () =>
    Effect.gen(function*() {
      const { server } = yield* sources
      const sales = server.url("/q3-sales.txt")
      const service = yield* startService({ sources: [sales] })
      const started = yield* call(service, "/v1/runs", { method: "POST", token: tokens.capture })
      assert.strictEqual(started.status, 202, started.text)
      const runId: string = started.json.id
      yield* waitForRun(service, runId)
      const probe = yield* countingInProcess(Effect.withSpan(Effect.void, "probe"))
      assert.deepStrictEqual(probe.names, ["probe"], "the in-process tracer is counted")
      const requests = Effect.gen(function*() {
        const verified = yield* call(service, `/v1/verify/report?run=${runId}`, {
          token: tokens.admin,
          body: report(sales, ["Net sales for Q3 2026 were 4,210 units"])
        })
        const rejected = yield* call(service, `/v1/verify/report?run=${runId}&mode=reject`, {
          token: tokens.admin,
          body: report(sales, ["Net sales were 9,999 units"])
        })
        const status = yield* call(service, `/v1/runs/${runId}`, { token: tokens.admin })
        return [verified, rejected, status] as const
      })
      // Once first: the run's Gates (one per mode) and its finished manifest are made once, then kept.
      yield* requests
      const counted = yield* countingInProcess(requests)
      const [verified, rejected, status] = counted.value
      assert.strictEqual(verified.json.status, "verified", verified.text)
      assert.strictEqual(rejected.json.status, "rejected", rejected.text)
      assert.strictEqual(status.status, 200, status.text)
      assert.deepStrictEqual(counted.names, [])
    }))
})
