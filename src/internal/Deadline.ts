/**
 * `Effect.timeoutFail` for an effect run once per request: the same outcome (the effect's own
 * exit, or the timeout's error once the effect has been interrupted and has ended), made with one
 * forked fiber and one Node timer instead of a race of two forked fibers and a sleeping one (about
 * three times the runtime work, paid by every verification). Only under Effect's live clock: under
 * any other (a `TestClock`) it is `Effect.timeoutFail` itself, so a test's clock still decides.
 *
 * @since 0.5.0
 */
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as DefaultServices from "effect/DefaultServices"
import * as Effect from "effect/Effect"
import type * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as FiberRefs from "effect/FiberRefs"
import * as Runtime from "effect/Runtime"

/** Effect's live clock, the default (shared by every runtime of this copy of `effect`). */
const liveClock = Context.get(FiberRefs.getOrDefault(Runtime.defaultRuntime.fiberRefs, DefaultServices.currentServices), Clock.Clock)

/** Node timers take at most 2^31 - 1 ms; a longer deadline is left to `Effect.timeoutFail`. */
const maxTimerMs = 2_147_483_647

export const timeoutFail = <A, E, R, E1>(
  self: Effect.Effect<A, E, R>,
  options: { readonly duration: number; readonly onTimeout: () => E1 }
): Effect.Effect<A, E | E1, R> =>
  Effect.clockWith((clock) => {
    const ms = options.duration
    if (clock !== liveClock || !(ms >= 0 && ms <= maxTimerMs)) return Effect.timeoutFail(self, options)
    return Effect.uninterruptibleMask((restore) =>
      Effect.flatMap(Effect.forkDaemon(restore(self)), (fiber) =>
        // The wait is as interruptible as the caller was; interrupted, it interrupts the work and waits for it.
        restore(Effect.async<A, E | E1>((resume) => {
          let settled = false
          const onExit = (exit: Exit.Exit<A, E>) => {
            if (settled) return
            settled = true
            clearTimeout(timer)
            resume(exit)
          }
          const timer = setTimeout(() => {
            if (settled) return
            settled = true
            fiber.removeObserver(onExit)
            // As `timeoutFail`: the effect is interrupted and has ended before the timeout's error.
            resume(Effect.flatMap(Fiber.interrupt(fiber), () => Effect.fail(options.onTimeout())))
          }, ms)
          fiber.addObserver(onExit)
          return Effect.sync(() => {
            settled = true
            clearTimeout(timer)
            fiber.removeObserver(onExit)
          })
        })).pipe(Effect.onInterrupt(() => Fiber.interrupt(fiber)))
      )
    )
  })
