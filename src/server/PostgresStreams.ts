/**
 * Streamed answers' events in PostgreSQL, for a service running as replicas: a follower resumes
 * (`Last-Event-ID`) on any replica, also after the replica producing the stream was killed.
 *
 * Each event is stored before it is sent to anyone, so a follower never sees an event the log lacks.
 * Followers poll (`pollMs`, 100 ms by default) rather than LISTEN: a poll is one indexed range read,
 * needs no connection held per follower, and cannot miss a notification sent while a follower was
 * reconnecting. The producer holds the stream under a lease (`server.leaseMs`, renewed by every event
 * and by a heartbeat); once the lease has run out without a `done`, the first follower to see it closes
 * the stream on the producer's behalf, in one transaction on the stream's row: a `StreamProducerLost`
 * error event and a `done` of state `rejected`, so every follower ends, and ends alike.
 *
 * Bounds are those of the in-memory log (`Retention`): the newest `maxEvents` events and `maxBytes`
 * bytes per stream, `maxStreams` streams and `maxTotalBytes` in all (the oldest ended streams are
 * dropped first; a new stream is refused while live streams hold the budget), and an ended stream's
 * events are deleted `retainMs` after it ended.
 *
 * @since 0.2.0
 */
import type * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Option from "effect/Option"
import * as Stream from "effect/Stream"
import * as Chunk from "effect/Chunk"
import { randomUUID } from "node:crypto"
import { StreamGone, StreamProducerLost, StreamRetentionFull } from "../Errors.js"
import { encodeEvent, type StreamEvent, type Summary } from "./stream/Events.js"
import type { LoggedEvent, StreamHandle, StreamInfo, StreamLog } from "./stream/Log.js"
import type { Retention } from "./stream/Retention.js"

/** @since 0.2.0 */
export interface PostgresStreamOptions {
  readonly replica: string
  readonly leaseMs: number
  readonly retention: Retention
  readonly pollMs?: number | undefined
}

interface Produced extends StreamHandle {
  /** Byte sizes of the retained events, oldest first (ids firstId, firstId + 1, …). */
  readonly sizes: Array<number>
  firstId: number
  bytes: number
  heartbeat: Fiber.RuntimeFiber<unknown> | undefined
}

interface Row {
  readonly first_id: number
  readonly last_id: number
  readonly ended: boolean
  readonly expired: boolean
}

/** What a stream that lost its producer reports: counted from its retained events; a rejected answer grounds nothing. */
const lostSummary = (events: ReadonlyArray<StreamEvent>): Summary => {
  const claims = new Set<string>()
  let citations = 0
  for (const e of events) {
    if (e.type === "delta") {
      citations += e.footnotes.length
      for (const f of e.footnotes) claims.add(f.claimId)
    }
  }
  return {
    claims: claims.size,
    claimsGrounded: 0,
    claimsRemoved: 0,
    citations,
    citationsVerified: events.filter((e) => e.type === "citation").length,
    citationsRetracted: events.filter((e) => e.type === "retraction").length
  }
}

/** Streams still kept: running, or ended within the retention time. */
const retainedClause = (sql: SqlClient.SqlClient, retainMs: number) =>
  sql`(ended_at IS NULL OR ended_at > now() - (${retainMs}::bigint * interval '1 millisecond'))`

/** Expired streams go; then the oldest ended ones while the count or the bytes are at their limit. */
const sweepOf = (sql: SqlClient.SqlClient, retention: PostgresStreamOptions["retention"]) => {
  const retained = retainedClause(sql, retention.retainMs)
  return Effect.gen(function*() {
    yield* sql`DELETE FROM citegate_streams WHERE NOT ${retained}`
    const [totals] = yield* sql<{ streams: number; bytes: number }>`
      SELECT count(*)::int AS streams, coalesce(sum(bytes), 0)::bigint AS bytes FROM citegate_streams`
    const excessStreams = Number(totals!.streams) - retention.maxStreams + 1
    const excessBytes = Number(totals!.bytes) - retention.maxTotalBytes + 1
    if (excessStreams <= 0 && excessBytes <= 0) return Number(totals!.bytes)
    yield* sql`
      WITH t AS (
        SELECT id, bytes, row_number() OVER (ORDER BY ended_at, id) AS n, sum(bytes) OVER (ORDER BY ended_at, id) AS upto
        FROM citegate_streams WHERE ended_at IS NOT NULL)
      DELETE FROM citegate_streams s USING t
      WHERE s.id = t.id AND (t.n <= ${Math.max(0, excessStreams)} OR t.upto - t.bytes < ${Math.max(0, excessBytes)})`
    const [after] = yield* sql<{ bytes: number }>`SELECT coalesce(sum(bytes), 0)::bigint AS bytes FROM citegate_streams`
    return Number(after!.bytes)
  })
}

/**
 * A `StreamLog` over the `SqlClient` given.
 *
 * @since 0.2.0
 */
export const make = (sql: SqlClient.SqlClient, options: PostgresStreamOptions): StreamLog => {
  const { replica, leaseMs, retention } = options
  const pollMs = options.pollMs ?? 100
  const lease = sql`now() + (${leaseMs}::int * interval '1 millisecond')`
  const retained = retainedClause(sql, retention.retainMs)

  const sweep = sweepOf(sql, retention)

  const renew = (id: string) =>
    sql`UPDATE citegate_streams SET lease_until = ${lease} WHERE id = ${id} AND holder = ${replica} AND ended_at IS NULL`

  const open = (runId: string) =>
    Effect.gen(function*() {
      const bytes = yield* sweep
      if (bytes >= retention.maxTotalBytes) {
        return yield* new StreamRetentionFull({ retainedBytes: bytes, maxBytes: retention.maxTotalBytes })
      }
      const id = randomUUID()
      yield* sql`INSERT INTO citegate_streams (id, run, holder, lease_until) VALUES (${id}, ${runId}, ${replica}, ${lease})`
      const heartbeat = yield* Effect.forkDaemon(
        Effect.forever(Effect.zipRight(Effect.sleep(Math.max(50, Math.floor(leaseMs / 3))), Effect.ignore(renew(id))))
      )
      return { id, runId, sizes: [], firstId: 1, bytes: 0, heartbeat } satisfies Produced as StreamHandle
    }).pipe(Effect.catchTag("SqlError", Effect.die))

  const append = (handle: StreamHandle, event: StreamEvent, json: string) =>
    Effect.gen(function*() {
      const p = handle as Produced
      const size = Buffer.byteLength(json)
      p.sizes.push(size)
      p.bytes += size
      let drop = 0
      while (p.sizes.length - drop > 1 && (p.sizes.length - drop > retention.maxEvents || p.bytes > retention.maxBytes)) {
        p.bytes -= p.sizes[drop]!
        drop++
      }
      p.sizes.splice(0, drop)
      p.firstId += drop
      const written = yield* sql.withTransaction(Effect.gen(function*() {
        const updated = yield* sql`
          UPDATE citegate_streams SET last_id = ${event.id}, first_id = ${p.firstId}, bytes = ${p.bytes}, lease_until = ${lease}
          WHERE id = ${p.id} AND holder = ${replica} AND ended_at IS NULL RETURNING id`
        if (updated.length === 0) return false
        yield* sql`INSERT INTO citegate_stream_events (stream, id, event) VALUES (${p.id}, ${event.id}, ${json})`
        if (drop > 0) yield* sql`DELETE FROM citegate_stream_events WHERE stream = ${p.id} AND id < ${p.firstId}`
        return true
      }))
      // Closed by a follower (this replica stopped renewing for a whole lease): this producer stops here.
      if (!written) return yield* Effect.interrupt
    }).pipe(Effect.catchTag("SqlError", Effect.die))

  const end = (handle: StreamHandle) =>
    Effect.suspend(() => {
      const p = handle as Produced
      const stop = p.heartbeat === undefined ? Effect.void : Fiber.interrupt(p.heartbeat)
      p.heartbeat = undefined
      return stop.pipe(
        Effect.zipRight(sql`UPDATE citegate_streams SET ended_at = now() WHERE id = ${p.id} AND holder = ${replica} AND ended_at IS NULL`),
        Effect.ignore
      )
    })

  const lookup = (id: string) =>
    sql<{ run: string; first_id: number }>`SELECT run, first_id FROM citegate_streams WHERE id = ${id} AND ${retained}`.pipe(
      Effect.map((rows): StreamInfo | undefined => rows[0] === undefined ? undefined : { id, runId: rows[0].run, firstId: rows[0].first_id }),
      Effect.orElseSucceed(() => undefined)
    )

  /** Closes a stream whose producer's lease ran out, once: the row is locked and checked again. */
  const closeLost = (id: string) =>
    sql.withTransaction(Effect.gen(function*() {
      const [row] = yield* sql<{ last_id: number }>`
        SELECT last_id FROM citegate_streams WHERE id = ${id} AND ended_at IS NULL AND lease_until < now() FOR UPDATE`
      if (row === undefined) return
      const rows = yield* sql<{ event: string }>`SELECT event FROM citegate_stream_events WHERE stream = ${id} ORDER BY id`
      const events = rows.map((r) => JSON.parse(r.event) as StreamEvent)
      const lastId = row.last_id
      const error: StreamEvent = { id: lastId + 1, type: "error", error: new StreamProducerLost({ lastId, leaseMs }) }
      const done: StreamEvent = { id: lastId + 2, type: "done", state: "rejected", summary: lostSummary(events), uncited: [] }
      for (const e of [error, done]) {
        yield* sql`INSERT INTO citegate_stream_events (stream, id, event) VALUES (${id}, ${e.id}, ${encodeEvent(e)})`
      }
      yield* sql`UPDATE citegate_streams SET last_id = ${done.id}, ended_at = now(), holder = ${replica} WHERE id = ${id}`
    }))

  const follow = (info: StreamInfo, after: number): Stream.Stream<LoggedEvent, StreamGone> =>
    Stream.paginateChunkEffect(after, (last) =>
      Effect.gen(function*() {
        const [row] = yield* sql<Row>`
          SELECT first_id, last_id, ended_at IS NOT NULL AS ended, lease_until < now() AS expired
          FROM citegate_streams WHERE id = ${info.id}`
        // Dropped while following (expired, or pushed out by newer streams): the stream just ends.
        if (row === undefined) return [Chunk.empty<LoggedEvent>(), Option.none<number>()] as const
        if (last + 1 < row.first_id) {
          return yield* new StreamGone({ streamId: info.id, reason: "not-retained", oldestRetained: row.first_id })
        }
        const rows = yield* sql<{ id: number; event: string }>`
          SELECT id, event FROM citegate_stream_events WHERE stream = ${info.id} AND id > ${last} ORDER BY id LIMIT 500`
        const out = rows.map((r): LoggedEvent => ({ id: r.id, json: r.event }))
        const newest = out.at(-1)?.id ?? last
        if (row.ended && newest >= row.last_id) return [Chunk.unsafeFromArray(out), Option.none<number>()] as const
        if (out.length === 0) {
          if (!row.ended && row.expired) yield* closeLost(info.id)
          else yield* Effect.sleep(pollMs)
        }
        return [Chunk.unsafeFromArray(out), Option.some(newest)] as const
      }).pipe(Effect.catchTag("SqlError", () => Effect.succeed([Chunk.empty<LoggedEvent>(), Option.none<number>()] as const)))
    )

  return { open, append, end, lookup, follow }
}
