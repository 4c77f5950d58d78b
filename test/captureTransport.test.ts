/**
 * The capture stage's own request path (capture/Fetch.ts): what goes on the
 * wire, how connections are kept, and that many captures at once each keep
 * every policy. Real loopback servers, a real run directory.
 */
import { assert, describe, it } from "@effect/vitest"
import { Context, Effect, Layer } from "effect"
import * as fsp from "node:fs/promises"
import * as Capture from "../src/capture/Capture.js"
import { sha256Of } from "../src/Domain.js"
import * as CaptureStore from "../src/store/CaptureStore.js"
import { version } from "../src/version.js"
import { testServer, waitUntil } from "./httpServer.js"
import { tempDirectory } from "./support.js"

const stage = (approved: ReadonlyArray<string>, concurrency: number) =>
  Effect.gen(function*() {
    const directory = yield* tempDirectory
    const context = yield* Layer.build(
      Capture.layer({ approved, allowLoopbackHttp: true, concurrency, timeoutMs: 5_000 }).pipe(
        Layer.provide(CaptureStore.layerFileSystem({ directory }))
      )
    )
    return { capture: Context.get(context, Capture.Capture), directory }
  }).pipe(Effect.orDie)

const bodyOf = (path: string) => `The body of ${path}. `.repeat(200)

describe("Capture: the request on the wire", () => {
  it.scopedLive("exactly the stage's headers: no tracing, cookie or other header is added", () =>
    Effect.gen(function*() {
      const server = yield* testServer((req, res) => {
        res.writeHead(200, { "content-type": "text/plain" })
        res.end(bodyOf(req.url!))
      })
      const source = server.url("/a.txt")
      const { capture } = yield* stage([source], 1)
      yield* capture.capture(source)
      const { headers, url } = server.requests[0]!
      assert.strictEqual(url, "/a.txt")
      assert.deepStrictEqual(Object.keys(headers).sort(), ["accept", "accept-encoding", "connection", "host", "user-agent"])
      assert.deepStrictEqual(
        [headers.accept, headers["accept-encoding"], headers.host, headers["user-agent"]],
        ["text/plain", "identity", `127.0.0.1:${server.port}`, `citegate/${version}`]
      )
    }))

  it.scopedLive("the query string is sent as approved", () =>
    Effect.gen(function*() {
      const server = yield* testServer((req, res) => {
        res.writeHead(200, { "content-type": "text/plain" })
        res.end(bodyOf(req.url!))
      })
      const source = server.url("/report.txt?quarter=3&region=north")
      const { capture } = yield* stage([source], 1)
      const ref = yield* capture.capture(source)
      assert.strictEqual(server.requests[0]!.url, "/report.txt?quarter=3&region=north")
      assert.strictEqual(ref.sha256, sha256Of(Buffer.from(bodyOf("/report.txt?quarter=3&region=north"))))
    }))
})

describe("Capture: connections", () => {
  it.scopedLive("a body read to its end leaves its connection for the next capture: 24 captures at concurrency 4 use at most 4", () =>
    Effect.gen(function*() {
      const server = yield* testServer((req, res) => {
        const body = Buffer.from(bodyOf(req.url!))
        res.writeHead(200, { "content-type": "text/plain", "content-length": String(body.length) })
        res.end(body)
      })
      const sources = Array.from({ length: 24 }, (_, i) => server.url(`/s${i}.txt`))
      const { capture } = yield* stage(sources, 4)
      const results = yield* capture.captureAll(sources)
      assert.deepStrictEqual(results.map((r) => r.result._tag), sources.map(() => "Right"))
      assert.strictEqual(server.requests.length, 24)
      assert.isAtMost(server.connections, 4)
      assert.strictEqual(server.closed, 0, "no connection was closed after a complete body")
    }))

  it.scopedLive("mixed at concurrency 8: each refusal closes only its own socket, every good body is captured exactly", () =>
    Effect.gen(function*() {
      // Every fourth source answers with a type the policy refuses and an endless body: only an abort ends it.
      const server = yield* testServer((req, res) => {
        const n = Number(/\d+/.exec(req.url!)![0])
        if (n % 4 === 3) {
          res.writeHead(200, { "content-type": "text/html" })
          const timer = setInterval(() => res.write("<p>more</p>"), 20)
          res.on("close", () => clearInterval(timer))
          return
        }
        const body = Buffer.from(bodyOf(req.url!))
        res.writeHead(200, { "content-type": "text/plain; charset=utf-8", "content-length": String(body.length) })
        res.end(body)
      })
      const sources = Array.from({ length: 40 }, (_, i) => server.url(`/s${i}.txt`))
      const { capture, directory } = yield* stage(sources, 8)
      const results = yield* capture.captureAll(sources)
      results.forEach(({ result, source }, i) => {
        if (i % 4 === 3) {
          assert.strictEqual(result._tag === "Left" && result.left._tag, "UnsupportedContentType", source)
        } else {
          assert.strictEqual(result._tag === "Right" && result.right.sha256, sha256Of(Buffer.from(bodyOf(`/s${i}.txt`))), source)
        }
      })
      // The ten refused responses were aborted: their sockets close although their bodies never end.
      yield* waitUntil(() => server.closed >= 10, "the refused responses' sockets are closed", 2_000)
      const names = yield* Effect.promise(() => fsp.readdir(directory))
      assert.strictEqual(names.filter((name) => name.endsWith(".json")).length, 30)
      assert.deepStrictEqual(names.filter((name) => !name.endsWith(".json")), [], "no temporary file is left")
    }))
})
