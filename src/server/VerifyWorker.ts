/**
 * A verification thread (`server.verifyThreads`, VerifyThreads.ts): the report route's responder
 * (`Handlers.ReportResponder`) with Gates, review logs, a run store over the run root and a
 * verified-capture cache of its own, built from the service's configuration as the main thread
 * builds them. It answers one kind of message, a plain report request's run, mode and body text, with
 * the route's JSON text, or with nothing: then the main thread answers the request
 * on its own path, from the start, exactly as it would without threads (a run gone, a defect, a
 * line logged on the way: every answer but a quiet 200 stays the main thread's).
 *
 * Both travel as strings, copied into the message: a transferred `ArrayBuffer` each way (the body
 * there, the UTF-8 answer back) was memory outside the JavaScript heap on every request, and its
 * growth made the main thread run a full collection about every half second under load (6–15 ms
 * each, with marking steps of up to 20 ms). A string is an ordinary young object, gone at the next
 * scavenge (docs/performance.md, 2026-12-03, sixth round).
 *
 * @since 0.5.0
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as ManagedRuntime from "effect/ManagedRuntime"
import * as Schema from "effect/Schema"
import { isMainThread, parentPort, workerData } from "node:worker_threads"
import { PipelineConfig, resolvedServer } from "../Config.js"
import * as Arrivals from "../internal/Arrivals.js"
import type { Mode } from "../Domain.js"
import * as CaptureCache from "../verify/CaptureCache.js"
import { Lifecycle, ServerContext } from "./Context.js"
import { ReportResponder, ReportResponderLive } from "./Handlers.js"
import { layer as runsLayer, type RunView } from "./Runs.js"

/** What the main thread gives a verification thread when it starts it. */
export interface WorkerInput {
  readonly kind: "citegate/verify-thread"
  /** The service's configuration, encoded (`PipelineConfig`): decoded here into the same value. */
  readonly config: unknown
  readonly configFile: string
  readonly runRoot: string
  /** This thread's verified-capture cache (`server.cacheBytes`: each thread has one of that size). */
  readonly cacheBytes: number
  /** The requests handed to this thread, counted by the main thread (internal/Arrivals.ts); absent in the pool's own input. */
  readonly arrivals?: Int32Array | undefined
}

/** One request: `text` is the body as the main thread decodes it without threads (invalid UTF-8 replaced, a BOM kept). */
export interface Job {
  readonly id: number
  /** Its count among the requests handed to this thread (internal/Arrivals.ts). */
  readonly arrival: number
  readonly run: RunView
  readonly mode: Mode
  readonly text: string
}

/**
 * The answer to job `id`: the route's JSON text, or `undefined`: the main
 * thread answers. `id` -1: the thread is ready (its services built), or could not build them (`json` absent either way).
 */
export interface Done {
  readonly id: number
  readonly json: string | undefined
  readonly ready?: boolean | undefined
}

/** Nothing of this thread drains or shuts down: the main thread's lifecycle does, and then ends it. */
const lifecycle = Layer.succeed(Lifecycle, {
  draining: Effect.never,
  isDraining: Effect.succeed(false),
  openRequests: Effect.succeed(0),
  shutdown: Effect.void
})

/** The responder over the same configuration, run root and cache size as the main thread's. */
export const responderLayer = (input: WorkerInput) =>
  Layer.unwrapEffect(Effect.map(Schema.decodeUnknown(PipelineConfig)(input.config), (config) => {
    const context = Layer.succeed(ServerContext, {
      config,
      configFile: input.configFile,
      runRoot: input.runRoot,
      limits: resolvedServer(config),
      allowLoopbackHttp: false
    })
    const base = Layer.mergeAll(context, lifecycle, CaptureCache.layer({ maxBytes: input.cacheBytes }))
    return ReportResponderLive.pipe(Layer.provideMerge(runsLayer), Layer.provide(base))
  }))

/** Serves jobs from `port` until the thread is ended. */
const serve = (input: WorkerInput, port: NonNullable<typeof parentPort>) => {
  // Nothing is printed from here: a line logged on the way makes the main thread answer instead (below).
  Arrivals.attach(input.arrivals)
  const runtime = ManagedRuntime.make(Layer.merge(responderLayer(input), Logger.remove(Logger.defaultLogger)))
  const answer = (id: number, json: string | undefined) => {
    port.postMessage({ id, json } satisfies Done)
  }
  // The responder once built; jobs that arrive before wait for it in `general`.
  let responder: Context.Tag.Service<ReportResponder> | undefined
  runtime.runtime().then((built) => {
    responder = Context.get(built.context, ReportResponder)
    port.postMessage({ id: -1, json: undefined, ready: true } satisfies Done)
  }, () => port.postMessage({ id: -1, json: undefined, ready: false } satisfies Done))
  /** Anything but a warm answer: the responder's effect, with a logger that notes any line on the way. */
  const general = (job: Job) => {
    let logged = false
    const noted = Logger.add(Logger.make(() => {
      logged = true
    }))
    const program = Effect.flatMap(ReportResponder, (responder) => responder.respond(job.run, job.mode, job.text))
    runtime.runPromiseExit(Effect.provide(program, noted)).then(
      (exit) => answer(job.id, Exit.isSuccess(exit) && !logged ? exit.value : undefined),
      () => answer(job.id, undefined)
    )
  }
  port.on("message", (job: Job) => {
    const built = responder
    if (built === undefined) return general(job)
    let warm: string | undefined
    try {
      warm = Arrivals.lending(job.arrival, () => built.respondWarm(job.run, job.mode, job.text))
    } catch {
      // A defect: the main thread answers (its 500 and its log line).
      return answer(job.id, undefined)
    }
    if (warm === undefined) return general(job)
    answer(job.id, warm)
  })
}

if (!isMainThread && parentPort !== null && (workerData as WorkerInput | undefined)?.kind === "citegate/verify-thread") {
  serve(workerData as WorkerInput, parentPort)
}
