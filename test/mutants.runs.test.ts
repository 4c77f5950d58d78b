/**
 * The run service (Runs) without HTTP, over a real loopback source server and a real run root:
 * run ids and which names are runs, the events of a live run (each field), of a run that could
 * not start (an unusable CA file), of a stored run; following and resuming; the run-directory
 * permissions; the limit on active runs; and shutdown (a run that ends within the grace period
 * completes, one that does not is interrupted). The lifecycle is the plain Deferred the server
 * uses; the capture, the store and the file system are real.
 */
import { assert, describe, it } from "@effect/vitest"
import { Chunk, Context, Deferred, Effect, Exit, Fiber, Layer, Scope, Stream } from "effect"
import * as fsp from "node:fs/promises"
import * as path from "node:path"
import * as Config from "../src/Config.js"
import { NotReady, RunNotFound } from "../src/Errors.js"
import { Lifecycle, ServerContext } from "../src/server/Context.js"
import * as Runs from "../src/server/Runs.js"
import { salesDigest, salesText, sources } from "./serverSupport.js"
import { tempDirectory } from "./support.js"

/** The Runs service over `runRoot`, in its own scope (closing it is the server's shutdown). */
const runsOver = (options: {
  readonly sources: ReadonlyArray<string>
  readonly runRoot: string
  readonly configFile: string
  readonly capture?: object
  readonly server?: object
}) =>
  Effect.gen(function*() {
    const config = yield* Config.decode({
      sources: options.sources,
      labels: ["x"],
      capture: { timeoutMs: 10_000, ...options.capture },
      server: { tokens: [], ...options.server }
    })
    const draining = yield* Deferred.make<void>()
    const lifecycle = Lifecycle.of({
      draining: Deferred.await(draining),
      isDraining: Deferred.isDone(draining),
      openRequests: Effect.succeed(0),
      shutdown: Effect.asVoid(Deferred.succeed(draining, undefined))
    })
    const scope = yield* Scope.make()
    yield* Effect.addFinalizer(() => Scope.close(scope, Exit.void))
    const context = yield* Layer.buildWithScope(
      Runs.layer.pipe(
        Layer.provide(Layer.succeed(ServerContext, {
          config,
          configFile: options.configFile,
          runRoot: options.runRoot,
          limits: Config.resolvedServer(config),
          allowLoopbackHttp: true
        })),
        Layer.provide(Layer.succeed(Lifecycle, lifecycle))
      ),
      scope
    )
    return { runs: Context.get(context, Runs.Runs), close: Scope.close(scope, Exit.void), draining }
  })

const collect = (stream: Stream.Stream<Runs.RunEvent, RunNotFound>) => Effect.map(Stream.runCollect(stream), Chunk.toArray)

const setup = Effect.gen(function*() {
  const { release, server } = yield* sources
  const work = yield* tempDirectory
  return {
    release,
    sales: server.url("/q3-sales.txt"),
    missing: server.url("/q4-outlook.txt"),
    held: server.url("/held.txt"),
    work,
    runRoot: path.join(work, "runs"),
    configFile: path.join(work, "pipeline.json")
  }
})

describe("run ids", () => {
  it.effect("newRunId: the UTC time to the second, `Z`, a dash and 12 random hex digits", () =>
    Effect.sync(() => {
      const at = new Date("2026-11-30T14:25:07.123Z")
      const a = Runs.newRunId(at)
      const b = Runs.newRunId(at)
      assert.match(a, /^20261130T142507Z-[0-9a-f]{12}$/)
      assert.match(b, /^20261130T142507Z-[0-9a-f]{12}$/)
      assert.notStrictEqual(a, b)
      assert.match(Runs.newRunId(new Date("2027-01-02T03:04:05.000Z")), /^20270102T030405Z-[0-9a-f]{12}$/)
      assert.match(Runs.newRunId(), /^\d{8}T\d{6}Z-[0-9a-f]{12}$/)
    }))

  it.scoped("get: only names of 1 to 64 letters, digits, `-`, `_` (not first) that are directories, not links", () =>
    Effect.gen(function*() {
      const { configFile, runRoot, sales } = yield* setup
      const { runs } = yield* runsOver({ sources: [sales], runRoot, configFile })
      const runsNamed = ["a", "Z", "9", "a-b_C9", "x".repeat(64)]
      const notRuns = ["x".repeat(65), "_a", "-a", "a.b", ".a", "a b", "é"]
      yield* Effect.promise(async () => {
        await fsp.mkdir(runRoot, { recursive: true })
        for (const name of [...runsNamed, ...notRuns]) await fsp.mkdir(path.join(runRoot, name))
        await fsp.writeFile(path.join(runRoot, "plain-file"), "")
        await fsp.symlink(path.join(runRoot, "a"), path.join(runRoot, "link"))
      })
      for (const id of runsNamed) {
        const view = yield* runs.get(id)
        assert.deepStrictEqual(view, { id, status: "stored", owner: null, directory: path.join(runRoot, id) })
      }
      for (const id of [...notRuns, "plain-file", "link", "absent", "", "../runs", "a/b"]) {
        const error = yield* Effect.flip(runs.get(id))
        assert.instanceOf(error, RunNotFound)
        assert.deepStrictEqual({ ...error }, { _tag: "RunNotFound", runId: id } as any, id)
      }
    }))
})

describe("a run started by the service", () => {
  it.scoped("events: started (the number of sources), one per source with its number, done with the counts; 0700 directories", () =>
    Effect.gen(function*() {
      const { configFile, missing, runRoot, sales } = yield* setup
      const { runs } = yield* runsOver({ sources: [missing, sales], runRoot, configFile })
      const run = yield* runs.start("owner-digest")
      assert.deepStrictEqual({ ...run, id: "" }, { id: "", status: "running", owner: "owner-digest", directory: path.join(runRoot, run.id) })
      const all = yield* collect(runs.events(run, 0))
      assert.deepStrictEqual(all.map((e) => e.id), [1, 2, 3, 4])
      assert.deepStrictEqual(all[0], { _tag: "started", id: 1, runId: run.id, sources: 2 })
      const perSource = all.slice(1, 3).sort((x, y) => (x as any).number - (y as any).number)
      const failed = perSource[0] as Extract<Runs.RunEvent, { _tag: "failed" }>
      assert.deepStrictEqual({ ...failed, id: 0, error: { ...failed.error } }, {
        _tag: "failed",
        id: 0,
        number: 1,
        source: missing,
        error: { _tag: "UnexpectedStatus", source: missing, status: 404 } as any
      })
      const captured = perSource[1] as Extract<Runs.RunEvent, { _tag: "captured" }>
      assert.deepStrictEqual({ ...captured, id: 0 }, {
        _tag: "captured",
        id: 0,
        number: 2,
        source: sales,
        captureSha256: salesDigest,
        byteLength: Buffer.byteLength(salesText),
        accessedAt: captured.accessedAt
      })
      assert.match(captured.accessedAt, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/)
      assert.deepStrictEqual(all[3], { _tag: "done", id: 4, status: "completed", captured: 1, failed: 1 })
      assert.deepStrictEqual(yield* runs.get(run.id), { ...run, status: "completed" })
      // Its JSON form, as an SSE data line carries it.
      assert.strictEqual(Runs.eventJson(all[3]!), "{\"_tag\":\"done\",\"id\":4,\"status\":\"completed\",\"captured\":1,\"failed\":1}")
      // The run root and the run's directory are the service's own.
      const modes = yield* Effect.promise(async () => [(await fsp.stat(runRoot)).mode & 0o777, (await fsp.stat(run.directory)).mode & 0o777])
      assert.deepStrictEqual(modes, [0o700, 0o700])
      // Resuming: only the events after the given id; before the first (or negative): all.
      assert.deepStrictEqual((yield* collect(runs.events(run, 2))).map((e) => e.id), [3, 4])
      assert.deepStrictEqual((yield* collect(runs.events(run, 3))).map((e) => e.id), [4])
      assert.deepStrictEqual(yield* collect(runs.events(run, 4)), [])
      assert.deepStrictEqual(yield* collect(runs.events(run, 99)), [])
      assert.deepStrictEqual(yield* collect(runs.events(run, -5)), all)
      // The manifest of the run, read back through the store.
      const manifest = yield* runs.manifest(run)
      assert.deepStrictEqual(manifest.sources.map((s) => s.status), ["missing", "captured"])
    }))

  it.scoped("a negative id reads a live run from its start, however many events it has", () =>
    Effect.gen(function*() {
      const { configFile, runRoot, sales } = yield* setup
      const others = ["/a", "/b", "/c", "/d", "/e"].map((p) => sales.replace("/q3-sales.txt", p))
      const { runs } = yield* runsOver({ sources: [sales, ...others], runRoot, configFile })
      const run = yield* runs.start("o")
      const all = yield* collect(runs.events(run, 0))
      assert.deepStrictEqual(all.map((e) => e.id), [1, 2, 3, 4, 5, 6, 7, 8])
      assert.deepStrictEqual(yield* collect(runs.events(run, -1)), all)
      assert.deepStrictEqual(yield* collect(runs.events(run, -3)), all)
    }))

  it.scoped("the same run read by a later service is stored: events from its manifest, resumable", () =>
    Effect.gen(function*() {
      const { configFile, missing, runRoot, sales } = yield* setup
      const first = yield* runsOver({ sources: [sales, missing], runRoot, configFile })
      const run = yield* first.runs.start("o")
      const live = yield* collect(first.runs.events(run, 0))
      yield* first.close
      const later = yield* runsOver({ sources: [sales, missing], runRoot, configFile })
      const stored = yield* later.runs.get(run.id)
      assert.deepStrictEqual(stored, { id: run.id, status: "stored", owner: null, directory: run.directory })
      const events = yield* collect(later.runs.events(stored, 0))
      const captured = live.find((e) => e._tag === "captured")!
      assert.deepStrictEqual(events, [
        { ...captured, id: 1 },
        { _tag: "missing", id: 2, number: 2, source: missing, reason: { _tag: "MissingCapture", source: missing } as any },
        { _tag: "done", id: 3, status: "stored", captured: 1, failed: 1 }
      ])
      assert.deepStrictEqual((yield* collect(later.runs.events(stored, 2))).map((e) => e.id), [3])
      assert.deepStrictEqual(yield* collect(later.runs.events(stored, 3)), [])
    }))

  it.scoped("an unusable CA file (relative to the configuration file): started, aborted with InvalidCaFile, done", () =>
    Effect.gen(function*() {
      const { configFile, runRoot, sales, work } = yield* setup
      const { runs } = yield* runsOver({ sources: [sales], runRoot, configFile, capture: { caFile: "no-such-ca.pem" } })
      const run = yield* runs.start("o")
      const all = yield* collect(runs.events(run, 0))
      assert.deepStrictEqual(all.map((e) => e._tag), ["started", "aborted", "done"])
      const aborted = all[1] as Extract<Runs.RunEvent, { _tag: "aborted" }>
      assert.strictEqual(aborted.id, 2)
      assert.strictEqual(aborted.error._tag, "InvalidCaFile")
      assert.strictEqual((aborted.error as any).path, path.join(work, "no-such-ca.pem"))
      assert.deepStrictEqual(all[2], { _tag: "done", id: 3, status: "completed", captured: 0, failed: 0 })
    }))

  it.scoped("a run root that is a file: start fails with NotReady (run-root-unusable)", () =>
    Effect.gen(function*() {
      const { configFile, runRoot, sales } = yield* setup
      yield* Effect.promise(() => fsp.writeFile(runRoot, "not a directory"))
      const { runs } = yield* runsOver({ sources: [sales], runRoot, configFile })
      const error = yield* Effect.flip(runs.start("o"))
      assert.instanceOf(error, NotReady)
      assert.deepStrictEqual({ ...error }, { _tag: "NotReady", reason: "run-root-unusable" } as any)
    }))
})

describe("live runs", () => {
  it.live("a follower gets events while the run is capturing, and ends with done", () =>
    Effect.scoped(Effect.gen(function*() {
      const { configFile, held, release, runRoot, sales } = yield* setup
      const { runs } = yield* runsOver({ sources: [sales, held], runRoot, configFile })
      const run = yield* runs.start("o")
      const seen: Array<Runs.RunEvent> = []
      const follower = yield* Effect.fork(Stream.runForEach(runs.events(run, 0), (e) => Effect.sync(() => seen.push(e))))
      // The sales source answers at once; the held one waits: the follower has started and captured, not done.
      yield* Effect.promise(async () => {
        while (seen.length < 2) await new Promise((r) => setTimeout(r, 10))
      })
      assert.deepStrictEqual(seen.map((e) => e._tag), ["started", "captured"])
      assert.strictEqual((yield* runs.get(run.id)).status, "running")
      // Resuming a live run after the first event, and after an id it has not reached yet.
      const resumed = yield* Effect.fork(collect(runs.events(run, 1)))
      const ahead = yield* Effect.fork(collect(runs.events(run, 3)))
      release()
      yield* Fiber.join(follower)
      assert.deepStrictEqual(seen.map((e) => [e.id, e._tag]), [[1, "started"], [2, "captured"], [3, "captured"], [4, "done"]])
      assert.deepStrictEqual((yield* Fiber.join(resumed)).map((e) => e.id), [2, 3, 4])
      assert.deepStrictEqual((yield* Fiber.join(ahead)).map((e) => e.id), [4])
    })))

  it.live("maxActiveRuns 1: a second run does not start capturing until the first has ended", () =>
    Effect.scoped(Effect.gen(function*() {
      const { configFile, held, release, runRoot } = yield* setup
      const { runs } = yield* runsOver({ sources: [held], runRoot, configFile, server: { maxActiveRuns: 1 } })
      const first = yield* runs.start("o")
      const second = yield* runs.start("o")
      const firstEvents: Array<string> = []
      const secondEvents: Array<string> = []
      const a = yield* Effect.fork(Stream.runForEach(runs.events(first, 0), (e) => Effect.sync(() => firstEvents.push(e._tag))))
      const b = yield* Effect.fork(Stream.runForEach(runs.events(second, 0), (e) => Effect.sync(() => secondEvents.push(e._tag))))
      yield* Effect.promise(async () => {
        while (firstEvents.length < 1) await new Promise((r) => setTimeout(r, 10))
      })
      yield* Effect.sleep("300 millis")
      assert.deepStrictEqual(firstEvents, ["started"])
      assert.deepStrictEqual(secondEvents, [])
      release()
      yield* Fiber.join(a)
      yield* Fiber.join(b)
      assert.deepStrictEqual(firstEvents, ["started", "captured", "done"])
      assert.deepStrictEqual(secondEvents, ["started", "captured", "done"])
    })))
})

describe("shutdown", () => {
  it.live("within the grace period a running capture finishes (completed); the lifecycle is told to drain first", () =>
    Effect.scoped(Effect.gen(function*() {
      const { configFile, held, release, runRoot } = yield* setup
      const service = yield* runsOver({ sources: [held], runRoot, configFile, server: { shutdownGraceMs: 20_000 } })
      const run = yield* service.runs.start("o")
      const events = yield* Effect.fork(collect(service.runs.events(run, 0)))
      const closing = yield* Effect.fork(service.close)
      yield* Effect.sleep("300 millis")
      assert.isTrue(yield* Deferred.isDone(service.draining))
      assert.isNull(yield* Fiber.poll(closing).pipe(Effect.map((o) => (o._tag === "Some" ? "closed" : null))))
      release()
      yield* Fiber.join(closing)
      const all = yield* Fiber.join(events)
      assert.deepStrictEqual(all.at(-1), { _tag: "done", id: 3, status: "completed", captured: 1, failed: 0 })
    })))

  it.live("past the grace period a running capture is interrupted: done (interrupted), status interrupted", () =>
    Effect.scoped(Effect.gen(function*() {
      const { configFile, held, runRoot, sales } = yield* setup
      const service = yield* runsOver({ sources: [sales, held], runRoot, configFile, server: { shutdownGraceMs: 0 } })
      const run = yield* service.runs.start("o")
      const seen: Array<Runs.RunEvent> = []
      const events = yield* Effect.fork(Stream.runForEach(service.runs.events(run, 0), (e) => Effect.sync(() => seen.push(e))))
      yield* Effect.promise(async () => {
        while (seen.length < 2) await new Promise((r) => setTimeout(r, 10))
      })
      yield* service.close
      yield* Fiber.join(events)
      assert.deepStrictEqual(seen.map((e) => e._tag), ["started", "captured", "done"])
      assert.deepStrictEqual(seen[2], { _tag: "done", id: 3, status: "interrupted", captured: 1, failed: 0 })
      assert.strictEqual((yield* service.runs.get(run.id)).status, "interrupted")
    })))
})
