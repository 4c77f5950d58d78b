/**
 * Reads shared by the callers that wait for them, each read starting after every one of its
 * callers arrived ("start after arrival"; group commit's shape, for reads).
 *
 * Per key, at most one read is in flight. A caller that arrives while none is in flight starts one;
 * a caller that arrives while one is in flight waits for the NEXT read, which starts when the
 * current one ends, and every caller of a read gets its exit. So each
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
  /** Callers waiting without a fiber (`callThen`), told after `done`. */
  readonly listeners: Array<(exit: Exit.Exit<A, E>) => void>
}

interface Flight<A, E> {
  current: Batch<A, E>
  next: Batch<A, E> | undefined
}

const batch = <A, E>(): Batch<A, E> => ({ done: Deferred.unsafeMake<A, E>(FiberId.none), listeners: [] })

/** Completes a batch: its fibers, then its listeners (one that throws does not keep the others from their answer). */
const complete = <A, E>(done: Batch<A, E>, exit: Exit.Exit<A, E>) => {
  Deferred.unsafeDone(done.done, exit)
  for (const listener of done.listeners) {
    try {
      listener(exit)
    } catch {
      // The listener's own defect: the read and the other callers go on.
    }
  }
}

/**
 * `call(key)` answers from one `read(key)` shared by the callers that waited for it (see above);
 * `callThen(key, listener)` is the same call for a caller without a fiber. The reads of a key run
 * one after another in a fiber of their own, started by `fork` (the service's runtime: not a
 * caller's, whose annotations it would carry), so a caller that is interrupted (its client went
 * away) stops waiting without stopping the read the others wait for.
 */
export const make = <A, E>(
  read: (key: string) => Effect.Effect<A, E>,
  fork: (effect: Effect.Effect<void>) => void,
  counts: Counts = { reads: 0, calls: 0, later: 0 }
) => {
  const flights = new Map<string, Flight<A, E>>()

  const run = (key: string, flight: Flight<A, E>): Effect.Effect<void> =>
    Effect.suspend(() => {
      const current = flight.current
      counts.reads++
      return Effect.flatMap(Effect.exit(Effect.suspend(() => read(key))), (exit) => {
        complete(current, exit)
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
        for (const left of [flight.current, flight.next]) if (left !== undefined) complete(left, Exit.failCause(exit.cause))
      }))

  /** The batch a caller arriving now joins: a read started for it, or the one after the read in flight. */
  const join = (key: string): Batch<A, E> => {
    counts.calls++
    const flight = flights.get(key)
    if (flight === undefined) {
      const started: Flight<A, E> = { current: batch(), next: undefined }
      flights.set(key, started)
      fork(loop(key, started))
      return started.current
    }
    counts.later++
    flight.next ??= batch()
    return flight.next
  }

  const call = (key: string): Effect.Effect<A, E> => Effect.suspend(() => Deferred.await(join(key).done))

  const callThen = (key: string, listener: (exit: Exit.Exit<A, E>) => void): void => {
    join(key).listeners.push(listener)
  }

  return { call, callThen, counts, inFlight: (): number => flights.size }
}
