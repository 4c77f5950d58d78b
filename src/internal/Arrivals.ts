/**
 * Arrival counts: which requests a verification thread may answer with a capture stamp it has
 * already taken, instead of an `lstat` of its own.
 *
 * A stamp of a cached capture must be taken after the request that uses it arrived (a capture
 * changed on disk before a request arrived is read again for it: docs/threat-model.md). Requests
 * of one run over PostgreSQL already share one stamp query on those terms (store/PostgresStamps.ts);
 * this gives a verification thread (server/VerifyThreads.ts) the same for the filesystem store,
 * whose stamps are one `lstat` per capture per request, the largest single cost of a warm
 * verification in the thread (docs/performance.md).
 *
 * - The main thread counts the requests it hands each thread in a counter shared with that thread
 *   (`arrive`, one `Atomics.add`), and each job carries its count: the request arrived before it
 *   was counted.
 * - The thread reads its counter (`markNow`) before it stamps. Every job counted by then had
 *   arrived before the stamp was taken, so any of them may use it (`covers`); a job counted later
 *   never does. A stamp is also used for at most `freshMs` after it was taken, which keeps the
 *   32-bit counts from wrapping into a false match.
 * - The job's count is lent to the stores for the one synchronous call that verifies it
 *   (`lending`), as PostgreSQL's stamps taken ahead are.
 *
 * A thread without a counter (the main thread, the library, the CLI) gets `undefined` from
 * `markNow` and `lentArrival`, and every stamp is a fresh `lstat`, as before.
 */

/** How long (ms) a stamp may serve requests counted before it was taken. */
export const freshMs = 1_000

/** A counter shared between the main thread and one verification thread. */
export const makeCounter = (): Int32Array => new Int32Array(new SharedArrayBuffer(Int32Array.BYTES_PER_ELEMENT))

/** Counts one more request handed to the counter's thread; its count (32 bits, wrapping). */
export const arrive = (counter: Int32Array): number => (Atomics.add(counter, 0, 1) + 1) | 0

/** Whether a stamp taken after the counter read `mark` may serve the request counted `arrival` (wrap-aware). */
export const covers = (mark: number, arrival: number): boolean => ((mark - arrival) | 0) >= 0

let attached: Int32Array | undefined

/** This thread's counter (a verification thread attaches the one its pool gave it, once). */
export const attach = (counter: Int32Array | undefined): void => {
  attached = counter
}

/** The counter now, read before a stamp is taken: `undefined` in a thread without one. */
export const markNow = (): number | undefined => (attached === undefined ? undefined : Atomics.load(attached, 0))

let lent: number | undefined

/** `f` run with `arrival` (the count of the request it verifies) lent to the stores' `stampsNow`. */
export const lending = <A>(arrival: number, f: () => A): A => {
  const outer = lent
  lent = arrival
  try {
    return f()
  } finally {
    lent = outer
  }
}

/** The count of the request being verified now (`lending`), if any. */
export const lentArrival = (): number | undefined => lent

interface Kept<V> {
  readonly value: V
  /** The counter, read before the value was taken. */
  readonly mark: number
  /** `performance.now()` before the value was taken. */
  readonly at: number
}

/**
 * A stamp by key (`take`), taken now; in a thread with a counter, kept with the counter read before
 * it was taken, and given instead of a new one to a request counted by then (`lending`), for at
 * most `freshMs`. At most `maxKept` keys, then started afresh; a key whose stamp is `undefined`
 * (nothing to stamp) is dropped. The counter is read before `take` runs: a request counted while
 * `take` runs arrived after the stamp began, and is never served it.
 */
export const sharing = <K, V>(maxKept: number) => {
  const kept = new Map<K, Kept<V>>()
  return (key: K, take: (key: K) => V | undefined): V | undefined => {
    const mark = markNow()
    if (mark === undefined) return take(key)
    const at = performance.now()
    if (lent !== undefined) {
      const found = kept.get(key)
      if (found !== undefined && covers(found.mark, lent) && at - found.at <= freshMs) return found.value
    }
    const value = take(key)
    if (value === undefined) {
      kept.delete(key)
    } else {
      if (kept.size >= maxKept && !kept.has(key)) kept.clear()
      kept.set(key, { value, mark, at })
    }
    return value
  }
}
