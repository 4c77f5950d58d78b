/**
 * The three requests of the span-cost tests (test/server.spans.test.ts, and with Prometheus metrics
 * only, test/server.spans.prometheus.test.ts): a verified report, a rejected one (`mode=reject`) and
 * the run's status, over a run the capture token starts. Made once first (the run's Gates, one per
 * mode, and its finished manifest are made once, then kept), then again with the spans Effect's
 * in-process tracer makes counted; each answer checked.
 */
import { assert } from "@effect/vitest"
import { Effect } from "effect"
import { call, report, type Service, tokens, waitForRun } from "../serverSupport.js"
import { countingInProcess } from "./spans.js"

/** The names of the spans the counted requests made (none is expected without an exporting tracer). */
export const countedVerifyRequests = (service: Service, sales: string) =>
  Effect.gen(function*() {
    const started = yield* call(service, "/v1/runs", { method: "POST", token: tokens.capture })
    assert.strictEqual(started.status, 202, started.text)
    const runId: string = started.json.id
    yield* waitForRun(service, runId)
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
    yield* requests
    const counted = yield* countingInProcess(requests)
    const [verified, rejected, status] = counted.value
    assert.strictEqual(verified.json.status, "verified", verified.text)
    assert.strictEqual(rejected.json.status, "rejected", rejected.text)
    assert.strictEqual(status.status, 200, status.text)
    return counted.names
  })
