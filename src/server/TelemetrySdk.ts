/**
 * Telemetry on: the OpenTelemetry SDK behind `@effect/opentelemetry`. Spans (every `Effect.withSpan`
 * and `Effect.fn`, and the platform's span per request) go to the collector in batches; Effect's
 * metrics are read by an OTLP reader (pushed every `exportIntervalMs`) and by a Prometheus reader
 * (pulled by `GET /metrics`). Loaded only when `telemetry` is configured, so a service without it
 * never loads the SDK. On shutdown the pending spans and a last metric export are flushed.
 *
 * @since 0.4.0
 */
import * as OtelMetrics from "@effect/opentelemetry/Metrics"
import * as NodeSdk from "@effect/opentelemetry/NodeSdk"
import * as Resource from "@effect/opentelemetry/Resource"
import * as OtelTracer from "@effect/opentelemetry/Tracer"
import { context as otelContext, createContextKey, ROOT_CONTEXT } from "@opentelemetry/api"
import { OTLPMetricExporter } from "@opentelemetry/exporter-metrics-otlp-http"
import { PrometheusExporter, PrometheusSerializer } from "@opentelemetry/exporter-prometheus"
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-http"
import { type MetricReader, PeriodicExportingMetricReader } from "@opentelemetry/sdk-metrics"
import { BatchSpanProcessor } from "@opentelemetry/sdk-trace-base"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Tracer from "effect/Tracer"
import type { ResolvedTelemetry } from "../Config.js"
import { version } from "../version.js"
import { Telemetry } from "./Context.js"

/** Most spans queued for export; past it new spans are dropped (counted by the SDK), never buffered without bound. */
export const maxQueuedSpans = 2_048

/** How long shutdown waits for the pending spans and a last metric export. */
const shutdownTimeout = 5_000

/**
 * Whether an OpenTelemetry context manager is installed in this process: under the API's default
 * (no-op) one, `context.with` runs its function and forgets the context it was given.
 */
export const contextPropagates = (): boolean => {
  const key = createContextKey("citegate.telemetry.probe")
  const probe = ROOT_CONTEXT.setValue(key, true)
  return otelContext.with(probe, () => otelContext.active().getValue(key) === true)
}

/**
 * The SDK's Effect tracer (`@effect/opentelemetry`'s), without the step it takes each time a fiber
 * runs when nothing would read it. That step makes the fiber's span the active OpenTelemetry
 * context for the run, for code that uses the OpenTelemetry API itself (an instrumented library);
 * with no context manager installed (`serve` installs none) the context is dropped at once, and the
 * step cost about 40% of the service's CPU per request with telemetry on (docs/performance.md).
 * The spans, their parents and what is exported are the same. Decided when the layer is built.
 */
const effectTracer: Layer.Layer<never, never, OtelTracer.OtelTracer> = Layer.unwrapEffect(
  Effect.map(OtelTracer.make, (tracer) =>
    Layer.setTracer(
      contextPropagates() ? tracer : Tracer.make({
        span: (name, parent, context, links, startTime, kind, options) => tracer.span(name, parent, context, links, startTime, kind, options),
        context: (execution) => execution()
      })
    ))
)

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
  // What `NodeSdk.layer` builds, with the tracer under `effectTracer`: the metric readers and the
  // tracer side by side over one resource, so that on shutdown they flush at the same time, within
  // one `shutdownTimeout` (not one after the other).
  const resource = Resource.layerFromEnv(Resource.configToAttributes({ serviceName: telemetry.serviceName, serviceVersion: version }))
  const metrics = readers.length === 0 ? Layer.empty : OtelMetrics.layer(() => readers as [MetricReader, ...Array<MetricReader>], { shutdownTimeout })
  const tracing = otlp === undefined ? Layer.empty : effectTracer.pipe(
    Layer.provide(OtelTracer.layerTracer),
    Layer.provide(Layer.suspend(() =>
      NodeSdk.layerTracerProvider(
        new BatchSpanProcessor(new OTLPTraceExporter({ url: `${otlp.url}/v1/traces`, headers: { ...otlp.headers } }), {
          maxQueueSize: maxQueuedSpans
        }),
        { shutdownTimeout }
      )
    ))
  )
  const sdk = Layer.merge(tracing, metrics).pipe(Layer.provide(resource))
  // Without the `otel_scope_name` label on every series (it names the bridge, the same for all).
  const serializer = new PrometheusSerializer(undefined, undefined, undefined, false, true)
  const scrape = prometheus === undefined ? undefined : Effect.promise(() =>
    prometheus.collect().then(({ resourceMetrics }) => serializer.serialize(resourceMetrics))
  )
  // Built after the SDK, so the service it provides runs under the SDK's tracer.
  // Sampled state is at most a second old, and at least as fresh as each OTLP export.
  const sampleMs = Math.min(1_000, otlp?.exportIntervalMs ?? 1_000)
  return Layer.succeed(Telemetry, { enabled: true, scrape, sampleMs }).pipe(Layer.provideMerge(sdk))
}
