/**
 * `captureAll` runs at most `concurrency` sources at once, on at most that many fibers (Effect's
 * bounded `forEach` reuses a fiber for the next source; a `text/plain`-only stage over the
 * filesystem store runs the list in one step with none, capture/CaptureAllNow.ts), gives every
 * source its own result in input order, and starts no further source once interrupted.
 */
import { assert, describe, it } from "@effect/vitest"
import { Context, Effect, Either, Exit, Fiber, Layer, Supervisor } from "effect"
import * as Capture from "../src/capture/Capture.js"
import * as CaptureStore from "../src/store/CaptureStore.js"
import { UnexpectedStatus } from "../src/Errors.js"
import { testServer, waitUntil } from "./httpServer.js"
import { snapshotDirectory, tempDirectory } from "./support.js"

/** Counts the fibers started under the effect it supervises. */
class StartCounter extends Supervisor.AbstractSupervisor<number> {
  started = 0
  get value() {
    return Effect.sync(() => this.started)
  }
  override onStart() {
    this.started++
  }
}

const stage = (approved: ReadonlyArray<string>, concurrency: number) =>
  Effect.gen(function*() {
    const directory = yield* tempDirectory
    const context = yield* Layer.build(
      Capture.layer({ approved, allowLoopbackHttp: true, concurrency, timeoutMs: 10_000 }).pipe(
        Layer.provide(CaptureStore.layerFileSystem({ directory }))
      )
    )
    return { capture: Context.get(context, Capture.Capture), directory }
  }).pipe(Effect.orDie)

describe("Capture.captureAll", () => {
  it.scopedLive("at most `concurrency` sources at once, on that many fibers; results in input order", () =>
    Effect.gen(function*() {
      let inFlight = 0
      let most = 0
      const server = yield* testServer((req, res) => {
        inFlight++
        most = Math.max(most, inFlight)
        setTimeout(() => {
          inFlight--
          if (req.url!.startsWith("/missing")) res.writeHead(404, { "content-type": "text/plain" }).end("no")
          else res.writeHead(200, { "content-type": "text/plain" }).end(`body of ${req.url}`)
        }, 5)
      })
      const sources = Array.from({ length: 30 }, (_, i) => server.url(i % 7 === 3 ? `/missing-${i}.txt` : `/s${i}.txt`))
      const { capture, directory } = yield* stage(sources, 4)
      const counter = new StartCounter()
      const results = yield* Effect.supervised(capture.captureAll([...sources, "https://not-approved.test/x"]), counter)
      assert.deepStrictEqual(results.map((r) => r.source), [...sources, "https://not-approved.test/x"])
      assert.deepStrictEqual(
        results.map((r) => Either.isRight(r.result)),
        [...sources.map((s) => !s.includes("/missing-")), false]
      )
      for (const [i, r] of results.entries()) {
        if (Either.isRight(r.result)) assert.strictEqual(r.result.right.source, sources[i])
        else if (i < sources.length) assert.instanceOf(r.result.left, UnexpectedStatus)
      }
      assert.strictEqual(most, 4, "four requests at once, never more")
      assert.strictEqual(server.requests.length, sources.length)
      // A fiber per concurrent slot and the one that runs them, however many sources.
      assert.isAtMost(counter.started, 4 + 1)
      const files = yield* snapshotDirectory(directory)
      assert.strictEqual(files.length, sources.filter((s) => !s.includes("/missing-")).length)
    }))

  it.scopedLive("an empty list, and fewer sources than workers", () =>
    Effect.gen(function*() {
      const server = yield* testServer((_req, res) => void res.writeHead(200, { "content-type": "text/plain" }).end("x"))
      const sources = [server.url("/a.txt"), server.url("/b.txt")]
      const { capture } = yield* stage(sources, 8)
      assert.deepStrictEqual(yield* capture.captureAll([]), [])
      const results = yield* capture.captureAll(sources)
      assert.deepStrictEqual(results.map((r) => [r.source, Either.isRight(r.result)]), [[sources[0], true], [sources[1], true]])
    }))

  it.scopedLive("interrupted, it starts no further source and leaves no file behind", () =>
    Effect.gen(function*() {
      // Every response hangs: the captures in flight are interrupted, the rest never start.
      const server = yield* testServer(() => undefined)
      const sources = Array.from({ length: 12 }, (_, i) => server.url(`/s${i}.txt`))
      const { capture, directory } = yield* stage(sources, 3)
      const fiber = yield* Effect.fork(capture.captureAll(sources))
      yield* waitUntil(() => server.requests.length === 3, "three requests in flight")
      const exit = yield* Fiber.interrupt(fiber)
      assert.isTrue(Exit.isInterrupted(exit))
      yield* Effect.sleep("100 millis")
      assert.strictEqual(server.requests.length, 3)
      assert.deepStrictEqual(yield* snapshotDirectory(directory), [])
    }))
})
