/**
 * Runs of a service that runs as several replicas over one PostgreSQL database (`serve --store`).
 *
 * A run started over HTTP is a row in `citegate_runs` (its captures go to the PostgreSQL store) and a
 * capture job in `citegate_jobs`. Every replica polls the queue and claims a job with
 * `FOR UPDATE SKIP LOCKED`, holding it under a lease it renews (a heartbeat every third of
 * `server.leaseMs`). A job whose lease ran out (its replica was killed, or lost the database) is
 * claimed again by any replica, which appends `taken-over` and finishes the run: sources already
 * reported are not fetched again, a source whose record was stored before its event is reported from
 * the store, and the store's exclusive write refuses a second record of a source (`CaptureExists`, then
 * reported from the record that won). Each claim increments the job's epoch; every event insert is
 * fenced by it, so a replica that lost its lease writes nothing more.
 *
 * Events live in `citegate_run_events`: any replica serves them, from any `Last-Event-ID`, polling
 * while the run is live. A finished run's job and events are removed after `jobRetainMs`; the run then
 * reads as `stored`, its events derived from its manifest, like a run captured by the CLI.
 *
 * @since 0.2.0
 */
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as NextFlight from "../internal/NextFlight.js"
import * as Spans from "../internal/Spans.js"
import * as FiberRef from "effect/FiberRef"
import * as FiberSet from "effect/FiberSet"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Queue from "effect/Queue"
import * as Runtime from "effect/Runtime"
import * as Stream from "effect/Stream"
import { NotReady, RunNotFound } from "../Errors.js"
import * as Manifest from "../Manifest.js"
import type { SourceUrl } from "../Domain.js"
import * as PostgresStore from "../store/Postgres.js"
import * as PostgresStamps from "../store/PostgresStamps.js"
import * as ReviewPostgres from "../store/ReviewPostgres.js"
import { peers } from "../store/PostgresPeers.js"
import { Lifecycle, ServerContext } from "./Context.js"
import * as Metrics from "./Metrics.js"
import { decodeEvent, expire, queueDepth, readEvents, type Replica, work } from "./PostgresJobs.js"
import { manifestEvents, newRunId, type RunEvent, type RunFound, Runs, type RunView } from "./Runs.js"

/** @since 0.2.0 */
export interface ReplicaOptions {
  /** This replica's name in the job table (host, pid and a random suffix by default). */
  readonly replica: string
  /** How often an idle replica looks for work, and a follower for new events (default 100 ms). */
  readonly pollMs?: number | undefined
  /** How long a finished run's job and events are kept (default 24 hours). */
  readonly jobRetainMs?: number | undefined
}

const runIdPattern = /^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/

const storeOf = (r: Replica, run: string) =>
  PostgresStore.layer({ run }).pipe(
    Layer.mapError(() => new RunNotFound({ runId: run })),
    Layer.provide(Layer.succeed(r.SqlClient.SqlClient, r.sql))
  )

/** A run is a row in `citegate_runs` and a queued job, in one transaction; a replica is woken to claim it. */
const startRun = (r: Replica) =>
  Effect.fn("Runs.start")(function*(owner: string) {
    const { sql } = r
    const id = newRunId()
    yield* sql.withTransaction(
      sql`INSERT INTO citegate_runs (run) VALUES (${id})`.pipe(
        Effect.zipRight(sql`INSERT INTO citegate_jobs (run, owner, state) VALUES (${id}, ${owner}, 'queued')`)
      )
    ).pipe(
      Effect.tapError((error) => Effect.logError("run could not be queued", error.message)),
      Effect.mapError(() => new NotReady({ reason: "store-unavailable" }))
    )
    yield* Queue.offer(r.wake, undefined)
    yield* Effect.logInfo("capture run queued").pipe(Effect.annotateLogs({ runId: id }))
    // Queued until a replica claims its job (at once when one has a slot free).
    return { id, status: "queued" as const, owner, directory: id } satisfies RunView
  })

interface RunRow {
  readonly owner: string | null
  readonly state: string | null
  readonly last: string | null
  readonly reviews: string | null
  /** The capture stamps taken ahead, by source (null: none asked, or none of them stored). */
  readonly captures?: Record<string, string> | null
}

/** Done events decoded, by their text (a finished run's last event is read on every look-up). */
const doneStatuses = new Map<string, RunView["status"]>()

const statusOf = (row: RunRow): RunView["status"] => {
  // Not yet claimed, handed back by a replica that drained, or its holder's lease ran out: it waits in the queue.
  if (row.state === "queued") return "queued"
  if (row.state !== "done" || row.last === null) return "running"
  const known = doneStatuses.get(row.last)
  if (known !== undefined) return known
  const last = decodeEvent(row.last)
  const status = last._tag === "done" ? last.status : "running"
  // Bounded: one entry per distinct `done` event text (they differ by counts only).
  if (doneStatuses.size >= 1024) doneStatuses.clear()
  doneStatuses.set(row.last, status)
  return status
}

/**
 * Run look-up queries sent (`reads`), run look-ups answered by them (`calls`) and of those the ones
 * that waited for the query in flight to end (`later`), all replicas of this process together:
 * fewer reads than calls means concurrent look-ups shared a query. The tests read it.
 */
export const lookUpCounts: NextFlight.Counts = { reads: 0, calls: 0, later: 0 }

/** A run's row as one look-up read it, with the capture stamps it was asked for. */
interface LookedUp {
  readonly row: RunRow | undefined
  /** The sources stamped ahead (empty: none asked). */
  readonly asked: ReadonlySet<string>
  readonly stamps: ReadonlyMap<SourceUrl, string>
  /** `Date.now()` when the answer arrived. */
  readonly at: number
}

const noneAsked: ReadonlySet<string> = new Set()

/**
 * One query per look-up: the run's row, its job, its last event (a finished job's only), the
 * stamp of its review log (`reviewsStamp`, so that a verification shows the kept log while it is
 * unchanged instead of reading it: KeptReviews.ts), and the stamps of the captures this run's
 * verifications cited before (store/PostgresStamps.ts), so that the verification of this request
 * need not stamp them in a statement of its own. The review log's stamp is every decision row's
 * version, as the capture stamps are (store/Postgres.ts): its table's oid, `seq`, `xmin` and
 * `ctid`, hashed, with the count; an append, and a row a superuser rewrites, deletes or re-inserts
 * with the trigger off, all change it.
 */
const lookUp = (r: Replica, ahead: PostgresStamps.Ahead) => (runId: string): Effect.Effect<LookedUp> => {
  const wanted = ahead.wanted(runId)
  const captures = wanted.length === 0 ? r.sql`` : r.sql`,
           (SELECT json_object_agg(c.source, ${r.sql.literal(PostgresStamps.stampColumn)})
            FROM citegate_captures c LEFT JOIN citegate_bodies b ON b.sha256 = c.body_sha256
            WHERE c.run = r.run AND c.source = ANY(${wanted})) AS captures`
  return r.sql<RunRow>`
    SELECT j.owner,
           -- A job whose holder's lease ran out waits for another replica to claim it, as a queued one does.
           CASE WHEN j.state = 'running' AND j.lease_until < now() THEN 'queued' ELSE j.state END AS state,
           CASE WHEN j.state = 'done'
             THEN (SELECT event FROM citegate_run_events e WHERE e.run = r.run ORDER BY id DESC LIMIT 1) END AS last,
           (SELECT concat_ws(':', count(*), md5(string_agg(concat_ws('.', v.tableoid, v.seq, v.xmin, v.ctid), ',' ORDER BY v.seq)))
            FROM citegate_reviews v WHERE v.run = r.run) AS reviews${captures}
    FROM citegate_runs r LEFT JOIN citegate_jobs j ON j.run = r.run WHERE r.run = ${runId}`.pipe(
    Effect.orElseSucceed((): ReadonlyArray<RunRow> => []),
    Effect.map((rows): LookedUp => {
      const row = rows[0]
      const at = Date.now()
      if (row === undefined || wanted.length === 0) return { row, asked: noneAsked, stamps: new Map(), at }
      const stamps = new Map(Object.entries(row.captures ?? {})) as Map<SourceUrl, string>
      return { row, asked: new Set(wanted), stamps, at }
    })
  )
}

/**
 * The run of a request, looked up afresh: never kept between requests (a run is seen by every
 * replica as it is now), and the capture stamps serve this request's verification only. Concurrent
 * look-ups of one run share one query (internal/NextFlight.ts): a request that arrives while the
 * run's query is in flight waits for the next one, which starts after it arrived, so what it sees
 * is what a query of its own would have seen (docs/threat-model.md, "A change in the database").
 */
const getRun = (lookUps: LookUps, client: object) =>
  Spans.fn("Runs.get")(function*(runId: string) {
    if (!runIdPattern.test(runId)) return yield* new RunNotFound({ runId })
    const looked = yield* lookUps.call(runId)
    if (looked.row === undefined) return yield* new RunNotFound({ runId })
    const { run, taken } = foundOf(looked, looked.row, runId, client)
    if (taken !== undefined) yield* FiberRef.set(PostgresStamps.taken, taken)
    return run
  })

type LookUps = ReturnType<typeof NextFlight.make<LookedUp, never>>

const foundOf = ({ asked, at, stamps }: LookedUp, row: RunRow, runId: string, client: object): RunFound => {
  const taken = asked.size > 0 ? { client, run: runId, asked, stamps, at } : undefined
  const reviewsStamp = row.reviews ?? undefined
  if (row.state === null) return { run: { id: runId, status: "stored", owner: null, directory: runId, reviewsStamp }, taken }
  return { run: { id: runId, status: statusOf(row), owner: row.owner, directory: runId, reviewsStamp }, taken }
}

/**
 * `getRun` for a caller without a fiber (the verify lane): the same shared look-up, told to `found`
 * (`undefined`: not found). Returns the function that stops waiting (the request's deadline, its client gone).
 */
const getRunThen = (lookUps: LookUps, client: object) => (runId: string, found: (run: RunFound | undefined) => void): () => void => {
  if (!runIdPattern.test(runId)) {
    found(undefined)
    return () => {}
  }
  return lookUps.callThen(runId, (exit) => {
    const row = Exit.isSuccess(exit) ? exit.value.row : undefined
    found(row === undefined || Exit.isFailure(exit) ? undefined : foundOf(exit.value, row, runId, client))
  })
}

/** Polls the run's events until its `done`; ends when this replica drains (the client resumes elsewhere). */
const followEvents = (r: Replica, run: RunView, afterId: number): Stream.Stream<RunEvent> =>
  Stream.paginateChunkEffect(Math.max(0, afterId), (after) =>
    readEvents(r, run.id, after).pipe(
      Effect.orElseSucceed((): ReadonlyArray<RunEvent> => []),
      Effect.flatMap((found) => {
        const last = found.at(-1)
        if (last?._tag === "done") return Effect.succeed([found, Option.none<number>()] as const)
        const wait = found.length === 0 ? Effect.sleep(r.pollMs) : Effect.void
        return Effect.as(wait, [found, Option.some(last?.id ?? after)] as const)
      }),
      Effect.map(([found, nextAfter]) => [Chunk.unsafeFromArray(found), nextAfter] as const)
    )
  ).pipe(Stream.interruptWhen(r.lifecycle.draining))

/**
 * Shutdown: stop claiming, let running jobs finish within the grace period, then hand what is left
 * back to the queue (another replica takes it over with a `taken-over` event).
 */
const drain = (r: Replica) =>
  Effect.gen(function*() {
    yield* r.lifecycle.shutdown
    yield* Effect.sleep(r.pollMs).pipe(
      Effect.repeat({ until: () => r.active === 0 }),
      Effect.interruptible,
      Effect.timeoutOption(r.context.limits.shutdownGraceMs)
    )
    yield* FiberSet.clear(r.fibers)
  })

export const make = (options: ReplicaOptions) =>
  Effect.gen(function*() {
    const context = yield* ServerContext
    const lifecycle = yield* Lifecycle
    const { SqlClient } = yield* peers
    const r: Replica = {
      context,
      lifecycle,
      SqlClient,
      sql: yield* SqlClient.SqlClient,
      replica: options.replica,
      pollMs: options.pollMs ?? 100,
      jobRetainMs: options.jobRetainMs ?? 24 * 60 * 60 * 1000,
      fibers: yield* FiberSet.make(),
      wake: yield* Queue.sliding<void>(1),
      active: 0
    }

    // Stores over this client stamp ahead (store/PostgresStamps.ts): attached before any is made.
    const ahead = PostgresStamps.attach(r.sql)
    const runFork = Runtime.runFork(yield* Effect.runtime<never>())
    const lookUps = NextFlight.make(lookUp(r, ahead), (effect) => void runFork(effect), lookUpCounts)

    const manifest = (run: RunView) => Manifest.make(context.config).pipe(Effect.provide(storeOf(r, run.id)))
    const events = (run: RunView, afterId: number): Stream.Stream<RunEvent, RunNotFound> =>
      run.status === "stored"
        ? Stream.flatMap(manifest(run), (m) => Stream.fromIterable(manifestEvents(m).filter((e) => e.id > afterId)))
        : followEvents(r, run, afterId)
    const store = (run: RunView) => storeOf(r, run.id)
    const reviews = (run: RunView) =>
      ReviewPostgres.layer({ run: run.id }).pipe(
        Layer.mapError(() => new RunNotFound({ runId: run.id })),
        Layer.provide(Layer.succeed(SqlClient.SqlClient, r.sql))
      )
    const ready = r.sql`SELECT 1 FROM citegate_jobs LIMIT 1`.pipe(
      Effect.asVoid,
      Effect.mapError(() => new NotReady({ reason: "store-unavailable" }))
    )

    yield* Effect.forkScoped(Effect.interruptible(work(r)))
    yield* Effect.forkScoped(Effect.interruptible(expire(r)))
    // With telemetry on, the shared queue's depth (docs/observability.md); nothing otherwise. Its
    // query, once a second, is not traced (it would be a trace of its own each time).
    yield* Effect.forkScoped(Effect.interruptible(Metrics.sampleQueue(Effect.withTracerEnabled(queueDepth(r), false))))
    yield* Effect.addFinalizer(() => drain(r))

    // Exact (no clock in it): kept from the first read (`changedAt` undefined).
    const reviewStamp = (run: RunView) => run.reviewsStamp === undefined ? undefined : { stamp: run.reviewsStamp, changedAt: undefined }

    return Runs.of({ start: startRun(r), get: getRun(lookUps, r.sql), getThen: getRunThen(lookUps, r.sql), manifest, events, store, reviews, reviewStamp, ready })
  })

/**
 * The replicated `Runs` over the `SqlClient` in context.
 *
 * @since 0.2.0
 */
export const layer = (options: ReplicaOptions) => Layer.scoped(Runs, make(options))
