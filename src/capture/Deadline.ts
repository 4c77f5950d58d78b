/**
 * The capture stage's one deadline (connect, headers, body and extraction), at
 * the cost of one fiber and one timer per capture. `Effect.timeoutFail` races
 * the work against a sleep: two fibers, their fiber references merged back, and
 * a timer, which cost more per capture of a small source than the request
 * itself (docs/performance.md). The semantics are the same: when the time is up
 * the work is interrupted (which aborts its socket or kills its extraction
 * process), the interruption is waited for, and the result is the typed
 * `onTimeout` failure; interrupting the caller interrupts the work.
 *
 * The timer is the process's real clock, as the network's is: a test clock does
 * not move it.
 */
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"

export const within = <A, E, E2>(
  self: Effect.Effect<A, E>,
  milliseconds: number,
  onTimeout: () => E2
): Effect.Effect<A, E | E2> =>
  Effect.uninterruptibleMask((restore) =>
    Effect.flatMap(Effect.fork(restore(self)), (fiber) =>
      restore(Effect.async<A, E | E2>((resume) => {
        let settled = false
        const timer = setTimeout(() => {
          if (settled) return
          settled = true
          resume(Effect.zipRight(Effect.uninterruptible(Fiber.interrupt(fiber)), Effect.fail(onTimeout())))
        }, milliseconds)
        fiber.addObserver((exit) => {
          if (settled) return
          settled = true
          clearTimeout(timer)
          resume(exit)
        })
        return Effect.suspend(() => {
          settled = true
          clearTimeout(timer)
          return Fiber.interrupt(fiber)
        })
      })))
  )
