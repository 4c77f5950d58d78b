/**
 * Where extraction runs: in separate Node processes (a small pool, one job
 * at a time each), never on the capturing process's thread. parse5 is
 * synchronous and a worker thread's `resourceLimits` are no isolation
 * boundary (a worker isolate that runs out of memory can abort the whole
 * process, and ArrayBuffers are not counted at all), so a hostile body is
 * given a process of its own, bounded three ways:
 *
 * - a deadline: interrupting a job (the capture's one deadline) kills its
 *   process (SIGKILL), wherever it is, synchronous parser or not;
 * - a heap limit (`--max-old-space-size`): V8 aborts that process, not this one;
 * - a resident-memory limit (`memoryLimit`, all threads and ArrayBuffers
 *   included), watched from here in `/proc` every few milliseconds: past it,
 *   the process is killed.
 *
 * A process killed for memory, or aborted by V8, is `ExtractionTooLarge`
 * (`cap: "memory"`); one that dies otherwise is `ExtractionFailed`
 * (`worker-failed`). Either way this process carries on. A process that
 * answered is kept for the next job (its garbage collected first); one that
 * died or was killed is not reused. See docs/performance.md for the cost.
 *
 * `text/plain` is never parsed (its text is the body), so it is decoded here.
 */
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import { type ChildProcess, fork } from "node:child_process"
import * as fs from "node:fs"
import { createRequire } from "node:module"
import { fileURLToPath, pathToFileURL } from "node:url"
import { ExtractionFailed, ExtractionTooLarge } from "../Errors.js"
import { newestUnder } from "../internal/newestUnder.js"
import * as Extraction from "./Extraction.js"
import type { Extracted, ExtractionError, ExtractionLimits } from "./Records.js"
import { ExtractionErrorSchema, type Job, type Reply } from "./Protocol.js"

const MiB = 1024 * 1024

/**
 * The resident-memory limit of one extraction process, in bytes: 256 MiB
 * (Node, the parsers, pdf.js) plus 64 times the capture's `maxBytes` (a parsed
 * HTML tree or a PDF's decoded streams take many times the body's size). At
 * the default 8 MiB `maxBytes` that is 768 MiB.
 */
export const memoryLimit = (maxBytes: number): number => 256 * MiB + 64 * maxBytes

/** The V8 heap limit of one extraction process: the memory limit less room for Node itself. */
export const heapLimitMb = (maxBytes: number): number => Math.max(64, Math.floor(memoryLimit(maxBytes) / MiB) - 64)

/** How often the resident memory of a running extraction is read. */
export const watchIntervalMs = 10

/** The media types whose bodies are parsed, and so extracted in a separate process. */
const formatOf = (mediaType: string): "html" | "markdown" | "pdf" | undefined => {
  switch (mediaType) {
    case "text/html":
    case "application/xhtml+xml":
      return "html"
    case "text/markdown":
      return "markdown"
    case "application/pdf":
      return "pdf"
    default:
      return undefined
  }
}

let fromSources: { readonly file: string; readonly execArgv: ReadonlyArray<string> } | undefined

/**
 * The child's entry point and the flags it needs. From `dist/` (and from the
 * bundled CLI in `dist/bundle/`) it is the bundle `dist/bundle/extract-child.cjs`
 * (it starts 3 times faster than the compiled modules), else the compiled
 * `dist/extract/Child.js`. From the TypeScript sources (tests, `tsx` scripts)
 * it is that bundle too when it is newer than every source file (the test
 * setup builds it), else `Child.ts` loaded through tsx.
 */
const entry = (): { readonly file: string; readonly execArgv: ReadonlyArray<string> } => {
  const here = import.meta.url
  if (!here.endsWith(".ts")) {
    for (const relative of ["../bundle/extract-child.cjs", "../extract/Child.js"]) {
      const file = new URL(relative, here)
      if (fs.existsSync(file)) return { file: fileURLToPath(file), execArgv: [] }
    }
  }
  if (fromSources !== undefined) return fromSources
  const bundle = fileURLToPath(new URL("../../dist/bundle/extract-child.cjs", here))
  const built = fs.existsSync(bundle) ? fs.statSync(bundle).mtimeMs : -1
  if (built >= newestUnder(fileURLToPath(new URL("../", here)))) return (fromSources = { file: bundle, execArgv: [] })
  const require = createRequire(here)
  const tsx = pathToFileURL(require.resolve("tsx")).href.replace(/loader\.cjs$/, "loader.mjs")
  return (fromSources = { file: fileURLToPath(new URL("./Child.ts", here)), execArgv: ["--import", tsx] })
}

/** Resident memory of a process in bytes, from `/proc` (Linux); undefined where there is no `/proc`. */
const residentBytes = (pid: number): number | undefined => {
  try {
    const status = fs.readFileSync(`/proc/${pid}/status`, "latin1")
    const match = /^VmRSS:\s+(\d+) kB$/m.exec(status)
    return match === null ? undefined : Number(match[1]) * 1024
  } catch {
    return undefined
  }
}

interface Child {
  readonly process: ChildProcess
  /** Resolves when the child has loaded its modules and listens; rejects if it dies first. */
  readonly ready: Promise<void>
  /** The last few KiB the child wrote to stderr: how V8 says it ran out of heap. */
  stderr: string
  jobs: number
  /** Whether its last job was answered: only then is it reused. */
  answered: boolean
}

/** Why a child process gave no reply. */
interface Death {
  readonly code: number | null
  readonly signal: NodeJS.Signals | null
  readonly killedForMemory: boolean
  readonly stderr: string
}

const outOfMemory = (death: Death) =>
  death.killedForMemory || /heap out of memory|Reached heap limit|Allocation failed/i.test(death.stderr)

/** A process that answered this many jobs is retired (its heap has grown and fragmented). */
const maxJobsPerChild = 64

/**
 * @since 0.3.0
 * @category models
 */
export interface Runner {
  /** `Extraction.extract`, in an extraction process under the limits above. */
  readonly extract: (
    source: string,
    contentType: string,
    body: Uint8Array,
    limits: ExtractionLimits
  ) => Effect.Effect<Extracted, ExtractionError>
  /** Starts one extraction process now, if none is running or idle, so its start-up overlaps a fetch. */
  readonly warm: Effect.Effect<void>
}

/** The processes of one runner: the idle ones ready for a job, and every one alive. */
interface Pool {
  /** The resident-memory limit of each process, in bytes. */
  readonly limit: number
  readonly heapMb: number
  readonly idle: Array<Child>
  readonly live: Set<Child>
}

/** Starts one extraction process; it leaves the pool when it exits. */
const spawn = (pool: Pool): Child => {
  const { execArgv, file } = entry()
  const process = fork(file, [], {
    execArgv: [...execArgv, `--max-old-space-size=${pool.heapMb}`, "--expose-gc"],
    serialization: "advanced",
    stdio: ["ignore", "ignore", "pipe", "ipc"]
  })
  const child: Child = { process, stderr: "", jobs: 0, answered: false, ready: undefined as unknown as Promise<void> }
  process.stderr!.setEncoding("utf8")
  process.stderr!.on("data", (chunk: string) => {
    child.stderr = (child.stderr + chunk).slice(-4096)
  })
  // An unanswered `ready` is handled by the job that waits for it; never an unhandled rejection.
  const ready = new Promise<void>((resolve, reject) => {
    const onMessage = (message: Reply) => {
      if (message._tag !== "ready") return
      process.off("message", onMessage)
      resolve()
    }
    process.on("message", onMessage)
    process.once("exit", (code, signal) => reject({ code, signal }))
  })
  // A failed spawn or send is an 'error' event; unheard, it would throw in this process. The child's
  // end (always following) is what answers the job.
  process.on("error", () => process.kill("SIGKILL"))
  ready.catch(() => undefined)
  Object.assign(child, { ready })
  pool.live.add(child)
  process.once("exit", () => {
    pool.live.delete(child)
    const at = pool.idle.indexOf(child)
    if (at >= 0) pool.idle.splice(at, 1)
  })
  return child
}

/** Sends one job to a child and waits for its reply, its death, or interruption (which kills it). */
const runOn = (child: Child, job: Job, limit: number) =>
  Effect.async<Reply, Death>((resume) => {
    let killedForMemory = false
    let done = false
    const finish = () => {
      done = true
      clearInterval(watch)
      child.process.off("message", onMessage)
      child.process.off("close", onExit)
    }
    const onMessage = (reply: Reply) => {
      if (reply._tag === "ready") return
      finish()
      resume(Effect.succeed(reply))
    }
    // "close", not "exit": by then stderr is read to its end, with V8's line if it ran out of heap.
    const onExit = (code: number | null, signal: NodeJS.Signals | null) => {
      finish()
      resume(Effect.fail({ code, signal, killedForMemory, stderr: child.stderr }))
    }
    const watch = setInterval(() => {
      const resident = residentBytes(child.process.pid!)
      if (resident !== undefined && resident > limit) {
        killedForMemory = true
        child.process.kill("SIGKILL")
      }
    }, watchIntervalMs)
    child.process.on("message", onMessage)
    child.process.once("close", onExit)
    // Ended already (between jobs): no "close" will come.
    if (child.process.exitCode !== null || child.process.signalCode !== null) {
      onExit(child.process.exitCode, child.process.signalCode)
      return
    }
    child.ready.then(
      () => {
        if (!done) child.process.send(job, (error) => error !== null && error !== undefined && child.process.kill("SIGKILL"))
      },
      () => undefined // the close handler answers
    )
    return Effect.sync(() => {
      if (!done) finish()
      child.process.kill("SIGKILL")
    })
  })

const decodeError = Schema.decodeUnknownSync(ExtractionErrorSchema)

type Format = "html" | "markdown" | "pdf"

/** A child that died without a reply: out of memory (`ExtractionTooLarge`) or otherwise (`worker-failed`). */
const deathError = (death: Death, job: Job, format: Format, limit: number): ExtractionError =>
  outOfMemory(death)
    ? new ExtractionTooLarge({ source: job.source, format, cap: "memory", limit })
    : new ExtractionFailed({
      source: job.source,
      format,
      reason: "worker-failed",
      detail: `the extraction process exited (${death.signal ?? `code ${death.code}`})`
    })

/** A child's reply as the job's outcome; the child is marked answered when it gave text or a typed error. */
const replyOutcome = (child: Child, reply: Reply, job: Job, format: Format): Effect.Effect<Extracted, ExtractionError> => {
  child.jobs++
  switch (reply._tag) {
    case "extracted":
      child.answered = true
      return Effect.succeed(reply.extracted)
    case "failed":
      child.answered = true
      return Effect.fail(decodeError(reply.error))
    default:
      return Effect.fail(
        new ExtractionFailed({
          source: job.source,
          format,
          reason: "worker-failed",
          detail: reply._tag === "defect" ? reply.detail : "unexpected reply"
        })
      )
  }
}

/** Runs one job in an idle process (or a new one), then keeps the process for the next job or kills it. */
const extractIn = (pool: Pool, format: Format, job: Job) =>
  Effect.acquireUseRelease(
    Effect.sync(() => {
      const child = pool.idle.pop() ?? spawn(pool)
      child.answered = false
      return child
    }),
    (child) =>
      Effect.flatMap(Effect.either(runOn(child, job, pool.limit)), (outcome): Effect.Effect<Extracted, ExtractionError> =>
        outcome._tag === "Left"
          ? Effect.fail(deathError(outcome.left, job, format, pool.limit))
          : replyOutcome(child, outcome.right, job, format)),
    (child) =>
      Effect.sync(() => {
        // Kept only if it answered (text or a typed error); interrupted or dead, it is killed (a no-op if dead).
        if (child.answered && child.jobs < maxJobsPerChild && pool.live.has(child)) pool.idle.push(child)
        else child.process.kill("SIGKILL")
      })
  )

/**
 * A runner whose processes live in the given scope: closing it kills them.
 * `size` processes at most run at once (the capture's concurrency); none is
 * started before the first job or `warm`.
 *
 * @since 0.3.0
 * @category constructors
 */
export const make = (options: {
  readonly maxBytes: number
  readonly size: number
  /** The resident-memory limit in bytes, instead of `memoryLimit(maxBytes)` (tests reach a smaller one sooner). */
  readonly memoryLimit?: number
}): Effect.Effect<Runner, never, Scope.Scope> =>
  Effect.gen(function*() {
    const limit = options.memoryLimit ?? memoryLimit(options.maxBytes)
    const pool: Pool = { limit, heapMb: Math.max(64, Math.floor(limit / MiB) - 64), idle: [], live: new Set() }
    const slots = yield* Effect.makeSemaphore(options.size)

    yield* Effect.addFinalizer(() =>
      Effect.sync(() => {
        for (const child of pool.live) child.process.kill("SIGKILL")
        pool.live.clear()
        pool.idle.length = 0
      })
    )

    const extract: Runner["extract"] = (source, contentType, body, limits) =>
      Effect.suspend(() => {
        const format = formatOf(Extraction.parseContentType(contentType).mediaType)
        if (format === undefined) return Extraction.extract(source, contentType, body, limits)
        return slots.withPermits(1)(extractIn(pool, format, { source, contentType, body, limits }))
      })

    const warm = Effect.sync(() => {
      if (pool.live.size === 0) pool.idle.push(spawn(pool))
    })

    return { extract, warm }
  })
