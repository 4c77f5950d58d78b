/**
 * Span attribute names citegate sets, and a helper that records a typed failure's tag on the
 * current span. Spans cost little with Effect's in-process tracer and are exported only when the
 * service's telemetry is on (docs/observability.md).
 *
 * @since 0.4.0
 */
import * as Effect from "effect/Effect"

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
