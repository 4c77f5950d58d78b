/**
 * Memory and disk at the size cap: a capture's peak memory stays a small
 * multiple of `maxBytes`, the record a small multiple of the body, and the
 * record streamed in pieces is byte-for-byte the one-piece serialisation.
 */
import { assert, describe, it } from "@effect/vitest"
import { Context, Effect, Layer } from "effect"
import * as fsp from "node:fs/promises"
import * as path from "node:path"
import * as Capture from "../src/capture/Capture.js"
import * as CaptureStore from "../src/store/CaptureStore.js"
import { type CaptureRecordV1, makeCaptureRecord } from "../src/Domain.js"
import { TruncatedBody } from "../src/Errors.js"
import { testServer } from "./httpServer.js"
import { recordPath, salesRecord, tempDirectory } from "./support.js"
import { gcChildJson } from "./support/gcChild.js"

const MiB = 1024 * 1024

/** `JSON.stringify` of the whole record, keys in the canonical order: what a record file held before streaming. */
const wholeJson = (record: CaptureRecordV1) =>
  JSON.stringify({
    format: record.format,
    source: record.source,
    sha256: record.sha256,
    accessedAt: record.accessedAt,
    contentType: record.contentType,
    byteLength: record.byteLength,
    text: record.text
  }) + "\n"

/** Runs the measurement script in a process of its own and returns its JSON line. */
const measure = (args: ReadonlyArray<string>) =>
  gcChildJson<Record<string, number>>(path.join(import.meta.dirname, "..", "scripts", "bench-memory-child.ts"), args)

describe("CaptureStore: the record is written in pieces", () => {
  it.effect("the pieces join to exactly JSON.stringify of the record, surrogate pairs never split", () =>
    Effect.sync(() => {
      const texts = ["", "a", "😀", "a😀", "😀😀😀", "\u0001\"\\\n😀\u2028é\u0000", "\ud800x", "x\udc00", "😀".repeat(9) + "\u001f"]
      for (const text of texts) {
        const record = { ...salesRecord, text }
        for (const size of [1, 2, 3, 4, 5, 7, 16]) {
          const pieces = Array.from(CaptureStore.encodeRecordChunks(record, size))
          assert.strictEqual(pieces.join(""), wholeJson(record), `text ${JSON.stringify(text)}, pieces of ${size}`)
        }
      }
    }))

  it.scoped("a record of many staging buffers is written byte-for-byte as before and reads back", () =>
    Effect.gen(function*() {
      const directory = yield* tempDirectory
      const store = yield* CaptureStore.makeFileSystem({ directory })
      // 2 MiB of control characters and pairs: about 9 MiB of JSON, so nine or more staging buffers.
      const record = makeCaptureRecord({ ...salesRecord, text: "\u0001\u0002😀 ok\n".repeat(192 * 1024) })
      yield* store.write(record)
      const onDisk = yield* Effect.promise(() => fsp.readFile(recordPath(directory, record.source), "utf8"))
      assert.strictEqual(onDisk, wholeJson(record))
      assert.deepStrictEqual(yield* store.read(record.source), record)
    }))
})

describe("Capture at the size cap", () => {
  it.scopedLive.each([["with", ""], ["without", "chunked"]])(
    "peak memory ≤ 3 × maxBytes over baseline and the record ≤ 6 × body, %s a Content-Length (separate process)",
    ([, chunked]) =>
    Effect.gen(function*() {
      const directory = yield* tempDirectory
      // The budget of the issue: the largest allowed, where the fixed cost of the process (tens of MiB) is small beside it.
      const maxBytes = 64 * MiB
      const result = yield* measure(["capture", String(maxBytes), directory, ...(chunked === "" ? [] : [chunked!])])
      assert.strictEqual(result.bodyBytes, maxBytes)
      assert.isAtMost(result.aboveBaselineBytes!, 3 * maxBytes, `peak ${(result.aboveBaselineBytes! / MiB).toFixed(1)} MiB over baseline`)
      // Every byte U+0001 escapes to six: the worst case of the v1 JSON format, plus the other fields.
      assert.isAtMost(result.recordBytes!, 6 * maxBytes + 4096)
      assert.isAbove(result.recordBytes!, 6 * maxBytes)
    }), { timeout: 120_000 })

  it.scopedLive("TruncatedBody: a large body (read into one buffer) shorter than its Content-Length", () =>
    Effect.gen(function*() {
      const declared = 3 * MiB
      const server = yield* testServer((_req, res) => {
        res.writeHead(200, { "content-type": "text/plain", "content-length": String(declared) })
        res.write(Buffer.alloc(2 * MiB, 0x61))
        setTimeout(() => res.socket?.destroy(), 50)
      })
      const directory = yield* tempDirectory
      const source = server.url("/short.txt")
      const context = yield* Layer.build(
        Capture.layer({ approved: [source], allowLoopbackHttp: true, maxBytes: 4 * MiB }).pipe(
          Layer.provide(CaptureStore.layerFileSystem({ directory }))
        )
      )
      const error = yield* Effect.flip(Context.get(context, Capture.Capture).capture(source))
      assert.instanceOf(error, TruncatedBody)
      assert.strictEqual(error.expectedBytes, declared)
      assert.include([null, 2 * MiB], error.receivedBytes)
      assert.deepStrictEqual(yield* Effect.promise(() => fsp.readdir(directory)), [])
    }))

  it.scopedLive.each([["with", true], ["without", false]])("a large body %s a Content-Length is captured whole", ([, declared]) =>
    Effect.gen(function*() {
      const body = Buffer.from("Net sales rose é 😀\n".repeat(100_000))
      const server = yield* testServer((_req, res) => {
        res.writeHead(200, { "content-type": "text/plain", ...(declared ? { "content-length": String(body.byteLength) } : {}) })
        // In pieces, so that the body arrives in many chunks across the 1 MiB switch to one buffer.
        for (let at = 0; at < body.byteLength; at += 100_000) res.write(body.subarray(at, at + 100_000))
        res.end()
      })
      const directory = yield* tempDirectory
      const source = server.url("/big.txt")
      const context = yield* Layer.build(
        Capture.layer({ approved: [source], allowLoopbackHttp: true, maxBytes: 4 * MiB }).pipe(
          Layer.provide(CaptureStore.layerFileSystem({ directory }))
        )
      )
      const ref = yield* Context.get(context, Capture.Capture).capture(source)
      assert.strictEqual(ref.byteLength, body.byteLength)
      const store = yield* CaptureStore.makeFileSystem({ directory })
      assert.strictEqual((yield* store.read(ref.source)).text, body.toString("utf8"))
    }))
})
