/**
 * Follow-up tests for the mutation run of `src/anchor/Selectors.ts` (docs/testing.md): the
 * TextQuoteSelector's context compared with a plain reference (the code points by `Array.from`,
 * at most `contextCodePoints` each side) on seeded random texts with astral characters and lone
 * surrogates, spans at code-point boundaries anywhere in the text.
 */
import { assert, describe, it } from "@effect/vitest"
import { Schema } from "effect"
import { Evidence } from "../src/Domain.js"
import { contextCodePoints, selectors, target, textPosition, textQuote } from "../src/anchor/Selectors.js"
import { seededRandom as random } from "./mutants.support.js"

const pieces = ["a", "b", " ", "\u00e9", "\ud83d\ude00", "\ud800", "\udc00", "\udbff\udfff"]

describe("Selectors against a plain reference", () => {
  it("prefix and suffix are the nearest code points, at most contextCodePoints each side", () => {
    assert.strictEqual(contextCodePoints, 32)
    const next = random(29)
    for (let k = 0; k < 400; k++) {
      const units: Array<string> = []
      const count = Math.floor(next() * 90)
      for (let i = 0; i < count; i++) units.push(pieces[Math.floor(next() * pieces.length)]!)
      // Boundaries between pieces: never inside a pair. A lone low after a lone high would make a
      // pair, so such neighbours are split by a letter.
      const text = units.reduce((acc, p) => (acc.length > 0 && /[\ud800-\udbff]$/.test(acc) && /^[\udc00-\udfff]/.test(p) ? acc + "x" + p : acc + p), "")
      const cps = Array.from(text)
      const a = Math.floor(next() * (cps.length + 1))
      const b = a + Math.floor(next() * (cps.length - a + 1))
      const start = cps.slice(0, a).join("").length
      const end = cps.slice(0, b).join("").length
      assert.deepStrictEqual(
        textQuote(text, { start, end }),
        {
          type: "TextQuoteSelector",
          exact: cps.slice(a, b).join(""),
          prefix: cps.slice(Math.max(0, a - 32), a).join(""),
          suffix: cps.slice(b, b + 32).join("")
        },
        JSON.stringify([text, start, end])
      )
    }
  })

  it("hand-checked: context cut at 32 code points, astral characters whole", () => {
    const left = "\ud83d\ude00".repeat(40)
    const right = "b".repeat(40)
    const text = left + "EXACT" + right
    const q = textQuote(text, { start: 80, end: 85 })
    assert.deepStrictEqual(q, {
      type: "TextQuoteSelector",
      exact: "EXACT",
      prefix: "\ud83d\ude00".repeat(32),
      suffix: "b".repeat(32)
    })
    // Astral characters after the span, 33 of them: 32 whole ones.
    const t2 = "x" + "\ud83d\ude00".repeat(33)
    assert.strictEqual(textQuote(t2, { start: 0, end: 1 }).suffix, "\ud83d\ude00".repeat(32))
    // A lone high surrogate at the very end of the suffix range.
    assert.strictEqual(textQuote("x\ud800", { start: 0, end: 1 }).suffix, "\ud800")
    // A lone low surrogate at the very start of the text.
    assert.strictEqual(textQuote("\udc00x", { start: 1, end: 2 }).prefix, "\udc00")
  })

  it("textPosition, selectors and target carry their fields", () => {
    assert.deepStrictEqual(textPosition({ start: 3, end: 9 }), { type: "TextPositionSelector", start: 3, end: 9 })
    assert.deepStrictEqual(selectors("abcdef", { start: 2, end: 4 }, { start: 2, end: 4 }), [
      { type: "TextQuoteSelector", exact: "cd", prefix: "ab", suffix: "ef" },
      { type: "TextPositionSelector", start: 2, end: 4 }
    ])
    const selector = selectors("abc", { start: 1, end: 2 }, { start: 1, end: 2 })
    const evidence = Schema.decodeUnknownSync(Evidence)({ span: { start: 1, end: 2 }, occurrences: 1, accessedAt: "2026-11-30T00:00:00Z" })
    assert.deepStrictEqual(target("https://example.com/", { ...evidence, selector }), {
      source: "https://example.com/",
      selector
    })
    assert.strictEqual(target("https://example.com/", evidence), undefined)
  })
})

describe("Selectors: the surrogate ranges' edges", () => {
  it("U+10000 (D800 DC00) is one code point: the context counts it whole", () => {
    const pair = "\ud800\udc00"
    const text = pair.repeat(40) + "Q" + pair.repeat(40)
    const q = textQuote(text, { start: 80, end: 81 })
    assert.deepStrictEqual(q, { type: "TextQuoteSelector", exact: "Q", prefix: pair.repeat(32), suffix: pair.repeat(32) })
  })

  it("a lone high surrogate before U+E000 is two code points, not a pair", () => {
    const units = "\ud83d\ue000"
    const text = units.repeat(40) + "Q" + units.repeat(40)
    const q = textQuote(text, { start: 80, end: 81 })
    assert.deepStrictEqual(q, { type: "TextQuoteSelector", exact: "Q", prefix: units.repeat(16), suffix: units.repeat(16) })
  })
})

