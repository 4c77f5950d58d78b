/**
 * The open jobs of one verification thread: each request's callback by job id, until its answer.
 *
 * Not a `Map`. A long-lived `Map` whose entries come and go (one per request) keeps dead requests
 * reachable to V8's young-generation collections: each time the map grows or fills with deleted
 * entries, V8 copies it into a new hash table and leaves the old one pointing to the new one and
 * still holding the values it had then. Once one of those tables has been moved to the old
 * generation (by any full collection while requests are open), every later table and every
 * callback still open at each copy (with the request, response and body it closes over) stays
 * reachable from it until the next full collection: each scavenge of the service's main thread
 * copied and promoted about 1.8 MB of finished requests, and paused it for 6.9 ms on average (up to
 * 21 ms) instead of about 2 (docs/performance.md, 2026-12-03, sixth round).
 *
 * Here a fixed array of `capacity` values (a power of two, allocated once) is indexed by the low
 * bits of the job id, and each cell remembers the id it holds: a cell is cleared when its job is
 * taken. The table gives the ids, in increasing order, and skips an id whose cell an open job still
 * holds (one slow to answer). Ids only grow, so an answer that arrives for an id no longer open (a
 * thread replaced) finds a cell that does not hold it and is dropped.
 *
 * @since 0.6.0
 */
export class OpenJobs<A> {
  private readonly done: Array<A | undefined>
  private readonly ids: Float64Array
  private readonly mask: number
  private next: number
  /** Open jobs now. */
  size = 0

  /** `first`: the first id, a safe integer of 0 or more (tests start past 2^32). */
  constructor(capacity: number, first = 0) {
    if (!Number.isInteger(Math.log2(capacity)) || capacity < 1) throw new RangeError(`capacity must be a power of two, not ${capacity}`)
    if (!Number.isSafeInteger(first) || first < 0) throw new RangeError(`the first id must be a safe integer of 0 or more, not ${first}`)
    this.next = first
    this.done = new Array<A | undefined>(capacity).fill(undefined)
    this.ids = new Float64Array(capacity).fill(-1)
    this.mask = capacity - 1
  }

  /**
   * Opens a job holding `value`: its id, the next one whose cell is free (at most `capacity` tries),
   * or -1 when every cell is held (or, past 2^53 - 1 - `capacity` jobs, when ids would no longer be exact).
   */
  open(value: A): number {
    if (this.size === this.done.length || this.next > Number.MAX_SAFE_INTEGER - this.done.length) return -1
    for (;;) {
      const id = this.next++
      const at = id & this.mask
      if (this.done[at] !== undefined) continue
      this.done[at] = value
      this.ids[at] = id
      this.size++
      return id
    }
  }

  /** The value of open job `id`, its cell cleared; undefined when `id` is not open. */
  take(id: number): A | undefined {
    const at = id & this.mask
    const value = this.done[at]
    if (value === undefined || this.ids[at] !== id) return undefined
    this.done[at] = undefined
    this.ids[at] = -1
    this.size--
    return value
  }

  /** Every open job's value, oldest (lowest id) first, every cell cleared. */
  takeAll(): Array<A> {
    const open: Array<readonly [number, A]> = []
    for (let at = 0; at < this.done.length; at++) {
      const value = this.done[at]
      if (value === undefined) continue
      open.push([this.ids[at]!, value])
      this.done[at] = undefined
      this.ids[at] = -1
    }
    this.size = 0
    return open.sort((a, b) => a[0] - b[0]).map(([, value]) => value)
  }
}
