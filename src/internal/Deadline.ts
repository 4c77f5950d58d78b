/**
 * `Effect.timeoutFail` for an effect run once per request: the same outcome (the effect's own
 * exit, or the timeout's error once the effect has been interrupted and has ended), made with one
 * forked fiber and one Node timer instead of a race of two forked fibers and a sleeping one (about
 * three times the runtime work, paid by every verification). The fiber starts at once, in the
 * caller's step: work that needs no wait (a verification of small local captures) has ended when
 * the fork returns, and the caller takes its exit without waiting. A fiber that has waited for
 * another keeps what it holds reachable to young-generation collections until a full one
 * (docs/performance.md), so waiting only when there is something to wait for matters.
 *
 * Where it differs from `Effect.timeoutFail` (as it did before the work started at once): the
 * deadline counts from the start of the work, its first synchronous part included; the work's fiber
 * refs are not merged back into the caller's; and the work's first step is not handed to the
 * scheduler. Only under Effect's live clock: under any other (a `TestClock`) it is
 * `Effect.timeoutFail` itself, so a test's clock still decides.
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

/**
 * Work started at once runs on the caller's stack; a deadline inside such work nests one more run
 * loop. Past this depth the work is started on the scheduler instead (a fresh stack), as
 * `Effect.timeoutFail` does, so nesting cannot overflow the stack. Verification nests once.
 */
const maxStartDepth = 32
let startDepth = 0

/** `Runtime.runFork`, at once while the nesting allows it, else scheduled (`immediate: false`). */
const startWork = <A, E, R>(runtime: Runtime.Runtime<R>, self: Effect.Effect<A, E, R>) => {
  if (startDepth >= maxStartDepth) return Runtime.runFork(runtime, self, { immediate: false })
  startDepth++
  try {
    return Runtime.runFork(runtime, self)
  } finally {
    startDepth--
  }
}

export const timeoutFail = <A, E, R, E1>(
  self: Effect.Effect<A, E, R>,
  options: { readonly duration: number; readonly onTimeout: () => E1 }
): Effect.Effect<A, E | E1, R> =>
  Effect.clockWith((clock) => {
    const ms = options.duration
    if (clock !== liveClock || !(ms >= 0 && ms <= maxTimerMs)) return Effect.timeoutFail(self, options)
    // The caller's runtime (its services, fiber refs and interruptibility), taken before the mask:
    // the work runs as `forkDaemon(restore(self))` would run it, a root fiber of its own.
    return Effect.flatMap(Effect.runtime<R>(), (runtime) =>
      Effect.uninterruptibleMask((restore) =>
        Effect.suspend(() => {
          const started = performance.now()
          // Runs now, as far as it goes without waiting (`Runtime.runFork` starts a fiber at once).
          const fiber = startWork(runtime, self)
          const ended = fiber.unsafePoll()
          if (ended !== null) return ended
          // The deadline counts from the start of the work, its first synchronous part included.
          const left = Math.max(0, ms - (performance.now() - started))
          // The wait is as interruptible as the caller was; interrupted, it interrupts the work and waits for it.
          return restore(
            // As `timeoutFail`: the effect is interrupted and has ended before the timeout's error.
            awaitWithTimer(fiber, left, () => Effect.flatMap(Fiber.interrupt(fiber), () => Effect.fail(options.onTimeout())))
          ).pipe(Effect.onInterrupt(() => Fiber.interrupt(fiber)))
        })
      )
    )
  })

/**
 * Waits for `fiber` with one Node timer of `ms`: the fiber's exit if it ends first. When the timer
 * fires first, `onTimer` decides: `undefined` keeps waiting (the deadline no longer applies, e.g. a
 * response has started), an effect is what the wait resumes with (it interrupts the fiber as it
 * needs). Interrupted, the wait clears its timer, interrupts the fiber and waits for it. Shared by
 * the verification deadline above and the service's request deadline.
 */
export const awaitWithTimer = <A, E, E1>(
  fiber: Fiber.RuntimeFiber<A, E>,
  ms: number,
  onTimer: () => Effect.Effect<never, E1> | undefined
): Effect.Effect<A, E | E1> =>
  Effect.async<A, E | E1>((resume) => {
    let settled = false
    const onExit = (exit: Exit.Exit<A, E>) => {
      if (settled) return
      settled = true
      clearTimeout(timer)
      resume(exit)
    }
    const timer = setTimeout(() => {
      if (settled) return
      const timedOut = onTimer()
      if (timedOut === undefined) return
      settled = true
      fiber.removeObserver(onExit)
      resume(timedOut)
    }, ms)
    fiber.addObserver(onExit)
    return Effect.suspend(() => {
      settled = true
      clearTimeout(timer)
      fiber.removeObserver(onExit)
      return Fiber.interrupt(fiber)
    })
  })
