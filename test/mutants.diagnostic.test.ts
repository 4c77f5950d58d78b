/**
 * Follow-up tests for the mutation run of `src/anchor/Diagnostic.ts` (docs/testing.md): the bounds
 * of one verification's diagnostics, counted exactly (per capture object, over all captures, the
 * longest capture diagnosed), the cut of a long passage, and the whole `NearestPassage` value of a
 * diagnosis, its differences written out by hand.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Diagnostic from "../src/anchor/Diagnostic.js"
import { prepare } from "../src/anchor/Nearest.js"

const capture = (k: number) => ({ text: `Capture ${k}: net sales were 4,210 units in the quarter.` })
const snippet = "NET SALES were 4,210 units"

describe("Diagnostic: nearestPassage", () => {
  it("the whole value of a fuzzy diagnosis, from a text or a prepared text", () => {
    const text = "Intro. Net sales were 4,201 units in the quarter."
    const expected = {
      method: "fuzzy",
      // 2 of 26 normalised code units differ ("210" against "201").
      score: Math.round((1 - 2 / 26) * 1000) / 1000,
      span: { start: 7, end: 33 },
      text: "Net sales were 4,201 units",
      differences: "[-NET-]{+Net+} [-SALES-]{+sales+} were 4,[-210-]{+201+} units"
    } as const
    assert.deepStrictEqual(Diagnostic.nearestPassage(text, "NET SALES were 4,210 units"), expected)
    assert.deepStrictEqual(Diagnostic.nearestPassage(prepare(text), "NET SALES were 4,210 units"), expected)
    assert.isUndefined(Diagnostic.nearestPassage(text, "Zebras juggle xylophones at dawn"))
  })

  it("a passage longer than maxPassageText is cut (head, ellipsis, length); its differences use all of it", () => {
    assert.strictEqual(Diagnostic.maxPassageText, 2_000)
    const passage = "w".repeat(2_100)
    const found = Diagnostic.nearestPassage(`x ${passage} y`, passage.toUpperCase())!
    assert.strictEqual(found.method, "normalized/1")
    assert.deepStrictEqual(found.span, { start: 2, end: 2_102 })
    assert.strictEqual(found.text, `${"w".repeat(2_000)}… (2100 characters)`)
    assert.strictEqual(found.differences, `[-${"W".repeat(2_100)}-]{+${passage}+}`.slice(0, 2_000) + "… (4208 characters)")
    // Exactly maxPassageText code units: kept whole.
    const exact = "w".repeat(2_000)
    assert.strictEqual(Diagnostic.nearestPassage(`x ${exact} y`, exact)!.text, exact)
  })
})

describe("Diagnostic: forVerification bounds", () => {
  it("per capture object, not per text: two records with the same text are counted apart", () => {
    const diagnose = Diagnostic.forVerification(60_000)
    const a = capture(0)
    const b = { text: a.text }
    const got = [a, b, a, b].map((c) => Array.from({ length: 5 }, () => diagnose(c, snippet).nearest !== undefined).filter(Boolean).length)
    // 5 + 5 for a and b, then 3 more each (8 per capture), 16 in all.
    assert.deepStrictEqual(got, [5, 5, 3, 3])
  })

  it("the 16th diagnosis is made, the 17th not, whatever the capture", () => {
    const diagnose = Diagnostic.forVerification(60_000)
    const results: Array<boolean> = []
    for (let k = 0; k < 17; k++) results.push(diagnose(capture(k), snippet).nearest !== undefined)
    assert.deepStrictEqual(results, [...new Array(16).fill(true), false])
  })

  it("a failure with no similar passage still counts against the bounds", () => {
    const diagnose = Diagnostic.forVerification(60_000)
    const c = capture(0)
    for (let k = 0; k < 8; k++) assert.deepStrictEqual(diagnose(c, "Zebras juggle xylophones at dawn"), {})
    assert.deepStrictEqual(diagnose(c, snippet), {})
    assert.strictEqual(diagnose(capture(1), snippet).nearest!.method, "normalized/1")
  })

  it("a capture longer than maxDiagnosedLength gets none, and is not counted", () => {
    assert.strictEqual(Diagnostic.maxDiagnosedLength, 16 * 1024 * 1024)
    const diagnose = Diagnostic.forVerification(60_000)
    // A rope: no 16 Mi string is built unless it is read.
    const huge = { text: "net sales were 4,210 units ".repeat(1) + "x".repeat(Diagnostic.maxDiagnosedLength - 26) }
    assert.strictEqual(huge.text.length, Diagnostic.maxDiagnosedLength + 1)
    assert.deepStrictEqual(diagnose(huge, snippet), {})
    const results: Array<boolean> = []
    for (let k = 0; k < 16; k++) results.push(diagnose(capture(k), snippet).nearest !== undefined)
    assert.deepStrictEqual(results, new Array(16).fill(true))
  })

  it("the budget: none with 0 ms, or with a negative budget; the cap is maxBudgetMs", () => {
    assert.strictEqual(Diagnostic.maxBudgetMs, 500)
    assert.deepStrictEqual(Diagnostic.forVerification(0)(capture(0), snippet), {})
    assert.deepStrictEqual(Diagnostic.forVerification(-1)(capture(0), snippet), {})
    assert.strictEqual(Diagnostic.forVerification(Number.POSITIVE_INFINITY)(capture(0), snippet).nearest!.method, "normalized/1")
  })
})
