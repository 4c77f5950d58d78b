/**
 * `pdf/1` and `pdf/2` (the same text and pages) on the extractor itself: the header and end-marker windows to the
 * byte, page anchors and form feeds counted by hand, the page and character
 * caps at their exact values, and every refusal's fields. The PDFs are written
 * by test/pdfWriter.ts; pdf.js runs in the extraction worker.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { ExtractionFailed, ExtractionTooLarge } from "../src/Errors.js"
import type { ExtractionLimits } from "../src/extract/Extraction.js"
import * as Pdf from "../src/extract/Pdf.js"
import { failureOf } from "./mutants.support.js"
import { makePdf } from "./pdfWriter.js"

const source = "https://example.com/report.pdf"
const limits: ExtractionLimits = { maxPages: 10, maxCharacters: 10_000, maxDepth: 64 }
const extract = (body: Uint8Array, options: Partial<ExtractionLimits> = {}) => Pdf.extract(source, body, { ...limits, ...options })
/** `pdf/1`, kept for the records written under it: the same text and pages as `pdf/2`, no hidden runs. */
const extract1 = (body: Uint8Array) => Pdf.extract(source, body, limits, "pdf/1")

const failed = (body: Uint8Array, reason: ExtractionFailed["reason"], detail: string) =>
  Effect.gen(function*() {
    const error = yield* failureOf(extract(body))
    assert.instanceOf(error, ExtractionFailed)
    assert.deepStrictEqual({ ...error }, { _tag: "ExtractionFailed", source, format: "pdf", reason, detail })
  })

const noHeader = "no %PDF- header in the first 1024 bytes"
const noEnd = "no %%EOF marker in the last 1024 bytes"

describe("pdf/1 and pdf/2: text and page anchors", () => {
  it.live("pages joined by one form feed; a form feed inside a page is a space; each page an anchor", () =>
    Effect.gen(function*() {
      // Page 1: "a b" + LF + "second" = 10 units at 0..10; the page break at 10; page 2 "page two" at 11..19.
      const pdf = makePdf([["a\fb", "second"], ["page two"]])
      const extracted = yield* extract(pdf)
      assert.deepStrictEqual(yield* extract1(pdf), { ...extracted, extraction: "pdf/1" })
      assert.deepStrictEqual(extracted, {
        extraction: "pdf/2",
        text: "a b\nsecond\fpage two",
        pages: [{ number: 1, start: 0, end: 10 }, { number: 2, start: 11, end: 19 }]
      })
    }))

  it.live("an empty page is an empty anchor; three pages, two form feeds", () =>
    Effect.gen(function*() {
      const extracted = yield* extract(makePdf([[], ["y"], ["zz"]]))
      assert.deepStrictEqual(extracted, {
        extraction: "pdf/2",
        text: "\fy\fzz",
        pages: [{ number: 1, start: 0, end: 0 }, { number: 2, start: 1, end: 2 }, { number: 3, start: 3, end: 5 }]
      })
    }))
})

describe("pdf/1: the header and end-marker windows", () => {
  const pdf = makePdf([["x"]])
  // makePdf ends with "%%EOF\n": the marker starts 6 bytes before the end.
  const tail = (n: number) => Buffer.alloc(n, 0x20)

  it.live("%PDF- ending at byte 1024 is inside the first KiB; one byte later it is not", () =>
    Effect.gen(function*() {
      const inside = yield* extract(Buffer.concat([tail(1019), pdf]))
      assert.strictEqual(inside.text, "x")
      yield* failed(Buffer.concat([tail(1020), pdf]), "malformed", noHeader)
    }))

  it.live("%%EOF starting 1024 bytes before the end is inside the last KiB; one byte earlier it is not", () =>
    Effect.gen(function*() {
      const inside = yield* extract(Buffer.concat([pdf, tail(1018)]))
      assert.strictEqual(inside.text, "x")
      yield* failed(Buffer.concat([pdf, tail(1019)]), "truncated", noEnd)
    }))

  it.effect("short bodies: empty, the header alone, the marker alone", () =>
    Effect.gen(function*() {
      yield* failed(new Uint8Array(0), "malformed", noHeader)
      yield* failed(Buffer.from("%PDF-"), "truncated", noEnd)
      yield* failed(Buffer.from("%%EOF"), "malformed", noHeader)
      yield* failed(Buffer.from("%PDF%%EOF"), "malformed", noHeader)
    }))

  /** `bytes` as a view at offset `before` into a fresh buffer of its own (not Node's shared pool), `fill` around it. */
  const viewOf = (bytes: Uint8Array, before: number, fill: string) => {
    const backing = new Uint8Array(before + bytes.length + fill.length)
    backing.set(Buffer.from(fill.repeat(Math.ceil(before / fill.length)).slice(0, before), "latin1"), 0)
    backing.set(bytes, before)
    backing.set(Buffer.from(fill, "latin1"), before + bytes.length)
    return backing.subarray(before, before + bytes.length)
  }

  it.effect("the windows are the body's own bytes, also when it is a view into a larger buffer", () =>
    Effect.gen(function*() {
      // The buffer around the view holds a header and a marker; the view has neither.
      const body = Buffer.from("x".repeat(100))
      yield* failed(viewOf(body, 9, "%PDF-%%EOF"), "malformed", noHeader)
      yield* failed(viewOf(Buffer.from("%PDF-1.4\n" + "x".repeat(100)), 9, "%PDF-%%EOF"), "truncated", noEnd)
    }))

  it.live("a view into a larger buffer is extracted from its own bytes, and left intact", () =>
    Effect.gen(function*() {
      const view = viewOf(pdf, 4, "junk")
      const extracted = yield* extract(view)
      assert.strictEqual(extracted.text, "x")
      assert.isTrue(Buffer.from(view).equals(pdf))
      // Views longer than a KiB, so that the end window starts past the view's first byte.
      assert.strictEqual((yield* extract(viewOf(Buffer.concat([pdf, tail(1018)]), 4, "junk"))).text, "x")
      yield* failed(viewOf(Buffer.concat([pdf, tail(1019)]), 4, "%%EOF"), "truncated", noEnd)
    }))
})

describe("pdf/1: refusals from the parser", () => {
  it.live("a body pdf.js cannot read is malformed, with pdf.js's reason", () =>
    failed(Buffer.from("%PDF-1.4\nnot a pdf\n%%EOF"), "malformed", "InvalidPDFException: Invalid PDF structure."))

  it.live("an encrypted file is refused", () =>
    Effect.gen(function*() {
      const error = yield* failureOf(extract(makePdf([["Secret"]], { encrypted: true })))
      assert.instanceOf(error, ExtractionFailed)
      assert.deepStrictEqual([error._tag, error.source, error.format, error.reason], ["ExtractionFailed", source, "pdf", "encrypted"])
      assert.isNotEmpty(error.detail)
    }))

  it.live("exactly maxPages pages pass; one more page fails with the cap", () =>
    Effect.gen(function*() {
      const three = makePdf([["1"], ["2"], ["3"]])
      assert.strictEqual((yield* extract(three, { maxPages: 3 })).text, "1\f2\f3")
      const error = yield* failureOf(extract(three, { maxPages: 2 }))
      assert.instanceOf(error, ExtractionTooLarge)
      assert.deepStrictEqual({ ...error }, { _tag: "ExtractionTooLarge", source, format: "pdf", cap: "maxPages", limit: 2 })
    }))

  it.live("text of exactly maxCharacters passes, form feeds included; one more fails with the cap", () =>
    Effect.gen(function*() {
      // "abc" + form feed + "de": 6 code units.
      const pdf = makePdf([["abc"], ["de"]])
      assert.strictEqual((yield* extract(pdf, { maxCharacters: 6 })).text, "abc\fde")
      const error = yield* failureOf(extract(pdf, { maxCharacters: 5 }))
      assert.instanceOf(error, ExtractionTooLarge)
      assert.deepStrictEqual({ ...error }, { _tag: "ExtractionTooLarge", source, format: "pdf", cap: "maxCharacters", limit: 5 })
    }))
})
