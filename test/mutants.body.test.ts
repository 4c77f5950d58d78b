/**
 * Reading a body within the byte cap (capture/Body.ts), on each of its three
 * paths: an announced length up to 1 MiB (read whole), an announced length past
 * 1 MiB (copied into one buffer as it arrives) and no announced length (streamed
 * against the cap, switching to one buffer past 1 MiB). The bodies are real Node
 * readable streams, so the chunk sizes, a short or long body and a failure
 * mid-body are exact. Expected
 * bytes come from a position-keyed pattern, so a piece copied to the wrong place
 * shows.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { Readable } from "node:stream"
import { readBody } from "../src/capture/Body.js"
import { AddressRefusedError } from "../src/capture/Dispatcher.js"
import type { SourceUrl } from "../src/Domain.js"
import { failureOf } from "./mutants.support.js"

const source = "https://reports.northwind.test/q3.txt" as SourceUrl
const MiB = 1024 * 1024

/** `length` bytes of a pattern keyed on the absolute position. */
const pattern = (length: number, from = 0) => {
  const bytes = new Uint8Array(length)
  for (let i = 0; i < length; i++) bytes[i] = ((from + i) * 31 + 7) & 255
  return bytes
}

/** The pattern cut into pieces of the given sizes. */
const pieces = (sizes: ReadonlyArray<number>) => {
  let at = 0
  return sizes.map((size) => {
    const piece = pattern(size, at)
    at += size
    return piece
  })
}

const total = (sizes: ReadonlyArray<number>) => sizes.reduce((a, b) => a + b, 0)

/** A body that arrives as exactly these pieces, then ends or fails with `failure`. */
const responseOf = (chunks: ReadonlyArray<Uint8Array>, failure?: Error) => {
  let next = 0
  return new Readable({
    read() {
      if (next < chunks.length) return void this.push(chunks[next++]!)
      if (failure !== undefined) return void this.destroy(failure)
      this.push(null)
    }
  })
}

const read = (sizes: ReadonlyArray<number>, declared: number | null, maxBytes: number, failure?: Error) =>
  readBody(source, responseOf(pieces(sizes), failure), declared, { maxBytes })

const refusal = (sizes: ReadonlyArray<number>, declared: number | null, maxBytes: number, failure?: Error) =>
  Effect.map(failureOf(read(sizes, declared, maxBytes, failure)), (error): Record<string, unknown> => ({ ...error }))

const sameBytes = (actual: Uint8Array, sizes: ReadonlyArray<number>) => {
  const expected = pattern(total(sizes))
  assert.strictEqual(actual.byteLength, expected.byteLength)
  assert.isTrue(Buffer.from(actual).equals(Buffer.from(expected)), "the body's bytes, in order")
}

const reset = () => new Error("socket reset by peer")
const refusedMidway = () => new AddressRefusedError("reports.northwind.test", "10.0.0.1", "private address")
const addressRejected = {
  _tag: "AddressRejected",
  source,
  host: "reports.northwind.test",
  address: "10.0.0.1",
  reason: "private address"
}

describe("an announced length up to 1 MiB: read whole", () => {
  it.effect("exactly the announced bytes", () =>
    Effect.gen(function*() {
      const sizes = [3, 4, 1]
      sameBytes(yield* read(sizes, 8, 100), sizes)
    }))

  it.effect("fewer or more bytes than announced: TruncatedBody with both counts", () =>
    Effect.gen(function*() {
      assert.deepStrictEqual(yield* refusal([5], 10, 100), { _tag: "TruncatedBody", source, expectedBytes: 10, receivedBytes: 5 })
      assert.deepStrictEqual(yield* refusal([3, 2], 3, 100), { _tag: "TruncatedBody", source, expectedBytes: 3, receivedBytes: 5 })
    }))

  it.effect("a transport failure mid-body: TruncatedBody, count unknown; an address refusal keeps its own tag", () =>
    Effect.gen(function*() {
      assert.deepStrictEqual(yield* refusal([5], 10, 100, reset()), {
        _tag: "TruncatedBody",
        source,
        expectedBytes: 10,
        receivedBytes: null
      })
      assert.deepStrictEqual(yield* refusal([5], 10, 100, refusedMidway()), addressRejected)
    }))

  it.effect("exactly 1 MiB announced is still read whole: one byte more is TruncatedBody, not AmbiguousHeader", () =>
    Effect.gen(function*() {
      assert.deepStrictEqual(yield* refusal([MiB, 1], MiB, 2 * MiB), {
        _tag: "TruncatedBody",
        source,
        expectedBytes: MiB,
        receivedBytes: MiB + 1
      })
    }))
})

describe("an announced length past 1 MiB: copied as it arrives", () => {
  const declared = MiB + 10

  it.effect("uneven pieces land in order", () =>
    Effect.gen(function*() {
      const sizes = [400_000, 1, 648_585]
      assert.strictEqual(total(sizes), declared)
      sameBytes(yield* read(sizes, declared, 2 * MiB), sizes)
    }))

  it.effect("fewer bytes than announced: TruncatedBody with the bytes received", () =>
    Effect.gen(function*() {
      assert.deepStrictEqual(yield* refusal([500_000, 500_000], declared, 2 * MiB), {
        _tag: "TruncatedBody",
        source,
        expectedBytes: declared,
        receivedBytes: 1_000_000
      })
    }))

  it.effect("a piece that would pass the announced length: AmbiguousHeader content-length, never an overrun", () =>
    Effect.gen(function*() {
      assert.deepStrictEqual(yield* refusal([declared - 5, 6], declared, 2 * MiB), {
        _tag: "AmbiguousHeader",
        source,
        header: "content-length",
        value: String(declared)
      })
      // Exactly filling it, then one byte more in a later piece.
      assert.deepStrictEqual(yield* refusal([declared, 1], declared, 2 * MiB), {
        _tag: "AmbiguousHeader",
        source,
        header: "content-length",
        value: String(declared)
      })
    }))

  it.effect("a transport failure mid-body: TruncatedBody, count unknown; an address refusal keeps its own tag", () =>
    Effect.gen(function*() {
      assert.deepStrictEqual(yield* refusal([100], declared, 2 * MiB, reset()), {
        _tag: "TruncatedBody",
        source,
        expectedBytes: declared,
        receivedBytes: null
      })
      assert.deepStrictEqual(yield* refusal([100], declared, 2 * MiB, refusedMidway()), addressRejected)
    }))
})

describe("no announced length: streamed against the cap", () => {
  it.effect("small pieces are joined in order", () =>
    Effect.gen(function*() {
      const sizes = [1, 7, 300, 2]
      sameBytes(yield* read(sizes, null, 1_000), sizes)
      sameBytes(yield* read([], null, 1_000), [])
    }))

  it.effect("exactly maxBytes passes; passing it is TooLarge counting the piece that passed it", () =>
    Effect.gen(function*() {
      sameBytes(yield* read([600, 400], null, 1_000), [600, 400])
      assert.deepStrictEqual(yield* refusal([600, 401], null, 1_000), {
        _tag: "TooLarge",
        source,
        maxBytes: 1_000,
        declaredBytes: null,
        receivedBytes: 1_001
      })
      assert.deepStrictEqual(yield* refusal([600, 600, 600], null, 1_000), {
        _tag: "TooLarge",
        source,
        maxBytes: 1_000,
        declaredBytes: null,
        receivedBytes: 1_200
      })
      assert.deepStrictEqual(yield* refusal([1_001], null, 1_000), {
        _tag: "TooLarge",
        source,
        maxBytes: 1_000,
        declaredBytes: null,
        receivedBytes: 1_001
      })
    }))

  it.effect("past 1 MiB the pieces move into one buffer: every byte in order, before and after the switch", () =>
    Effect.gen(function*() {
      for (const sizes of [[300_000, 300_000, 300_000, 300_000, 300_000], [MiB - 3, 3, 5], [MiB, 1], [700_000, 700_000]]) {
        sameBytes(yield* read(sizes, null, 2 * MiB), sizes)
      }
      // Filling the cap exactly after the switch, and passing it by one.
      sameBytes(yield* read([MiB, MiB], null, 2 * MiB), [MiB, MiB])
      assert.deepStrictEqual(yield* refusal([MiB, MiB, 1], null, 2 * MiB), {
        _tag: "TooLarge",
        source,
        maxBytes: 2 * MiB,
        declaredBytes: null,
        receivedBytes: 2 * MiB + 1
      })
    }))

  it.effect("a transport failure mid-body: ConnectionFailed with the cause; an address refusal keeps its own tag", () =>
    Effect.gen(function*() {
      const failed = yield* refusal([10], null, 1_000, reset())
      assert.strictEqual(failed._tag, "ConnectionFailed")
      assert.strictEqual(failed.source, source)
      assert.include(failed.detail, "socket reset by peer")
      assert.deepStrictEqual(yield* refusal([10], null, 1_000, refusedMidway()), addressRejected)
    }))
})
