/**
 * The run service's traces and log lines, read with a recording tracer and a recording logger:
 * `Runs.start` and `Runs.get` are spans; a run that starts logs its id; a run whose capture stage
 * cannot start logs why (the `aborted` event says it to clients, the log to the operator).
 * Runs over a real run root; the only source is a closed loopback port, never fetched here.
 */
import { assert, describe, it } from "@effect/vitest"
import { Chunk, Context, Deferred, Effect, Exit, HashMap, Layer, Logger, Scope, Stream } from "effect"
import * as fsp from "node:fs/promises"
import * as path from "node:path"
import * as Config from "../src/Config.js"
import { InvalidCaFile, MissingCapture, RunNotFound, UnexpectedStatus } from "../src/Errors.js"
import { Lifecycle, ServerContext } from "../src/server/Context.js"
import * as Runs from "../src/server/Runs.js"
import { spanNames } from "./mutants.support.js"
import { tempDirectory } from "./support.js"

interface Line {
  readonly level: string
  readonly message: unknown
  readonly annotations: Record<string, unknown>
  readonly cause: string
}

/** The Runs service over a fresh run root, with every log line it writes recorded. */
const runsWithLog = (capture: object = {}, sources: ReadonlyArray<string> = ["http://127.0.0.1:9/unused.txt"]) =>
  Effect.gen(function*() {
    const work = yield* tempDirectory
    const config = yield* Config.decode({
      sources,
      labels: ["x"],
      capture: { timeoutMs: 10_000, ...capture },
      server: { tokens: [] }
    })
    const draining = yield* Deferred.make<void>()
    const lines: Array<Line> = []
    const recorder = Logger.make(({ annotations, cause, logLevel, message }) => {
      lines.push({ level: logLevel.label, message, annotations: Object.fromEntries(HashMap.toEntries(annotations)), cause: String(cause) })
    })
    const scope = yield* Scope.make()
    yield* Effect.addFinalizer(() => Scope.close(scope, Exit.void))
    const context = yield* Layer.buildWithScope(
      Runs.layer.pipe(
        Layer.provide(Layer.succeed(ServerContext, {
          config,
          configFile: path.join(work, "pipeline.json"),
          runRoot: path.join(work, "runs"),
          limits: Config.resolvedServer(config),
          allowLoopbackHttp: true
        })),
        Layer.provide(Layer.succeed(Lifecycle, Lifecycle.of({
          draining: Deferred.await(draining),
          isDraining: Deferred.isDone(draining),
          openRequests: Effect.succeed(0),
          shutdown: Effect.asVoid(Deferred.succeed(draining, undefined))
        }))),
        Layer.provide(Logger.replace(Logger.defaultLogger, recorder))
      ),
      scope
    )
    return { runs: Context.get(context, Runs.Runs), lines, work, runRoot: path.join(work, "runs") }
  })

const collect = (stream: Stream.Stream<Runs.RunEvent, unknown>) => Effect.map(Stream.runCollect(stream), Chunk.toArray)

describe("Runs: traces", () => {
  it.scoped("start and get are the spans Runs.start and Runs.get", () =>
    Effect.gen(function*() {
      // A CA file that does not exist: the run aborts before any source is fetched.
      const { runs } = yield* runsWithLog({ caFile: "no-such-ca.pem" })
      let started: Runs.RunView | undefined
      const startSpans = yield* spanNames(Effect.map(runs.start("owner"), (run) => (started = run)))
      assert.deepStrictEqual(startSpans.filter((name) => name.startsWith("Runs.")), ["Runs.start"])
      yield* collect(runs.events(started!, 0))
      assert.deepStrictEqual((yield* spanNames(runs.get(started!.id))).filter((name) => name.startsWith("Runs.")), ["Runs.get"])
    }))
})

describe("Runs: log lines", () => {
  it.scoped("a run that starts logs its id; a capture stage that cannot start logs the error, at level ERROR", () =>
    Effect.gen(function*() {
      const { lines, runs, work } = yield* runsWithLog({ caFile: "no-such-ca.pem" })
      const run = yield* runs.start("owner")
      const events = yield* collect(runs.events(run, 0))
      assert.deepStrictEqual(events.map((e) => e._tag), ["started", "aborted", "done"])
      const started = lines.filter((line) => line.message !== undefined && JSON.stringify(line.message).includes("capture run started"))
      assert.deepStrictEqual(started.map((line) => [line.level, line.message, line.annotations]), [["INFO", ["capture run started"], { runId: run.id }]])
      const failed = lines.filter((line) => line.level === "ERROR")
      assert.strictEqual(failed.length, 1)
      assert.deepStrictEqual(failed[0]!.annotations, { runId: run.id })
      const message = failed[0]!.message as ReadonlyArray<unknown>
      assert.strictEqual(message[0], "capture run could not start")
      assert.strictEqual((message[1] as any)._tag, "InvalidCaFile")
      assert.strictEqual((message[1] as any).path, path.join(work, "no-such-ca.pem"))
    }))
})

describe("Runs: events as JSON", () => {
  it("each kind of event is its tag and fields, exactly", () => {
    const source = "https://reports.northwind.test/a.txt"
    const cases: Array<[Runs.RunEvent, string]> = [
      [{ _tag: "started", id: 1, runId: "r-1", sources: 2 }, `{"_tag":"started","id":1,"runId":"r-1","sources":2}`],
      [
        { _tag: "captured", id: 2, number: 1, source, captureSha256: "ab".repeat(32), byteLength: 7, accessedAt: "2026-11-30T14:25:07.123Z" },
        `{"_tag":"captured","id":2,"number":1,"source":"${source}","captureSha256":"${"ab".repeat(32)}","byteLength":7,"accessedAt":"2026-11-30T14:25:07.123Z"}`
      ],
      [
        { _tag: "failed", id: 3, number: 2, source, error: new UnexpectedStatus({ source, status: 404 }) },
        `{"_tag":"failed","id":3,"number":2,"source":"${source}","error":{"source":"${source}","status":404,"_tag":"UnexpectedStatus"}}`
      ],
      [
        { _tag: "missing", id: 1, number: 1, source, reason: new MissingCapture({ source }) },
        `{"_tag":"missing","id":1,"number":1,"source":"${source}","reason":{"source":"${source}","_tag":"MissingCapture"}}`
      ],
      [
        { _tag: "aborted", id: 2, error: new InvalidCaFile({ path: "/x.pem", detail: "absent" }) },
        `{"_tag":"aborted","id":2,"error":{"path":"/x.pem","detail":"absent","_tag":"InvalidCaFile"}}`
      ],
      [{ _tag: "done", id: 4, status: "interrupted", captured: 1, failed: 2 }, `{"_tag":"done","id":4,"status":"interrupted","captured":1,"failed":2}`],
      [{ _tag: "done", id: 4, status: "stored", captured: 0, failed: 0 }, `{"_tag":"done","id":4,"status":"stored","captured":0,"failed":0}`],
      [{ _tag: "done", id: 5, status: "completed", captured: 3, failed: 0 }, `{"_tag":"done","id":5,"status":"completed","captured":3,"failed":0}`]
    ]
    for (const [event, expected] of cases) assert.strictEqual(Runs.eventJson(event), expected)
  })
})

describe("Runs: stored runs", () => {
  it.scoped("a stored run with no capture: one missing event per source, then done with captured 0 and failed 2", () =>
    Effect.gen(function*() {
      const a = "http://127.0.0.1:9/a.txt"
      const b = "http://127.0.0.1:9/b.txt"
      const { runRoot, runs } = yield* runsWithLog({}, [a, b])
      yield* Effect.promise(() => fsp.mkdir(path.join(runRoot, "empty-run"), { recursive: true }))
      const run = yield* runs.get("empty-run")
      const events = yield* collect(runs.events(run, 0))
      assert.deepStrictEqual(events.map((e) => Runs.eventJson(e)), [
        `{"_tag":"missing","id":1,"number":1,"source":"${a}","reason":{"source":"${a}","_tag":"MissingCapture"}}`,
        `{"_tag":"missing","id":2,"number":2,"source":"${b}","reason":{"source":"${b}","_tag":"MissingCapture"}}`,
        `{"_tag":"done","id":3,"status":"stored","captured":0,"failed":2}`
      ])
    }))

  it.scoped("a run whose directory is no longer a directory: its manifest and its events fail with RunNotFound", () =>
    Effect.gen(function*() {
      const { runRoot, runs } = yield* runsWithLog()
      yield* Effect.promise(() => fsp.mkdir(path.join(runRoot, "vanishing"), { recursive: true }))
      const run = yield* runs.get("vanishing")
      // Replaced by a file after it was looked up.
      yield* Effect.promise(async () => {
        await fsp.rmdir(path.join(runRoot, "vanishing"))
        await fsp.writeFile(path.join(runRoot, "vanishing"), "")
      })
      const error = yield* Effect.flip(runs.manifest(run))
      assert.instanceOf(error, RunNotFound)
      assert.deepStrictEqual({ ...error }, { _tag: "RunNotFound", runId: "vanishing" } as any)
      const fromEvents = yield* Effect.flip(collect(runs.events(run, 0)))
      assert.instanceOf(fromEvents, RunNotFound)
      assert.deepStrictEqual({ ...(fromEvents as RunNotFound) }, { _tag: "RunNotFound", runId: "vanishing" } as any)
    }))
})
