/**
 * The service's metrics (docs/observability.md) and the span attribute names. Every label has a
 * small fixed set of values: a route template (never a raw path or query), a method, a status, an
 * outcome or an error tag; never source text, a source URL or a run id. Recorded only when
 * telemetry is on (`Telemetry.enabled`): off, each call is one context lookup.
 *
 * @since 0.4.0
 */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Metric from "effect/Metric"
import * as MetricBoundaries from "effect/MetricBoundaries"
import * as MetricLabel from "effect/MetricLabel"
import * as Option from "effect/Option"
import * as Schedule from "effect/Schedule"
import { spanAttributes } from "../internal/Spans.js"
import { CaptureCache, type CaptureCacheStats } from "../verify/CaptureCache.js"
import { Telemetry } from "./Context.js"

/** Span attributes set by citegate (besides the platform's `http.*` and `url.*`). */
export const attributes = spanAttributes

export const requests = Metric.counter("citegate.http.requests", {
  description: "HTTP requests answered, by method, route template and status",
  // Incremental: exported as a monotonic sum (a Prometheus counter, `_total`).
  incremental: true
})
export const requestDuration = Metric.histogram(
  "citegate.http.request.duration",
  MetricBoundaries.exponential({ start: 1, factor: 2, count: 16 }),
  "Milliseconds from a request's arrival to its response headers, by route template"
)
export const verifications = Metric.counter("citegate.verifications", {
  description: "Verifications (reports and answers) by kind and outcome",
  incremental: true
})
export const failures = Metric.counter("citegate.failures", {
  description: "Typed failures by stage (verify, capture) and error tag",
  incremental: true
})
export const captures = Metric.counter("citegate.captures", {
  description: "Sources captured by service runs, by outcome",
  incremental: true
})
export const captureBytes = Metric.counter("citegate.capture.bytes", {
  description: "Bytes of response bodies captured by service runs",
  incremental: true
})
export const runsActive = Metric.gauge("citegate.runs.active", {
  description: "Capture runs in progress on this replica"
})
export const runsWaiting = Metric.gauge("citegate.runs.waiting", {
  description: "Capture runs on this replica waiting for a capture slot (server.maxActiveRuns); with --store, see citegate.capture.queue.depth"
})
export const cacheHits = Metric.counter("citegate.cache.hits", {
  description: "Captures (and finished runs' manifests) taken from the verified-capture cache: no read, no hash",
  incremental: true
})
export const cacheMisses = Metric.counter("citegate.cache.misses", {
  description: "Captures read and hashed (and manifests made) because the verified-capture cache did not hold them or their stamp changed",
  incremental: true
})
export const cacheEvictions = Metric.counter("citegate.cache.evictions", {
  description: "Captures and manifests dropped from the verified-capture cache to stay within server.cacheBytes",
  incremental: true
})
export const cacheBytes = Metric.gauge("citegate.cache.bytes", {
  description: "Bytes the verified-capture cache holds (texts, indexes and manifests), at most server.cacheBytes"
})
export const cacheEntries = Metric.gauge("citegate.cache.entries", {
  description: "Captures and manifests the verified-capture cache holds"
})
export const captureQueueDepth = Metric.gauge("citegate.capture.queue.depth", {
  description: "Capture jobs in the shared PostgreSQL queue, by state (waiting: queued or with an expired lease; running)"
})

/** Route templates the service answers; anything else is `other` (a label never carries a raw path). */
const exactRoutes = new Set([
  "/healthz",
  "/readyz",
  "/metrics",
  "/openapi.json",
  "/v1/runs",
  "/v1/verify/report",
  "/v1/verify/answer",
  "/v1/stream/answer"
])
const templated: ReadonlyArray<readonly [RegExp, string]> = [
  [/^\/v1\/runs\/[^/]+$/, "/v1/runs/:id"],
  [/^\/v1\/runs\/[^/]+\/events$/, "/v1/runs/:id/events"],
  [/^\/v1\/runs\/[^/]+\/documents$/, "/v1/runs/:id/documents"],
  [/^\/v1\/stream\/answer\/[^/]+$/, "/v1/stream/answer/:id"]
]

/** The route template of a request path (without its query), or `other`. */
export const routeOf = (path: string): string => {
  if (exactRoutes.has(path)) return path
  for (const [pattern, route] of templated) if (pattern.test(path)) return route
  return "other"
}

const methods = new Set(["GET", "POST", "PUT", "DELETE", "HEAD", "OPTIONS", "PATCH"])

/** `metric` with these labels. */
const labelled = <M extends Metric.Metric<any, any, any>>(metric: M, labels: Record<string, string>): M =>
  Metric.taggedWithLabels(metric, Object.entries(labels).map(([key, value]) => MetricLabel.make(key, value))) as M

/** Runs `record` only when telemetry is on. */
const whenOn = (record: Effect.Effect<void>): Effect.Effect<void> =>
  Effect.flatMap(Effect.serviceOption(Telemetry), (telemetry) =>
    Option.isSome(telemetry) && telemetry.value.enabled ? record : Effect.void)

/** One answered request. */
export const request = (method: string, path: string, status: number, ms: number): Effect.Effect<void> =>
  whenOn(Effect.suspend(() => {
    const route = routeOf(path)
    return Effect.zipRight(
      Metric.increment(labelled(requests, {
        method: methods.has(method) ? method : "other",
        route,
        status: status >= 100 && status <= 599 ? String(status) : "other"
      })),
      Metric.update(labelled(requestDuration, { route }), ms)
    )
  }))

/** One verification: its outcome (`verified` or the error's tag) and the tags of the facts that failed. */
export const verification = (
  kind: "report" | "answer",
  outcome: string,
  failureTags: ReadonlyArray<string>
): Effect.Effect<void> =>
  whenOn(Effect.suspend(() => {
    const counts = new Map<string, number>()
    for (const tag of failureTags) counts.set(tag, (counts.get(tag) ?? 0) + 1)
    return Effect.zipRight(
      Metric.increment(labelled(verifications, { kind, outcome })),
      Effect.forEach(counts, ([tag, n]) => Metric.incrementBy(labelled(failures, { stage: "verify", tag }), n), { discard: true })
    )
  }))

/** One source of a service run: captured (with its body's bytes) or failed (with the error's tag). */
export const capture = (result: { readonly bytes: number } | { readonly failed: string }): Effect.Effect<void> =>
  whenOn(
    "bytes" in result
      ? Effect.zipRight(
        Metric.increment(labelled(captures, { outcome: "captured" })),
        Metric.incrementBy(captureBytes, result.bytes)
      )
      : Effect.zipRight(
        Metric.increment(labelled(captures, { outcome: "failed" })),
        Metric.increment(labelled(failures, { stage: "capture", tag: result.failed }))
      )
  )

/** `sample` every `Telemetry.sampleMs` while telemetry is on, until interrupted; nothing (no loop) when it is off. */
const sampledWhileOn = (sample: Effect.Effect<void>): Effect.Effect<void> =>
  Effect.flatMap(Effect.serviceOption(Telemetry), (telemetry) =>
    Option.isNone(telemetry) || !telemetry.value.enabled
      ? Effect.void
      : Effect.asVoid(Effect.repeat(sample, Schedule.spaced(telemetry.value.sampleMs))))

/**
 * Samples the verified-capture cache's `stats` into the metrics while telemetry is on
 * (`sampledWhileOn`): its counters as increments since the last sample, its size as gauges.
 */
export const sampleCache = (stats: Effect.Effect<CaptureCacheStats>): Effect.Effect<void> =>
  Effect.suspend(() => {
    let last = { hits: 0, misses: 0, evictions: 0 }
    return sampledWhileOn(Effect.flatMap(stats, (now) => {
      const since = { hits: now.hits - last.hits, misses: now.misses - last.misses, evictions: now.evictions - last.evictions }
      last = now
      return Effect.all([
        Metric.incrementBy(cacheHits, since.hits),
        Metric.incrementBy(cacheMisses, since.misses),
        Metric.incrementBy(cacheEvictions, since.evictions),
        Metric.set(cacheBytes, now.bytes),
        Metric.set(cacheEntries, now.entries)
      ], { discard: true })
    }))
  })

/** `sampleCache` of the verified-capture cache in context, for the layer's life (a fiber only with telemetry on). */
export const cacheSampler: Layer.Layer<never, never, CaptureCache> = Layer.scopedDiscard(
  Effect.flatMap(CaptureCache, (cache) => Effect.forkScoped(Effect.interruptible(sampleCache(cache.stats))))
)

/**
 * Samples the shared capture queue's depth into `citegate.capture.queue.depth` while telemetry is
 * on (`sampledWhileOn`; `count` asks the database, and a failed count leaves the last values).
 * Every replica reports the same queue: aggregate with max, not sum.
 */
export const sampleQueue = <E>(count: Effect.Effect<{ readonly waiting: number; readonly running: number }, E>): Effect.Effect<void> =>
  sampledWhileOn(count.pipe(
    Effect.flatMap(({ running, waiting }) =>
      Effect.zipRight(
        Metric.set(labelled(captureQueueDepth, { state: "waiting" }), waiting),
        Metric.set(labelled(captureQueueDepth, { state: "running" }), running)
      )
    ),
    Effect.ignore
  ))

/** A capture run started (+1) or ended (-1) on this replica. */
export const runActive = (delta: 1 | -1): Effect.Effect<void> => whenOn(Metric.incrementBy(runsActive, delta))

/**
 * A single service's run gauges at 0 from its start (with telemetry on), so that a scrape or an
 * alert sees 0, not a series that is missing until the first run.
 */
export const runsAtZero: Effect.Effect<void> = whenOn(
  Effect.zipRight(Metric.set(runsActive, 0), Metric.set(runsWaiting, 0))
)

/** A capture run began (+1) or stopped (-1) waiting for a slot on this replica. */
export const runWaiting = (delta: 1 | -1): Effect.Effect<void> => whenOn(Metric.incrementBy(runsWaiting, delta))

/**
 * `withSlot(run)` (a run that waits for a capture slot, then holds it), counted in
 * `citegate.runs.waiting` from the start until it holds the slot, or until it ends without one
 * (interrupted while waiting): exactly once either way.
 */
export const waitingForSlot = <A, E, R>(withSlot: (run: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>) =>
(run: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  Effect.suspend(() => {
    let waiting = true
    const stopped = Effect.suspend(() => {
      if (!waiting) return Effect.void
      waiting = false
      return runWaiting(-1)
    })
    // Counted and released as a resource: an interruption between the two cannot leave a count behind.
    return Effect.acquireUseRelease(runWaiting(1), () => withSlot(Effect.zipRight(stopped, run)), () => stopped)
  })
