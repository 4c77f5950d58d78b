/**
 * The events of streams, retained for resuming: bounded per stream (the
 * newest `maxEvents` events and `maxBytes` bytes), in number of streams and in
 * bytes all together; an ended stream's events are dropped by a timer after
 * `retainMs`. Followers wait on a stream's newest id.
 *
 * @since 0.2.0
 */
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import * as SubscriptionRef from "effect/SubscriptionRef"
import { randomUUID } from "node:crypto"
import { StreamGone, StreamRetentionFull } from "../../Errors.js"
import type { StreamEvent } from "./Events.js"

/**
 * How long and how much of a stream's events are kept for resuming.
 *
 * @since 0.2.0
 */
export interface Retention {
  /** Newest events kept per stream. */
  readonly maxEvents: number
  /** Bytes of encoded events kept per stream (oldest dropped first). */
  readonly maxBytes: number
  /** Milliseconds a stream's events stay after it ends. */
  readonly retainMs: number
  /** Streams retained at once; past it the oldest ended stream is dropped. */
  readonly maxStreams: number
  /**
   * Bytes of encoded events kept, all streams together. Past it the oldest ended streams are dropped,
   * then the oldest events of live streams; a new stream is refused (`StreamRetentionFull`, 503) while
   * live streams alone hold it.
   */
  readonly maxTotalBytes: number
}

export const defaultRetention: Retention = {
  maxEvents: 1_024,
  maxBytes: 1024 * 1024,
  retainMs: 60_000,
  maxStreams: 1_000,
  maxTotalBytes: 64 * 1024 * 1024
}

/** One stream's retained events. */
export interface Retained {
  readonly id: string
  readonly runId: string
  /** Encoded events, oldest first; ids are consecutive. */
  readonly events: Array<{ readonly id: number; readonly type: string; readonly json: string }>
  bytes: number
  /** The id of the oldest event kept (1 until the first is dropped). */
  firstId: number
  /** The newest id, and whether the stream has ended: followers wait on its changes. */
  readonly state: SubscriptionRef.SubscriptionRef<{ readonly lastId: number; readonly ended: boolean }>
  endedAt: number | undefined
}

/** The retained streams of one route. */
export class Registry {
  private readonly streams = new Map<string, Retained>()
  /** Bytes of all retained events (UTF-8, what is sent): at most `maxTotalBytes`, bar each live stream's newest event. */
  private total = 0
  constructor(private readonly retention: Retention) {}

  private drop(id: string): void {
    const r = this.streams.get(id)
    if (r === undefined) return
    this.streams.delete(id)
    this.total -= r.bytes
  }

  /**
   * Ended streams past their time go (their timers normally took them already); then, when a stream
   * is about to be added (`room`) and the registry is still full (in number or in bytes), the oldest
   * ended streams until it fits. A lookup never evicts: at capacity it would drop a retained stream
   * (even the one looked up) for nothing.
   */
  private sweep(now: number, room: boolean): void {
    for (const [id, r] of this.streams) {
      if (r.endedAt !== undefined && now - r.endedAt > this.retention.retainMs) this.drop(id)
    }
    if (room) this.makeRoom(() => this.streams.size >= this.retention.maxStreams || this.total >= this.retention.maxTotalBytes)
  }

  /** Drops the oldest ended streams while `full()` holds. */
  private makeRoom(full: () => boolean): void {
    for (const [id, r] of this.streams) {
      if (!full()) return
      if (r.endedAt !== undefined) this.drop(id)
    }
  }

  open(runId: string): Effect.Effect<Retained, StreamRetentionFull> {
    return Effect.flatMap(SubscriptionRef.make({ lastId: 0, ended: false }), (state) => {
      this.sweep(Date.now(), true)
      // Live streams alone hold the byte budget: a new one would only push their events out.
      if (this.total >= this.retention.maxTotalBytes) {
        return Effect.fail(new StreamRetentionFull({ retainedBytes: this.total, maxBytes: this.retention.maxTotalBytes }))
      }
      const retained: Retained = { id: randomUUID(), runId, events: [], bytes: 0, firstId: 1, state, endedAt: undefined }
      // Live streams are never dropped: their number is bounded by the server's connections.
      this.streams.set(retained.id, retained)
      return Effect.succeed(retained)
    })
  }

  get(id: string): Retained | undefined {
    this.sweep(Date.now(), false)
    return this.streams.get(id)
  }

  get size(): number {
    return this.streams.size
  }

  get bytes(): number {
    return this.total
  }

  /** Streams whose producer has not ended yet. */
  get live(): number {
    let n = 0
    for (const r of this.streams.values()) if (r.endedAt === undefined) n++
    return n
  }

  /** The oldest events of `r` go while `over()` holds, down to its newest one. */
  private trim(r: Retained, over: () => boolean): void {
    while (r.events.length > 1 && over()) {
      const bytes = Buffer.byteLength(r.events.shift()!.json)
      r.bytes -= bytes
      this.total -= bytes
      r.firstId++
    }
  }

  append(r: Retained, event: StreamEvent, json: string): Effect.Effect<void> {
    const bytes = Buffer.byteLength(json)
    r.events.push({ id: event.id, type: event.type, json })
    // Only a live stream is appended to, and live streams are never dropped: it is counted in `total`.
    r.bytes += bytes
    this.total += bytes
    this.trim(r, () => r.events.length > this.retention.maxEvents || r.bytes > this.retention.maxBytes)
    if (this.total > this.retention.maxTotalBytes) {
      this.makeRoom(() => this.total > this.retention.maxTotalBytes)
      this.trim(r, () => this.total > this.retention.maxTotalBytes)
    }
    return SubscriptionRef.set(r.state, { lastId: event.id, ended: false })
  }

  end(r: Retained): Effect.Effect<void> {
    return Effect.suspend(() => {
      r.endedAt = Date.now()
      // Dropped when its time is up, whether or not another request comes: memory is not held until then.
      const timer = setTimeout(() => {
        if (this.streams.get(r.id) === r) this.drop(r.id)
      }, this.retention.retainMs)
      timer.unref()
      const lastId = r.events.at(-1)?.id ?? 0
      return SubscriptionRef.set(r.state, { lastId: Math.max(lastId, r.firstId - 1), ended: true })
    })
  }
}

/** The retained events after `after`, then live ones until the stream ends; fails when a needed event was dropped. */
export const follow = (r: Retained, after: number): Stream.Stream<Retained["events"][number], StreamGone> =>
  Stream.suspend(() => {
    let last = after
    return r.state.changes.pipe(
      Stream.mapEffect((state) => {
        if (last + 1 < r.firstId) {
          return Effect.fail(new StreamGone({ streamId: r.id, reason: "not-retained", oldestRetained: r.firstId }))
        }
        const out = r.events.slice(last + 1 - r.firstId)
        if (out.length > 0) last = out.at(-1)!.id
        return Effect.succeed({ out, ended: state.ended && last >= state.lastId })
      }),
      Stream.takeUntil((step) => step.ended),
      Stream.mapConcat((step) => step.out)
    )
  })
