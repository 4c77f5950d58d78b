import { assert, describe, it } from "@effect/vitest"
import { Effect, Schema } from "effect"
import { decodeOptions } from "../src/Domain.js"
import * as Citegate from "../src/index.js"
import { contextCodePoints, target, textQuote } from "../src/anchor/Selectors.js"
import * as Render from "../src/render/Render.js"
import { check, fact, onlyCitation, recordOf } from "./anchorSupport.js"

const cps = (s: string) => [...s].length

describe("Selectors: W3C TextQuoteSelector and TextPositionSelector", () => {
  it("prefix and suffix are at most 32 code points of the text around the span", () => {
    const text = "x".repeat(50) + "EXACT" + "y".repeat(50)
    const q = textQuote(text, { start: 50, end: 55 })
    assert.deepStrictEqual(q, { type: "TextQuoteSelector", exact: "EXACT", prefix: "x".repeat(32), suffix: "y".repeat(32) })
    assert.strictEqual(contextCodePoints, 32)
  })

  it("counts code points, not code units, and never splits a surrogate pair", () => {
    // 40 astral characters each side: 32 of them are 64 code units.
    const face = "\u{1F600}"
    const text = face.repeat(40) + "mid" + face.repeat(40)
    const q = textQuote(text, { start: 80, end: 83 })
    assert.strictEqual(q.prefix, face.repeat(32))
    assert.strictEqual(q.suffix, face.repeat(32))
    assert.isTrue(q.prefix.isWellFormed() && q.suffix.isWellFormed())
    // Mixed: the 32nd code point back is the astral one; it is taken whole.
    const mixed = "ab" + face + "c".repeat(31) + "Q"
    const m = textQuote(mixed, { start: mixed.length - 1, end: mixed.length })
    assert.strictEqual(m.prefix, face + "c".repeat(31))
    assert.strictEqual(cps(m.prefix), 32)
    assert.strictEqual(m.suffix, "")
  })

  it("fewer than 32 at either end of the text", () => {
    assert.deepStrictEqual(textQuote("abc", { start: 0, end: 3 }), { type: "TextQuoteSelector", exact: "abc", prefix: "", suffix: "" })
  })

  it("is exported from the library", () => {
    assert.strictEqual(Citegate.Selectors.textQuote, textQuote)
    assert.strictEqual(typeof Citegate.Offsets.spanOffsets, "function")
  })
})

describe("Selectors in verified evidence and the JSON rendering", () => {
  const face = "\u{1F600}"
  const text = `Header ${face.repeat(30)} then: the rate was 4.5% in 2025 and ${face} more text after the quote ends here.\r\nNext line.`
  const snippet = "the rate was 4.5% in 2025"

  it.scoped("each verified citation carries both selectors; they re-find the excerpt in the capture", () =>
    Effect.gen(function*() {
      const report = yield* check(text, [fact(text, snippet)])
      const { evidence, fact: f } = onlyCitation(report)
      const [quote, position] = evidence.selector!
      const start = text.indexOf(snippet)
      assert.strictEqual(quote.exact, snippet)
      assert.strictEqual(quote.prefix, [...text.slice(0, start)].slice(-32).join(""))
      assert.strictEqual(quote.suffix, [...text.slice(start + snippet.length)].slice(0, 32).join(""))
      assert.strictEqual(cps(quote.prefix), 32)
      assert.deepStrictEqual(position, {
        type: "TextPositionSelector",
        start: cps(text.slice(0, start)),
        end: cps(text.slice(0, start)) + cps(snippet)
      })
      // Position selectors count code points: slicing the code-point array gives the exact text.
      assert.strictEqual([...text].slice(position.start, position.end).join(""), quote.exact)
      // prefix + exact + suffix occurs once in the capture: the quote selector alone re-anchors it.
      assert.strictEqual(text.split(quote.prefix + quote.exact + quote.suffix).length - 1, 1)
      assert.deepStrictEqual(target(f.source, evidence), { source: f.source, selector: evidence.selector! })
    }))

  it.scoped("the JSON rendering includes the selectors and offsets and decodes with RenderedResult", () =>
    Effect.gen(function*() {
      const report = yield* check(text, [fact(text, snippet)])
      const json = Render.render("json", Render.Rendering.Verified({ report, captures: new Map([[recordOf(text).source, recordOf(text)]]) }))
      const raw = JSON.parse(json)
      const evidence = raw.report.facts[0].evidence
      assert.strictEqual(evidence.selector[0].type, "TextQuoteSelector")
      assert.strictEqual(evidence.selector[0].exact, snippet)
      assert.strictEqual(evidence.selector[1].type, "TextPositionSelector")
      assert.strictEqual(evidence.method, "exact")
      assert.strictEqual(evidence.ambiguous, false)
      const decoded = Schema.decodeUnknownSync(Render.RenderedResult, decodeOptions)(raw)
      assert.strictEqual(decoded.status, "verified")
      if (decoded.status !== "verified") return
      const entry = decoded.report.facts[0]!
      if (!("evidence" in entry)) return assert.fail("expected evidence")
      assert.deepStrictEqual(entry.evidence.selector, onlyCitation(report).evidence.selector)
      // Strict: an invented key inside a selector is a decode error, not silently dropped.
      evidence.selector[0].extra = 1
      assert.throws(() => Schema.decodeUnknownSync(Render.RenderedResult, decodeOptions)(raw))
    }))
})
