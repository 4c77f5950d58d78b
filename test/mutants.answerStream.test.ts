/**
 * The streaming answer machine at its edges: NDJSON bytes to lines (each limit at and one past
 * its value, blank runs, CR, lines cut across chunks, what goes out before a failure, line
 * numbers), the resolved limits, and the machine's events (ids, offsets, sentences, summaries,
 * the order of events around a failure). Expected values are written out by hand.
 */
import { assert, describe, it } from "@effect/vitest"
import { Chunk, Effect, Fiber, Stream, TestClock } from "effect"
import { StreamLimitExceeded, StreamLineInvalid } from "../src/Errors.js"
import * as AnswerStream from "../src/server/AnswerStream.js"
import { manifest, streamLayer, type VerifierCalls } from "./streamSupport.js"
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
const errorOf = (events: ReadonlyArray<Event>) => {
  const errors = events.filter((e): e is Extract<Event, { type: "error" }> => e.type === "error")
  assert.strictEqual(errors.length, 1)
  assert.deepStrictEqual(events.slice(-2).map((e) => e.type), ["error", "done"])
  return JSON.parse(AnswerStream.encodeEvent(errors[0]!)).error
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
          occurrences: 1,
          method: "exact"
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
      // Only a high surrogate that ends the piece waits: a lone one before a marker character is text.
      const lone = yield* streamOf(["ab\ud83d[", "x\n"], { manifestDigest: m.digest })
      assert.deepStrictEqual(lone.filter((e) => e.type === "delta").map((e: any) => e.text), ["ab\ud83d", "[x\n"])
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

describe("AnswerStream: limits at and one past their value", () => {
  it.effect("answer size, claims and citations: exactly the limit streams on, one more is the error", () =>
    Effect.gen(function*() {
      const m = yield* manifest
      const text = `A is 4,210.[1]{c1} B is 1,180.[2][1]{c2}\nEVI1\nMANIFEST ${m.digest}\nc1|1|"4,210"\nc2|2|"1,180"\nc2|1|"4,210"\nEND_EVI1\n`
      const pieces = [text.slice(0, 10), text.slice(10)]
      const exact = yield* streamOf(pieces, {}, { maxAnswerChars: text.length, maxClaims: 2, maxCitations: 3 })
      assert.strictEqual(doneOf(exact).state, "grounded")
      assert.deepStrictEqual(doneOf(exact).summary, { claims: 2, claimsGrounded: 2, claimsRemoved: 0, citations: 3, citationsVerified: 3, citationsRetracted: 0 })
      assert.deepStrictEqual(
        errorOf(yield* streamOf(pieces, {}, { maxAnswerChars: text.length - 1 })),
        { _tag: "StreamLimitExceeded", limit: "answer-size", max: text.length - 1, received: text.length }
      )
      assert.deepStrictEqual(errorOf(yield* streamOf(pieces, {}, { maxClaims: 1 })), { _tag: "StreamLimitExceeded", limit: "claims", max: 1, received: 2 })
      assert.deepStrictEqual(errorOf(yield* streamOf(pieces, {}, { maxCitations: 2 })), { _tag: "StreamLimitExceeded", limit: "citations", max: 2, received: 3 })
      assert.deepStrictEqual(errorOf(yield* streamOf(pieces, {}, { maxCitations: 1 })), { _tag: "StreamLimitExceeded", limit: "citations", max: 1, received: 3 })
    }))
})

describe("AnswerStream: input lines", () => {
  it.effect("blank and lone-CR lines are skipped but counted; a malformed line names its line and the issue's path", () =>
    Effect.gen(function*() {
      const m = yield* manifest
      const service = yield* AnswerStream.AnswerStream
      const run = (lines: ReadonlyArray<string>) =>
        Effect.map(Stream.runCollect(service.stream(Stream.fromIterable(lines).pipe(Stream.rechunk(1)), { manifest: m, manifestDigest: m.digest })), Chunk.toArray)
      const ok = yield* run(["\n\n", "\r", "", delta("Hello.\n")])
      assert.deepStrictEqual(plain(ok), [
        { id: 1, type: "delta", text: "Hello.\n", footnotes: [] },
        { id: 2, type: "done", state: "no_evidence", summary: zeroSummary, uncited: [] }
      ])
      const extra = errorOf(yield* run(["\n\n", "\r", delta("Hello. "), JSON.stringify({ type: "delta", text: "x", more: 1 })]))
      assert.strictEqual(extra._tag, "StreamLineInvalid")
      assert.strictEqual(extra.line, 5)
      assert.match(extra.detail, / at more$/)
      const wrongType = errorOf(yield* run([JSON.stringify({ type: "delta", text: 7 })]))
      assert.strictEqual(wrongType.line, 1)
      assert.match(wrongType.detail, / at text$/)
      const notJson = errorOf(yield* run(["", "{"]))
      assert.strictEqual(notJson.line, 2)
      // The JSON issue has no path: no " at …" suffix.
      assert.match(notJson.detail, /^not valid JSON: /)
      assert.notMatch(notJson.detail, / at $/)
    }).pipe(Effect.provide(streamLayer())))

  it.effect("deltas streamed before a failure in the same input chunk go out before the error", () =>
    Effect.gen(function*() {
      const m = yield* manifest
      const service = yield* AnswerStream.AnswerStream
      const events = Chunk.toArray(
        yield* Stream.runCollect(service.stream(Stream.make(delta("One. "), delta("Two"), "nope", delta("never")), { manifest: m }))
      )
      assert.deepStrictEqual(events.map((e) => [e.id, e.type]), [[1, "delta"], [2, "delta"], [3, "error"], [4, "done"]])
      assert.deepStrictEqual(plain(events).slice(0, 2).map((e) => e.text), ["One. ", "Two"])
      assert.deepStrictEqual(doneOf(events), { id: 4, type: "done", state: "rejected", summary: zeroSummary, uncited: [] })
    }).pipe(Effect.provide(streamLayer())))
})

describe("AnswerStream: the body's protocol errors", () => {
  const issue = (events: ReadonlyArray<Event>) => {
    const error = errorOf(events)
    assert.strictEqual(error._tag, "Evi1Invalid")
    return error.issues
  }
  it.effect("a repeated claim id names the first line; a source out of range or not captured; a marker without a sentence", () =>
    Effect.gen(function*() {
      const m = yield* manifest
      assert.deepStrictEqual(issue(yield* streamOf(["Up 4,210.[1]{c1}\nSecond line.\nAgain 4,210.[1]{c1}\n"])), [
        { _tag: "Evi1DuplicateClaimId", line: 3, claimId: "c1", firstLine: 1 }
      ])
      assert.deepStrictEqual(issue(yield* streamOf(["Up.[5]{c1}\n"])), [
        { _tag: "Evi1SourceOutOfRange", line: 1, claimId: "c1", source: 5, sources: 4 }
      ])
      assert.deepStrictEqual(issue(yield* streamOf(["Intro.\nUp.[1][0]{c2}\n"])), [
        { _tag: "Evi1SourceOutOfRange", line: 2, claimId: "c2", source: 0, sources: 4 }
      ])
      assert.deepStrictEqual(issue(yield* streamOf(["Up.[1][4]{c1}\n"])), [
        { _tag: "Evi1SourceUnavailable", line: 1, claimId: "c1", source: 4, url: m.sources[3]!.source }
      ])
      assert.deepStrictEqual(issue(yield* streamOf(["[1]{c1} and more.\n"])), [
        { _tag: "Evi1MalformedLine", line: 1, detail: "{c1} ends no sentence (no text before its citation group)" }
      ])
      assert.deepStrictEqual(issue(yield* streamOf(["One.[1]{c1}   [2]{c2}\n"])), [
        { _tag: "Evi1MalformedLine", line: 1, detail: "{c2} ends no sentence (no text before its citation group)" }
      ])
    }))

  it.effect("a claim's sentence: its text without markers, its span over the streamed text with its own markers", () =>
    Effect.gen(function*() {
      const m = yield* manifest
      const body = "Intro line.\nFirst one. Second one is here.  [1][2]{c1} Tail.[1]{c2}\n"
      const streamed = "Intro line.\nFirst one. Second one is here.  [^1][^2] Tail.[^3]\n"
      const events = yield* streamOf([
        body,
        `EVI1\nMANIFEST ${m.digest}\nc1|1|"no such text"\nc1|2|"no such text either"\nc2|1|"4,210"\nEND_EVI1\n`
      ])
      const retractions = plain(events).filter((e) => e.type === "retraction")
      assert.deepStrictEqual(retractions.map((r) => [r.footnote, r.claimId, r.claim, r.removeSentence, streamed.slice(r.sentence.start, r.sentence.end)]), [
        [1, "c1", "Second one is here.", false, "Second one is here.  [^1][^2]"],
        [2, "c1", "Second one is here.", true, "Second one is here.  [^1][^2]"]
      ])
      assert.deepStrictEqual(retractions[0].sentence, { start: 23, end: 52 })
      assert.deepStrictEqual(retractions.map((r) => r.reasons.map((x: any) => x._tag)), [["SnippetAbsent"], ["SnippetAbsent"]])
      const marks = plain(events).filter((e) => e.type === "delta").flatMap((e) => e.footnotes)
      assert.deepStrictEqual(marks, [
        { footnote: 1, claimId: "c1", source: 1, at: 44 },
        { footnote: 2, claimId: "c1", source: 2, at: 48 },
        { footnote: 3, claimId: "c2", source: 1, at: 58 }
      ])
      for (const mark of marks) assert.isTrue(streamed.startsWith(`[^${mark.footnote}]`, mark.at))
      assert.deepStrictEqual(doneOf(events).summary, { claims: 2, claimsGrounded: 1, claimsRemoved: 1, citations: 3, citationsVerified: 1, citationsRetracted: 2 })
      assert.strictEqual(doneOf(events).state, "grounded")
    }))
})

describe("AnswerStream: the appendix", () => {
  const issue = (events: ReadonlyArray<Event>) => {
    const error = errorOf(events)
    assert.strictEqual(error._tag, "Evi1Invalid")
    return error.issues
  }
  it.effect("after END_EVI1 only blank lines; MANIFEST only first and well-formed; malformed, repeated, unused evidence", () =>
    Effect.gen(function*() {
      const m = yield* manifest
      const head = `Up 4,210.[1]{c1}\nEVI1\n`
      const ok = `${head}MANIFEST ${m.digest}\nc1|1|"4,210"\nEND_EVI1\n`
      assert.strictEqual(doneOf(yield* streamOf([ok, "   \n", "\t\n"])).state, "grounded")
      assert.deepStrictEqual(issue(yield* streamOf([ok, "  x\n"])), [
        { _tag: "Evi1MalformedLine", line: 6, detail: "text after END_EVI1 (only blank lines may follow the appendix)" }
      ])
      // Found while the text arrives: nothing after that line is read (a malformed input line after it is not seen).
      const early = yield* Effect.flatMap(AnswerStream.AnswerStream, (service) =>
        Effect.map(Stream.runCollect(service.stream(Stream.make(delta(ok), delta("  x\n"), "not json").pipe(Stream.rechunk(1)), { manifest: m })), Chunk.toArray)
      ).pipe(Effect.provide(streamLayer()))
      assert.deepStrictEqual(issue(early), [
        { _tag: "Evi1MalformedLine", line: 6, detail: "text after END_EVI1 (only blank lines may follow the appendix)" }
      ])
      assert.deepStrictEqual(issue(yield* streamOf([`${head}MANIFEST ${m.digest.toUpperCase()}\n`])), [
        { _tag: "Evi1MalformedLine", line: 3, detail: "MANIFEST must be followed by 64 lowercase hex characters" }
      ])
      assert.deepStrictEqual(issue(yield* streamOf([`${head}MANIFEST ${m.digest}x\n`])), [
        { _tag: "Evi1MalformedLine", line: 3, detail: "MANIFEST must be followed by 64 lowercase hex characters" }
      ])
      // A second MANIFEST line is an evidence line, and not a well-formed one.
      assert.deepStrictEqual(issue(yield* streamOf([`${head}MANIFEST ${m.digest}\nMANIFEST ${m.digest}\n`])), [
        { _tag: "Evi1MalformedLine", line: 4, detail: "expected cX|n|\"quote\"" }
      ])
      assert.deepStrictEqual(issue(yield* streamOf([`${head}MANIFEST ${m.digest}\nc1|1|"4,210"\nc1|1|"4,210"\n`])), [
        { _tag: "Evi1DuplicateEvidence", line: 5, claimId: "c1", source: 1, firstLine: 4 }
      ])
      assert.deepStrictEqual(issue(yield* streamOf([`${head}MANIFEST ${m.digest}\nc1|2|"4,210"\n`])), [
        { _tag: "Evi1UnusedEvidence", line: 4, claimId: "c1", source: 2 }
      ])
      assert.deepStrictEqual(issue(yield* streamOf([`${head}MANIFEST ${m.digest}\nc1|1|"4,210"\n`])), [
        { _tag: "Evi1MalformedLine", line: 5, detail: "the appendix does not end with END_EVI1" }
      ])
      // The last line without its LF is still read.
      assert.deepStrictEqual(issue(yield* streamOf([`${head}MANIFEST ${m.digest}\nc1|1|"4,210"\nEND_EVI1\nmore`])), [
        { _tag: "Evi1MalformedLine", line: 6, detail: "text after END_EVI1 (only blank lines may follow the appendix)" }
      ])
      assert.strictEqual(doneOf(yield* streamOf([`${head}MANIFEST ${m.digest}\nc1|1|"4,210"\nEND_EVI1`])).state, "grounded")
      // A body that ends without LF is parsed too: its marker counts.
      const noLf = yield* streamOf(["Up 4,210.[1]{c1}"], { manifestDigest: m.digest })
      assert.deepStrictEqual(issue(noLf), [{ _tag: "Evi1MissingEvidence", line: 1, claimId: "c1", source: 1 }])
    }))

  it.effect("the manifest: named by the MANIFEST line, the caller, or both (both must match); neither is StaleManifest", () =>
    Effect.gen(function*() {
      const m = yield* manifest
      const body = `Up 4,210.[1]{c1}\nEVI1\n`
      const evidenceOnly = `${body}c1|1|"4,210"\nEND_EVI1\n`
      assert.strictEqual(doneOf(yield* streamOf([evidenceOnly], { manifestDigest: m.digest })).state, "grounded")
      assert.deepStrictEqual(errorOf(yield* streamOf([evidenceOnly])), { _tag: "StaleManifest", named: null, current: m.digest })
      // END_EVI1 right after EVI1 checks the manifest too.
      assert.deepStrictEqual(errorOf(yield* streamOf(["Plain.\nEVI1\nEND_EVI1\n"])), { _tag: "StaleManifest", named: null, current: m.digest })
      assert.strictEqual(doneOf(yield* streamOf(["Plain.\nEVI1\nEND_EVI1\n"], { manifestDigest: m.digest })).state, "no_evidence")
      // Found at END_EVI1, while the text arrives: a malformed input line after it is not read.
      const early = yield* Effect.flatMap(AnswerStream.AnswerStream, (service) =>
        Effect.map(Stream.runCollect(service.stream(Stream.make(delta("Plain.\nEVI1\nEND_EVI1\n"), "not json").pipe(Stream.rechunk(1)), { manifest: m })), Chunk.toArray)
      ).pipe(Effect.provide(streamLayer()))
      assert.deepStrictEqual(errorOf(early), { _tag: "StaleManifest", named: null, current: m.digest })
      const other = "0".repeat(64)
      assert.deepStrictEqual(
        errorOf(yield* streamOf([`${body}MANIFEST ${m.digest}\nc1|1|"4,210"\nEND_EVI1\n`], { manifestDigest: other })),
        { _tag: "StaleManifest", named: other, current: m.digest }
      )
      assert.deepStrictEqual(
        errorOf(yield* streamOf([`${body}MANIFEST ${other}\nc1|1|"4,210"\nEND_EVI1\n`], { manifestDigest: m.digest })),
        { _tag: "StaleManifest", named: other, current: m.digest }
      )
    }))

  it.effect("missing evidence at END_EVI1: every missing citation, at most 100 listed and the rest counted", () =>
    Effect.gen(function*() {
      const m = yield* manifest
      const claims = Array.from({ length: 102 }, (_, i) => `S${i}.[1]{c${i + 1}}`).join(" ")
      const events = yield* streamOf([`${claims}\nEVI1\nMANIFEST ${m.digest}\nc2|1|"4,210"\nEND_EVI1\n`])
      const error = errorOf(events)
      assert.strictEqual(error._tag, "Evi1Invalid")
      assert.strictEqual(error.issues.length, 100)
      assert.strictEqual(error.omitted, 1)
      assert.deepStrictEqual(error.issues[0], { _tag: "Evi1MissingEvidence", line: 1, claimId: "c1", source: 1 })
      assert.deepStrictEqual(error.issues[1], { _tag: "Evi1MissingEvidence", line: 1, claimId: "c3", source: 1 })
      // Exactly 100 missing: all listed, none omitted.
      const hundred = Array.from({ length: 101 }, (_, i) => `S${i}.[1]{c${i + 1}}`).join(" ")
      const exact = errorOf(yield* streamOf([`${hundred}\nEVI1\nMANIFEST ${m.digest}\nc2|1|"4,210"\nEND_EVI1\n`]))
      assert.strictEqual(exact.issues.length, 100)
      assert.notProperty(exact, "omitted")
      const few = errorOf(yield* streamOf([`A.[1]{c1} B.[1][2]{c2}\nEVI1\nMANIFEST ${m.digest}\nc2|1|"4,210"\nEND_EVI1\n`]))
      assert.deepStrictEqual(few, {
        _tag: "Evi1Invalid",
        issues: [{ _tag: "Evi1MissingEvidence", line: 1, claimId: "c1", source: 1 }, { _tag: "Evi1MissingEvidence", line: 1, claimId: "c2", source: 2 }]
      })
    }))
})

describe("AnswerStream: the end", () => {
  it.effect("reject mode with a retraction, or uncited reject with an uncited sentence: AnswerRejected with what applies", () =>
    Effect.gen(function*() {
      const m = yield* manifest
      const text = `Net sales for Q3 2026 were 4,210 units.[1]{c1} Stock rose by 9,999 units in the north.[1]{c2}\nRevenue in Q3 2026 was 12,345 units across 3 regions.\nEVI1\nMANIFEST ${m.digest}\nc1|1|"4,210 units"\nc2|1|"9,999 units"\nEND_EVI1\n`
      const dropped = yield* streamOf([text])
      const done = doneOf(dropped)
      assert.strictEqual(done.state, "grounded")
      assert.deepStrictEqual(done.summary, { claims: 2, claimsGrounded: 1, claimsRemoved: 1, citations: 2, citationsVerified: 1, citationsRetracted: 1 })
      assert.deepStrictEqual(done.uncited.map((u: any) => [u.sentence, u.line]), [["Revenue in Q3 2026 was 12,345 units across 3 regions.", 2]])
      const rejected = errorOf(yield* streamOf([text], { mode: "reject" }))
      assert.strictEqual(rejected._tag, "AnswerRejected")
      assert.deepStrictEqual(rejected.citations.map((c: any) => [c.claimIndex, c.claimId, c.citationIndex, c.error._tag]), [[1, "c2", 0, "SnippetAbsent"]])
      assert.deepStrictEqual(rejected.uncited, [])
      const uncited = errorOf(yield* streamOf([text], { uncited: "reject" }))
      assert.strictEqual(uncited._tag, "AnswerRejected")
      assert.deepStrictEqual(uncited.citations.map((c: any) => c.claimId), ["c2"])
      assert.deepStrictEqual(uncited.uncited.map((u: any) => u.sentence), ["Revenue in Q3 2026 was 12,345 units across 3 regions."])
      // Reject modes with nothing to reject: grounded.
      const clean = `Net sales for Q3 2026 were 4,210 units.[1]{c1}\nEVI1\nMANIFEST ${m.digest}\nc1|1|"4,210 units"\nEND_EVI1\n`
      assert.strictEqual(doneOf(yield* streamOf([clean], { mode: "reject", uncited: "reject" })).state, "grounded")
      // Every citation retracted: no evidence.
      const none = doneOf(yield* streamOf([clean.replace("\"4,210 units\"", "\"4,211 units\"")]))
      assert.strictEqual(none.state, "no_evidence")
      assert.deepStrictEqual(none.summary, { claims: 1, claimsGrounded: 0, claimsRemoved: 1, citations: 1, citationsVerified: 0, citationsRetracted: 1 })
    }))

  it.effect("the deadline: not before deadlineMs, then StreamDeadline and done (on the test clock)", () =>
    Effect.gen(function*() {
      const m = yield* manifest
      const service = yield* AnswerStream.AnswerStream
      const stalled = Stream.concat(Stream.make(delta("Net sales rose.")), Stream.never)
      const fiber = yield* Effect.fork(Stream.runCollect(service.stream(stalled, { manifest: m })))
      yield* TestClock.adjust("999 millis")
      assert.isTrue((yield* Fiber.poll(fiber))._tag === "None")
      yield* TestClock.adjust("1 millis")
      const events = Chunk.toArray(yield* Fiber.join(fiber))
      assert.deepStrictEqual(plain(events), [
        { id: 1, type: "delta", text: "Net sales rose.", footnotes: [] },
        { id: 2, type: "error", error: { _tag: "StreamDeadline", timeoutMs: 1000 } },
        { id: 3, type: "done", state: "rejected", summary: zeroSummary, uncited: [] }
      ])
    }).pipe(Effect.provide(streamLayer({ deadlineMs: 1000 }))))
})

describe("AnswerStream: events as JSON", () => {
  it.effect("decodeEvent reads what encodeEvent writes, strictly: an unknown key is refused", () =>
    Effect.gen(function*() {
      const m = yield* manifest
      const events = yield* streamOf([`Up 4,210.[1]{c1}\nEVI1\nMANIFEST ${m.digest}\nc1|1|"4,210"\nEND_EVI1\n`])
      for (const event of events) assert.deepStrictEqual(AnswerStream.decodeEvent(AnswerStream.encodeEvent(event)), event)
      const done = JSON.parse(AnswerStream.encodeEvent(events.at(-1)!))
      assert.throws(() => AnswerStream.decodeEvent(JSON.stringify({ ...done, extra: 1 })))
    }))
})
