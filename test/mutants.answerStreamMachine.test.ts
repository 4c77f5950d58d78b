/**
 * The streaming answer machine (AnswerStream's `Machine`) at the edges its first tests left open:
 * where a delta may be cut (the first and last character of a piece, the surrogate range's ends,
 * `EVI1` at a line's start only), what is still checked while the text arrives (a malformed body
 * line, missing evidence at END_EVI1, the manifest at the first evidence line: each seen before a
 * malformed input line that follows it, which must not be read), the text of the footnote marks,
 * the first line of a repeated claim id, the last held text at the end and before an error, the
 * page of a PDF citation, and one Verifier call per batch of completed citations (none without).
 * Expected values are written out by hand.
 */
import { assert, describe, it } from "@effect/vitest"
import { Chunk, Effect, Layer, Stream } from "effect"
import * as CaptureStore from "../src/store/CaptureStore.js"
import type { PipelineConfig } from "../src/Config.js"
import { captureFormatV2, type CaptureRecordV2, sha256Of, type SourceUrl } from "../src/Domain.js"
import * as Manifest from "../src/Manifest.js"
import * as Policy from "../src/verify/Policy.js"
import * as AnswerStream from "../src/server/AnswerStream.js"
import * as MemoryStore from "../src/store/Memory.js"
import * as Verifier from "../src/verify/Verifier.js"
import { manifest, streamLayer, type VerifierCalls } from "./streamSupport.js"
import { accessedAt } from "./support.js"

type Event = AnswerStream.StreamEvent

const delta = (text: string) => JSON.stringify({ type: "delta", text })

/** The events of input lines (NDJSON texts, not necessarily well-formed), each its own chunk. */
const run = (
  lines: ReadonlyArray<string>,
  options: Partial<AnswerStream.StreamOptions> = {},
  counter?: VerifierCalls
) =>
  Effect.gen(function*() {
    const m = yield* manifest
    const service = yield* AnswerStream.AnswerStream
    const input = Stream.fromIterable(lines).pipe(Stream.rechunk(1))
    return Chunk.toArray(yield* Stream.runCollect(service.stream(input, { manifest: m, ...options })))
  }).pipe(Effect.provide(streamLayer({}, counter)))

/** The events of delta texts, each fed as its own input chunk. */
const streamOf = (texts: ReadonlyArray<string>, options: Partial<AnswerStream.StreamOptions> = {}, counter?: VerifierCalls) =>
  run(texts.map(delta), options, counter)

const plain = (events: ReadonlyArray<Event>) => events.map((e) => JSON.parse(AnswerStream.encodeEvent(e)))
const deltasOf = (events: ReadonlyArray<Event>) => events.filter((e) => e.type === "delta").map((e: any) => e.text as string)
const doneOf = (events: ReadonlyArray<Event>) => JSON.parse(AnswerStream.encodeEvent(events.at(-1)!))
const errorOf = (events: ReadonlyArray<Event>) => {
  assert.deepStrictEqual(events.slice(-2).map((e) => e.type), ["error", "done"])
  return JSON.parse(AnswerStream.encodeEvent(events.at(-2)!)).error
}

const zeroSummary = { claims: 0, claimsGrounded: 0, claimsRemoved: 0, citations: 0, citationsVerified: 0, citationsRetracted: 0 }

describe("where a delta is cut", () => {
  it.effect("a piece whose only character that cannot belong to a marker is its first streams at once", () =>
    Effect.gen(function*() {
      const m = yield* manifest
      const events = yield* streamOf(["ab", "e", "d[", "x\n"], { manifestDigest: m.digest })
      assert.deepStrictEqual(deltasOf(events), ["ab", "e", "d", "[x\n"])
    }))

  it.effect("a piece ending in U+D800 or U+DBFF (the high surrogates' ends) waits for its pair; U+FF0C does not wait", () =>
    Effect.gen(function*() {
      const m = yield* manifest
      const options = { manifestDigest: m.digest }
      assert.deepStrictEqual(deltasOf(yield* streamOf(["ab\ud800", "\udc00 x\n"], options)), ["ab", "\ud800\udc00 x\n"])
      assert.deepStrictEqual(deltasOf(yield* streamOf(["ab\udbff", "\udfff y\n"], options)), ["ab", "\udbff\udfff y\n"])
      // Just past the range: a character of its own, streamed with its piece.
      assert.deepStrictEqual(deltasOf(yield* streamOf(["ab\uff0c", "z\n"], options)), ["ab\uff0c", "z\n"])
      assert.deepStrictEqual(deltasOf(yield* streamOf(["ab\ue000", "z\n"], options)), ["ab\ue000", "z\n"])
    }))

  it.effect("EVI1 is held only at a line's start: the very first line too, and never after streamed text", () =>
    Effect.gen(function*() {
      const m = yield* manifest
      const options = { manifestDigest: m.digest }
      // The first line of the answer may be EVI1: its start is held.
      assert.deepStrictEqual(deltasOf(yield* streamOf(["EV", "I1x\n"], options)), ["EVI1x\n"])
      const appendixOnly = yield* streamOf(["EV", "I1\nEND_EVI1\n"], options)
      assert.deepStrictEqual(plain(appendixOnly), [{ id: 1, type: "done", state: "no_evidence", summary: zeroSummary, uncited: [] }])
      // After text that streamed, the rest of the line is no longer held for EVI1, and is never the appendix.
      assert.deepStrictEqual(deltasOf(yield* streamOf(["Ab ", "E", "V", "I1\n"], options)), ["Ab ", "E", "V", "I1\n"])
      const midLine = yield* streamOf(["Ab ", "EVI1\n", "Next.\n"], options)
      assert.deepStrictEqual(deltasOf(midLine), ["Ab ", "EVI1\n", "Next.\n"])
      assert.deepStrictEqual(doneOf(midLine), { id: 4, type: "done", state: "no_evidence", summary: zeroSummary, uncited: [] })
    }))
})

describe("what is checked while the text arrives (a malformed input line after it is never read)", () => {
  it.effect("a body line the EVI1 parser refuses: a source repeated in a group, an orphan claim marker", () =>
    Effect.gen(function*() {
      const repeated = yield* run([delta("Up 4,210.[1][1]{c1}\n"), "not json"])
      assert.deepStrictEqual(errorOf(repeated), {
        _tag: "Evi1Invalid",
        issues: [{ _tag: "Evi1MalformedLine", line: 1, detail: "source [1] is repeated in the citation group of {c1}" }]
      })
      const orphan = yield* run([delta("Intro.\nSee {c2} here.\n"), "not json"])
      assert.deepStrictEqual(errorOf(orphan), { _tag: "Evi1Invalid", issues: [{ _tag: "Evi1OrphanMarker", line: 2, claimId: "c2" }] })
    }))

  it.effect("missing evidence is found at END_EVI1", () =>
    Effect.gen(function*() {
      const m = yield* manifest
      const events = yield* run([delta(`A.[1]{c1} B.[1][2]{c2}\nEVI1\nMANIFEST ${m.digest}\nc2|1|"4,210"\nEND_EVI1\n`), "not json"])
      assert.deepStrictEqual(errorOf(events), {
        _tag: "Evi1Invalid",
        issues: [
          { _tag: "Evi1MissingEvidence", line: 1, claimId: "c1", source: 1 },
          { _tag: "Evi1MissingEvidence", line: 1, claimId: "c2", source: 2 }
        ]
      })
    }))

  it.effect("an evidence line without a manifest named by the appendix or the caller is StaleManifest at that line", () =>
    Effect.gen(function*() {
      const m = yield* manifest
      const events = yield* run([delta(`Up 4,210.[1]{c1}\nEVI1\nc1|1|"4,210"\n`), "not json"])
      assert.deepStrictEqual(errorOf(events), { _tag: "StaleManifest", named: null, current: m.digest })
    }))

  it.effect("MANIFEST with anything before its 64 hex characters is malformed, not a stale digest", () =>
    Effect.gen(function*() {
      const m = yield* manifest
      const events = yield* streamOf([`Up 4,210.[1]{c1}\nEVI1\nMANIFEST x${m.digest}\nc1|1|"4,210"\nEND_EVI1\n`])
      assert.deepStrictEqual(errorOf(events), {
        _tag: "Evi1Invalid",
        issues: [{ _tag: "Evi1MalformedLine", line: 3, detail: "MANIFEST must be followed by 64 lowercase hex characters" }]
      })
    }))

  it.effect("a repeated claim id names the line of that claim's first marker, not of the first claim", () =>
    Effect.gen(function*() {
      const events = yield* streamOf(["A is 4,210.[1]{c0}\nB is 1,180.[1]{c1}\nC again.[2]{c1}\n"])
      assert.deepStrictEqual(errorOf(events), {
        _tag: "Evi1Invalid",
        issues: [{ _tag: "Evi1DuplicateClaimId", line: 3, claimId: "c1", firstLine: 2 }]
      })
    }))

  it.effect("a malformed input line: its exact detail, without a path when the issue has none", () =>
    Effect.gen(function*() {
      const notJson = errorOf(yield* run(["{"]))
      assert.strictEqual(notJson._tag, "StreamLineInvalid")
      assert.strictEqual(notJson.line, 1)
      // The message is the JavaScript engine's own, taken from JSON.parse here.
      const message = (() => {
        try {
          JSON.parse("{")
        } catch (e) {
          return (e as Error).message
        }
      })()
      assert.strictEqual(notJson.detail, `not valid JSON: ${message}`)
    }))
})

describe("the streamed text", () => {
  it.effect("a group of three sources streams [^1][^2][^3] at the offsets its footnotes name", () =>
    Effect.gen(function*() {
      const m = yield* manifest
      const events = yield* streamOf(["Sales were 4,210 units.[1][2][3]{c1} Then.[1]{c2}\n"], { manifestDigest: m.digest })
      assert.strictEqual(deltasOf(events).join(""), "Sales were 4,210 units.[^1][^2][^3] Then.[^4]\n")
      assert.deepStrictEqual(events.filter((e) => e.type === "delta").flatMap((e: any) => e.footnotes), [
        { footnote: 1, claimId: "c1", source: 1, at: 23 },
        { footnote: 2, claimId: "c1", source: 2, at: 27 },
        { footnote: 3, claimId: "c1", source: 3, at: 31 },
        { footnote: 4, claimId: "c2", source: 1, at: 41 }
      ])
    }))

  it.effect("text still held when the input ends streams before done", () =>
    Effect.gen(function*() {
      const m = yield* manifest
      const events = yield* streamOf(["Total 42"], { manifestDigest: m.digest })
      assert.deepStrictEqual(plain(events), [
        { id: 1, type: "delta", text: "Total ", footnotes: [] },
        { id: 2, type: "delta", text: "42", footnotes: [] },
        // A free-standing number needs a citation whatever the sentence's length.
        { id: 3, type: "done", state: "no_evidence", summary: zeroSummary, uncited: [{ _tag: "UncitedSentence", sentence: "Total 42", line: 1 }] }
      ])
    }))

  it.effect("text streamed in the line a failure cut short goes out before the error", () =>
    Effect.gen(function*() {
      const events = yield* streamOf(["Fine. Up 4,210.[9]{c1}\n"])
      assert.deepStrictEqual(plain(events), [
        { id: 1, type: "delta", text: "Fine. Up 4,210.", footnotes: [] },
        {
          id: 2,
          type: "error",
          error: { _tag: "Evi1Invalid", issues: [{ _tag: "Evi1SourceOutOfRange", line: 1, claimId: "c1", source: 9, sources: 4 }] }
        },
        { id: 3, type: "done", state: "rejected", summary: zeroSummary, uncited: [] }
      ])
    }))
})

describe("the Verifier", () => {
  it.effect("is called once per input chunk that completed citations, never for one without", () =>
    Effect.gen(function*() {
      const m = yield* manifest
      const none: VerifierCalls = { calls: 0, citations: 0 }
      const plainText = yield* streamOf(["Plain.\n", "More 42.\n", "End.\n"], { manifestDigest: m.digest }, none)
      assert.strictEqual(doneOf(plainText).state, "no_evidence")
      assert.deepStrictEqual(none, { calls: 0, citations: 0 })
      const cited: VerifierCalls = { calls: 0, citations: 0 }
      const events = yield* streamOf(
        ["Up 4,210.[1]{c1} Down 1,180.[2]{c2}\n", "EVI1\n", `MANIFEST ${m.digest}\n`, "c1|1|\"4,210\"\n", "c2|2|\"1,180\"\n", "END_EVI1\n", "\n"],
        {},
        cited
      )
      assert.strictEqual(doneOf(events).state, "grounded", JSON.stringify(plain(events)))
      assert.deepStrictEqual(cited, { calls: 2, citations: 2 })
    }))
})

// A PDF capture whose text has two pages: a citation on the second names page 2.
const PDF = "https://reports.northwind.test/q3.pdf" as SourceUrl
const pdfText = "Page one text.\nNet sales were 4,210 units on page two.\n"
const pdfBody = new TextEncoder().encode("%PDF-1.4 (stored body: only its digest and length are checked)")
const pdfRecord: CaptureRecordV2 = {
  format: captureFormatV2,
  source: PDF,
  sha256: sha256Of(pdfText) as CaptureRecordV2["sha256"],
  accessedAt,
  extraction: "pdf/1",
  body: { sha256: sha256Of(pdfBody) as CaptureRecordV2["sha256"], byteLength: pdfBody.byteLength, contentType: "application/pdf" },
  pages: [{ number: 1, start: 0, end: 15 }, { number: 2, start: 15, end: pdfText.length }],
  text: pdfText
}
const pdfConfig = { sources: [PDF], labels: ["unused"] } as unknown as PipelineConfig
const pdfStore = Layer.effect(
  CaptureStore.CaptureStore,
  Effect.tap(MemoryStore.make(), (store) => store.write(pdfRecord, pdfBody))
).pipe(Layer.orDie)
const pdfVerifier = Layer.effect(Verifier.Verifier, Verifier.make).pipe(Layer.provide(Policy.layer(pdfConfig)), Layer.provideMerge(pdfStore))

describe("a PDF citation", () => {
  it.effect("carries the page its span starts on; a text capture's citation has no page", () =>
    Effect.gen(function*() {
      const m = yield* Manifest.make(pdfConfig)
      const service = yield* AnswerStream.AnswerStream
      const text = `Net sales were 4,210 units.[1]{c1}\nEVI1\nMANIFEST ${m.digest}\nc1|1|"4,210 units"\nEND_EVI1\n`
      const events = Chunk.toArray(yield* Stream.runCollect(service.stream(Stream.make(delta(text)), { manifest: m })))
      const citation = plain(events).find((e) => e.type === "citation")
      const at = pdfText.indexOf("4,210 units")
      assert.strictEqual(at, 30)
      assert.deepStrictEqual(citation, {
        id: 2,
        type: "citation",
        footnote: 1,
        claimId: "c1",
        sourceNumber: 1,
        source: PDF,
        captureSha256: pdfRecord.sha256,
        quote: "4,210 units",
        span: { start: 30, end: 41 },
        occurrences: 1,
        page: 2,
        method: "exact"
      })
      // The text capture of the other tests: no page key at all.
      const sales = yield* streamOf([`Up 4,210.[1]{c1}\nEVI1\nc1|1|"4,210"\nEND_EVI1\n`], { manifestDigest: (yield* manifest).digest })
      const salesCitation = plain(sales).find((e) => e.type === "citation")
      assert.notProperty(salesCitation, "page")
    }).pipe(Effect.provide(AnswerStream.layer().pipe(Layer.provideMerge(pdfVerifier)))))
})
