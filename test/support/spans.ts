/**
 * Span counting for the tests that check what a run costs in spans: under Effect's default in-process
 * tracer (which nothing reads) and under a tracer that exports, as the service's telemetry does.
 */
import { Context, Effect } from "effect"
import * as DefaultServices from "effect/DefaultServices"
import * as Tracer from "effect/Tracer"

/** The in-process tracer every program runs with unless it installs another (Effect's default). */
export const inProcess = Context.get(DefaultServices.liveServices, Tracer.Tracer)

/** Runs `effect` counting the spans Effect's in-process tracer makes meanwhile. */
export const countingInProcess = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.acquireUseRelease(
    Effect.sync(() => {
      const original = inProcess.span
      const names: Array<string> = []
      // The same tracer object (programs compare it by identity), its spans counted.
      ;(inProcess as { span: Tracer.Tracer["span"] }).span = (...args) => {
        names.push(args[0])
        return original(...args)
      }
      return { original, names }
    }),
    ({ names }) => Effect.map(effect, (value) => ({ value, names })),
    ({ original }) => Effect.sync(() => (inProcess as { span: Tracer.Tracer["span"] }).span = original)
  )

/** A tracer that exports (here: keeps) every span, as the service's telemetry does. */
export const exportingTracer = () => {
  const spans: Array<Tracer.Span> = []
  const tracer = Tracer.make({
    span: (...args) => {
      const span = inProcess.span(...args)
      spans.push(span)
      return span
    },
    context: (f) => f()
  })
  return { tracer, spans }
}
