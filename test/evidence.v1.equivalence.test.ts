/**
 * The evidence of a v1 capture is built without the spreads of `locate` and `Visibility.mark`
 * (verify/Evidence.ts `verified`), which add nothing to a capture with no pages, headings or hidden
 * runs, and the selectors of an all-ASCII text are cut without stepping over code points. Against
 * the evidence as built before (written out here, with `selectors`): seeded v1 and v2
 * captures (pages, headings, hidden runs; ASCII, accents and surrogate pairs) and seeded matches of
 * every method and ambiguity, with and without checkpoints. The results must be the same, key order
 * included.
 */
import { assert, describe, it } from "@effect/vitest"
import { Either } from "effect"
import type { CaptureRecord, HiddenKind, Span } from "../src/Domain.js"
import { checkpoints, spanOffsets } from "../src/anchor/Offsets.js"
import { selectors } from "../src/anchor/Selectors.js"
import { locate } from "../src/internal/anchors.js"
import * as Evidence from "../src/verify/Evidence.js"
import type { Matched } from "../src/verify/Match.js"
import type { CitationResult } from "../src/verify/Records.js"
import * as Visibility from "../src/verify/Visibility.js"
import { flat, random } from "./searchSupport.js"

const pieces = ["net ", "sales ", "région ", "\ud83d\ude00 ", "4,210 ", "units.\n", "文 "]
const kinds: ReadonlyArray<HiddenKind> = ["ocr", "invisible", "background", "tiny", "offpage"]

/** The evidence as `verified` built it for every capture before (both spreads, whatever the format). */
const reference = (record: CaptureRecord, matched: ReadonlyArray<Matched>, results: Array<CitationResult>, points?: ReturnType<typeof checkpoints>) => {
  const offsets = spanOffsets(record.text, matched.map((m) => m.span), points)
  matched.forEach((m, k) => {
    const units = offsets[k]!
    results[m.i] = Either.right({
      span: m.span,
      occurrences: m.occurrences,
      accessedAt: record.accessedAt,
      ...locate(record, m.span),
      method: m.method,
      ambiguous: m.ambiguous,
      offsets: units,
      selector: selectors(record.text, m.span, units.codePoints),
      ...Visibility.mark(record, m.span)
    })
  })
}

const asciiPieces = pieces.filter((piece) => /^[\x00-\x7f]*$/.test(piece))

const recordOf = (next: () => number): CaptureRecord => {
  const parts: Array<string> = []
  // Half the texts all ASCII (their selectors are cut without stepping over code points).
  const from = next() % 2 === 0 ? asciiPieces : pieces
  for (let k = 0, n = 1 + (next() % 200); k < n; k++) parts.push(from[next() % from.length]!)
  const text = flat(parts.join(""))
  const base = { source: "https://evidence.example.com/a", sha256: "a".repeat(64), accessedAt: "2026-12-03T00:00:00Z" }
  if (next() % 2 === 0) return { ...base, format: "citegate.capture/1", contentType: "text/plain", byteLength: Buffer.byteLength(text), text } as CaptureRecord
  const cut = next() % (text.length + 1)
  const hiddenFrom = next() % (text.length + 1)
  return {
    ...base,
    format: "citegate.capture/2",
    extraction: "pdf/2",
    body: { sha256: "b".repeat(64), byteLength: 10, contentType: "application/pdf" },
    pages: [{ number: 1, start: 0, end: cut }, { number: 2, start: cut, end: text.length }],
    headings: next() % 2 === 0 ? [{ level: 1, text: "Results", path: ["Results"], start: 0, end: cut }] : [],
    ...(next() % 2 === 0 ? { hidden: [[hiddenFrom, Math.min(text.length, hiddenFrom + 1 + (next() % 20)), kinds[next() % kinds.length]!]] } : {}),
    text
  } as unknown as CaptureRecord
}

const spanOf = (text: string, next: () => number): Span => {
  let start = next() % (text.length + 1)
  let end = Math.min(text.length, start + (next() % 40))
  // Never inside a surrogate pair, as a match never is.
  if (start > 0 && start < text.length && /[\udc00-\udfff]/.test(text[start]!)) start--
  if (end > 0 && end < text.length && /[\udc00-\udfff]/.test(text[end]!)) end++
  return { start, end: Math.max(start, end) }
}

describe("evidence of a v1 capture: what the spreads made", () => {
  it("seeded captures of both formats and seeded matches, with and without checkpoints", () => {
    // The high bits: the low bits of a power-of-two linear congruential generator cycle shortly.
    const next = random(20261203)
    let v1 = 0
    let ascii = 0
    for (let n = 0; n < 2_000; n++) {
      const record = recordOf(next)
      if (record.format === "citegate.capture/1") v1++
      if (/^[\x00-\x7f]*$/.test(record.text)) ascii++
      const matched: Array<Matched> = Array.from({ length: 1 + (next() % 4) }, (_, i) => ({
        i: i * 2,
        span: spanOf(record.text, next),
        occurrences: 1 + (next() % 2),
        ambiguous: next() % 2 === 0,
        method: next() % 3 === 0 ? "normalized/2" : "exact"
      }))
      const points = next() % 2 === 0 ? checkpoints(record.text, 16) : undefined
      const actual: Array<CitationResult> = Array.from({ length: 8 }, () => Either.left([]))
      const expected: Array<CitationResult> = Array.from({ length: 8 }, () => Either.left([]))
      Evidence.verified(record, matched, actual, points)
      reference(record, matched, expected, points)
      assert.deepStrictEqual(actual, expected, JSON.stringify(record))
      assert.strictEqual(JSON.stringify(actual), JSON.stringify(expected), JSON.stringify(record))
    }
    assert.isAbove(v1, 800)
    assert.isBelow(v1, 1_200)
    assert.isAbove(ascii, 800)
    assert.isBelow(ascii, 1_200)
  })
})
