/**
 * The capture job queue of replicas over PostgreSQL (PostgresRuns.ts): claiming a job under a lease
 * and renewing it, the run's events fenced by the job's epoch, one job's capture (the sources not yet
 * reported), the worker loop and the expiry of finished jobs.
 *
 * @since 0.2.0
 */
import type * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import type * as Context from "effect/Context"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Exit from "effect/Exit"
import * as FiberSet from "effect/FiberSet"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Queue from "effect/Queue"
import * as Schema from "effect/Schema"
import * as Capture from "../capture/Capture.js"
import { recordBody, type SourceUrl } from "../Domain.js"
import type { CaptureStoreShape } from "../store/CaptureStore.js"
import { CaptureStore } from "../store/CaptureStore.js"
import * as PostgresStore from "../store/Postgres.js"
import type { Lifecycle, ServerContext } from "./Context.js"
import { captureLayer, sourceNumber } from "./RunCapture.js"
import { eventJson, RunEvent } from "./Runs.js"

/** One replica: its name, its database, its settings, and the jobs it runs. */
export interface Replica {
  readonly context: Context.Tag.Service<ServerContext>
  readonly lifecycle: Context.Tag.Service<Lifecycle>
  /** The `@effect/sql` module (loaded with the store's peers) and the client in context. */
  readonly SqlClient: typeof SqlClient
  readonly sql: SqlClient.SqlClient
  /** This replica's name in the job table. */
  readonly replica: string
  readonly pollMs: number
  readonly jobRetainMs: number
  readonly fibers: FiberSet.FiberSet
  /** Offered when a job is queued or ends here: the worker loop looks for work at once. */
  readonly wake: Queue.Queue<void>
  /** The jobs running on this replica now. */
  active: number
}

/** The holder lost the job (its lease ran out and another replica claimed it) or the database. */
class JobStopped extends Data.TaggedError("JobStopped")<{ readonly reason: string }> {}

interface Claim {
  readonly run: string
  readonly epoch: number
  readonly previous: string | null
}

export const decodeEvent = Schema.decodeUnknownSync(Schema.parseJson(RunEvent), { onExcessProperty: "error" })

type WithoutId<T> = T extends unknown ? Omit<T, "id"> : never

const stopped = (error: SqlError) => new JobStopped({ reason: error.message })

/** The end of a lease taken or renewed now. */
const leaseUntil = (r: Replica) => r.sql`now() + (${r.context.limits.leaseMs}::int * interval '1 millisecond')`

// --- the queue -------------------------------------------------------------------------------

/** The oldest job that is queued or whose holder's lease ran out, claimed for this replica. */
const claimOne = (r: Replica) =>
  r.sql<{ run: string; epoch: number; previous: string | null }>`
    WITH c AS (
      SELECT run, holder FROM citegate_jobs
      WHERE state <> 'done' AND (state = 'queued' OR lease_until < now())
      ORDER BY created_at LIMIT 1 FOR UPDATE SKIP LOCKED)
    UPDATE citegate_jobs j SET state = 'running', holder = ${r.replica}, epoch = j.epoch + 1, lease_until = ${leaseUntil(r)}
    FROM c WHERE j.run = c.run
    RETURNING j.run, j.epoch, c.holder AS previous`.pipe(
    Effect.map((rows): Claim | undefined => rows[0])
  )

/**
 * The queue's depth now, over every replica: jobs a replica would claim (queued, or whose holder's
 * lease ran out) and jobs held under a live lease.
 */
export const queueDepth = (r: Replica) =>
  r.sql<{ waiting: number; running: number }>`
    SELECT count(*) FILTER (WHERE state = 'queued' OR lease_until < now())::int AS waiting,
           count(*) FILTER (WHERE state = 'running' AND lease_until >= now())::int AS running
    FROM citegate_jobs WHERE state <> 'done'`.pipe(
    Effect.map((rows) => rows[0] ?? { waiting: 0, running: 0 })
  )

/** Renews the lease; fails once another replica holds the job. */
const renew = (r: Replica, claim: Claim) =>
  r.sql`UPDATE citegate_jobs SET lease_until = ${leaseUntil(r)}
      WHERE run = ${claim.run} AND holder = ${r.replica} AND epoch = ${claim.epoch} AND state = 'running'
      RETURNING run`.pipe(
    Effect.mapError(stopped),
    Effect.flatMap((rows) => rows.length === 1 ? Effect.void : Effect.fail(new JobStopped({ reason: "lease taken over" })))
  )

// A heartbeat that fails with a database error keeps trying: the lease says when it is lost.
const heartbeat = (r: Replica, claim: Claim) =>
  Effect.sleep(Math.max(50, Math.floor(r.context.limits.leaseMs / 3))).pipe(
    Effect.zipRight(renew(r, claim).pipe(Effect.catchIf((e) => e.reason !== "lease taken over", () => Effect.void))),
    Effect.forever
  )

/** Hands a job back to the queue (shutdown): another replica takes it over at once. */
const release = (r: Replica, claim: Claim) =>
  r.sql`UPDATE citegate_jobs SET state = 'queued', lease_until = now()
      WHERE run = ${claim.run} AND holder = ${r.replica} AND epoch = ${claim.epoch} AND state = 'running'`.pipe(Effect.ignore)

// --- events ----------------------------------------------------------------------------------

export const readEvents = (r: Replica, run: string, after: number, limit = 1_000) =>
  r.sql<{ id: number; event: string }>`
    SELECT id, event FROM citegate_run_events WHERE run = ${run} AND id > ${after} ORDER BY id LIMIT ${limit}`.pipe(
    Effect.map((rows) => rows.map((row) => decodeEvent(row.event)))
  )

/** One event, written only while this replica still holds the job under this epoch. */
const appendFenced = (r: Replica, claim: Claim, event: RunEvent) =>
  r.sql`WITH j AS (
        SELECT run FROM citegate_jobs
        WHERE run = ${claim.run} AND holder = ${r.replica} AND epoch = ${claim.epoch} AND state = 'running' FOR SHARE)
      INSERT INTO citegate_run_events (run, id, event) SELECT run, ${event.id}, ${eventJson(event)} FROM j
      RETURNING id`.pipe(
    Effect.mapError(stopped),
    Effect.flatMap((rows) => rows.length === 1 ? Effect.void : Effect.fail(new JobStopped({ reason: "lease taken over" })))
  )

// --- one job ---------------------------------------------------------------------------------

/** A `captured` event from the record the store holds (written by an earlier holder, or a race's winner). */
const fromStore = (r: Replica, store: CaptureStoreShape, source: string) =>
  store.read(source as SourceUrl).pipe(
    Effect.map((record): WithoutId<RunEvent> => ({
      _tag: "captured",
      number: sourceNumber(r.context.config, source),
      source,
      captureSha256: record.sha256,
      byteLength: recordBody(record).byteLength,
      accessedAt: record.accessedAt
    })),
    Effect.option
  )

const runJob = (r: Replica, claim: Claim) =>
  Effect.gen(function*() {
    const { config } = r.context
    const lock = yield* Effect.makeSemaphore(1)
    const before = yield* Effect.mapError(readEvents(r, claim.run, 0, 100_000), stopped)
    let next = before.length + 1
    const append = (event: WithoutId<RunEvent>) =>
      lock.withPermits(1)(Effect.suspend(() => {
        const full = { ...event, id: next } as RunEvent
        return Effect.tap(appendFenced(r, claim, full), () => Effect.sync(() => next++))
      }))
    if (claim.previous !== null) yield* append({ _tag: "taken-over", attempt: claim.epoch, replica: r.replica })
    if (!before.some((e) => e._tag === "started")) {
      yield* append({ _tag: "started", runId: claim.run, sources: config.sources.length })
    }
    const reported = new Set(before.flatMap((e) => e._tag === "captured" || e._tag === "failed" ? [e.source] : []))
    if (!before.some((e) => e._tag === "aborted")) yield* captureRest(r, claim, reported, append)
    const all = yield* Effect.mapError(readEvents(r, claim.run, 0, 100_000), stopped)
    const captured = all.filter((e) => e._tag === "captured").length
    const failed = all.filter((e) => e._tag === "failed").length
    // The last event and the job's end in one transaction: a job is done exactly when its `done` is stored.
    yield* r.sql.withTransaction(
      append({ _tag: "done", status: "completed", captured, failed }).pipe(
        Effect.zipRight(Effect.mapError(r.sql`UPDATE citegate_jobs SET state = 'done', ended_at = now()
          WHERE run = ${claim.run} AND holder = ${r.replica} AND epoch = ${claim.epoch}`, stopped))
      )
    ).pipe(Effect.catchTag("SqlError", (e) => Effect.fail(stopped(e))))
  }).pipe(
    Effect.raceFirst(heartbeat(r, claim)),
    Effect.onExit((exit) =>
      Exit.isInterrupted(exit) ? release(r, claim) : Exit.isFailure(exit)
        ? Effect.logWarning("capture job stopped", exit.cause)
        : Effect.void
    ),
    Effect.catchAll(() => Effect.void),
    Effect.annotateLogs({ runId: claim.run, epoch: claim.epoch })
  )

/** The sources not yet reported: from the store when a record is already there, else captured now. */
const captureRest = (
  r: Replica,
  claim: Claim,
  reported: ReadonlySet<string>,
  append: (event: WithoutId<RunEvent>) => Effect.Effect<void, JobStopped>
) =>
  Effect.gen(function*() {
    const { config } = r.context
    const store = yield* Effect.orDie(PostgresStore.make({ run: claim.run }).pipe(Effect.provideService(r.SqlClient.SqlClient, r.sql)))
    const remaining: Array<string> = []
    for (const source of config.sources.filter((s) => !reported.has(s))) {
      const stored = yield* fromStore(r, store, source)
      if (Option.isSome(stored)) yield* append(stored.value)
      else remaining.push(source)
    }
    if (remaining.length === 0) return
    const started = yield* Effect.gen(function*() {
      // Checked when `serve` started; read again per job: a key file removed since aborts the job (see RunCapture.ts).
      const capture = (yield* captureLayer(r.context)).pipe(Layer.provide(Layer.succeed(CaptureStore, store)))
      return yield* Effect.flatMap(Capture.Capture, (capture) =>
        capture.captureAll(remaining, {
          onEvent: (event) =>
            event._tag === "Started" ? Effect.void : Effect.orDie(
              event._tag === "Captured"
                ? append({
                  _tag: "captured",
                  number: sourceNumber(config, event.source),
                  source: event.source,
                  captureSha256: event.ref.sha256,
                  byteLength: event.ref.byteLength,
                  accessedAt: event.ref.accessedAt
                })
                // Another holder stored this source first: its record is the run's, reported as such.
                : event.error._tag === "CaptureExists"
                ? Effect.flatMap(fromStore(r, store, event.source), (stored) =>
                  Option.isSome(stored)
                    ? append(stored.value)
                    : append({ _tag: "failed", number: sourceNumber(config, event.source), source: event.source, error: event.error }))
                : append({ _tag: "failed", number: sourceNumber(config, event.source), source: event.source, error: event.error })
            )
        })).pipe(Effect.provide(capture))
    }).pipe(Effect.either)
    if (Either.isLeft(started)) yield* append({ _tag: "aborted", error: started.left })
  }).pipe(
    // An event append that found the job taken over stops the whole capture (onEvent cannot fail).
    Effect.catchAllDefect((defect) => defect instanceof JobStopped ? Effect.fail(defect) : Effect.die(defect))
  )

// --- the worker loop ---------------------------------------------------------------------------

/** Claims jobs while this replica has room and is not draining; waits for a wake-up or the poll interval. */
export const work = (r: Replica): Effect.Effect<void> =>
  Effect.gen(function*() {
    while (!(yield* r.lifecycle.isDraining)) {
      if (r.active < r.context.limits.maxActiveRuns) {
        const claim = yield* claimOne(r).pipe(
          Effect.catchAll((error) => Effect.as(Effect.logWarning("capture queue unavailable", error.message), undefined))
        )
        if (claim !== undefined) {
          r.active++
          yield* FiberSet.run(r.fibers, runJob(r, claim).pipe(
            Effect.ensuring(Effect.zipRight(Effect.sync(() => r.active--), Queue.offer(r.wake, undefined)))
          ))
          continue
        }
      }
      yield* Queue.take(r.wake).pipe(Effect.timeoutOption(r.pollMs))
    }
  })

/** Finished jobs past their time go, with their events (a run then reads as stored). */
export const expire = (r: Replica) =>
  r.sql`DELETE FROM citegate_jobs WHERE state = 'done' AND ended_at < now() - (${r.jobRetainMs}::bigint * interval '1 millisecond')`.pipe(
    Effect.ignore,
    Effect.zipRight(Effect.sleep(Math.min(r.jobRetainMs, 60_000))),
    Effect.forever
  )
