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
import type { SqlError } from "@effect/sql/SqlError"
import * as Chunk from "effect/Chunk"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Exit from "effect/Exit"
import * as FiberSet from "effect/FiberSet"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Queue from "effect/Queue"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import * as path from "node:path"
import * as Capture from "../capture/Capture.js"
import * as TrustedKeys from "../evidence/TrustedKeys.js"
import * as Trust from "../capture/Trust.js"
import { recordBody, type SourceUrl } from "../Domain.js"
import { NotReady, RunNotFound } from "../Errors.js"
import * as Manifest from "../Manifest.js"
import type { CaptureStoreShape } from "../store/CaptureStore.js"
import { CaptureStore } from "../store/CaptureStore.js"
import * as PostgresStore from "../store/Postgres.js"
import * as ReviewPostgres from "../store/ReviewPostgres.js"
import { peers } from "../store/PostgresPeers.js"
import { Lifecycle, ServerContext } from "./Context.js"
import { eventJson, manifestEvents, newRunId, RunEvent, Runs, type RunView } from "./Runs.js"

/** @since 0.2.0 */
export interface ReplicaOptions {
  /** This replica's name in the job table (host, pid and a random suffix by default). */
  readonly replica: string
  /** How often an idle replica looks for work, and a follower for new events (default 100 ms). */
  readonly pollMs?: number | undefined
  /** How long a finished run's job and events are kept (default 24 hours). */
  readonly jobRetainMs?: number | undefined
}

/** The holder lost the job (its lease ran out and another replica claimed it) or the database. */
class JobStopped extends Data.TaggedError("JobStopped")<{ readonly reason: string }> {}

interface Claim {
  readonly run: string
  readonly epoch: number
  readonly previous: string | null
}

const runIdPattern = /^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/
const decodeEvent = Schema.decodeUnknownSync(Schema.parseJson(RunEvent), { onExcessProperty: "error" })

type WithoutId<T> = T extends unknown ? Omit<T, "id"> : never

export const make = (options: ReplicaOptions) =>
  Effect.gen(function*() {
    const context = yield* ServerContext
    const lifecycle = yield* Lifecycle
    const { SqlClient } = yield* peers
    const sql = yield* SqlClient.SqlClient
    const { replica } = options
    const pollMs = options.pollMs ?? 100
    const jobRetainMs = options.jobRetainMs ?? 24 * 60 * 60 * 1000
    const leaseMs = context.limits.leaseMs
    const { config } = context
    const fibers = yield* FiberSet.make()
    const wake = yield* Queue.sliding<void>(1)
    let active = 0

    const lease = sql`now() + (${leaseMs}::int * interval '1 millisecond')`
    const stopped = (error: SqlError) => new JobStopped({ reason: error.message })

    const storeOf = (run: string) =>
      PostgresStore.layer({ run }).pipe(
        Layer.mapError(() => new RunNotFound({ runId: run })),
        Layer.provide(Layer.succeed(SqlClient.SqlClient, sql))
      )

    // --- the queue -------------------------------------------------------------------------------

    /** The oldest job that is queued or whose holder's lease ran out, claimed for this replica. */
    const claimOne = sql<{ run: string; epoch: number; previous: string | null }>`
      WITH c AS (
        SELECT run, holder FROM citegate_jobs
        WHERE state <> 'done' AND (state = 'queued' OR lease_until < now())
        ORDER BY created_at LIMIT 1 FOR UPDATE SKIP LOCKED)
      UPDATE citegate_jobs j SET state = 'running', holder = ${replica}, epoch = j.epoch + 1, lease_until = ${lease}
      FROM c WHERE j.run = c.run
      RETURNING j.run, j.epoch, c.holder AS previous`.pipe(
      Effect.map((rows): Claim | undefined => rows[0])
    )

    /** Renews the lease; fails once another replica holds the job. */
    const renew = (claim: Claim) =>
      sql`UPDATE citegate_jobs SET lease_until = ${lease}
          WHERE run = ${claim.run} AND holder = ${replica} AND epoch = ${claim.epoch} AND state = 'running'
          RETURNING run`.pipe(
        Effect.mapError(stopped),
        Effect.flatMap((rows) => rows.length === 1 ? Effect.void : Effect.fail(new JobStopped({ reason: "lease taken over" })))
      )

    // A heartbeat that fails with a database error keeps trying: the lease says when it is lost.
    const heartbeat = (claim: Claim) =>
      Effect.sleep(Math.max(50, Math.floor(leaseMs / 3))).pipe(
        Effect.zipRight(renew(claim).pipe(Effect.catchIf((e) => e.reason !== "lease taken over", () => Effect.void))),
        Effect.forever
      )

    /** Hands a job back to the queue (shutdown): another replica takes it over at once. */
    const release = (claim: Claim) =>
      sql`UPDATE citegate_jobs SET state = 'queued', lease_until = now()
          WHERE run = ${claim.run} AND holder = ${replica} AND epoch = ${claim.epoch} AND state = 'running'`.pipe(Effect.ignore)

    // --- events ----------------------------------------------------------------------------------

    const readEvents = (run: string, after: number, limit = 1_000) =>
      sql<{ id: number; event: string }>`
        SELECT id, event FROM citegate_run_events WHERE run = ${run} AND id > ${after} ORDER BY id LIMIT ${limit}`.pipe(
        Effect.map((rows) => rows.map((row) => decodeEvent(row.event)))
      )

    /** One event, written only while this replica still holds the job under this epoch. */
    const appendFenced = (claim: Claim, event: RunEvent) =>
      sql`WITH j AS (
            SELECT run FROM citegate_jobs
            WHERE run = ${claim.run} AND holder = ${replica} AND epoch = ${claim.epoch} AND state = 'running' FOR SHARE)
          INSERT INTO citegate_run_events (run, id, event) SELECT run, ${event.id}, ${eventJson(event)} FROM j
          RETURNING id`.pipe(
        Effect.mapError(stopped),
        Effect.flatMap((rows) => rows.length === 1 ? Effect.void : Effect.fail(new JobStopped({ reason: "lease taken over" })))
      )

    // --- one job ---------------------------------------------------------------------------------

    const numberOf = (source: string) => config.sources.indexOf(source as typeof config.sources[number]) + 1

    /** A `captured` event from the record the store holds (written by an earlier holder, or a race's winner). */
    const fromStore = (store: CaptureStoreShape, source: string) =>
      store.read(source as SourceUrl).pipe(
        Effect.map((record): WithoutId<RunEvent> => ({
          _tag: "captured",
          number: numberOf(source),
          source,
          captureSha256: record.sha256,
          byteLength: recordBody(record).byteLength,
          accessedAt: record.accessedAt
        })),
        Effect.option
      )

    const runJob = (claim: Claim) =>
      Effect.gen(function*() {
        const lock = yield* Effect.makeSemaphore(1)
        const before = yield* Effect.mapError(readEvents(claim.run, 0, 100_000), stopped)
        let next = before.length + 1
        const append = (event: WithoutId<RunEvent>) =>
          lock.withPermits(1)(Effect.suspend(() => {
            const full = { ...event, id: next } as RunEvent
            return Effect.tap(appendFenced(claim, full), () => Effect.sync(() => next++))
          }))
        if (claim.previous !== null) yield* append({ _tag: "taken-over", attempt: claim.epoch, replica })
        if (!before.some((e) => e._tag === "started")) {
          yield* append({ _tag: "started", runId: claim.run, sources: config.sources.length })
        }
        const reported = new Set(before.flatMap((e) => e._tag === "captured" || e._tag === "failed" ? [e.source] : []))
        if (!before.some((e) => e._tag === "aborted")) yield* captureRest(claim, reported, append)
        const all = yield* Effect.mapError(readEvents(claim.run, 0, 100_000), stopped)
        const captured = all.filter((e) => e._tag === "captured").length
        const failed = all.filter((e) => e._tag === "failed").length
        // The last event and the job's end in one transaction: a job is done exactly when its `done` is stored.
        yield* sql.withTransaction(
          append({ _tag: "done", status: "completed", captured, failed }).pipe(
            Effect.zipRight(Effect.mapError(sql`UPDATE citegate_jobs SET state = 'done', ended_at = now()
              WHERE run = ${claim.run} AND holder = ${replica} AND epoch = ${claim.epoch}`, stopped))
          )
        ).pipe(Effect.catchTag("SqlError", (e) => Effect.fail(stopped(e))))
      }).pipe(
        Effect.raceFirst(heartbeat(claim)),
        Effect.onExit((exit) =>
          Exit.isInterrupted(exit) ? release(claim) : Exit.isFailure(exit)
            ? Effect.logWarning("capture job stopped", exit.cause)
            : Effect.void
        ),
        Effect.catchAll(() => Effect.void),
        Effect.annotateLogs({ runId: claim.run, epoch: claim.epoch })
      )

    /** The sources not yet reported: from the store when a record is already there, else captured now. */
    const captureRest = (
      claim: Claim,
      reported: ReadonlySet<string>,
      append: (event: WithoutId<RunEvent>) => Effect.Effect<void, JobStopped>
    ) =>
      Effect.gen(function*() {
        const { caFile, signing: _signing, ...budgets } = config.capture ?? {}
        const store = yield* Effect.orDie(PostgresStore.make({ run: claim.run }).pipe(Effect.provideService(SqlClient.SqlClient, sql)))
        const remaining: Array<string> = []
        for (const source of config.sources.filter((s) => !reported.has(s))) {
          const stored = yield* fromStore(store, source)
          if (Option.isSome(stored)) yield* append(stored.value)
          else remaining.push(source)
        }
        if (remaining.length === 0) return
        const started = yield* Effect.gen(function*() {
          const ca = yield* Trust.loadExtraCa({
            caFile: caFile === undefined ? undefined : path.resolve(path.dirname(context.configFile), caFile)
          })
          const captureLayer = Capture.layer({
            approved: config.sources,
            allowLoopbackHttp: context.allowLoopbackHttp,
            ...budgets,
            ca,
            // Checked when `serve` started; read again per job: a key file removed since aborts the job (see Runs.ts).
            signingKey: yield* TrustedKeys.signingKeyOf(config, path.dirname(context.configFile))
          })
            .pipe(Layer.provide(Layer.succeed(CaptureStore, store)))
          return yield* Effect.flatMap(Capture.Capture, (capture) =>
            capture.captureAll(remaining, {
              onEvent: (event) =>
                event._tag === "Started" ? Effect.void : Effect.orDie(
                  event._tag === "Captured"
                    ? append({
                      _tag: "captured",
                      number: numberOf(event.source),
                      source: event.source,
                      captureSha256: event.ref.sha256,
                      byteLength: event.ref.byteLength,
                      accessedAt: event.ref.accessedAt
                    })
                    // Another holder stored this source first: its record is the run's, reported as such.
                    : event.error._tag === "CaptureExists"
                    ? Effect.flatMap(fromStore(store, event.source), (stored) =>
                      Option.isSome(stored)
                        ? append(stored.value)
                        : append({ _tag: "failed", number: numberOf(event.source), source: event.source, error: event.error }))
                    : append({ _tag: "failed", number: numberOf(event.source), source: event.source, error: event.error })
                )
            })).pipe(Effect.provide(captureLayer))
        }).pipe(Effect.either)
        if (Either.isLeft(started)) yield* append({ _tag: "aborted", error: started.left })
      }).pipe(
        // An event append that found the job taken over stops the whole capture (onEvent cannot fail).
        Effect.catchAllDefect((defect) => defect instanceof JobStopped ? Effect.fail(defect) : Effect.die(defect))
      )

    // --- the worker loop ---------------------------------------------------------------------------

    const work: Effect.Effect<void> = Effect.gen(function*() {
      while (!(yield* lifecycle.isDraining)) {
        if (active < context.limits.maxActiveRuns) {
          const claim = yield* claimOne.pipe(
            Effect.catchAll((error) => Effect.as(Effect.logWarning("capture queue unavailable", error.message), undefined))
          )
          if (claim !== undefined) {
            active++
            yield* FiberSet.run(fibers, runJob(claim).pipe(
              Effect.ensuring(Effect.zipRight(Effect.sync(() => active--), Queue.offer(wake, undefined)))
            ))
            continue
          }
        }
        yield* Queue.take(wake).pipe(Effect.timeoutOption(pollMs))
      }
    })

    // Finished jobs past their time go, with their events (a run then reads as stored).
    const expire = sql`DELETE FROM citegate_jobs WHERE state = 'done' AND ended_at < now() - (${jobRetainMs}::bigint * interval '1 millisecond')`.pipe(
      Effect.ignore,
      Effect.zipRight(Effect.sleep(Math.min(jobRetainMs, 60_000))),
      Effect.forever
    )

    // --- the Runs service --------------------------------------------------------------------------

    const start = Effect.fn("Runs.start")(function*(owner: string) {
      const id = newRunId()
      yield* sql.withTransaction(
        sql`INSERT INTO citegate_runs (run) VALUES (${id})`.pipe(
          Effect.zipRight(sql`INSERT INTO citegate_jobs (run, owner, state) VALUES (${id}, ${owner}, 'queued')`)
        )
      ).pipe(
        Effect.tapError((error) => Effect.logError("run could not be queued", error.message)),
        Effect.mapError(() => new NotReady({ reason: "store-unavailable" }))
      )
      yield* Queue.offer(wake, undefined)
      yield* Effect.logInfo("capture run queued").pipe(Effect.annotateLogs({ runId: id }))
      return { id, status: "running" as const, owner, directory: id } satisfies RunView
    })

    const get = Effect.fn("Runs.get")(function*(runId: string) {
      if (!runIdPattern.test(runId)) return yield* new RunNotFound({ runId })
      const rows = yield* sql<{ owner: string | null; state: string | null; last: string | null }>`
        SELECT j.owner, j.state,
               (SELECT event FROM citegate_run_events e WHERE e.run = r.run ORDER BY id DESC LIMIT 1) AS last
        FROM citegate_runs r LEFT JOIN citegate_jobs j ON j.run = r.run WHERE r.run = ${runId}`.pipe(
        Effect.orElseSucceed(() => [])
      )
      const row = rows[0]
      if (row === undefined) return yield* new RunNotFound({ runId })
      if (row.state === null) return { id: runId, status: "stored" as const, owner: null, directory: runId } satisfies RunView
      const last = row.state === "done" && row.last !== null ? decodeEvent(row.last) : undefined
      const status = last?._tag === "done" ? last.status : "running"
      return { id: runId, status, owner: row.owner, directory: runId } satisfies RunView
    })

    const manifest = (run: RunView) => Manifest.make(config).pipe(Effect.provide(storeOf(run.id)))

    const events = (run: RunView, afterId: number): Stream.Stream<RunEvent, RunNotFound> => {
      if (run.status === "stored") {
        return Stream.flatMap(manifest(run), (m) => Stream.fromIterable(manifestEvents(m).filter((e) => e.id > afterId)))
      }
      // Polls the run's events until its `done`; ends when this replica drains (the client resumes elsewhere).
      return Stream.paginateChunkEffect(Math.max(0, afterId), (after) =>
        readEvents(run.id, after).pipe(
          Effect.orElseSucceed((): ReadonlyArray<RunEvent> => []),
          Effect.flatMap((found) => {
            const last = found.at(-1)
            if (last?._tag === "done") return Effect.succeed([found, Option.none<number>()] as const)
            const wait = found.length === 0 ? Effect.sleep(pollMs) : Effect.void
            return Effect.as(wait, [found, Option.some(last?.id ?? after)] as const)
          }),
          Effect.map(([found, nextAfter]) => [Chunk.unsafeFromArray(found), nextAfter] as const)
        )
      ).pipe(Stream.interruptWhen(lifecycle.draining))
    }

    const store = (run: RunView) => storeOf(run.id)
    const reviews = (run: RunView) =>
      ReviewPostgres.layer({ run: run.id }).pipe(
        Layer.mapError(() => new RunNotFound({ runId: run.id })),
        Layer.provide(Layer.succeed(SqlClient.SqlClient, sql))
      )

    const ready = sql`SELECT 1 FROM citegate_jobs LIMIT 1`.pipe(
      Effect.asVoid,
      Effect.mapError(() => new NotReady({ reason: "store-unavailable" }))
    )

    yield* Effect.forkScoped(Effect.interruptible(work))
    yield* Effect.forkScoped(Effect.interruptible(expire))

    // Shutdown: stop claiming, let running jobs finish within the grace period, then hand what is left
    // back to the queue (another replica takes it over with a `taken-over` event).
    yield* Effect.addFinalizer(() =>
      Effect.gen(function*() {
        yield* lifecycle.shutdown
        yield* Effect.sleep(pollMs).pipe(
          Effect.repeat({ until: () => active === 0 }),
          Effect.interruptible,
          Effect.timeoutOption(context.limits.shutdownGraceMs)
        )
        yield* FiberSet.clear(fibers)
      })
    )

    return Runs.of({ start, get, manifest, events, store, reviews, ready })
  })

/**
 * The replicated `Runs` over the `SqlClient` in context.
 *
 * @since 0.2.0
 */
export const layer = (options: ReplicaOptions) => Layer.scoped(Runs, make(options))
