import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { positions, spanOffsets } from "../src/anchor/Offsets.js"
import { check, fact, onlyCitation } from "./anchorSupport.js"

/** The reference: each unit counted by the platform on the prefix before the position. */
const reference = (text: string, utf16: number) => {
  const before = text.slice(0, utf16)
  return { utf16, codePoint: [...before].length, utf8: Buffer.byteLength(before, "utf8") }
}

// Non-BMP (emoji, a musical symbol, a CJK extension B ideograph), combining marks (e + U+0301, a
// stack of three marks), CRLF line ends, two- and three-byte characters.
const mixed = "Caf\u0065\u0301 \u{1F600} line\r\nnext \u{1D11E}\u{20000} z\u0301\u0323\u0307 ß€\r\nend \u{1F469}\u200D\u{1F52C}!"

describe("Offsets: UTF-16, code points and UTF-8 bytes", () => {
  it("every boundary between characters agrees with the platform's own counts", () => {
    const boundaries: Array<number> = []
    for (let i = 0; i <= mixed.length; i++) {
      // Not inside a surrogate pair.
      if (i > 0 && i < mixed.length && (mixed.charCodeAt(i) & 0xfc00) === 0xdc00) continue
      boundaries.push(i)
    }
    // Asked in reverse order: the answer is per position, not per order.
    const got = positions(mixed, [...boundaries].reverse())
    assert.deepStrictEqual(got, [...boundaries].reverse().map((at) => reference(mixed, at)))
    const end = got[0]!
    assert.deepStrictEqual(end, { utf16: mixed.length, codePoint: [...mixed].length, utf8: Buffer.byteLength(mixed) })
  })

  it("spans: code points and bytes of the text at the span are the span's lengths", () => {
    const spans = [
      { start: 0, end: 6 }, // "Café" with a combining accent
      { start: 6, end: 8 }, // the emoji alone: 2 code units, 1 code point, 4 bytes
      { start: 13, end: 15 }, // CRLF
      { start: mixed.length - 6, end: mixed.length }
    ]
    const got = spanOffsets(mixed, spans)
    got.forEach((o, k) => {
      const piece = mixed.slice(spans[k]!.start, spans[k]!.end)
      assert.deepStrictEqual(o.utf16, spans[k])
      assert.strictEqual(o.codePoints.end - o.codePoints.start, [...piece].length)
      assert.strictEqual(o.utf8.end - o.utf8.start, Buffer.byteLength(piece))
      // The byte offsets slice the same text out of the UTF-8 encoding.
      assert.strictEqual(Buffer.from(mixed).subarray(o.utf8.start, o.utf8.end).toString("utf8"), piece)
      // The code-point offsets slice it out of the code-point array.
      assert.strictEqual([...mixed].slice(o.codePoints.start, o.codePoints.end).join(""), piece)
    })
    assert.strictEqual(mixed.slice(13, 15), "\r\n")
    assert.deepStrictEqual(got[1], { utf16: { start: 6, end: 8 }, codePoints: { start: 6, end: 7 }, utf8: { start: 7, end: 11 } })
  })

  it("a position inside a surrogate pair counts as the boundary before it; past the end as the end", () => {
    const text = "a\u{1F600}b"
    assert.deepStrictEqual(positions(text, [2, 99]), [
      { utf16: 2, codePoint: 1, utf8: 1 },
      { utf16: 99, codePoint: 3, utf8: 6 }
    ])
  })

  it("a lone surrogate counts as one code point of three bytes, as TextEncoder writes it", () => {
    const text = "x\ud800y"
    assert.deepStrictEqual(positions(text, [3]), [{ utf16: 3, codePoint: 3, utf8: new TextEncoder().encode(text).length }])
  })

  it("linear: 16 MiB of astral text converts in one pass", () => {
    const text = "\u{1F600}a".repeat(1 << 22) // 12 Mi code units
    const spans = Array.from({ length: 1_000 }, (_, k) => ({ start: 3 * k * 4_000, end: 3 * k * 4_000 + 3 }))
    const started = performance.now()
    const got = spanOffsets(text, spans)
    const elapsed = performance.now() - started
    assert.deepStrictEqual(got[999]!.codePoints, { start: 2 * 999 * 4_000, end: 2 * 999 * 4_000 + 2 })
    assert.deepStrictEqual(got[999]!.utf8, { start: 5 * 999 * 4_000, end: 5 * 999 * 4_000 + 5 })
    // One pass: well under a second even on a loaded machine (a pass per span would take minutes).
    assert.isBelow(elapsed, 2_000)
  })
})

describe("Offsets in verified evidence", () => {
  it.scoped("every verified span carries all three units, consistent with the capture's text and bytes", () =>
    Effect.gen(function*() {
      const snippet = "next \u{1D11E}\u{20000} z\u0301\u0323\u0307"
      const report = yield* check(mixed, [fact(mixed, snippet)])
      const { evidence } = onlyCitation(report)
      const start = mixed.indexOf(snippet)
      assert.deepStrictEqual(evidence.offsets, {
        utf16: { start, end: start + snippet.length },
        codePoints: { start: [...mixed.slice(0, start)].length, end: [...mixed.slice(0, start)].length + [...snippet].length },
        utf8: { start: Buffer.byteLength(mixed.slice(0, start)), end: Buffer.byteLength(mixed.slice(0, start)) + Buffer.byteLength(snippet) }
      })
      assert.deepStrictEqual(evidence.offsets!.utf16, evidence.span)
      // The UTF-8 offsets index the very bytes the capture digest covers.
      assert.strictEqual(Buffer.from(mixed, "utf8").subarray(evidence.offsets!.utf8.start, evidence.offsets!.utf8.end).toString(), snippet)
    }))
})
