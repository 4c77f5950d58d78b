/**
 * A single service's capture runs in its metrics: `citegate.runs.active` (holding a capture slot)
 * and `citegate.runs.waiting` (waiting for one), both 0 from the start. A file of its own: the
 * metric registry is the process's, and another test's runs would leave these series behind.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Metric } from "effect"
import { tokenDigest } from "../src/server/Auth.js"
import { heldSource, scrapeUntil, startRuns, startService, tokens, waitForRun } from "./serverSupport.js"

const metricsToken = "citegate-test-metrics-token-515151"
const serviceTokens = [
  { sha256: tokenDigest(tokens.admin), runs: "*", capture: true, name: "admin" },
  { sha256: tokenDigest(tokens.capture), runs: [], capture: true, name: "capture" },
  { sha256: tokenDigest(metricsToken), runs: [], capture: false, metrics: true, name: "metrics" }
]

describe("telemetry on: capture runs", () => {
  it.scopedLive("counts capture runs waiting for a slot and runs holding one", () =>
    Effect.gen(function*() {
      // Its source holds every response: the first run keeps the one slot.
      const source = yield* heldSource
      const service = yield* startService({
        sources: [source.url],
        server: { maxActiveRuns: 1, tokens: serviceTokens as any },
        config: { telemetry: { prometheus: true } }
      })
      // Both gauges read 0 from the start, before any run.
      yield* scrapeUntil(service, metricsToken, [/^citegate_runs_active(?:\{\})? 0$/m, /^citegate_runs_waiting(?:\{\})? 0$/m], 1_000)
      const runIds = yield* startRuns(service, 3)
      yield* scrapeUntil(service, metricsToken, [/^citegate_runs_waiting(?:\{\})? 2$/m, /^citegate_runs_active(?:\{\})? 1$/m])
      yield* source.release
      for (const runId of runIds) yield* waitForRun(service, runId)
      yield* scrapeUntil(service, metricsToken, [/^citegate_runs_active(?:\{\})? 0$/m, /^citegate_runs_waiting(?:\{\})? 0$/m])
    }))

  it.scopedLive("runs interrupted by a shutdown, while waiting for a slot or holding one, are no longer counted", () =>
    Effect.gen(function*() {
      const source = yield* heldSource
      const service = yield* startService({
        sources: [source.url],
        server: { maxActiveRuns: 1, shutdownGraceMs: 0, tokens: serviceTokens as any },
        config: { telemetry: { prometheus: true } }
      })
      yield* startRuns(service, 3)
      yield* scrapeUntil(service, metricsToken, [/^citegate_runs_waiting(?:\{\})? 2$/m, /^citegate_runs_active(?:\{\})? 1$/m])
      // Shut down with the source still holding: the running capture and both waiting runs are interrupted.
      yield* service.close
      const gauge = (name: string) =>
        Metric.unsafeSnapshot().filter((pair) => pair.metricKey.name === name).map((pair) => (pair.metricState as unknown as { readonly value: number }).value)
      assert.deepStrictEqual(gauge("citegate.runs.waiting"), [0])
      assert.deepStrictEqual(gauge("citegate.runs.active"), [0])
    }))
})
