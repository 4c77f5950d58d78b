/**
 * Span attribute names citegate sets, and a helper that records a typed failure's tag on the
 * current span. Spans cost little with Effect's in-process tracer and are exported only when the
 * service's telemetry is on (docs/observability.md).
 *
 * @since 0.4.0
 */
import * as Context from "effect/Context"
import * as DefaultServices from "effect/DefaultServices"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as FiberRefs from "effect/FiberRefs"
import * as Option from "effect/Option"
import * as Runtime from "effect/Runtime"
import * as Tracer from "effect/Tracer"
import type { YieldWrap } from "effect/Utils"

export const spanAttributes = {
  runId: "citegate.run_id",
  source: "citegate.source",
  errorTag: "citegate.error_tag",
  requestId: "citegate.request_id",
  route: "citegate.route",
  outcome: "citegate.outcome"
} as const

/** On a typed failure, its `_tag` as `citegate.error_tag` on the current span. */
export const tagFailure = <A, E extends { readonly _tag: string }, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  Effect.tapError(self, (error) => Effect.annotateCurrentSpan(spanAttributes.errorTag, error._tag))

/**
 * Effect's own in-process tracer, the default: its spans are kept by nobody outside the fiber. Taken
 * from the default services every runtime starts with (shared by every copy of `effect` of this
 * version in the process, so a second copy's tracer still counts as in-process).
 */
const inProcess = Context.get(FiberRefs.getOrDefault(Runtime.defaultRuntime.fiberRefs, DefaultServices.currentServices), Tracer.Tracer)

/**
 * Whether spans leave the process: a tracer other than Effect's in-process one is installed (the
 * service's telemetry, or an embedding program's own). Spans made once per item of a verification
 * (each capture read, each capture searched) are made only then: under the in-process tracer each
 * one only costs (a span, two clock reads, a context copy and an exit hook per capture, about half
 * of a verification of 1,000 small captures: docs/performance.md), and nothing reads them.
 */
export const exported: Effect.Effect<boolean> = Effect.tracerWith((tracer) => Effect.succeed(tracer !== inProcess))

/**
 * A span per item of a hot loop (`Verifier.read`, `Verifier.search`), its typed failure's tag on it:
 * when `on` (spans are exported, `exported`), else the effect as it is, with no span and nothing
 * annotated on the enclosing span.
 */
export const perItem = (on: boolean, name: string, attributes: Record<string, unknown>) =>
<A, E extends { readonly _tag: string }, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  on ? Effect.withSpan(tagFailure(self), name, { attributes, captureStackTrace: false }) : self

/** Whether the fiber now running (if any) would record spans for someone: not under the in-process tracer. */
const currentFiberExports = (): boolean => {
  const fiber = Fiber.getCurrentFiber()
  return Option.isNone(fiber) || fiber.value.currentTracer !== inProcess
}

/** Two stack lines as `Effect.fn` records them (`code.stacktrace`): where it was defined and where it was called. */
const stackLine = (error: Error): string | undefined => {
  const line = error.stack?.trim().split("\n").slice(2).join("\n").trim()
  return line === undefined ? undefined : line.includes("(") ? line : line.replace(/at (.*)/, "at ($1)")
}

const captureStack = (): Error => {
  const limit = Error.stackTraceLimit
  Error.stackTraceLimit = 2
  const error = new Error()
  Error.stackTraceLimit = limit
  return error
}

/**
 * `Effect.fn(name)` for a hot path: the span (with the same name, options and `code.stacktrace`) only
 * when spans are exported (`exported`, decided when the effect runs); under Effect's in-process
 * tracer the body runs as `Effect.fnUntraced` would, with no span, no clock reads and no stack
 * captured. A span per request or per verification under the in-process tracer costs tens of
 * microseconds each (docs/performance.md) and nothing reads it.
 */
export const fn = (name: string, options?: Tracer.SpanOptions) =>
<Eff extends YieldWrap<Effect.Effect<any, any, any>>, AEff, Args extends Array<any>>(
  body: (...args: Args) => Generator<Eff, AEff, never>
) => {
  const definedAt = captureStack()
  const untraced = Effect.fnUntraced(body)
  const traced = function(this: unknown, ...args: Args) {
    // The call site is captured only when the calling fiber exports spans (an Error per call otherwise).
    const calledAt = currentFiberExports() ? captureStack() : undefined
    const effect = untraced.apply(this, args)
    return Effect.tracerWith((tracer) => {
      if (tracer === inProcess) return effect
      let stack: string | undefined | false = false
      const captureStackTrace = () => {
        if (stack === false) {
          const def = stackLine(definedAt)
          const call = calledAt === undefined ? undefined : stackLine(calledAt)
          stack = def === undefined ? call : call === undefined ? def : `${def}\n${call}`
        }
        return stack
      }
      return Effect.withSpan(effect, name, { captureStackTrace, ...options })
    })
  }
  return Object.defineProperty(traced, "length", { value: body.length, configurable: true }) as unknown as typeof untraced
}

/** `Effect.withSpan(name, options)`, only when spans are exported (`exported`); else the effect as it is. */
export const withSpanExported = (name: string, options?: Tracer.SpanOptions) =>
<A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  Effect.tracerWith((tracer) => tracer === inProcess ? self : Effect.withSpan(self, name, options))

/**
 * `Effect.annotateCurrentSpan(attributes)` without its cost when there is no span: that one fails
 * inside with a `NoSuchElementException` (an Error with its stack) and ignores it, once per request.
 */
export const annotateCurrentSpanIfAny = (attributes: Record<string, unknown>): Effect.Effect<void> =>
  Effect.flatMap(Effect.serviceOption(Tracer.ParentSpan), (span) => {
    if (Option.isNone(span) || span.value._tag !== "Span") return Effect.void
    const current = span.value
    return Effect.sync(() => {
      for (const key in attributes) current.attribute(key, attributes[key])
    })
  })

/**
 * `Effect.annotateSpans(key, value)` only when spans are exported (`exported`): under Effect's
 * in-process tracer the spans it would annotate are read by nobody, and each use costs two updates
 * of a fiber ref (a map copied and compared).
 */
export const annotateSpansExported = (key: string, value: unknown) =>
<A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  Effect.tracerWith((tracer) => tracer === inProcess ? self : Effect.annotateSpans(self, key, value))
