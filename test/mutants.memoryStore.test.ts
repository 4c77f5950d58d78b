/**
 * The in-memory store, pinned where its mutants survived: v2 records and their
 * bodies (copies in, copies out, the first body under a digest kept), exact
 * errors, and a record that cannot be serialised. Expected digests come from
 * node:crypto here.
 */
import { assert, describe, it } from "@effect/vitest"
import { Context, Effect, Layer } from "effect"
import { createHash } from "node:crypto"
import * as CaptureStore from "../src/store/CaptureStore.js"
import { type CaptureRecord, captureFormatV2, type CaptureRecordV2, makeCaptureRecord, type SourceUrl } from "../src/Domain.js"
import { CaptureExists, CaptureWriteFailed, MissingCapture } from "../src/Errors.js"
import * as MemoryStore from "../src/store/Memory.js"
import { failureOf } from "./mutants.support.js"
import { accessedAt } from "./support.js"

const sha = (data: string | Uint8Array) => createHash("sha256").update(data).digest("hex") as CaptureRecordV2["sha256"]

const v2 = (source: string, text: string, body: Uint8Array, bodySha: string = sha(body)): CaptureRecordV2 => ({
  format: captureFormatV2,
  source: source as SourceUrl,
  sha256: sha(text),
  accessedAt,
  extraction: "html/1",
  body: { sha256: bodySha as CaptureRecordV2["sha256"], byteLength: body.byteLength, contentType: "text/html" },
  text
})

const A = "https://m.test/a"
const B = "https://m.test/b"

describe("MemoryStore: v2 records and bodies", () => {
  it.effect("a v2 record reads back with its body; the body is required at its declared length", () =>
    Effect.gen(function*() {
      const store = yield* MemoryStore.make()
      const body = new Uint8Array([1, 2, 3, 4])
      const record = v2(A, "text", body)
      const detail = "a v2 record is written with the body it describes"
      assert.deepStrictEqual(yield* failureOf(store.write(record)), new CaptureWriteFailed({ source: A, detail }))
      assert.deepStrictEqual(yield* failureOf(store.write(record, body.subarray(1))), new CaptureWriteFailed({ source: A, detail }))
      // A failed write stores nothing: neither the record nor the body.
      assert.deepStrictEqual(yield* failureOf(store.read(A as SourceUrl)), new MissingCapture({ source: A }))
      assert.deepStrictEqual(yield* failureOf(store.readBody(sha(body))), new MissingCapture({ source: `body ${sha(body)}` }))
      yield* store.write(record, body)
      assert.deepStrictEqual(yield* store.read(A as SourceUrl), record)
      assert.deepStrictEqual(Array.from(yield* store.readBody(sha(body))), [1, 2, 3, 4])
    }))

  it.effect("the body is copied in and out: the caller changing its buffers changes nothing stored", () =>
    Effect.gen(function*() {
      const store = yield* MemoryStore.make()
      const body = new Uint8Array([1, 2, 3, 4])
      yield* store.write(v2(A, "text", body), body)
      body[0] = 9
      const out = yield* store.readBody(sha(new Uint8Array([1, 2, 3, 4])))
      assert.deepStrictEqual(Array.from(out), [1, 2, 3, 4])
      out[1] = 9
      assert.deepStrictEqual(Array.from(yield* store.readBody(sha(new Uint8Array([1, 2, 3, 4])))), [1, 2, 3, 4])
      assert.deepStrictEqual((yield* store.read(A as SourceUrl)).format, captureFormatV2)
    }))

  it.effect("the first body stored under a digest is kept; a record that names other bytes under it is refused at write", () =>
    Effect.gen(function*() {
      const store = yield* MemoryStore.make()
      const body = new Uint8Array([1, 2, 3, 4])
      const first = v2(A, "first", body)
      yield* store.write(first, body)
      // Buggy trusted code: B claims the same digest for other bytes of the same length.
      const other = new Uint8Array([5, 6, 7, 8])
      const second = v2(B, "second", other, sha(body))
      assert.deepStrictEqual(
        yield* failureOf(store.write(second, other)),
        new CaptureWriteFailed({ source: B, detail: `the body hashes to ${sha(other)}, the record says ${sha(body)}` })
      )
      assert.deepStrictEqual(yield* store.read(A as SourceUrl), first)
      assert.deepStrictEqual(yield* failureOf(store.read(B as SourceUrl)), new MissingCapture({ source: B }))
      assert.deepStrictEqual(Array.from(yield* store.readBody(sha(body))), [1, 2, 3, 4])
    }))

  it.effect("a second write of a v2 source is CaptureExists before anything else, and stores no body", () =>
    Effect.gen(function*() {
      const store = yield* MemoryStore.make()
      const body = new Uint8Array([1, 2, 3, 4])
      yield* store.write(v2(A, "text", body), body)
      const other = new Uint8Array([5, 6, 7, 8])
      assert.deepStrictEqual(yield* failureOf(store.write(v2(A, "text", other), other)), new CaptureExists({ source: A }))
      assert.deepStrictEqual(yield* failureOf(store.write(v2(A, "text", other))), new CaptureExists({ source: A }))
      assert.deepStrictEqual(yield* failureOf(store.readBody(sha(other))), new MissingCapture({ source: `body ${sha(other)}` }))
    }))

  it.effect("a body that does not hash to the digest its record names is refused at write: nothing is stored", () =>
    Effect.gen(function*() {
      const store = yield* MemoryStore.make()
      const body = new Uint8Array([1, 2, 3, 4])
      const claimed = "ab".repeat(32)
      const record = v2(A, "text", body, claimed)
      assert.deepStrictEqual(
        yield* failureOf(store.write(record, body)),
        new CaptureWriteFailed({ source: A, detail: `the body hashes to ${sha(body)}, the record says ${claimed}` })
      )
      assert.deepStrictEqual(yield* failureOf(store.read(A as SourceUrl)), new MissingCapture({ source: A }))
      assert.deepStrictEqual(
        yield* failureOf(store.readBody(claimed as CaptureRecordV2["sha256"])),
        new MissingCapture({ source: `body ${claimed}` })
      )
    }))
})

describe("MemoryStore: writes and seeding", () => {
  it.effect("a record that cannot be serialised is CaptureWriteFailed, and nothing is stored", () =>
    Effect.gen(function*() {
      const store = yield* MemoryStore.make()
      const record = { ...makeCaptureRecord({ source: A as SourceUrl, text: "x", accessedAt, contentType: "text/plain" }), byteLength: 1n }
      const error = yield* failureOf(store.write(record as unknown as CaptureRecord))
      assert.deepStrictEqual(
        error,
        new CaptureWriteFailed({ source: A, detail: "TypeError: Do not know how to serialize a BigInt" })
      )
      assert.deepStrictEqual(yield* failureOf(store.read(A as SourceUrl)), new MissingCapture({ source: A }))
    }))

  it.effect("seeded records are read back; the layer builds a fresh store each time", () =>
    Effect.gen(function*() {
      const record = makeCaptureRecord({ source: A as SourceUrl, text: "seeded", accessedAt, contentType: "text/plain" })
      const seeded = yield* MemoryStore.make({ records: [record] })
      assert.deepStrictEqual(yield* seeded.read(A as SourceUrl), record)
      const layer = MemoryStore.layer()
      const one = Context.get(yield* Effect.scoped(Layer.build(layer)), CaptureStore.CaptureStore)
      const two = Context.get(yield* Effect.scoped(Layer.build(layer)), CaptureStore.CaptureStore)
      yield* one.write(record)
      assert.deepStrictEqual(yield* two.read(A as SourceUrl).pipe(failureOf), new MissingCapture({ source: A }))
      const fromLayer = Context.get(yield* Effect.scoped(Layer.build(MemoryStore.layer({ records: [record] }))), CaptureStore.CaptureStore)
      assert.deepStrictEqual(yield* fromLayer.read(A as SourceUrl), record)
      const empty = yield* MemoryStore.make()
      assert.deepStrictEqual(yield* failureOf(empty.read(A as SourceUrl)), new MissingCapture({ source: A }))
    }))
})
