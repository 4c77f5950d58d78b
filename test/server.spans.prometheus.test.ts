/**
 * Telemetry with Prometheus metrics only (no OTLP): nothing exports spans, so requests make none and
 * pay for no tracing. The SDK installs no tracer (Effect's in-process one stays: `Spans.exported` is
 * false, as it is true once OTLP is configured), no span is made for a verification or a status
 * request, and the requests are still counted in the Prometheus text.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import * as Config from "../src/Config.js"
import { tokenDigest } from "../src/server/Auth.js"
import * as TelemetryLayer from "../src/server/Telemetry.js"
import * as Spans from "../src/internal/Spans.js"
import { countedVerifyRequests } from "./support/verifyRequests.js"
import { call, sources, startService, tokens } from "./serverSupport.js"

const metricsToken = "citegate-prometheus-only-metrics-token-1"
const serviceTokens = [
  { sha256: tokenDigest(tokens.admin), runs: "*", capture: true, name: "admin" },
  { sha256: tokenDigest(tokens.capture), runs: [], capture: true, name: "capture" },
  { sha256: tokenDigest(metricsToken), runs: [], capture: false, metrics: true, name: "metrics" }
]

const exportedUnder = (telemetry: Record<string, unknown>) =>
  Effect.gen(function*() {
    const config = yield* Config.decode({ sources: ["https://example.test/a.txt"], labels: ["a"], telemetry })
    return yield* Effect.provide(Spans.exported, TelemetryLayer.layer(config))
  })

describe("service spans with Prometheus metrics only", () => {
  it.scoped("the SDK installs no tracer without an OTLP exporter (and one with it)", () =>
    Effect.gen(function*() {
      assert.isFalse(yield* exportedUnder({ prometheus: true }))
      // The check sees a tracer when one is installed: OTLP configured (nothing is sent before a span ends).
      assert.isTrue(yield* exportedUnder({ otlp: { url: "http://127.0.0.1:9" }, prometheus: true }))
    }))

  it.scopedLive("verification and status requests make no span; the requests are counted in the metrics", () =>
    Effect.gen(function*() {
      const { server } = yield* sources
      const sales = server.url("/q3-sales.txt")
      const service = yield* startService({
        sources: [sales],
        server: { tokens: serviceTokens as any },
        config: { telemetry: { serviceName: "citegate-prometheus-only", prometheus: true } }
      })
      assert.deepStrictEqual(yield* countedVerifyRequests(service, sales), [])
      // Telemetry is on: the requests are counted (four verifications).
      const scrape = yield* call(service, "/metrics", { token: metricsToken })
      assert.strictEqual(scrape.status, 200, scrape.text)
      assert.match(scrape.text, /^citegate_http_requests_total\{[^}]*route="\/v1\/verify\/report"[^}]*status="200"[^}]*\} 4$/m)
    }))
})
