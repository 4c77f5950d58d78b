/**
 * Follow-up tests for the mutation run of `src/anchor/Normalize.ts` (docs/testing.md): `rawStart`,
 * segment boundaries (surrogate pairs, astral combining marks, conjoining jamo at the ends of
 * their ranges, the 32-unit cap), ASCII lower casing after the output outgrew its first arrays,
 * and U+0000 before a non-ASCII character.
 */
import { assert, describe, it } from "@effect/vitest"
import { maxSegment, normalize } from "../src/anchor/Normalize.js"

describe("normalized/1 edges", () => {
  it("rawStart maps each normalised unit to its raw start, and past the end to the raw length", () => {
    const n = normalize("ab\u00a0\u00a0c\ufb01d")
    assert.strictEqual(n.text, "ab c" + "fi" + "d")
    assert.deepStrictEqual([0, 1, 2, 3, 4, 5, 6, 7, 99].map(n.rawStart), [0, 1, 2, 4, 5, 5, 6, 7, 7])
    assert.strictEqual(n.rawStart(-1), 0)
  })

  it("a segment is a whole surrogate pair, and a lone surrogate or a character before one stands alone", () => {
    for (const pair of ["\ud800\udc00", "\udbff\udfff"]) {
      const n = normalize(pair)
      assert.strictEqual(n.text, pair)
      assert.deepStrictEqual(n.toRaw(0, 1), { start: 0, end: 2 })
    }
    const lone = normalize("\u00e9\udc00")
    assert.strictEqual(lone.text, "\u00e9\udc00")
    assert.deepStrictEqual(lone.toRaw(0, 1), { start: 0, end: 1 })
    assert.deepStrictEqual(lone.toRaw(1, 2), { start: 1, end: 2 })
  })

  it("conjoining jamo at both ends of their ranges continue the segment", () => {
    for (const jamo of ["\u1160", "\u11ff", "\ud7b0", "\ud7ff"]) {
      const n = normalize("\uac00" + jamo)
      assert.deepStrictEqual(n.toRaw(0, 1), { start: 0, end: 2 }, jamo.charCodeAt(0).toString(16))
    }
  })

  it("segments hold at most maxSegment code units, astral marks whole", () => {
    assert.strictEqual(maxSegment, 32)
    // Exactly 32 units: one segment.
    const full = normalize("a" + "\u0301".repeat(31))
    assert.deepStrictEqual(full.toRaw(0, 1), { start: 0, end: 32 })
    // 33: the last mark starts a segment of its own.
    const over = normalize("a" + "\u0301".repeat(32))
    assert.deepStrictEqual(over.toRaw(0, 1), { start: 0, end: 32 })
    assert.strictEqual(over.rawStart(over.text.length - 1), 32)
    // Astral combining marks (U+1D165) take two units each: 15 fit after the base, never half of one.
    const astral = "a" + "\u{1d165}".repeat(20)
    const n = normalize(astral)
    assert.deepStrictEqual(n.toRaw(0, 1), { start: 0, end: 31 })
    for (let k = 0; k < n.text.length; k++) {
      const span = n.toRaw(k, k + 1)
      assert.isAtMost(span.end - span.start, 32)
      assert.notStrictEqual(astral.charCodeAt(span.start) & 0xfc00, 0xdc00, `unit ${k}`)
    }
  })

  it("lower-cases ASCII (only A-Z) after the output outgrew its first arrays", () => {
    // 8 ligatures become 16 units, the first capacity for 9 raw units: the ninth goes through emit.
    for (const [c, lower] of [["A", "a"], ["Z", "z"], ["@", "@"], ["[", "["], ["`", "`"], ["a", "a"]]) {
      assert.strictEqual(normalize("\ufb01".repeat(8) + c).text, "fi".repeat(8) + lower, c)
    }
    assert.strictEqual(normalize("\ufb01".repeat(20) + "AZ@[`az").text, "fi".repeat(20) + "az@[`az")
  })

  it("U+0000 before a non-ASCII character is kept", () => {
    assert.strictEqual(normalize("\u0000\u4e00").text, "\u0000\u4e00")
  })
})
