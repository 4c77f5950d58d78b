/**
 * Telemetry of the service, end to end: a real service on 127.0.0.1 with `telemetry` configured
 * exports over OTLP/HTTP to a loopback receiver (node:http, decoding what the exporters send), and
 * answers `GET /metrics` with Prometheus text for a token with `metrics: true` only. Off, nothing is
 * recorded and `/metrics` does not exist.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Metric } from "effect"
import type * as http from "node:http"
import * as Config from "../src/Config.js"
import { tokenDigest } from "../src/server/Auth.js"
import { testServer, waitUntil } from "./httpServer.js"
import { call, report, scrapeUntil, sources, startService, tokens, waitForRun } from "./serverSupport.js"

const metricsToken = "citegate-test-metrics-token-424242"
const serviceTokens = [
  { sha256: tokenDigest(tokens.admin), runs: "*", capture: true, name: "admin" },
  { sha256: tokenDigest(tokens.capture), runs: [], capture: true, name: "capture" },
  { sha256: tokenDigest(metricsToken), runs: [], capture: false, metrics: true, name: "metrics" }
]

interface Export {
  readonly path: string
  readonly contentType: string
  readonly headers: http.IncomingHttpHeaders
  readonly body: any
}

/** An OTLP/HTTP receiver: JSON bodies are decoded and kept; any other encoding is kept as refused (415). */
const otlpReceiver = Effect.gen(function*() {
  const exports: Array<Export> = []
  const refused: Array<string> = []
  const server = yield* testServer((request, response) => {
    const chunks: Array<Buffer> = []
    request.on("data", (chunk: Buffer) => chunks.push(chunk))
    request.on("end", () => {
      const contentType = request.headers["content-type"] ?? ""
      if (!contentType.startsWith("application/json")) {
        refused.push(`${request.url} ${contentType}`)
        response.writeHead(415).end()
        return
      }
      exports.push({
        path: request.url ?? "",
        contentType,
        headers: request.headers,
        body: JSON.parse(Buffer.concat(chunks).toString("utf8"))
      })
      response.writeHead(200, { "content-type": "application/json" }).end("{}")
    })
  })
  return { server, exports, refused }
})

type Attributes = ReadonlyArray<{ readonly key: string; readonly value: Record<string, unknown> }>
const attribute = (attributes: Attributes | undefined, key: string): unknown => {
  const found = attributes?.find((a) => a.key === key)?.value
  return found === undefined ? undefined : Object.values(found)[0]
}

const spansOf = (exports: ReadonlyArray<Export>) =>
  exports.filter((e) => e.path === "/v1/traces").flatMap((e) =>
    (e.body.resourceSpans as Array<any>).flatMap((rs) =>
      (rs.scopeSpans as Array<any>).flatMap((ss) =>
        (ss.spans as Array<any>).map((span) => ({ ...span, resource: rs.resource as { attributes: Attributes } }))
      )
    )
  ) as Array<{ name: string; attributes: Attributes; resource: { attributes: Attributes } }>

const metricNamesOf = (exports: ReadonlyArray<Export>) =>
  new Set(
    exports.filter((e) => e.path === "/v1/metrics").flatMap((e) =>
      (e.body.resourceMetrics as Array<any>).flatMap((rm) =>
        (rm.scopeMetrics as Array<any>).flatMap((sm) => (sm.metrics as Array<any>).map((m) => m.name as string))
      )
    )
  )

/** Every citegate metric series in the process's registry (labels included). */
const citegateSeries = () =>
  Metric.unsafeSnapshot().filter((pair) => pair.metricKey.name.startsWith("citegate."))
    .map((pair) => `${pair.metricKey.name}${JSON.stringify(pair.metricKey.tags)}:${JSON.stringify(pair.metricState)}`)

describe("telemetry configuration", () => {
  it.effect("is strict and validated: an exporter is required, the URL is http(s) without credentials or query", () =>
    Effect.gen(function*() {
      const base = { sources: ["https://example.com/a.txt"], labels: ["x"] }
      const ok = yield* Config.decode({ ...base, telemetry: { otlp: { url: "http://127.0.0.1:4318/" } } })
      assert.deepStrictEqual(Config.resolvedTelemetry(ok)?.otlp?.url, "http://127.0.0.1:4318")
      assert.strictEqual(Config.resolvedTelemetry(ok)?.serviceName, "citegate")
      assert.isUndefined(Config.resolvedTelemetry(yield* Config.decode(base)))
      for (
        const [telemetry, message] of [
          [{}, "must enable an exporter"],
          [{ prometheus: false }, "must enable an exporter"],
          [{ prometheus: true, extra: 1 }, "is unexpected"],
          [{ otlp: { url: "http://127.0.0.1:4318", token: "x" } }, "is unexpected"],
          [{ otlp: { url: "ftp://collector/" } }, "http: or https:"],
          [{ otlp: { url: "http://user:pw@collector/" } }, "credentials"],
          [{ otlp: { url: "http://collector/?k=v" } }, "no query"],
          [{ otlp: { url: "http://collector", headers: { "bad header": "x" } } }, "headers.bad header"],
          [{ otlp: { url: "http://collector", exportIntervalMs: 10 } }, "from 100"]
        ] as const
      ) {
        const error = yield* Effect.flip(Config.decode({ ...base, telemetry }))
        assert.include(error.message, message, JSON.stringify(telemetry))
      }
      const token = yield* Effect.flip(Config.decode({
        ...base,
        server: { tokens: [{ sha256: tokenDigest("t"), runs: [], capture: false, metrics: "yes" }] }
      }))
      assert.include(token.message, "metrics")
    }))
})

describe("telemetry off (the default)", () => {
  it.scopedLive("records no metric, and GET /metrics does not exist", () =>
    Effect.gen(function*() {
      const { server } = yield* sources
      const sales = server.url("/q3-sales.txt")
      const service = yield* startService({ sources: [sales], server: { tokens: serviceTokens as any } })
      const before = citegateSeries()
      const started = yield* call(service, "/v1/runs", { method: "POST", token: tokens.capture })
      yield* waitForRun(service, started.json.id)
      const verified = yield* call(service, `/v1/verify/report?run=${started.json.id}`, {
        token: tokens.admin,
        body: report(sales, ["Net sales for Q3 2026 were 4,210 units"])
      })
      assert.strictEqual(verified.status, 200, verified.text)
      assert.strictEqual((yield* call(service, "/metrics", { token: metricsToken })).status, 404)
      assert.deepStrictEqual(citegateSeries(), before)
    }))
})

describe("telemetry on", () => {
  it.scopedLive("exports spans and metrics over OTLP/HTTP and serves Prometheus text behind a metrics token", () =>
    Effect.gen(function*() {
      const receiver = yield* otlpReceiver
      const { server } = yield* sources
      const sales = server.url("/q3-sales.txt")
      const missing = server.url("/q4-outlook.txt")
      const service = yield* startService({
        sources: [sales, missing],
        server: { tokens: serviceTokens as any },
        config: {
          telemetry: {
            serviceName: "citegate-under-test",
            otlp: { url: receiver.server.url(""), headers: { "x-collector-key": "k-123" }, exportIntervalMs: 200 },
            prometheus: true
          }
        }
      })
      const started = yield* call(service, "/v1/runs", { method: "POST", token: tokens.capture })
      assert.strictEqual(started.status, 202, started.text)
      const runId: string = started.json.id
      yield* waitForRun(service, runId)
      const verify = (snippet: string) =>
        call(service, `/v1/verify/report?run=${runId}&mode=reject`, { token: tokens.admin, body: report(sales, [snippet]) })
      const verified = yield* verify("Net sales for Q3 2026 were 4,210 units")
      assert.strictEqual(verified.json.status, "verified", verified.text)
      const rejected = yield* verify("Net sales were 9,999 units")
      assert.strictEqual(rejected.json.status, "rejected", rejected.text)

      // Prometheus: refused without a token (401) and for a token without `metrics: true` (403).
      const anonymous = yield* call(service, "/metrics")
      assert.strictEqual(anonymous.status, 401)
      assert.strictEqual(anonymous.json._tag, "Unauthorized")
      const admin = yield* call(service, "/metrics", { token: tokens.admin })
      assert.strictEqual(admin.status, 403)
      assert.deepStrictEqual(admin.json, { _tag: "Forbidden", action: "metrics", runId: null })
      const scrape = yield* call(service, "/metrics", { token: metricsToken })
      assert.strictEqual(scrape.status, 200)
      assert.match(scrape.headers.get("content-type") ?? "", /^text\/plain; version=0\.0\.4/)
      const text = scrape.text
      assert.match(text, /^citegate_http_requests_total\{[^}]*route="\/v1\/verify\/report"[^}]*status="200"[^}]*\} 2$/m)
      assert.match(text, /^citegate_http_requests_total\{[^}]*method="POST"[^}]*route="\/v1\/runs"[^}]*status="202"[^}]*\} 1$/m)
      assert.match(text, /^citegate_http_requests_total\{[^}]*route="\/metrics"[^}]*status="401"[^}]*\} 1$/m)
      assert.match(text, /^citegate_verifications_total\{kind="report",outcome="verified"\} 1$/m)
      assert.match(text, /^citegate_verifications_total\{kind="report",outcome="ReportRejected"\} 1$/m)
      assert.match(text, /^citegate_failures_total\{stage="verify",tag="SnippetAbsent"\} 1$/m)
      assert.match(text, /^citegate_failures_total\{stage="capture",tag="[A-Za-z]+"\} 1$/m)
      assert.match(text, /^citegate_captures_total\{outcome="captured"\} 1$/m)
      const bytes = /^citegate_capture_bytes_total(?:\{\})? (\d+)$/m.exec(text)
      assert.isNotNull(bytes, text)
      const salesText = yield* Effect.promise(() => fetch(sales).then((r) => r.text()))
      assert.strictEqual(Number(bytes![1]), Buffer.byteLength(salesText))
      assert.match(text, /^citegate_http_request_duration_bucket\{[^}]*route="\/v1\/verify\/report"/m)
      // The verified-capture cache, sampled: the second verification took the capture from memory.
      const cached = yield* scrapeUntil(service, metricsToken, [
        /^citegate_cache_hits_total(?:\{\})? [1-9]\d*$/m,
        /^citegate_cache_misses_total(?:\{\})? [1-9]\d*$/m,
        /^citegate_cache_evictions_total(?:\{\})? 0$/m,
        /^citegate_cache_entries(?:\{\})? [1-9]\d*$/m
      ])
      const cacheBytes = /^citegate_cache_bytes(?:\{\})? (\d+)$/m.exec(cached)
      assert.isNotNull(cacheBytes, cached)
      assert.isAtLeast(Number(cacheBytes![1]), Buffer.byteLength(salesText))
      // Labels never carry a run id, a source URL or a query.
      assert.notInclude(text, runId)
      assert.notInclude(text, "127.0.0.1")
      assert.notInclude(text, "?run=")

      // Closing the service flushes the pending spans and a last metric export.
      yield* service.close
      yield* waitUntil(() => spansOf(receiver.exports).some((s) => s.name === "Render.json"), "spans arrive", 10_000)
      assert.deepStrictEqual(receiver.refused, [])
      for (const e of receiver.exports) assert.strictEqual(e.headers["x-collector-key"], "k-123")
      const spans = spansOf(receiver.exports)
      assert.strictEqual(attribute(spans[0]!.resource.attributes, "service.name"), "citegate-under-test")
      const named = (name: string) => spans.filter((s) => s.name === name)

      // The request: the platform's server span, with citegate's request id and route template.
      const requestSpans = named("http.server POST")
      const verifyRequests = requestSpans.filter((s) => attribute(s.attributes, "citegate.route") === "/v1/verify/report")
      assert.strictEqual(verifyRequests.length, 2)
      for (const s of verifyRequests) {
        assert.strictEqual(attribute(s.attributes, "citegate.run_id"), runId)
        assert.match(String(attribute(s.attributes, "citegate.request_id")), /^[0-9a-f-]{36}$/)
        assert.isUndefined(attribute(s.attributes, "http.request.header.authorization") === `Bearer ${tokens.admin}` ? "leaked" : undefined)
      }
      assert.sameMembers(verifyRequests.map((s) => attribute(s.attributes, "citegate.outcome")), ["verified", "ReportRejected"])
      assert.sameMembers(
        verifyRequests.map((s) => attribute(s.attributes, "citegate.error_tag")),
        [undefined, "ReportRejected"]
      )

      // Capture: the run's span, one span per source with its URL; the failed one carries its error tag.
      assert.strictEqual(attribute(named("Runs.capture")[0]?.attributes, "citegate.run_id"), runId)
      const captures = named("Capture.capture")
      assert.sameMembers(captures.map((s) => attribute(s.attributes, "citegate.source")), [sales, missing])
      for (const s of captures) assert.strictEqual(attribute(s.attributes, "citegate.run_id"), runId)
      const failed = captures.find((s) => attribute(s.attributes, "citegate.source") === missing)!
      assert.match(String(attribute(failed.attributes, "citegate.error_tag")), /^[A-Z][A-Za-z]+$/)
      assert.isUndefined(attribute(captures.find((s) => s !== failed)!.attributes, "citegate.error_tag"))

      // Verification steps: read and search per capture (source, run id), and the rendering.
      for (const name of ["Verifier.read", "Verifier.search"]) {
        const steps = named(name)
        assert.strictEqual(steps.length, 2, name)
        for (const s of steps) {
          assert.strictEqual(attribute(s.attributes, "citegate.source"), sales)
          assert.strictEqual(attribute(s.attributes, "citegate.run_id"), runId)
        }
      }
      assert.strictEqual(named("Render.json").length, 2)
      assert.isAtLeast(named("Gate.checkJsonWithCaptures").length, 2)

      // Metrics over OTLP: the same instruments.
      yield* waitUntil(() => metricNamesOf(receiver.exports).has("citegate.verifications"), "metrics arrive", 10_000)
      const names = metricNamesOf(receiver.exports)
      for (
        const name of [
          "citegate.http.requests",
          "citegate.http.request.duration",
          "citegate.verifications",
          "citegate.failures",
          "citegate.captures",
          "citegate.capture.bytes",
          "citegate.runs.active",
          "citegate.cache.hits",
          "citegate.cache.misses",
          "citegate.cache.evictions",
          "citegate.cache.bytes",
          "citegate.cache.entries"
        ]
      ) assert.isTrue(names.has(name), `${name} in ${[...names].join(", ")}`)
    }))

})
