/**
 * Reads shared by the callers that wait for them, each read starting after every one of its
 * callers arrived ("start after arrival"; group commit's shape, for reads).
 *
 * Per key, at most one read is in flight. A caller that arrives while none is in flight, or while
 * one is about to start, joins it; a caller that arrives after the read started waits for the NEXT
 * read, which starts when the current one ends, and every caller of a read gets its exit. So each
 * caller's answer comes from a read that began after it arrived, as if it had read alone: anything
 * committed before it arrived is in its answer. Nothing is kept after a read ends: there is no time
 * window in which an older answer is served.
 *
 * The waiters are the callers themselves (one per caller, while it waits): as many as there are
 * calls in flight, which the caller bounds (the service: one look-up per open request, each under
 * the request deadline). A key's state is removed when its last read ends with no one waiting.
 */
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as FiberId from "effect/FiberId"

/** Reads started, calls made (each answered by one of those reads), and of those the calls that waited for a read in flight to end. */
export interface Counts {
  reads: number
  calls: number
  later: number
}

interface Batch<A, E> {
  readonly done: Deferred.Deferred<A, E>
  /** Set when the read begins: a caller arriving later waits for the next batch. */
  started: boolean
}

interface Flight<A, E> {
  current: Batch<A, E>
  next: Batch<A, E> | undefined
}

const batch = <A, E>(): Batch<A, E> => ({ done: Deferred.unsafeMake<A, E>(FiberId.none), started: false })

/**
 * `call(key)` answers from one `read(key)` shared by the callers that waited for it (see above).
 * The reads of a key run one after another in a daemon fiber of their own, so a caller that is
 * interrupted (its client went away) stops waiting without stopping the read the others wait for.
 */
export const make = <A, E>(read: (key: string) => Effect.Effect<A, E>, counts: Counts = { reads: 0, calls: 0, later: 0 }) => {
  const flights = new Map<string, Flight<A, E>>()

  const run = (key: string, flight: Flight<A, E>): Effect.Effect<void> =>
    Effect.suspend(() => {
      const current = flight.current
      current.started = true
      counts.reads++
      return Effect.flatMap(Effect.exit(Effect.suspend(() => read(key))), (exit) => {
        Deferred.unsafeDone(current.done, exit)
        const next = flight.next
        if (next === undefined) {
          flights.delete(key)
          return Effect.void
        }
        flight.current = next
        flight.next = undefined
        return run(key, flight)
      })
    })

  // Should the loop end without answering (it is a daemon: only a defect in this module could end it),
  // every waiter is told, never left waiting.
  const loop = (key: string, flight: Flight<A, E>) =>
    Effect.onExit(run(key, flight), (exit) =>
      Effect.sync(() => {
        if (Exit.isSuccess(exit)) return
        flights.delete(key)
        for (const left of [flight.current, flight.next]) if (left !== undefined) Deferred.unsafeDone(left.done, Effect.failCause(exit.cause))
      }))

  const call = (key: string): Effect.Effect<A, E> =>
    Effect.suspend(() => {
      counts.calls++
      const flight = flights.get(key)
      if (flight === undefined) {
        const started: Flight<A, E> = { current: batch(), next: undefined }
        flights.set(key, started)
        return Effect.zipRight(Effect.forkDaemon(loop(key, started)), Deferred.await(started.current.done))
      }
      if (!flight.current.started) return Deferred.await(flight.current.done)
      counts.later++
      flight.next ??= batch()
      return Deferred.await(flight.next.done)
    })

  return { call, counts, inFlight: (): number => flights.size }
}
