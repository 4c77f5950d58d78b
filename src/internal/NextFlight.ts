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
 * A read that takes longer than `overtakeMs` no longer holds the next one back: the next starts
 * then, beside it (a connection that hangs must not hold up every later caller of its key until it
 * is torn down; only the callers of the hung read wait for it, as they would have alone). So a
 * hung key costs at most one more read per `overtakeMs`.
 *
 * The waiters are the callers themselves (one per caller, while it waits): as many as there are
 * calls in flight, which the caller bounds (the service: one look-up per open request, each under
 * the request deadline; a caller without a fiber that stops waiting removes its listener with the
 * function `callThen` returns). A key's state is removed when its last read ends with no one waiting.
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
  /** Reads started before the read in flight ended, because it had taken longer than `overtakeMs`. */
  overtaken?: number
}

/** How long a read may hold back the next one of its key (a look-up takes about a millisecond). */
export const defaultOvertakeMs = 250

interface Batch<A, E> {
  readonly done: Deferred.Deferred<A, E>
  /** Callers waiting without a fiber (`callThen`), told after `done`. */
  readonly listeners: Array<(exit: Exit.Exit<A, E>) => void>
}

interface Flight<A, E> {
  /** The batch of the newest read started. */
  current: Batch<A, E>
  /** When it started (`performance.now()`). */
  startedAt: number
  next: Batch<A, E> | undefined
  /** Starts `next` early once the read in flight is older than `overtakeMs`. */
  timer: ReturnType<typeof setTimeout> | undefined
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
 * `callThen(key, listener)` is the same call for a caller without a fiber, and returns the function
 * that stops it waiting. Each read runs in a fiber of its own, started by `fork` (the service's
 * runtime: not a caller's, whose annotations it would carry), so a caller that is interrupted (its
 * client went away) stops waiting without stopping the read the others wait for.
 */
export const make = <A, E>(
  read: (key: string) => Effect.Effect<A, E>,
  fork: (effect: Effect.Effect<void>) => void,
  counts: Counts = { reads: 0, calls: 0, later: 0 },
  options: { readonly overtakeMs?: number } = {}
) => {
  const overtakeMs = options.overtakeMs ?? defaultOvertakeMs
  const flights = new Map<string, Flight<A, E>>()

  /** Starts the read of `flight.current`; when it ends, it answers its batch and, unless overtaken, starts the next. */
  const start = (key: string, flight: Flight<A, E>): void => {
    const current = flight.current
    flight.startedAt = performance.now()
    counts.reads++
    let settled = false
    const settle = (exit: Exit.Exit<A, E>) => {
      if (settled) return
      settled = true
      complete(current, exit)
      // Overtaken: a later read serves the callers after this one.
      if (flight.current === current) advance(key, flight)
    }
    // Should the read's fiber end without answering (interrupted: the service closing), its callers are told, never left waiting.
    fork(Effect.onExit(Effect.exit(Effect.suspend(() => read(key))), (exit) =>
      Effect.sync(() => settle(Exit.isSuccess(exit) ? exit.value : Exit.failCause(exit.cause)))))
  }

  /** The next batch becomes the read in flight, or the key's state goes when no one waits. */
  const advance = (key: string, flight: Flight<A, E>): void => {
    clearTimeout(flight.timer)
    flight.timer = undefined
    const next = flight.next
    if (next === undefined) {
      if (flights.get(key) === flight) flights.delete(key)
      return
    }
    flight.current = next
    flight.next = undefined
    start(key, flight)
  }

  /** The batch a caller arriving now joins: a read started for it, or the one after the read in flight. */
  const join = (key: string): Batch<A, E> => {
    counts.calls++
    const flight = flights.get(key)
    if (flight === undefined) {
      const started: Flight<A, E> = { current: batch(), startedAt: 0, next: undefined, timer: undefined }
      flights.set(key, started)
      start(key, started)
      return started.current
    }
    counts.later++
    if (flight.next !== undefined) return flight.next
    const next = batch<A, E>()
    flight.next = next
    const waited = performance.now() - flight.startedAt
    flight.timer = setTimeout(() => {
      if (flight.next !== next) return
      counts.overtaken = (counts.overtaken ?? 0) + 1
      advance(key, flight)
    }, Math.max(0, overtakeMs - waited))
    flight.timer.unref?.()
    return next
  }

  const call = (key: string): Effect.Effect<A, E> => Effect.suspend(() => Deferred.await(join(key).done))

  const callThen = (key: string, listener: (exit: Exit.Exit<A, E>) => void): () => void => {
    const listeners = join(key).listeners
    listeners.push(listener)
    return () => {
      const at = listeners.indexOf(listener)
      if (at !== -1) listeners.splice(at, 1)
    }
  }

  return { call, callThen, counts, inFlight: (): number => flights.size }
}
