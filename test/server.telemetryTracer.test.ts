/**
 * The tracer telemetry installs (server/TelemetrySdk.ts): spans exported over OTLP/HTTP to a
 * loopback receiver keep their trace and parents whether or not an OpenTelemetry context manager
 * is installed; with one installed, code that uses the OpenTelemetry API inside a fiber sees the
 * fiber's span as the active one, as under the SDK's own tracer.
 */
import { assert, describe, it } from "@effect/vitest"
import { context as otelContext, type Context as OtelContext, type ContextManager, ROOT_CONTEXT, trace } from "@opentelemetry/api"
import { Effect, Layer } from "effect"
import { contextPropagates, layer as telemetryLayer } from "../src/server/TelemetrySdk.js"
import { testServer, waitUntil } from "./httpServer.js"

interface ExportedSpan {
  readonly name: string
  readonly traceId: string
  readonly spanId: string
  readonly parentSpanId?: string | undefined
}

/** An OTLP/HTTP receiver of JSON span exports. */
const receiver = Effect.gen(function*() {
  const spans: Array<ExportedSpan> = []
  const server = yield* testServer((request, response) => {
    const chunks: Array<Buffer> = []
    request.on("data", (chunk: Buffer) => chunks.push(chunk))
    request.on("end", () => {
      if (request.url === "/v1/traces") {
        const body = JSON.parse(Buffer.concat(chunks).toString("utf8"))
        for (const rs of body.resourceSpans) for (const ss of rs.scopeSpans) spans.push(...ss.spans)
      }
      response.writeHead(200, { "content-type": "application/json" }).end("{}")
    })
  })
  return { url: server.url(""), spans }
})

const telemetry = (url: string) =>
  telemetryLayer({ serviceName: "citegate-under-test", otlp: { url, headers: {}, exportIntervalMs: 60_000 }, prometheus: false })

/** A synchronous context manager: the context given to `with` is the active one while its function runs. */
class StackContextManager implements ContextManager {
  private current: OtelContext = ROOT_CONTEXT
  active() {
    return this.current
  }
  with<A extends Array<unknown>, F extends (...args: A) => ReturnType<F>>(context: OtelContext, fn: F, thisArg?: ThisParameterType<F>, ...args: A) {
    const previous = this.current
    this.current = context
    try {
      return fn.call(thisArg, ...args)
    } finally {
      this.current = previous
    }
  }
  bind<T>(_context: OtelContext, target: T): T {
    return target
  }
  enable() {
    return this
  }
  disable() {
    this.current = ROOT_CONTEXT
    return this
  }
}

/**
 * `effect`, and how many times the OpenTelemetry API's `context.with` was called while it ran: the
 * upstream tracer calls it each time a fiber runs under a span.
 */
const countingContextWith = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.acquireUseRelease(
    Effect.sync(() => {
      const counter = { calls: 0 }
      const original = otelContext.with.bind(otelContext)
      // An own property over the API's method, removed again after `effect`: calls go through to it.
      Object.defineProperty(otelContext, "with", {
        configurable: true,
        value: (...args: Parameters<typeof otelContext.with>) => {
          counter.calls++
          return original(...args)
        }
      })
      return counter
    }),
    (counter) => Effect.map(effect, (value) => [value, counter] as const),
    () => Effect.sync(() => delete (otelContext as { with?: unknown }).with)
  )

/** Three spans, nested, one of them resumed after a timer; their ids as Effect saw them. */
const nested = Effect.gen(function*() {
  const inner = yield* Effect.withSpan(Effect.zipRight(Effect.sleep("5 millis"), Effect.currentSpan), "test.inner")
  const middle = yield* Effect.withSpan(Effect.currentSpan, "test.middle")
  return { inner, middle }
}).pipe(Effect.withSpan("test.outer"), Effect.orDie)

describe("the telemetry tracer", () => {
  it.scopedLive("without a context manager: spans are exported with their trace and parents", () =>
    Effect.gen(function*() {
      assert.isFalse(contextPropagates())
      const { spans, url } = yield* receiver
      const [ids, counter] = yield* Effect.scoped(Effect.provide(countingContextWith(nested), Layer.orDie(telemetry(url))))
      // The fibers ran under their spans without the tracer's context step.
      assert.strictEqual(counter.calls, 0)
      // Closing the layer flushed the batch.
      yield* waitUntil(() => spans.length >= 3, "spans arrive", 10_000)
      const named = (name: string) => spans.find((s) => s.name === name)!
      const outer = named("test.outer")
      const inner = named("test.inner")
      const middle = named("test.middle")
      assert.strictEqual(inner.spanId, ids.inner.spanId)
      assert.strictEqual(middle.spanId, ids.middle.spanId)
      assert.strictEqual(inner.parentSpanId, outer.spanId)
      assert.strictEqual(middle.parentSpanId, outer.spanId)
      assert.strictEqual(inner.traceId, outer.traceId)
      assert.strictEqual(middle.traceId, outer.traceId)
      assert.isTrue(outer.parentSpanId === undefined || outer.parentSpanId === "")
    }))

  it.scopedLive("with a context manager: OpenTelemetry API code in a fiber sees the fiber's span as active", () =>
    Effect.gen(function*() {
      const manager = new StackContextManager()
      assert.isTrue(otelContext.setGlobalContextManager(manager))
      yield* Effect.addFinalizer(() => Effect.sync(() => otelContext.disable()))
      assert.isTrue(contextPropagates())
      const { spans, url } = yield* receiver
      const [seen, counter] = yield* Effect.scoped(Effect.provide(
        countingContextWith(Effect.withSpan(
          Effect.zipRight(
            Effect.sleep("5 millis"),
            Effect.zip(Effect.currentSpan, Effect.sync(() => trace.getSpan(otelContext.active())?.spanContext().spanId))
          ),
          "test.active"
        ).pipe(Effect.orDie)),
        Layer.orDie(telemetry(url))
      ))
      const [span, active] = seen
      assert.isAtLeast(counter.calls, 1)
      assert.strictEqual(active, span.spanId)
      yield* waitUntil(() => spans.some((s) => s.name === "test.active"), "the span arrives", 10_000)
    }))

  it.scopedLive("shutdown flushes spans and metrics side by side, within one shutdown timeout, when the collector never answers", () =>
    Effect.gen(function*() {
      // A collector that takes every export and never answers: each flush waits for its timeout.
      const held = yield* testServer(() => {})
      const started = Date.now()
      yield* Effect.scoped(Effect.provide(
        Effect.withSpan(Effect.void, "test.pending"),
        Layer.orDie(telemetryLayer({
          serviceName: "citegate-under-test",
          otlp: { url: held.url(""), headers: {}, exportIntervalMs: 60_000 },
          prometheus: false
        }))
      ))
      // 5 s each (TelemetrySdk's shutdown timeout), at the same time: not 10 s one after the other.
      assert.isBelow(Date.now() - started, 8_000)
    }), 20_000)
})
