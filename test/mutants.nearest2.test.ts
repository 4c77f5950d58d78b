/**
 * More follow-up tests for the mutation run of `src/anchor/Nearest.ts` (docs/testing.md): the
 * choices among candidates that `mutants.nearest` leaves open, each on a text where the choice
 * changes the passage found. Filler words use letters no snippet here holds (q, x, z, v, k, j),
 * so they share no trigram with it; expected spans and scores are counted by hand.
 */
import { assert, describe, it } from "@effect/vitest"
import { findNearest } from "../src/anchor/Nearest.js"
import { seededRandom as random } from "./mutants.support.js"

const filler = (length: number, seed: number): string => {
  const next = random(seed)
  const letters = "qxzvkj"
  let out = ""
  while (out.length < length) {
    const size = 2 + Math.floor(next() * 6)
    for (let i = 0; i < size; i++) out += letters[Math.floor(next() * letters.length)]
    out += " "
  }
  return out
}

const rounded = (score: number) => Math.round(score * 1000) / 1000

/** A 100-unit snippet of lower-case words without q, x, z, v, k or j. */
const snippet = "net sales in the third session were four thousand units and the margin rose on the prior period also"

describe("Nearest: choices among candidates", () => {
  it("the snippet is 100 code units", () => {
    assert.strictEqual(snippet.length, 100)
    assert.notMatch(snippet, /[qxzvkj]/)
  })

  it("the first of equally good windows in a block is kept", () => {
    // The passage opens the text; every third code unit of its first 62 (1, 4, …, 61: 21 edits) is
    // "#", so none of the trigrams starting at 0 … 61 is the snippet's. The windows starting at
    // 0 … 49 (block 0, half a snippet wide) then all hold the same trigrams of the snippet: the
    // first of them is aligned, with 33 units of margin, and the passage is found whole. The last
    // one (49) would start the alignment at 16, past the passage's start.
    const units = snippet.split("")
    for (let i = 1; i <= 61; i += 3) units[i] = "#"
    const passage = units.join("")
    const capture = passage + " " + filler(400, 3)
    assert.deepStrictEqual(findNearest(capture, snippet), {
      method: "fuzzy",
      score: rounded(1 - 21 / 100),
      span: { start: 0, end: 100 },
      text: passage
    })
  })

  it("of three equally good passages, the first one in the text is reported", () => {
    // Each copy holds the best window of its own block: the three fine candidates are the three
    // copies, in text order, with equal scores (1 edit in 100).
    const twin = snippet.slice(0, 50) + "#" + snippet.slice(51)
    let capture = filler(300, 5)
    const at = capture.length
    capture += twin + " " + filler(300, 6) + twin + " " + filler(300, 7) + twin + " " + filler(300, 8)
    assert.deepStrictEqual(findNearest(capture, snippet), {
      method: "fuzzy",
      score: rounded(1 - 1 / 100),
      span: { start: at, end: at + 100 },
      text: twin
    })
  })

  it("a text of exactly twice the snippet is aligned whole, even with no trigram in common", () => {
    // 16 = 2 × 8 code units. "a#c#e#g" against "abcdefgh": 3 substitutions and h missing, 4 edits in
    // 8. No trigram of the text is the snippet's, so a coarse pass would have no window to align.
    assert.deepStrictEqual(findNearest("a#c#e#g#qqqqqqqq", "abcdefgh", { minScore: 0 }), {
      method: "fuzzy",
      score: 0.5,
      span: { start: 0, end: 7 },
      text: "a#c#e#g"
    })
    // One unit more: the coarse pass runs and finds nothing.
    assert.isUndefined(findNearest("a#c#e#g#qqqqqqqqq", "abcdefgh", { minScore: 0 }))
  })
})

describe("Nearest: word characters at the edges of ASCII's ranges", () => {
  it("0, 9, a and z continue a word; the widened passage is scored again", () => {
    // The alignment "net sales were 4,21" (1 edit against "4,31") stops inside "4,2109az"; the
    // passage is widened over 0, 9, a and z to the space: 23 code units against 19, 1 substitution
    // and 4 insertions.
    const capture = filler(200, 7) + "net sales were 4,2109az units"
    const start = capture.indexOf("net")
    assert.deepStrictEqual(findNearest(capture, "net sales were 4,31"), {
      method: "fuzzy",
      score: rounded(1 - 5 / 23),
      span: { start, end: start + 23 },
      text: "net sales were 4,2109az"
    })
  })

  it("/, :, ` and { end a word", () => {
    // The same alignment before each of the four code units just outside those ranges: no widening.
    for (const stop of ["/", ":", "`", "{"]) {
      const capture = filler(200, 7) + `net sales were 4,21${stop}09 units`
      const start = capture.indexOf("net")
      assert.deepStrictEqual(findNearest(capture, "net sales were 4,31"), {
        method: "fuzzy",
        score: rounded(1 - 1 / 19),
        span: { start, end: start + 19 },
        text: "net sales were 4,21"
      }, stop)
    }
  })
})
