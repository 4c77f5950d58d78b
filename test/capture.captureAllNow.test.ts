/**
 * `captureAll` of a `text/plain`-only stage over the filesystem store runs the whole list in one
 * step (capture/CaptureAllNow.ts), not an effect per source. Against the same stage over the same
 * store with its `write` wrapped (which has no promise form, so every source goes through
 * `capture`), one list of good and hostile sources, a repeated one and an unapproved one must give
 * the same results in the same order and write the same files; and interrupted while records are
 * being written, it must wait for those writes and leave no file behind.
 */
import { assert, describe, it } from "@effect/vitest"
import { Cause, Clock, Context, Effect, Either, Exit, Fiber, Layer, Supervisor } from "effect"
import * as fsp from "node:fs/promises"
import * as path from "node:path"
import * as Capture from "../src/capture/Capture.js"
import { captureAllNow } from "../src/capture/CaptureAllNow.js"
import type { Target } from "../src/capture/UrlPolicy.js"
import type { CaptureRecordV1 } from "../src/Domain.js"
import * as CaptureStore from "../src/store/CaptureStore.js"
import { testServer, waitUntil } from "./httpServer.js"
import { snapshotDirectory, tempDirectory } from "./support.js"

const maxBytes = 4096

const routes: Record<string, (res: import("node:http").ServerResponse) => void> = {
  "/ok.txt": (res) => {
    const body = Buffer.from("net sales rose \"3%\" \\ in Q3\n\tper region\u0001 é 𝄞 ✓\r\n")
    res.writeHead(200, { "content-type": "text/plain; charset=utf-8", "content-length": String(body.length) })
    res.end(body)
  },
  "/chunked.txt": (res) => {
    res.writeHead(200, { "content-type": "text/plain" })
    res.write("first part, ")
    res.end("second part\n")
  },
  "/empty.txt": (res) => void res.writeHead(200, { "content-type": "text/plain", "content-length": "0" }).end(),
  "/invalid-utf8.txt": (res) => void res.writeHead(200, { "content-type": "text/plain" }).end(Buffer.from([0x61, 0xc3, 0x28])),
  "/missing.txt": (res) => void res.writeHead(404, { "content-type": "text/plain" }).end("no"),
  "/html.txt": (res) => void res.writeHead(200, { "content-type": "text/html" }).end("<p>x</p>"),
  "/too-large.txt": (res) => {
    res.writeHead(200, { "content-type": "text/plain" })
    res.end("x".repeat(maxBytes + 1))
  },
  "/reset.txt": (res) => void res.socket?.destroy(),
  "/slow.txt": () => undefined
}
for (let i = 0; i < 12; i++) {
  routes[`/s${i}.txt`] = (res) => {
    // Answers in another order than asked, so results in input order are not a matter of luck.
    setTimeout(() => res.writeHead(200, { "content-type": "text/plain" }).end(`source ${i} `.repeat(i + 1)), (12 - i) % 4 * 5)
  }
}

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

const outcome = (result: Capture.CaptureResult) =>
  Either.isRight(result.result)
    ? { source: result.source, ok: { ...result.result.right, accessedAt: "" } }
    : { source: result.source, error: { ...result.result.left, tag: result.result.left._tag } }

/** One list through a stage over a fresh directory; `wrapped`: the store's `write` behind a plain function. */
const captureList = (sources: ReadonlyArray<string>, approved: ReadonlyArray<string>, wrapped: boolean) =>
  Effect.gen(function*() {
    const directory = yield* tempDirectory
    const store = yield* CaptureStore.makeFileSystem({ directory })
    const storeLayer = Layer.succeed(
      CaptureStore.CaptureStore,
      wrapped ? { ...store, write: (record, body) => store.write(record, body) } : store
    )
    const context = yield* Layer.build(
      Capture.layer({ approved, allowLoopbackHttp: true, maxBytes, timeoutMs: 500, concurrency: 3 }).pipe(Layer.provide(storeLayer))
    ).pipe(Effect.orDie)
    const counter = new StartCounter()
    const results = yield* Effect.supervised(Context.get(context, Capture.Capture).captureAll(sources), counter)
    const files: Record<string, string> = {}
    for (const name of (yield* Effect.promise(() => fsp.readdir(directory))).sort()) {
      const text = yield* Effect.promise(() => fsp.readFile(path.join(directory, name), "utf8"))
      files[name] = text.replace(/"accessedAt":"[^"]*"/, "\"accessedAt\":\"\"")
    }
    return { results: results.map(outcome), files, fibers: counter.started }
  }).pipe(Effect.orDie)

describe("Capture.captureAll in one step (text/plain over the filesystem store)", () => {
  it.scopedLive("gives the results and files of one capture per source, in input order", () =>
    Effect.gen(function*() {
      const server = yield* testServer((req, res) => {
        const route = routes[req.url!]
        if (route === undefined) res.writeHead(404).end()
        else route(res)
      })
      const approved = Object.keys(routes).map(server.url)
      // A repeated source: its second capture finds the record there (CaptureExists).
      const sources = [...approved, server.url("/ok.txt"), server.url("/not-approved.txt")]
      const oneStep = yield* captureList(sources, approved, false)
      const perSource = yield* captureList(sources, approved, true)
      assert.deepStrictEqual(oneStep.results, perSource.results)
      assert.deepStrictEqual(oneStep.files, perSource.files)
      assert.deepStrictEqual(oneStep.results.map((r) => r.source), sources)
      // Which path each took: no fiber per source in one step; the per-source path forks its workers.
      assert.strictEqual(oneStep.fibers, 0)
      assert.isAtLeast(perSource.fibers, 3)
      const tags = oneStep.results.map((r) => "ok" in r ? "ok" : r.error.tag)
      assert.deepStrictEqual(tags, [
        "ok",
        "ok",
        "ok",
        "InvalidEncoding",
        "UnexpectedStatus",
        "UnsupportedContentType",
        "TooLarge",
        "ConnectionFailed",
        "Timeout",
        ...Array.from({ length: 12 }, () => "ok"),
        "CaptureExists",
        "NotApproved"
      ])
      assert.strictEqual(Object.keys(oneStep.files).length, 15)
    }), 30_000)

  it.scopedLive("interrupted while records are written, waits for the writes and leaves no file behind", () =>
    Effect.gen(function*() {
      const server = yield* testServer((_req, res) => void res.writeHead(200, { "content-type": "text/plain" }).end("text"))
      const sources = Array.from({ length: 6 }, (_, i) => server.url(`/s${i}.txt`))
      const directory = yield* tempDirectory
      // Every fsync waits to be let go: the writes in flight are between their steps when interrupted.
      const held: Array<() => void> = []
      const io: CaptureStore.FileIo = {
        ...CaptureStore.nodeIo,
        fsync: (fd) => new Promise((resolve) => held.push(() => resolve(CaptureStore.nodeIo.fsync(fd))))
      }
      const context = yield* Layer.build(
        Capture.layer({ approved: sources, allowLoopbackHttp: true, concurrency: 2, timeoutMs: 10_000 }).pipe(
          Layer.provide(CaptureStore.layerFileSystem({ directory, io }))
        )
      ).pipe(Effect.orDie)
      const fiber = yield* Effect.fork(Context.get(context, Capture.Capture).captureAll(sources))
      yield* waitUntil(() => held.length === 2, "two writes waiting for their fsync")
      const interrupted = yield* Effect.fork(Fiber.interrupt(fiber))
      yield* Effect.sleep("50 millis")
      // The interruption waits for the writes in flight.
      assert.isNull(interrupted.unsafePoll())
      assert.strictEqual((yield* snapshotDirectory(directory)).length, 2, "two temporary files, no record")
      for (const release of held) release()
      const exit = yield* Fiber.join(interrupted)
      assert.isTrue(Exit.isInterrupted(exit))
      assert.strictEqual(server.requests.length, 2)
      assert.deepStrictEqual(yield* snapshotDirectory(directory), [])
    }), 30_000)
})

describe("captureAllNow when a step throws", () => {
  it.live("dies with the defect only after the writes in flight have settled", () =>
    Effect.gen(function*() {
      let settled = false
      const run = captureAllNow({
        checkUrl: (source) => ({ source, origin: "http://127.0.0.1", path: "/" }) as unknown as Target,
        fetch: (target, done) => {
          const handle = setTimeout(() => done({ contentType: "text/plain", body: Buffer.from("x"), text: "x" }), target.source === "a" ? 0 : 20)
          return () => clearTimeout(handle)
        },
        record: (target) => {
          if (target.source === "b") throw new Error("boom")
          return { format: "citegate.capture/1", source: target.source, sha256: "0".repeat(64), accessedAt: "1970-01-01T00:00:00.000Z", contentType: "text/plain", byteLength: 1, text: "x" } as CaptureRecordV1
        },
        writeNow: () => new Promise((resolve) => setTimeout(() => (settled = true, resolve(undefined)), 150)),
        concurrency: 2
      }, Clock.make())
      const exit = yield* Effect.exit(run(["a", "b"]))
      assert.isTrue(Exit.isFailure(exit) && Cause.isDie(exit.cause), String(exit))
      assert.isTrue(settled, "the write in flight settled before the batch ended")
    }))
})
