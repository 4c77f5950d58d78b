/**
 * Telemetry on: the OpenTelemetry SDK behind `@effect/opentelemetry`. Spans (every `Effect.withSpan`
 * and `Effect.fn`, and the platform's span per request) go to the collector in batches; Effect's
 * metrics are read by an OTLP reader (pushed every `exportIntervalMs`) and by a Prometheus reader
 * (pulled by `GET /metrics`). Loaded only when `telemetry` is configured, so a service without it
 * never loads the SDK. On shutdown the pending spans and a last metric export are flushed.
 *
 * @since 0.4.0
 */
import * as NodeSdk from "@effect/opentelemetry/NodeSdk"
import { OTLPMetricExporter } from "@opentelemetry/exporter-metrics-otlp-http"
import { PrometheusExporter, PrometheusSerializer } from "@opentelemetry/exporter-prometheus"
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-http"
import { type MetricReader, PeriodicExportingMetricReader } from "@opentelemetry/sdk-metrics"
import { BatchSpanProcessor } from "@opentelemetry/sdk-trace-base"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type { ResolvedTelemetry } from "../Config.js"
import { version } from "../version.js"
import { Telemetry } from "./Context.js"

/** Most spans queued for export; past it new spans are dropped (counted by the SDK), never buffered without bound. */
export const maxQueuedSpans = 2_048

/** The SDK's layer (tracer, metric readers) and the `Telemetry` service. */
export const layer = (telemetry: ResolvedTelemetry): Layer.Layer<Telemetry> => {
  const { otlp } = telemetry
  const readers: Array<MetricReader> = []
  const prometheus = telemetry.prometheus ? new PrometheusExporter({ preventServerStart: true }) : undefined
  if (prometheus !== undefined) readers.push(prometheus)
  if (otlp !== undefined) {
    readers.push(
      new PeriodicExportingMetricReader({
        exporter: new OTLPMetricExporter({ url: `${otlp.url}/v1/metrics`, headers: { ...otlp.headers } }),
        exportIntervalMillis: otlp.exportIntervalMs,
        exportTimeoutMillis: Math.min(otlp.exportIntervalMs, 10_000)
      })
    )
  }
  const sdk = NodeSdk.layer(() => ({
    resource: { serviceName: telemetry.serviceName, serviceVersion: version },
    spanProcessor: otlp === undefined ? [] : [
      new BatchSpanProcessor(new OTLPTraceExporter({ url: `${otlp.url}/v1/traces`, headers: { ...otlp.headers } }), {
        maxQueueSize: maxQueuedSpans
      })
    ],
    metricReader: readers,
    shutdownTimeout: 5_000
  }))
  // Without the `otel_scope_name` label on every series (it names the bridge, the same for all).
  const serializer = new PrometheusSerializer(undefined, undefined, undefined, false, true)
  const scrape = prometheus === undefined ? undefined : Effect.promise(() =>
    prometheus.collect().then(({ resourceMetrics }) => serializer.serialize(resourceMetrics))
  )
  // Built after the SDK, so the service it provides runs under the SDK's tracer.
  return Layer.succeed(Telemetry, { enabled: true, scrape }).pipe(Layer.provideMerge(Layer.discard(sdk)))
}
