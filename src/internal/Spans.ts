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
import * as FiberRefs from "effect/FiberRefs"
import * as Runtime from "effect/Runtime"
import * as Tracer from "effect/Tracer"

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
