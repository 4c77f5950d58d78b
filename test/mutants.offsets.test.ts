/**
 * Follow-up tests for the mutation run of `src/anchor/Offsets.ts` (docs/testing.md): positions
 * and spans compared with a plain reference (code points by `Array.from`, bytes by `TextEncoder`)
 * on seeded random texts mixing ASCII, BMP, astral characters and lone surrogates, with positions
 * unsorted, repeated, negative, past the end and inside surrogate pairs.
 */
import { assert, describe, it } from "@effect/vitest"
import { positions, spanOffsets } from "../src/anchor/Offsets.js"
import { seededRandom as random } from "./mutants.support.js"

const pieces = ["a", "Z", " ", "\u00e9", "\u20ac", "\u4e00", "\ud83d\ude00", "\ud800", "\udc00", "\udbff\udfff", "\u07ff", "\u0800"]

const encoder = new TextEncoder()

/** The boundary a position stands for, then its code points and UTF-8 bytes, from their definitions. */
const reference = (text: string, position: number) => {
  let t = Math.min(Math.max(position, 0), text.length)
  const high = (c: number) => c >= 0xd800 && c <= 0xdbff
  const low = (c: number) => c >= 0xdc00 && c <= 0xdfff
  if (t > 0 && t < text.length && high(text.charCodeAt(t - 1)) && low(text.charCodeAt(t))) t -= 1
  const before = text.slice(0, t)
  return { utf16: position, codePoint: Array.from(before).length, utf8: encoder.encode(before).length }
}

describe("Offsets against a plain reference", () => {
  it("positions: every unit agrees on random texts and positions in any order", () => {
    const next = random(23)
    for (let k = 0; k < 400; k++) {
      let text = ""
      const count = Math.floor(next() * 12)
      for (let i = 0; i < count; i++) text += pieces[Math.floor(next() * pieces.length)]!
      const asked: Array<number> = []
      const m = Math.floor(next() * 8)
      for (let i = 0; i < m; i++) asked.push(Math.floor(next() * (text.length + 5)) - 2)
      if (m > 1 && next() < 0.3) asked.push(asked[0]!)
      assert.deepStrictEqual(positions(text, asked), asked.map((p) => reference(text, p)), JSON.stringify([text, asked]))
    }
  })

  it("positions: hand-counted cases", () => {
    const text = "a\ud83d\ude00\u00e9\ud800b"
    // a(1 cp, 1 byte) 😀(2 units, 1 cp, 4 bytes) é(1, 2) lone high(1, 3) b(1, 1)
    assert.deepStrictEqual(positions(text, [6, 0, 2, 1, 3, 4, 5, 99, -3]), [
      { utf16: 6, codePoint: 5, utf8: 11 },
      { utf16: 0, codePoint: 0, utf8: 0 },
      { utf16: 2, codePoint: 1, utf8: 1 },
      { utf16: 1, codePoint: 1, utf8: 1 },
      { utf16: 3, codePoint: 2, utf8: 5 },
      { utf16: 4, codePoint: 3, utf8: 7 },
      { utf16: 5, codePoint: 4, utf8: 10 },
      { utf16: 99, codePoint: 5, utf8: 11 },
      { utf16: -3, codePoint: 0, utf8: 0 }
    ])
    // Two pairs in a row, one segment: two code points.
    assert.deepStrictEqual(positions("\ud83d\ude00\ud83d\ude00", [4]), [{ utf16: 4, codePoint: 2, utf8: 8 }])
    // A pair in the first of two segments.
    assert.deepStrictEqual(positions("x\ud83d\ude00y", [3, 4]), [
      { utf16: 3, codePoint: 2, utf8: 5 },
      { utf16: 4, codePoint: 3, utf8: 6 }
    ])
    // Reversed surrogates are two lone ones.
    assert.deepStrictEqual(positions("\ude00\ud83d", [2]), [{ utf16: 2, codePoint: 2, utf8: 6 }])
    assert.deepStrictEqual(positions("", [0, 1]), [{ utf16: 0, codePoint: 0, utf8: 0 }, { utf16: 1, codePoint: 0, utf8: 0 }])
  })

  it("spanOffsets: each span in the three units, in the order given", () => {
    const text = "\u00e9t\u00e9 \ud83d\ude00 ok"
    assert.deepStrictEqual(spanOffsets(text, [{ start: 4, end: 6 }, { start: 0, end: 3 }, { start: 7, end: 9 }]), [
      { utf16: { start: 4, end: 6 }, codePoints: { start: 4, end: 5 }, utf8: { start: 6, end: 10 } },
      { utf16: { start: 0, end: 3 }, codePoints: { start: 0, end: 3 }, utf8: { start: 0, end: 5 } },
      { utf16: { start: 7, end: 9 }, codePoints: { start: 6, end: 8 }, utf8: { start: 11, end: 13 } }
    ])
    assert.deepStrictEqual(spanOffsets(text, []), [])
  })
})

describe("Offsets: the surrogate ranges' edges", () => {
  it("a lone high surrogate before U+E000 is two code points of three bytes each, not a pair", () => {
    const text = "\ud83d\ue000"
    assert.deepStrictEqual(positions(text, [1, 2]), [{ utf16: 1, codePoint: 1, utf8: 3 }, { utf16: 2, codePoint: 2, utf8: 6 }])
  })
})

