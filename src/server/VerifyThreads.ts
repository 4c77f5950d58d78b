/**
 * Verification threads (`server.verifyThreads`): plain report requests that the verify lane
 * (VerifyLane.ts) would verify on the main thread are verified on one of N `worker_threads`
 * instead (VerifyWorker.ts), so that the service's verification work spreads over cores while the
 * main thread keeps HTTP, authentication, the run look-up, the body read, the deadline, the
 * response write and the access log.
 *
 * The least busy thread takes a request; when every thread already holds `maxQueued` requests the
 * main thread verifies it itself, as without threads (the queue is bounded, and a request waiting
 * for a thread waits under the request deadline like any other). A thread that dies answers none of
 * its open requests: each is answered by the main thread's own path, and the thread is replaced
 * (unless it died before answering anything: then its slot stays empty, and the main thread does
 * its share). Closing the pool waits for open requests (up to the grace) and ends the threads.
 *
 * @since 0.5.0
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Runtime from "effect/Runtime"
import * as Schema from "effect/Schema"
import * as fs from "node:fs"
import { fileURLToPath } from "node:url"
import { Worker } from "node:worker_threads"
import type { PipelineConfig, ResolvedServer } from "../Config.js"
import { PipelineConfig as PipelineConfigSchema } from "../Config.js"
import type { Mode } from "../Domain.js"
import * as Arrivals from "../internal/Arrivals.js"
import { newestUnder } from "../internal/newestUnder.js"
import { OpenJobs } from "../internal/OpenJobs.js"
import { Judge } from "../review/Judge.js"
import type { RunView } from "./Runs.js"
import type { Done, Job, WorkerInput } from "./VerifyWorker.js"

/** Requests one thread holds at most (being verified or waiting for it); past it the main thread verifies. */
export const maxQueued = 256

/** Cells of a thread's open-job table: twice `maxQueued`, so that an id's cell is almost always free (a held one is skipped). */
const openCells = 2 * maxQueued

/** How long `make` waits for the threads to build their services (module loading, the configuration decoded). */
export const startMs = 30_000

/**
 * The thread's entry point: from `dist/` (and from the bundled CLI in `dist/bundle/`) the bundle
 * `dist/bundle/verify-worker.cjs`, else the compiled `dist/server/VerifyWorker.js`. From the
 * TypeScript sources (tests) that bundle when it is newer than every source file, else undefined.
 */
export const entry = (): string | undefined => {
  const here = import.meta.url
  if (!here.endsWith(".ts")) {
    for (const relative of ["../bundle/verify-worker.cjs", "../server/VerifyWorker.js"]) {
      const file = new URL(relative, here)
      if (fs.existsSync(file)) return fileURLToPath(file)
    }
    return undefined
  }
  const bundle = fileURLToPath(new URL("../../dist/bundle/verify-worker.cjs", here))
  const built = fs.existsSync(bundle) ? fs.statSync(bundle).mtimeMs : -1
  return built >= newestUnder(fileURLToPath(new URL("../", here))) ? bundle : undefined
}

interface Slot {
  readonly index: number
  worker: Worker | undefined
  /** Open requests: their callbacks by job id (not a `Map`: internal/OpenJobs.ts says why). Ids only grow, across replaced threads too. */
  readonly open: OpenJobs<(json: string | undefined) => void>
  /** Requests answered since the thread started (a thread that died before any is not replaced). */
  answered: number
  /** Requests handed to the thread, counted as they are (internal/Arrivals.ts), shared with it and its replacements. */
  readonly arrivals: Int32Array
}

export interface PoolOptions {
  readonly threads: number
  readonly config: PipelineConfig
  readonly configFile: string
  readonly runRoot: string
  /** `server.cacheBytes`: each thread has a cache of this size of its own. */
  readonly cacheBytes: number
  /** How long closing waits for open requests before it ends the threads (`server.shutdownGraceMs`). */
  readonly graceMs: number
}

export interface Pool {
  /**
   * Hands a request (its body's text) to the least busy thread: `done` gets the route's JSON text, or
   * `undefined` (the main thread answers). `false` when no thread takes it (all full, none alive, closing).
   */
  readonly verify: (run: RunView, mode: Mode, text: string, done: (json: string | undefined) => void) => boolean
  /** The threads alive now (tests end one to see the pool recover). */
  readonly workers: () => ReadonlyArray<Worker>
  /** Each thread's arrival counter, slot by slot (internal/Arrivals.ts; tests). */
  readonly arrivals: () => ReadonlyArray<Int32Array>
}

/** Pools open in this process (tests reach the service's own through it). */
export const opened = new Set<Pool>()

/** Takes a thread's answers and its end; `gone` runs once, when it errs or exits. */
const watch = (worker: Worker, slot: Slot, onReady: (ready: boolean) => void, gone: (code: number | undefined) => void) => {
  worker.on("message", (message: Done) => {
    if (message.id === -1) return onReady(message.ready === true)
    const done = slot.open.take(message.id)
    if (done === undefined) return
    slot.answered++
    done(message.json)
  })
  let ended = false
  const end = (code: number | undefined) => {
    if (ended) return
    ended = true
    gone(code)
  }
  worker.once("error", () => end(undefined)).once("exit", (code) => end(code))
}

/**
 * The pool, its threads ended when the scope closes (after its open requests, up to `graceMs`).
 * Waits for every thread to build its services (`verification threads ready`, with how many did);
 * logs a thread's unexpected end.
 */
export const make = (options: PoolOptions) =>
  Effect.gen(function*() {
    const file = entry()
    if (file === undefined) return yield* Effect.dieMessage("the verification thread's entry point is not built (npm run build)")
    const runFork = Runtime.runFork(yield* Effect.runtime<never>())
    const input: WorkerInput = {
      kind: "citegate/verify-thread",
      config: Schema.encodeSync(PipelineConfigSchema)(options.config),
      configFile: options.configFile,
      runRoot: options.runRoot,
      cacheBytes: options.cacheBytes
    }
    let closing = false
    let rotation = 0
    const slots: Array<Slot> = []
    // Each thread's first word (its services built, or not); `make` waits for every one.
    const starting = new Set<Slot>()
    let ready = 0
    let started: (() => void) | undefined
    const start = (slot: Slot) => {
      const worker = new Worker(file, { workerData: { ...input, arrivals: slot.arrivals } satisfies WorkerInput })
      // An idle thread does not keep the process alive; an open request keeps its socket anyway.
      worker.unref()
      slot.worker = worker
      slot.answered = 0
      starting.add(slot)
      const onReady = (built: boolean) => {
        if (built) ready++
        else {
          // Its services could not be built: ended, and its slot left empty (the main thread does its share).
          runFork(Effect.logWarning("verification thread could not start").pipe(Effect.annotateLogs({ thread: slot.index })))
          void worker.terminate()
        }
        if (starting.delete(slot) && starting.size === 0) started?.()
      }
      watch(worker, slot, onReady, (code) => {
        slot.worker = undefined
        if (starting.delete(slot) && starting.size === 0) started?.()
        // Its open requests are the main thread's to answer, as they would have been without threads.
        for (const done of slot.open.takeAll()) done(undefined)
        if (closing) return
        const replaced = slot.answered > 0
        runFork(Effect.logWarning("verification thread ended").pipe(Effect.annotateLogs({ thread: slot.index, code: code ?? "error", replaced })))
        if (replaced) start(slot)
      })
    }
    for (let index = 0; index < options.threads; index++) {
      const slot: Slot = { index, worker: undefined, open: new OpenJobs(openCells), answered: 0, arrivals: Arrivals.makeCounter() }
      slots.push(slot)
      start(slot)
    }
    // Bounded: a thread that says nothing within it takes its requests once it does (they wait in its queue).
    yield* Effect.async<void>((resume) => {
      started = () => resume(Effect.void)
      if (starting.size === 0) started()
    }).pipe(Effect.timeoutOption(startMs))
    started = undefined
    yield* Effect.logInfo("verification threads ready").pipe(
      Effect.annotateLogs({ threads: ready })
    )
    const verify: Pool["verify"] = (run, mode, text, done) => {
      if (closing) return false
      // Round robin among the least busy: requests one after another reach every thread (each fills its cache).
      let best: Slot | undefined
      const first = rotation++ % slots.length
      for (let i = 0; i < slots.length; i++) {
        const slot = slots[(first + i) % slots.length]!
        if (slot.worker !== undefined && slot.open.size < maxQueued && (best === undefined || slot.open.size < best.open.size)) best = slot
      }
      if (best === undefined) return false
      // Fewer than `maxQueued` of the `openCells` cells are held: there is a free one.
      const id = best.open.open(done)
      if (id === -1) return false
      // Strings, copied into the message (VerifyWorker.ts says why not transferred bytes).
      best.worker!.postMessage({ id, arrival: Arrivals.arrive(best.arrivals), run: { ...run }, mode, text } satisfies Job)
      return true
    }
    const pool: Pool = {
      verify,
      workers: () => slots.flatMap((slot) => slot.worker === undefined ? [] : [slot.worker]),
      arrivals: () => slots.map((slot) => slot.arrivals)
    }
    opened.add(pool)
    yield* Effect.addFinalizer(() =>
      Effect.promise(async () => {
        closing = true
        opened.delete(pool)
        const deadline = Date.now() + options.graceMs
        while (slots.some((slot) => slot.open.size > 0) && Date.now() < deadline) {
          await new Promise((resolve) => setTimeout(resolve, 10))
        }
        await Promise.all(slots.map((slot) => slot.worker?.terminate()))
      })
    )
    return pool
  })

/**
 * The service's pool, or `undefined`: `server.verifyThreads` is 0, or the judge is on (the threads
 * have none: its requests stay on the main thread).
 */
export const forService = (
  service: { readonly config: PipelineConfig; readonly configFile: string; readonly runRoot: string },
  limits: ResolvedServer
) =>
  Effect.gen(function*() {
    if (limits.verifyThreads === 0 || Option.isSome(yield* Effect.serviceOption(Judge))) return undefined
    return yield* make({
      threads: limits.verifyThreads,
      config: service.config,
      configFile: service.configFile,
      runRoot: service.runRoot,
      cacheBytes: limits.cacheBytes,
      graceMs: limits.shutdownGraceMs
    })
  })
