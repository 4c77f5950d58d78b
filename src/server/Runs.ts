/**
 * Capture runs started over HTTP. Each run is a new directory under the run root named by a
 * generated id (never a client path); its capture fiber reports one event per source, kept in
 * memory so that an SSE client can read them from any point (`Last-Event-ID`). Directories that
 * already exist under the run root (runs captured by the CLI, or by an earlier server) are
 * readable too: their status is `stored` and their events are derived from the manifest.
 *
 * @since 0.2.0
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Spans from "../internal/Spans.js"
import * as Either from "effect/Either"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as FiberSet from "effect/FiberSet"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import * as SubscriptionRef from "effect/SubscriptionRef"
import { randomBytes } from "node:crypto"
import { lstatSync } from "node:fs"
import * as Arrivals from "../internal/Arrivals.js"
import * as fs from "node:fs/promises"
import * as path from "node:path"
import * as Capture from "../capture/Capture.js"
import * as CaptureStore from "../store/CaptureStore.js"
import * as ReviewFilesystem from "../store/ReviewFilesystem.js"
import type * as PostgresStamps from "../store/PostgresStamps.js"
import type { ReviewLog } from "../store/ReviewLog.js"
import { CaptureError, InvalidBudget, InvalidCaFile, InvalidRunDirectory, NotReady, RunNotFound, SigningKeyInvalid } from "../Errors.js"
import * as Manifest from "../Manifest.js"
import { CaptureCache } from "../verify/CaptureCache.js"
import type { RunStatus as RunStatusSchema } from "./Api.js"
import { Lifecycle, ServerContext, Telemetry } from "./Context.js"
import * as Metrics from "./Metrics.js"
import { captureLayer, sourceNumber } from "./RunCapture.js"

/** One progress event of a run; `id` is its SSE event id (1, 2, … per run). */
export const RunEvent = Schema.Union(
  Schema.TaggedStruct("started", { id: Schema.Int, runId: Schema.String, sources: Schema.Int }),
  Schema.TaggedStruct("captured", {
    id: Schema.Int,
    number: Schema.Int,
    source: Schema.String,
    captureSha256: Schema.String,
    byteLength: Schema.Int,
    accessedAt: Schema.String
  }),
  Schema.TaggedStruct("failed", { id: Schema.Int, number: Schema.Int, source: Schema.String, error: CaptureError }),
  /** A stored run (not started by this server): the source has no usable capture, and why. */
  Schema.TaggedStruct("missing", { id: Schema.Int, number: Schema.Int, source: Schema.String, reason: Manifest.MissingReason }),
  /** The capture stage could not start (an unusable CA file or signing key, say): no source was fetched. */
  Schema.TaggedStruct("aborted", { id: Schema.Int, error: Schema.Union(InvalidBudget, InvalidCaFile, InvalidRunDirectory, SigningKeyInvalid) }),
  /**
   * Replicas over PostgreSQL: the replica holding the run stopped renewing its lease (or shut down),
   * and another took the run over (`attempt`: 2 for the first takeover). Sources already reported
   * are not captured again; a source whose record was stored before its event is reported from the store.
   */
  Schema.TaggedStruct("taken-over", { id: Schema.Int, attempt: Schema.Int, replica: Schema.String }),
  Schema.TaggedStruct("done", {
    id: Schema.Int,
    status: Schema.Literal("completed", "interrupted", "stored"),
    captured: Schema.Int,
    failed: Schema.Int
  })
)
export type RunEvent = typeof RunEvent.Type
const encodeEvent = Schema.encodeSync(RunEvent)
/** An event as its JSON form (what an SSE `data:` line carries). */
export const eventJson = (event: RunEvent): string => JSON.stringify(encodeEvent(event))

/** See `Runs.reviewStamp`. */
export interface ReviewStamp {
  readonly stamp: string
  readonly changedAt: number | undefined
}

/** A run's status: the API's own schema (one definition of what `GET /v1/runs/{id}` may answer). */
export type RunStatus = typeof RunStatusSchema.Type

type WithoutId<T> = T extends unknown ? Omit<T, "id"> : never

interface RunState {
  readonly id: string
  readonly owner: string
  readonly startedAt: string
  readonly events: Array<RunEvent>
  /** The number of events so far: readers follow its changes. */
  readonly count: SubscriptionRef.SubscriptionRef<number>
  status: RunStatus
  /** The run's capture (set as it is forked): a run still queued at shutdown is interrupted at once. */
  fiber?: Fiber.RuntimeFiber<unknown, unknown>
}

export interface RunView {
  readonly id: string
  readonly status: RunStatus
  /** The digest of the token that started it (null for a stored run); decides who may read it. */
  readonly owner: string | null
  readonly directory: string
  /**
   * The run's review log stamped when the run was looked up (replicas over PostgreSQL: `Runs.get`
   * takes it in the same query as the run's row); `Runs.reviewStamp` gives it. Absent: stamped
   * otherwise (the filesystem's `reviews/`), or not at all.
   */
  readonly reviewsStamp?: string | undefined
}

/** A run found by `Runs.getThen`, and the capture stamps its look-up took ahead (store/PostgresStamps.ts). */
export interface RunFound {
  readonly run: RunView
  readonly taken: PostgresStamps.Taken | undefined
}

const runIdPattern = /^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/

/** A fresh run id: UTC time and 48 random bits, e.g. `20261130T142500Z-3f9a0c1b2d4e`. */
export const newRunId = (now: Date = new Date()): string =>
  `${now.toISOString().replace(/[-:]/g, "").replace(/\.\d+Z$/, "Z")}-${randomBytes(6).toString("hex")}`

export class Runs extends Context.Tag("citegate/server/Runs")<Runs, {
  /** Start capturing the configuration's sources into a new run owned by `owner` (a token digest). */
  readonly start: (owner: string) => Effect.Effect<RunView, NotReady>
  /** A run by id: one this server started, or a directory under the run root. */
  readonly get: (runId: string) => Effect.Effect<RunView, RunNotFound>
  /** `get` of a run it finds at once, without an effect; `undefined` otherwise (then `get` decides). Optional. */
  readonly getNow?: ((runId: string) => RunView | undefined) | undefined
  /**
   * `get` for a caller without a fiber, where finding a run takes a query (PostgreSQL): `found` is
   * told the run (with the capture stamps its look-up took) or `undefined` (then `get` decides). Optional.
   */
  readonly getThen?: ((runId: string, found: (run: RunFound | undefined) => void) => () => void) | undefined
  /** The run's manifest (read through the capture store, never written). */
  readonly manifest: (run: RunView) => Effect.Effect<Manifest.Manifest, RunNotFound>
  /** The run's events after `afterId`, following a live run until its `done` event. */
  readonly events: (run: RunView, afterId: number) => Stream.Stream<RunEvent, RunNotFound>
  /** The run's captures, read-only, for verification (its directory, or its rows in PostgreSQL). */
  readonly store: (run: RunView) => Layer.Layer<CaptureStore.CaptureStore, RunNotFound>
  /** The run's review log, append-only (its `reviews/` directory, or its rows of `citegate_reviews`). */
  readonly reviews: (run: RunView) => Layer.Layer<ReviewLog, RunNotFound>
  /**
   * What the run's review log looks like now, cheaply (no read of it): a stamp that changes with
   * every append, and when the log last changed (ms since the epoch; undefined: no log yet, or a
   * stamp that is exact, with no clock in it, as PostgreSQL's). Undefined (or absent): the log
   * cannot be stamped and is read each time (KeptReviews.ts).
   */
  readonly reviewStamp?: ((run: RunView) => ReviewStamp | undefined) | undefined
  /** Whether new runs can be started here (the run root is writable, or the database answers). */
  readonly ready: Effect.Effect<void, NotReady>
}>() {}

/** The events of a stored run (one not started by a service): one per source from its manifest, then `done`. */
export const manifestEvents = (m: Manifest.Manifest): ReadonlyArray<RunEvent> => {
  const perSource = m.sources.map((s, i): RunEvent =>
    s.status === "captured"
      ? {
        _tag: "captured",
        id: i + 1,
        number: s.number,
        source: s.source,
        captureSha256: s.captureSha256,
        byteLength: s.byteLength,
        accessedAt: s.accessedAt
      }
      : { _tag: "missing", id: i + 1, number: s.number, source: s.source, reason: s.reason }
  )
  const captured = perSource.filter((e) => e._tag === "captured").length
  return [...perSource, { _tag: "done", id: perSource.length + 1, status: "stored", captured, failed: perSource.length - captured }]
}

/** What one server's runs share: its context, the run root, the runs it started and the slots they take. */
interface Local {
  readonly context: Context.Tag.Service<ServerContext>
  readonly root: string
  readonly live: Map<string, RunState>
  /** Runs started and not yet ended, holding a slot or waiting for one: a new run is `queued` when all slots are taken. */
  unfinished: number
  /** Set at shutdown: a queued run that takes a slot after it ends at once, interrupted, having fetched nothing. */
  draining: boolean
  readonly fibers: FiberSet.FiberSet
  readonly slots: Effect.Semaphore
  readonly telemetry: Context.Tag.Service<Telemetry>
  /** The service's verified-capture cache (Server.layer provides one): finished runs' manifests are kept there. */
  readonly cache: Option.Option<Context.Tag.Service<CaptureCache>>
}

const directoryOf = (local: Local, id: string) => path.join(local.root, id)

/** Queued or running: its events may still grow, its manifest may still change. */
const unfinished = (state: RunState) => state.status === "queued" || state.status === "running"

const append = (state: RunState, event: WithoutId<RunEvent>) =>
  Effect.suspend(() => {
    state.events.push({ ...event, id: state.events.length + 1 } as RunEvent)
    return SubscriptionRef.set(state.count, state.events.length)
  })

/** Captures every source into the run's directory, one event each; `aborted` if the stage cannot start. */
const captureSources = (local: Local, state: RunState) =>
  Effect.gen(function*() {
    const { config } = local.context
    const directory = directoryOf(local, state.id)
    yield* append(state, { _tag: "started", runId: state.id, sources: config.sources.length })
    const capturedOrFailed = yield* Effect.gen(function*() {
      const capture = (yield* captureLayer(local.context)).pipe(Layer.provide(CaptureStore.layerFileSystem({ directory })))
      return yield* Effect.flatMap(Capture.Capture, (capture) =>
        capture.captureAll(config.sources, {
          onEvent: (event) => {
            const number = sourceNumber(config, event.source)
            switch (event._tag) {
              case "Started":
                return Effect.void
              case "Captured":
                return Effect.zipRight(Metrics.capture({ bytes: event.ref.byteLength }), append(state, {
                  _tag: "captured",
                  number,
                  source: event.source,
                  captureSha256: event.ref.sha256,
                  byteLength: event.ref.byteLength,
                  accessedAt: event.ref.accessedAt
                }))
              case "Failed":
                return Effect.zipRight(
                  Metrics.capture({ failed: event.error._tag }),
                  append(state, { _tag: "failed", number, source: event.source, error: event.error })
                )
            }
          }
        })).pipe(Effect.provide(capture))
    }).pipe(Effect.either)
    if (Either.isLeft(capturedOrFailed)) {
      yield* Effect.logError("capture run could not start", capturedOrFailed.left)
      yield* append(state, { _tag: "aborted", error: capturedOrFailed.left })
    }
  })

/** One run's capture under a slot, with its span and metrics, always ending with its `done` event. */
const captureRun = (local: Local, state: RunState) =>
  captureSources(local, state).pipe(
    // Active while it holds a slot: the gauge counts runs capturing, not runs waiting for a slot.
    (run) => Effect.acquireUseRelease(Metrics.runActive(1), () => run, () => Metrics.runActive(-1)),
    // Once it holds a slot, it is running; unless the service is shutting down, when it starts nothing.
    (run) => Effect.suspend(() => {
      if (local.draining) return Effect.interrupt
      state.status = "running"
      return run
    }),
    // Counted as waiting (citegate.runs.waiting) until it holds a slot.
    Metrics.waitingForSlot(local.slots.withPermits(1)),
    Effect.withSpan("Runs.capture", { attributes: { [Metrics.attributes.runId]: state.id } }),
    Effect.annotateSpans(Metrics.attributes.runId, state.id),
    Effect.provideService(Telemetry, local.telemetry),
    Effect.onExit((exit) =>
      Effect.suspend(() => {
        local.unfinished--
        state.status = Exit.isSuccess(exit) ? "completed" : "interrupted"
        const captured = state.events.filter((e) => e._tag === "captured").length
        const failed = state.events.filter((e) => e._tag === "failed").length
        return append(state, { _tag: "done", status: state.status === "completed" ? "completed" : "interrupted", captured, failed })
      })
    ),
    Effect.annotateLogs("runId", state.id)
  )

const startRun = (local: Local) =>
  Effect.fn("Runs.start")(function*(owner: string) {
    const id = newRunId()
    // Not recursive, 0700: the id is fresh, so an existing name means a collision, never reuse.
    yield* Effect.tryPromise({
      try: () => fs.mkdir(local.root, { recursive: true, mode: 0o700 }).then(() => fs.mkdir(directoryOf(local, id), { mode: 0o700 })),
      catch: () => new NotReady({ reason: "run-root-unusable" })
    })
    const state: RunState = {
      id,
      owner,
      startedAt: new Date().toISOString(),
      events: [],
      count: yield* SubscriptionRef.make(0),
      // Every unfinished run holds a slot or waits for one: with a slot free, none waits and this one takes it.
      status: local.unfinished < local.context.limits.maxActiveRuns ? "running" : "queued"
    }
    local.unfinished++
    local.live.set(id, state)
    // Requests run uninterruptibly (the platform's choice); the run itself must stay interruptible for shutdown.
    state.fiber = yield* FiberSet.run(local.fibers, Effect.interruptible(captureRun(local, state)))
    yield* Effect.logInfo(state.status === "queued" ? "capture run queued" : "capture run started").pipe(Effect.annotateLogs({ runId: id }))
    return { id, status: state.status, owner, directory: directoryOf(local, id) } satisfies RunView
  })

/** The run `runId`, found now, or `undefined` (not found). */
const runNow = (local: Local) => (runId: string): RunView | undefined => {
  // Ids are checked before any path is built: `..`, separators and dots never reach the file system.
  if (!runIdPattern.test(runId)) return undefined
  const state = local.live.get(runId)
  if (state !== undefined) {
    return { id: runId, status: state.status, owner: state.owner, directory: directoryOf(local, runId) } satisfies RunView
  }
  const directory = directoryOf(local, runId)
  // Synchronous: one syscall of a few microseconds; the promise form showed as 2.6 to 6.5% of the
  // service's busy CPU in profiles (docs/performance.md). Checked on every request, never remembered.
  let stat: ReturnType<typeof lstatSync> | undefined
  try {
    stat = lstatSync(directory, { throwIfNoEntry: false })
  } catch {
    stat = undefined
  }
  if (stat === undefined || !stat.isDirectory()) return undefined
  return { id: runId, status: "stored" as const, owner: null, directory } satisfies RunView
}

const getRun = (local: Local) => {
  const now = runNow(local)
  return Spans.fn("Runs.get")(function*(runId: string) {
    const run = now(runId)
    if (run === undefined) return yield* new RunNotFound({ runId })
    return run
  })
}

/**
 * Built from the run's captures, and kept (`server.cacheBytes`) once it cannot change: a run this
 * server finished (its status read before the manifest is built), or a stored run with every source
 * captured (records are never replaced; a stored run with a missing source may still be being
 * captured by another process, so its manifest is built each time).
 */
const manifestOf = (local: Local, run: RunView) =>
  Effect.suspend(() => {
    const state = local.live.get(run.id)
    const finished = state !== undefined && !unfinished(state)
    const build = Manifest.make(local.context.config).pipe(
      Effect.provide(CaptureStore.layerFileSystem({ directory: run.directory })),
      Effect.catchTag("InvalidRunDirectory", () => Effect.fail(new RunNotFound({ runId: run.id })))
    )
    if (Option.isNone(local.cache)) return build
    return local.cache.value.manifest(run.directory, build, (m) =>
      state === undefined ? m.sources.every((s) => s.status === "captured") : finished)
  })

/** A live run's events after `afterId`, following it until its `done` event. */
const followEvents = (state: RunState, afterId: number): Stream.Stream<RunEvent> => {
  let cursor = Math.max(0, afterId)
  return state.count.changes.pipe(
    Stream.map((count) => {
      const next = state.events.slice(cursor, count)
      cursor = Math.max(cursor, count)
      // Every run ends with `done`, also when shutdown interrupts it: followers always end, also
      // those that resume at or after `done` (an EventSource reconnects with the id of `done`).
      const ended = state.events.at(-1)?._tag === "done" && cursor >= state.events.length
      return { next, ended }
    }),
    Stream.takeUntil((step) => step.ended),
    Stream.mapConcat((step) => step.next)
  )
}

/**
 * On shutdown: stop accepting, interrupt the queued runs at once (they fetch nothing), give running
 * captures the grace period, then interrupt them (each ends with a `done` event of status
 * `interrupted`, so followers end cleanly).
 */
const drain = (local: Local, lifecycle: Context.Tag.Service<Lifecycle>) =>
  Effect.gen(function*() {
    yield* lifecycle.shutdown
    // Nothing new starts: runs still queued end now, interrupted, without fetching anything.
    local.draining = true
    const queued = [...local.live.values()].filter((s) => s.status === "queued")
    yield* Effect.forEach(queued, (s) => s.fiber === undefined ? Effect.void : Fiber.interrupt(s.fiber), { concurrency: "unbounded", discard: true })
    const running = [...local.live.values()].filter(unfinished)
    // Finalizers run uninterruptibly: the wait is made interruptible so that the grace period can end it.
    yield* Effect.forEach(running, (s) => s.count.changes.pipe(Stream.takeUntil(() => !unfinished(s)), Stream.runDrain), {
      concurrency: "unbounded",
      discard: true
    }).pipe(Effect.interruptible, Effect.timeoutOption(local.context.limits.shutdownGraceMs))
    yield* FiberSet.clear(local.fibers)
    // A run forked as the shutdown began may be interrupted before its first step, so that its own
    // `done` never comes: it ends here, so that its followers end too.
    yield* Effect.forEach([...local.live.values()].filter(unfinished), (s) =>
      Effect.suspend(() => {
        local.unfinished--
        s.status = "interrupted"
        return append(s, { _tag: "done", status: "interrupted", captured: 0, failed: 0 })
      }), { discard: true })
  })

/** Ready only when new runs can be created under the run root. */
const readyAt = (root: string) =>
  Effect.flatMap(
    Effect.promise(() =>
      fs.mkdir(root, { recursive: true, mode: 0o700 }).then(() => fs.access(root, fs.constants.W_OK)).then(() => true, () => false)
    ),
    (usable) => usable ? Effect.void : Effect.fail(new NotReady({ reason: "run-root-unusable" }))
  )

/**
 * The stamp of a run directory's `reviews/` (ReviewFilesystem.ts): every append links a new name
 * into it, which changes its modification and change times. Not a directory (a symlink, say) or
 * unreadable: undefined, so the log is read each time and reports its own error.
 */
const reviewStampNow = (directory: string): ReviewStamp | undefined => {
  try {
    const stat = lstatSync(path.join(directory, ReviewFilesystem.reviewsDirectory), { bigint: true, throwIfNoEntry: false })
    if (stat === undefined) return { stamp: "absent", changedAt: undefined }
    if (!stat.isDirectory()) return undefined
    return {
      stamp: `${stat.dev}:${stat.ino}:${stat.mtimeNs}:${stat.ctimeNs}:${stat.size}:${stat.nlink}`,
      changedAt: Math.max(Number(stat.mtimeMs), Number(stat.ctimeMs))
    }
  } catch {
    return undefined
  }
}

/** Run directories whose review stamp a verification thread shares (internal/Arrivals.ts) at most. */
const maxSharedReviewStamps = 1024

const sharedReviewStamps = Arrivals.sharing<string, ReviewStamp>(maxSharedReviewStamps)

/**
 * `reviewStampNow` of the run's directory: a fresh `lstat`, or in a verification thread one it took
 * after the request being verified arrived (internal/Arrivals.ts).
 */
export const reviewStampOf = (run: RunView): ReviewStamp | undefined => sharedReviewStamps(run.directory, reviewStampNow)

export const make = Effect.gen(function*() {
  const context = yield* ServerContext
  const lifecycle = yield* Lifecycle
  const local: Local = {
    context,
    root: path.resolve(context.runRoot),
    live: new Map(),
    unfinished: 0,
    draining: false,
    fibers: yield* FiberSet.make(),
    slots: yield* Effect.makeSemaphore(context.limits.maxActiveRuns),
    // Runs record their metrics under the service's telemetry (off when the service has none).
    telemetry: Option.getOrElse(yield* Effect.serviceOption(Telemetry), () => Telemetry.off),
    cache: yield* Effect.serviceOption(CaptureCache)
  }
  yield* Effect.provideService(Metrics.runsAtZero, Telemetry, local.telemetry)
  const manifest = (run: RunView) => manifestOf(local, run)

  const events = (run: RunView, afterId: number): Stream.Stream<RunEvent, RunNotFound> => {
    const state = local.live.get(run.id)
    if (state !== undefined) return followEvents(state, afterId)
    // A stored run's events: one per source from its manifest, then `done`.
    return Stream.flatMap(Effect.map(manifest(run), manifestEvents), (all) => Stream.fromIterable(all.filter((e) => e.id > afterId)))
  }

  yield* Effect.addFinalizer(() => drain(local, lifecycle))

  const store = (run: RunView) =>
    CaptureStore.layerFileSystem({ directory: run.directory }).pipe(Layer.mapError(() => new RunNotFound({ runId: run.id })))
  const reviews = (run: RunView) =>
    ReviewFilesystem.layer({ directory: run.directory }).pipe(Layer.mapError(() => new RunNotFound({ runId: run.id })))
  const reviewStamp = reviewStampOf

  return Runs.of({ start: startRun(local), get: getRun(local), getNow: runNow(local), manifest, events, store, reviews, reviewStamp, ready: readyAt(local.root) })
})

export const layer: Layer.Layer<Runs, never, ServerContext | Lifecycle> = Layer.scoped(Runs, make)

