import { assert, describe, it } from "@effect/vitest"
import { Context, Effect, Layer } from "effect"
import * as net from "node:net"
import * as zlib from "node:zlib"
import * as Capture from "../src/capture/Capture.js"
import * as CaptureStore from "../src/store/CaptureStore.js"
import { UnsupportedTransferEncoding } from "../src/Errors.js"
import { waitUntil } from "./httpServer.js"
import { snapshotDirectory, tempDirectory } from "./support.js"

/**
 * A raw TCP server on 127.0.0.1 writing an exact HTTP response (node:http would normalise the
 * framing headers), closed with the scope. It counts connections and closes.
 */
const rawServer = (response: (request: string) => Buffer) =>
  Effect.acquireRelease(
    Effect.async<{ server: net.Server; state: { port: number; connections: number; closed: number } }>((resume) => {
      const state = { port: 0, connections: 0, closed: 0 }
      const sockets = new Set<net.Socket>()
      const server = net.createServer((socket) => {
        state.connections++
        sockets.add(socket)
        socket.on("close", () => {
          state.closed++
          sockets.delete(socket)
        })
        socket.on("error", () => undefined)
        let request = ""
        socket.on("data", (data) => {
          request += data.toString("latin1")
          if (request.includes("\r\n\r\n")) socket.write(response(request))
        })
      })
      server.on("close", () => sockets.forEach((s) => s.destroy()))
      server.listen(0, "127.0.0.1", () => {
        state.port = (server.address() as net.AddressInfo).port
        resume(Effect.succeed({ server, state }))
      })
    }),
    ({ server }) => Effect.async<void>((resume) => void server.close(() => resume(Effect.void)))
  ).pipe(Effect.map(({ state }) => state))

const chunked = (body: Buffer) =>
  Buffer.concat([Buffer.from(`${body.length.toString(16)}\r\n`), body, Buffer.from("\r\n0\r\n\r\n")])

const head = (transferEncoding: ReadonlyArray<string>) =>
  Buffer.from(
    "HTTP/1.1 200 OK\r\ncontent-type: text/plain; charset=utf-8\r\n" +
      transferEncoding.map((value) => `transfer-encoding: ${value}\r\n`).join("") + "\r\n",
    "latin1"
  )

const captureFrom = (port: number) =>
  Effect.gen(function*() {
    const directory = yield* tempDirectory
    const source = `http://127.0.0.1:${port}/source.txt`
    const context = yield* Layer.build(
      Capture.layer({ approved: [source], allowLoopbackHttp: true, timeoutMs: 5_000 }).pipe(
        Layer.provide(CaptureStore.layerFileSystem({ directory }))
      )
    ).pipe(Effect.orDie)
    const result = yield* Effect.either(Context.get(context, Capture.Capture).capture(source))
    return { result, directory, source }
  })

describe("Capture: Transfer-Encoding", () => {
  it.scopedLive("UnsupportedTransferEncoding: `gzip, chunked` is refused, never handed over still encoded", () =>
    Effect.gen(function*() {
      const gzipped = zlib.gzipSync("Net sales for Q3 2026 were 4,210 units.\n")
      // One chunk and no end: the response is refused on its headers and the socket closed, not drained.
      const firstChunk = Buffer.concat([Buffer.from(`${gzipped.length.toString(16)}\r\n`), gzipped, Buffer.from("\r\n")])
      const server = yield* rawServer(() => Buffer.concat([head(["gzip, chunked"]), firstChunk]))
      const { directory, result, source } = yield* captureFrom(server.port)
      assert.isTrue(result._tag === "Left")
      const error = result._tag === "Left" ? result.left : undefined
      assert.instanceOf(error, UnsupportedTransferEncoding)
      assert.strictEqual(error.source, source)
      assert.strictEqual(error.transferEncoding, "gzip, chunked")
      assert.deepStrictEqual(yield* snapshotDirectory(directory), [])
      yield* waitUntil(() => server.closed === server.connections, "the socket is closed")
    }))

  it.scopedLive("UnsupportedTransferEncoding: a text body under any other coding, and a repeated header", () =>
    Effect.gen(function*() {
      // Bytes that are valid UTF-8 text: without the header check they would become a capture.
      const text = Buffer.from("looks like text but is framed by an unknown coding\n")
      const cases: ReadonlyArray<readonly [ReadonlyArray<string>, Buffer, string]> = [
        [["x-custom, chunked"], chunked(text), "x-custom, chunked"],
        [["chunked", "chunked"], chunked(text), "chunked, chunked"],
        [["gzip"], text, "gzip"]
      ]
      for (const [headers, body, joined] of cases) {
        const server = yield* rawServer(() => Buffer.concat([head(headers), body]))
        const { directory, result } = yield* captureFrom(server.port)
        assert.isTrue(result._tag === "Left", joined)
        const error = result._tag === "Left" ? result.left : undefined
        assert.instanceOf(error, UnsupportedTransferEncoding, joined)
        assert.strictEqual(error.transferEncoding, joined)
        assert.deepStrictEqual(yield* snapshotDirectory(directory), [])
      }
    }))

  it.scopedLive("plain `chunked` (any case) is still captured", () =>
    Effect.gen(function*() {
      for (const value of ["chunked", "Chunked"]) {
        const text = Buffer.from("Net sales for Q3 2026 were 4,210 units.\n")
        const server = yield* rawServer(() => Buffer.concat([head([value]), chunked(text)]))
        const { result } = yield* captureFrom(server.port)
        assert.isTrue(result._tag === "Right", value)
        if (result._tag === "Right") assert.strictEqual(result.right.byteLength, text.length)
      }
    }))
})
