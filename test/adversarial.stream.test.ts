import { assert, describe, it } from "@effect/vitest"
import { Chunk, Effect, Stream } from "effect"
import { StreamLineInvalid } from "../src/Errors.js"
import * as AnswerStream from "../src/server/AnswerStream.js"
import { deltas, manifest, sample, streamLayer } from "./streamSupport.js"

const encoder = new TextEncoder()

// A body of nothing but line ends is the cheapest input to send: within the 8 MiB input limit it is
// millions of lines. Each used to be one element through the stream and the machine (about 11 s of
// server CPU and 750 MB for 8 MiB of LFs); a run of blank lines is now one element.
describe("blank lines in a streamed answer", () => {
  it.effect("a run of blank lines, LF or CRLF, is one element of that many LFs, whatever its length", () =>
    Effect.gen(function*() {
      const lfs = new Uint8Array(1024 * 1024).fill(10)
      const crlfs = encoder.encode("\r\n".repeat(1000))
      const out = Chunk.toArray(
        yield* Stream.runCollect(
          AnswerStream.ndjsonLines(Stream.make(encoder.encode("{\"a\":1}\n"), lfs, crlfs, encoder.encode("{\"b\":2}\n")), 64)
        )
      )
      assert.deepStrictEqual(out.map((line) => AnswerStream.blankLines(line)), [0, 1024 * 1024, 1000, 0])
      assert.strictEqual(out[0], "{\"a\":1}")
      assert.strictEqual(out[3], "{\"b\":2}")
    }))

  it("blankLines: empty is one blank line, LFs are that many, anything else none", () => {
    assert.strictEqual(AnswerStream.blankLines(""), 1)
    assert.strictEqual(AnswerStream.blankLines("\n\n\n"), 3)
    assert.strictEqual(AnswerStream.blankLines("\n{\"type\":\"delta\"}"), 0)
    assert.strictEqual(AnswerStream.blankLines("{}"), 0)
    assert.strictEqual(AnswerStream.blankLines("\r"), 0)
  })

  it.effect("blank lines are skipped but counted: an error after them names its real line", () =>
    Effect.gen(function*() {
      const m = yield* manifest
      const service = yield* AnswerStream.AnswerStream
      const body = [
        JSON.stringify({ type: "delta", text: "Hello. " }) + "\n",
        "\n".repeat(100_000),
        "\r\n".repeat(10),
        "not json\n"
      ].join("")
      const events = Chunk.toArray(
        yield* Stream.runCollect(service.stream(AnswerStream.ndjsonLines(Stream.make(encoder.encode(body)), 1024), { manifest: m }))
      )
      assert.deepStrictEqual(events.map((e) => e.type), ["delta", "error", "done"])
      const error = (events[1] as Extract<AnswerStream.StreamEvent, { type: "error" }>).error
      assert.instanceOf(error, StreamLineInvalid)
      assert.strictEqual((error as StreamLineInvalid).line, 1 + 100_000 + 10 + 1)
    }).pipe(Effect.provide(streamLayer())))

  it.effect("an answer interleaved with blank lines streams as without them", () =>
    Effect.gen(function*() {
      const m = yield* manifest
      const service = yield* AnswerStream.AnswerStream
      const lines = deltas(sample(m.digest), 40)
      const plain = lines.map((l) => l + "\n").join("")
      const padded = lines.map((l) => "\n\n\r\n" + l + "\n\n").join("")
      const runOn = (body: string) =>
        Stream.runCollect(service.stream(AnswerStream.ndjsonLines(Stream.make(encoder.encode(body)), 1024), { manifest: m })).pipe(
          Effect.map(Chunk.toArray)
        )
      const a = yield* runOn(plain)
      const b = yield* runOn(padded)
      assert.strictEqual(a.at(-1)!.type, "done")
      assert.deepStrictEqual(b, a)
    }).pipe(Effect.provide(streamLayer())))
})
