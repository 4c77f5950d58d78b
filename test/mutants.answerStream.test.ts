/**
 * The streaming answer machine at its edges: NDJSON bytes to lines (each limit at and one past
 * its value, blank runs, CR, lines cut across chunks, what goes out before a failure, line
 * numbers), the resolved limits, and the machine's events (ids, offsets, sentences, summaries,
 * the order of events around a failure). Expected values are written out by hand.
 */
import { assert, describe, it } from "@effect/vitest"
import { Chunk, Effect, Stream } from "effect"
import { Evi1Invalid, StreamLimitExceeded, StreamLineInvalid } from "../src/Errors.js"
import * as AnswerStream from "../src/server/AnswerStream.js"
import { deltas, evidence, manifest, sample, sampleStreamed, streamLayer, type VerifierCalls } from "./streamSupport.js"
import { salesRecord } from "./support.js"

type Event = AnswerStream.StreamEvent

const encoder = new TextEncoder()
const bytes = (...parts: ReadonlyArray<string | Uint8Array>) => parts.map((p) => (typeof p === "string" ? encoder.encode(p) : p))

/** The lines of `chunks`, and the failure that ended them (if any). */
const lines = (chunks: ReadonlyArray<Uint8Array>, maxLine: number, maxInput?: number) =>
  Effect.gen(function*() {
    const out: Array<string> = []
    const error = yield* Stream.runForEach(
      AnswerStream.ndjsonLines(Stream.fromIterable(chunks), maxLine, maxInput),
      (line) => Effect.sync(() => out.push(line))
    ).pipe(Effect.flip, Effect.option)
    return { lines: out, error: error._tag === "Some" ? error.value : undefined }
  })

describe("blankLines", () => {
  it("counts a run of LFs, one for an empty line, 0 for anything else", () => {
    assert.strictEqual(AnswerStream.blankLines(""), 1)
    assert.strictEqual(AnswerStream.blankLines("\n"), 1)
    assert.strictEqual(AnswerStream.blankLines("\n\n\n"), 3)
    assert.strictEqual(AnswerStream.blankLines("x"), 0)
    assert.strictEqual(AnswerStream.blankLines("\nx"), 0)
    assert.strictEqual(AnswerStream.blankLines("\n\nx"), 0)
    assert.strictEqual(AnswerStream.blankLines("x\n"), 0)
    assert.strictEqual(AnswerStream.blankLines("\r"), 0)
    assert.strictEqual(AnswerStream.blankLines("\n\r"), 0)
  })
})

describe("ndjsonLines", () => {
  it.effect("a line of exactly maxLineBytes passes, one byte more fails, in one chunk or held across chunks", () =>
    Effect.gen(function*() {
      assert.deepStrictEqual(yield* lines(bytes("abcd\n"), 4), { lines: ["abcd"], error: undefined })
      assert.deepStrictEqual(
        yield* lines(bytes("ok\nabcde\nnext\n"), 4),
        { lines: ["ok"], error: new StreamLimitExceeded({ limit: "line-length", max: 4, received: 5 }) }
      )
      // Held across chunks: 2 + 2 bytes held then the LF: exactly 4.
      assert.deepStrictEqual(yield* lines(bytes("ab", "cd", "\n"), 4), { lines: ["abcd"], error: undefined })
      assert.deepStrictEqual(yield* lines(bytes("ab", "cd\n"), 4), { lines: ["abcd"], error: undefined })
      // 3 held, then 2 more before the LF: 5.
      assert.deepStrictEqual(
        yield* lines(bytes("abc", "de\n"), 4),
        { lines: [], error: new StreamLimitExceeded({ limit: "line-length", max: 4, received: 5 }) }
      )
      // Held without an LF yet: 5 bytes held fail at once.
      assert.deepStrictEqual(
        yield* lines(bytes("abc", "de"), 4),
        { lines: [], error: new StreamLimitExceeded({ limit: "line-length", max: 4, received: 5 }) }
      )
      // A last line without an LF, exactly at the limit.
      assert.deepStrictEqual(yield* lines(bytes("x\n", "abcd"), 4), { lines: ["x", "abcd"], error: undefined })
      // The line after a long line's LF starts at 0 again.
      assert.deepStrictEqual(yield* lines(bytes("abcd\nefgh\nijkl"), 4), { lines: ["abcd", "efgh", "ijkl"], error: undefined })
      assert.deepStrictEqual(yield* lines(bytes("ab", "cd\nefgh\n"), 4), { lines: ["abcd", "efgh"], error: undefined })
    }))

  it.effect("maxInputBytes counts every byte (blank lines too): exactly the limit passes, one more fails with the total", () =>
    Effect.gen(function*() {
      assert.deepStrictEqual(yield* lines(bytes("ab\n", "\n\n", "c\n"), 10, 7), { lines: ["ab", "\n\n", "c"], error: undefined })
      assert.deepStrictEqual(
        yield* lines(bytes("ab\n", "\n\n", "cd\n"), 10, 7),
        { lines: ["ab", "\n\n"], error: new StreamLimitExceeded({ limit: "input-size", max: 7, received: 8 }) }
      )
      // Without a limit: no limit.
      assert.deepStrictEqual((yield* lines(bytes("a\n".repeat(100)), 10)).lines.length, 100)
    }))

  it.effect("blank runs: empty lines and lone CRs in one chunk are one element; a CR held from the previous chunk is a line", () =>
    Effect.gen(function*() {
      assert.deepStrictEqual(yield* lines(bytes("a\n\r\n\n\r\nb\n"), 10), { lines: ["a", "\n\n\n", "b"], error: undefined })
      // Two CRs are not a line end; a CR after text is part of the line.
      assert.deepStrictEqual(yield* lines(bytes("\r\r\nb\r\n"), 10), { lines: ["\r\r", "b\r"], error: undefined })
      // The CR arrives in one chunk and its LF in the next: the CR is held, then is a line of its own.
      assert.deepStrictEqual(yield* lines(bytes("a\n\r", "\nb\n"), 10), { lines: ["a", "\r", "b"], error: undefined })
      // Blank runs of separate chunks are separate elements; a run at the very end goes out.
      assert.deepStrictEqual(yield* lines(bytes("\n\n", "\n", "x\n\n"), 10), { lines: ["\n\n", "\n", "x", "\n"], error: undefined })
      assert.deepStrictEqual(yield* lines(bytes(""), 10), { lines: [], error: undefined })
    }))

  it.effect("what precedes a failure in the same chunk goes out first, blank runs included; line numbers count blank lines", () =>
    Effect.gen(function*() {
      assert.deepStrictEqual(
        yield* lines(bytes("a\n\n\nabcdef\n"), 4),
        { lines: ["a", "\n\n"], error: new StreamLimitExceeded({ limit: "line-length", max: 4, received: 6 }) }
      )
      assert.deepStrictEqual(
        yield* lines(bytes("a\n\n\r\n", new Uint8Array([0x61, 0xc3, 0x0a]), "b\n"), 4),
        { lines: ["a", "\n\n"], error: new StreamLineInvalid({ line: 4, detail: "not valid UTF-8" }) }
      )
      // Invalid UTF-8 in a last line without LF, after a held part.
      assert.deepStrictEqual(
        yield* lines(bytes("ok\n", new Uint8Array([0xe2, 0x82]), new Uint8Array([0x28])), 8),
        { lines: ["ok"], error: new StreamLineInvalid({ line: 2, detail: "not valid UTF-8" }) }
      )
      // A character split across chunks is whole.
      assert.deepStrictEqual(
        yield* lines(bytes(new Uint8Array([0xe2, 0x82]), new Uint8Array([0xac, 0x0a])), 8),
        { lines: ["€"], error: undefined }
      )
      // A byte-order mark is kept (ignoreBOM), not stripped.
      assert.deepStrictEqual((yield* lines(bytes(new Uint8Array([0xef, 0xbb, 0xbf, 0x61, 0x0a])), 8)).lines, ["\ufeffa"])
    }))

  it.effect("nothing is pulled after a failure", () =>
    Effect.gen(function*() {
      let pulled = 0
      const source = Stream.fromIterable(bytes("abcdefgh\n", "more\n", "more\n")).pipe(Stream.tap(() => Effect.sync(() => pulled++)))
      const error = yield* Effect.flip(Stream.runDrain(AnswerStream.ndjsonLines(source.pipe(Stream.rechunk(1)), 4)))
      assert.deepStrictEqual(error, new StreamLimitExceeded({ limit: "line-length", max: 4, received: 8 }))
      assert.strictEqual(pulled, 1)
    }))

  it.effect("a reused input buffer does not change lines already held", () =>
    Effect.gen(function*() {
      const buffer = new Uint8Array(3)
      // Chunks are pulled one at a time: the buffer is overwritten only after the previous chunk was taken.
      const source = Stream.fromIterable(["abc", "def", "g\n"]).pipe(
        Stream.rechunk(1),
        Stream.map((s) => {
          if (s.length !== 3) return encoder.encode(s)
          buffer.set(encoder.encode(s))
          return buffer
        })
      )
      const out = Chunk.toArray(yield* Stream.runCollect(AnswerStream.ndjsonLines(source, 16)))
      assert.deepStrictEqual(out, ["abcdefg"])
    }))
})

describe("resolved limits", () => {
  it.effect("defaults, and the answer-size and claim limits capped at the answers' own limits", () =>
    Effect.gen(function*() {
      assert.deepStrictEqual(AnswerStream.defaultLimits, {
        maxLineBytes: 65_536,
        maxInputBytes: 8_388_608,
        maxAnswerChars: 1_048_576,
        maxClaims: 1_000,
        maxCitations: 4_000,
        deadlineMs: 120_000
      })
      const byDefault = yield* Effect.map(AnswerStream.AnswerStream, (s) => s.limits).pipe(Effect.provide(streamLayer()))
      assert.deepStrictEqual(byDefault, AnswerStream.defaultLimits)
      const capped = yield* Effect.map(AnswerStream.AnswerStream, (s) => s.limits).pipe(
        Effect.provide(streamLayer({ maxAnswerChars: 100_000_000, maxClaims: 1_000_000, maxCitations: 7, maxLineBytes: 9 }))
      )
      assert.deepStrictEqual(capped, { ...AnswerStream.defaultLimits, maxAnswerChars: 16_777_216, maxClaims: 10_000, maxCitations: 7, maxLineBytes: 9 })
      const lower = yield* Effect.map(AnswerStream.AnswerStream, (s) => s.limits).pipe(Effect.provide(streamLayer({ maxAnswerChars: 5, maxClaims: 2 })))
      assert.deepStrictEqual([lower.maxAnswerChars, lower.maxClaims], [5, 2])
    }))
})

// ---------------------------------------------------------------------------
// The machine
// ---------------------------------------------------------------------------

const delta = (text: string) => JSON.stringify({ type: "delta", text })

/** The events of `texts`, each fed as its own input chunk (so each line's events are its own). */
const streamOf = (
  texts: ReadonlyArray<string>,
  options: Partial<AnswerStream.StreamOptions> = {},
  limits: Partial<AnswerStream.StreamLimits> = {},
  counter?: VerifierCalls
) =>
  Effect.gen(function*() {
    const m = yield* manifest
    const service = yield* AnswerStream.AnswerStream
    const input = Stream.fromIterable(texts.map(delta)).pipe(Stream.rechunk(1))
    return Chunk.toArray(yield* Stream.runCollect(service.stream(input, { manifest: m, ...options })))
  }).pipe(Effect.provide(streamLayer(limits, counter)))

/** Events without ids, typed errors as plain objects: what a client decodes. */
const plain = (events: ReadonlyArray<Event>) => events.map((e) => JSON.parse(AnswerStream.encodeEvent(e)))
const ids = (events: ReadonlyArray<Event>) => events.map((e) => e.id)
const errorOf = (events: ReadonlyArray<Event>) => {
  const errors = events.filter((e): e is Extract<Event, { type: "error" }> => e.type === "error")
  assert.strictEqual(errors.length, 1)
  assert.deepStrictEqual(events.slice(-2).map((e) => e.type), ["error", "done"])
  return JSON.parse(JSON.stringify(AnswerStream.encodeEvent(errors[0]!) && JSON.parse(AnswerStream.encodeEvent(errors[0]!)).error))
}
const doneOf = (events: ReadonlyArray<Event>) => JSON.parse(AnswerStream.encodeEvent(events.at(-1)!))

const zeroSummary = { claims: 0, claimsGrounded: 0, claimsRemoved: 0, citations: 0, citationsVerified: 0, citationsRetracted: 0 }

describe("AnswerStream: what streams when", () => {
  it.effect("text that may still be a marker is held; the rest streams at once; markers become [^k] at their offsets", () =>
    Effect.gen(function*() {
      const m = yield* manifest
      const events = yield* streamOf([
        "Sales rose 4",
        "2 units.[",
        "1]{c",
        "1}\n",
        `EVI1\nMANIFEST ${m.digest}\n`,
        "c1|1|\"4,210 units\"\n",
        "END_EVI1\n"
      ])
      const at = salesTextIndex("4,210 units")
      assert.deepStrictEqual(plain(events), [
        { id: 1, type: "delta", text: "Sales rose ", footnotes: [] },
        { id: 2, type: "delta", text: "42 units.", footnotes: [] },
        { id: 3, type: "delta", text: "[^1]\n", footnotes: [{ footnote: 1, claimId: "c1", source: 1, at: 20 }] },
        {
          id: 4,
          type: "citation",
          footnote: 1,
          claimId: "c1",
          sourceNumber: 1,
          source: m.sources[0]!.source,
          captureSha256: (m.sources[0] as any).captureSha256,
          quote: "4,210 units",
          span: { start: at, end: at + 11 },
          occurrences: 1
        },
        { id: 5, type: "done", state: "grounded", summary: { claims: 1, claimsGrounded: 1, claimsRemoved: 0, citations: 1, citationsVerified: 1, citationsRetracted: 0 }, uncited: [] }
      ])
    }))

  it.effect("a high surrogate ending a piece waits for its pair; every marker character is held ([ ] { } c and digits)", () =>
    Effect.gen(function*() {
      const m = yield* manifest
      const bike = "🚲"
      const events = yield* streamOf([
        `The ${bike[0]}`,
        `${bike[1]} fleet grew to 42 bikes.[3]{c1} Then [`,
        "]",
        "{",
        "}",
        "c",
        "0",
        "9",
        "x\n",
        `EVI1\nMANIFEST ${m.digest}\nc1|3|"The 🚲 fleet grew to 42 bikes"\nEND_EVI1\n`
      ])
      const deltas = events.filter((e) => e.type === "delta").map((e: any) => e.text)
      assert.deepStrictEqual(deltas, ["The ", `${bike} fleet grew to 42 bikes.[^1] Then `, "[]{}c09x\n"])
      assert.strictEqual(doneOf(events).state, "grounded")
    }))

  it.effect("a line is the appendix only when it is exactly EVI1; EVI1 held while it may still be that line", () =>
    Effect.gen(function*() {
      const m = yield* manifest
      const body = yield* streamOf(["EVIL is a word.", " EVI1 too.\nEV", "I", "1x\n", "xEVI1\n", "EVI\n", "EVI11\n"], { manifestDigest: m.digest })
      assert.deepStrictEqual(
        body.filter((e) => e.type === "delta").map((e: any) => e.text),
        ["EVIL is a word.", " EVI1 too.\n", "EVI1x\n", "xEVI1\n", "EVI\n", "EVI11\n"]
      )
      assert.deepStrictEqual(doneOf(body), { id: 7, type: "done", state: "no_evidence", summary: zeroSummary, uncited: [] })
      // Cut anywhere, EVI1 starts the appendix and is never streamed.
      const appendix = yield* streamOf(["Net sales were up.[1]{c1}\nE", "V", "I", "1", `\nMANIFEST ${m.digest}\nc1|1|"4,210 units"\nEND_EVI1\n`])
      assert.deepStrictEqual(appendix.filter((e) => e.type === "delta").map((e: any) => e.text), ["Net sales were up.[^1]\n"])
      assert.strictEqual(doneOf(appendix).state, "grounded")
    }))
})

/** Where `quote` starts in the sales capture's text (UTF-16). */
const salesTextIndex = (quote: string) => salesRecord.text.indexOf(quote)
