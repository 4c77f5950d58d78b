/**
 * More follow-up tests for the mutation run of `src/anchor/Nearest.ts` (docs/testing.md): the
 * choices among candidates that `mutants.nearest` leaves open, each on a text where the choice
 * changes the passage found. Filler words use letters no snippet here holds (q, x, z, v, k, j),
 * so they share no trigram with it; expected spans and scores are counted by hand.
 */
import { assert, describe, it } from "@effect/vitest"
import { findNearest } from "../src/anchor/Nearest.js"
import { filler } from "./mutants.support.js"


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

  it("/, :, `, { and \u00a7 end a word", () => {
    // The same alignment before each of the four code units just outside those ranges: no widening.
    for (const stop of ["/", ":", "`", "{", "\u00a7"]) {
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

describe("Nearest: the coarse pass's counts decide which windows are aligned", () => {
  // Short snippets (8 code units: windows of 6 trigrams, blocks of 4 windows) among runs of "#",
  // which share no trigram with them. Each region below holds whole trigrams of the snippet and
  // sits in a block of its own. The coarse pass aligns the best 3 blocks (the earlier on equal
  // counts) and the fine pass keeps the first of equal scores, so which region is reported shows
  // which blocks were counted highest. A region of 3 code units of "abcdefgh" aligns with 5 edits
  // (the other 5 missing): 1 − 5/8 = 0.375.
  const gap = "#".repeat(20)
  const at = (text: string, region: string, from = 0) => {
    const start = text.indexOf(region, from)
    return { method: "fuzzy", score: 0.375, span: { start, end: start + 3 }, text: text.slice(start, start + 3) }
  }

  it("the window at the text's start, and the snippet's first trigram, are counted; it leaves the window again", () => {
    // "abc" (1 trigram) at 0, then three regions "def" (1 trigram each): "abc" is first on equal counts.
    const text = "abc" + gap + "def" + gap + "def" + gap + "def" + gap
    assert.deepStrictEqual(findNearest(text, "abcdefgh", { minScore: 0 }), at(text, "abc"))
  })

  it("the snippet's last trigram is counted", () => {
    const text = gap + "fgh" + gap + "abc" + gap + "abc" + gap + "abc" + gap
    assert.deepStrictEqual(findNearest(text, "abcdefgh", { minScore: 0 }), at(text, "fgh"))
  })

  it("a trigram the snippet holds once counts once in a window, however often the window holds it", () => {
    // "abc#abc" counts 1, like "def": "def" comes first.
    const text = gap + "def" + gap + "abc#abc" + gap + "abc#abc" + gap + "abc#abc" + gap
    assert.deepStrictEqual(findNearest(text, "abcdefgh", { minScore: 0 }), at(text, "def"))
  })

  it("a trigram the snippet holds twice counts twice", () => {
    // "abcdabce" holds "abc" twice: "abc#abc" counts 2 like "bcd#cda" and comes first; it aligns
    // with 2 edits ("#" for "d", "e" missing) in 8: 0.75.
    const text = gap + "abc#abc" + gap + "bcd#cda" + gap + "bcd#cda" + gap + "bcd#cda" + gap
    assert.deepStrictEqual(findNearest(text, "abcdabce", { minScore: 0 }), {
      method: "fuzzy",
      score: 0.75,
      span: { start: 20, end: 27 },
      text: "abc#abc"
    })
  })

  it("the last window of the text is counted, alone in its block", () => {
    // 36 code units: windows 0 … 28, blocks of 4, the last block holds window 28 alone, and only
    // it holds the trigram at 33.
    const text = "#".repeat(33) + "abc"
    assert.deepStrictEqual(findNearest(text, "abcdefgh", { minScore: 0 }), at(text, "abc"))
  })

  it("at most fineCandidates blocks are aligned: a better passage counted lower than three others is not found", () => {
    // "a#cde#gh" (2 substitutions: 0.75) holds 1 trigram of the snippet ("cde"); each "abc##def"
    // holds 2 in one window, so the three of them take the 3 fine candidates. Each aligns whole
    // with 4 edits ("##" extra, "gh" missing) in 8: 0.5; the first is reported.
    const text = gap + "a#cde#gh" + gap + "abc##def" + gap + "abc##def" + gap + "abc##def" + gap
    const start = text.indexOf("abc##def")
    assert.deepStrictEqual(findNearest(text, "abcdefgh", { minScore: 0 }), {
      method: "fuzzy",
      score: 0.5,
      span: { start, end: start + 8 },
      text: "abc##def"
    })
  })

  it("a trigram is counted only when all three of its code units are the snippet's", () => {
    // 600 regions that share two code units with a trigram of the snippet ("ab" then another unit,
    // or another unit then "bc"), then "fgh". None holds a trigram of the snippet: "fgh" is the
    // only window counted, and the one aligned. (A lookup that compared only two of the three
    // units, wherever the other trigram's slot in the table met "abc"'s, would count some of them,
    // and the first three would take the fine candidates.)
    let text = ""
    for (let k = 0; k < 300; k++) {
      const unit = String.fromCharCode(0x4e00 + k)
      text += "ab" + unit + "#####" + unit + "bc" + "#####"
    }
    text += "fgh" + gap
    assert.deepStrictEqual(findNearest(text, "abcdefgh", { minScore: 0 }), at(text, "fgh"))
  })

  it("each aligned window reaches only its margin: a better passage after three others is not found", () => {
    // The three "abc##def" as above take the fine candidates; "a#cde#gh" follows them, 20 code
    // units past the last one's end (the margin is 8 >> 2 + 8 = 10).
    const text = gap + "abc##def" + gap + "abc##def" + gap + "abc##def" + gap + "a#cde#gh" + gap
    assert.deepStrictEqual(findNearest(text, "abcdefgh", { minScore: 0 }), {
      method: "fuzzy",
      score: 0.5,
      span: { start: 20, end: 28 },
      text: "abc##def"
    })
  })

  it("no window runs past the text's end", () => {
    // 80 code units: windows 0 … 72; "abcd" ends the text, so only window 72 holds both its
    // trigrams (count 2, like "abc##def"). Blocks: "abc##def" (2), 72 (2), then the first block
    // counted 1, the one holding "a#cde#gh": it is aligned and is the best (0.75). A window past
    // the end (76, a block of its own, holding "abcd" whole) would take that third place.
    const text = gap + "a#cde#gh" + gap + "abc##def" + gap + "abcd"
    assert.strictEqual(text.length, 80)
    assert.deepStrictEqual(findNearest(text, "abcdefgh", { minScore: 0 }), {
      method: "fuzzy",
      score: 0.75,
      span: { start: 20, end: 28 },
      text: "a#cde#gh"
    })
  })

  it("a region counted only in blocks 1 and 2 is aligned", () => {
    // "abc" at 9: the windows holding it are 4 … 9, blocks 1 and 2; block 0 counts nothing.
    const text = "#".repeat(9) + "abc" + gap
    assert.deepStrictEqual(findNearest(text, "abcdefgh", { minScore: 0 }), at(text, "abc"))
  })

  it("a passage whose only trigram of the snippet is its first is aligned from the text's start", () => {
    // Every third code unit from 3 on is "#" (33 substitutions): only the trigram at 0 is the
    // snippet's, so windows 0 and the partial ones before it would count the same; the aligned
    // range is the one of window 0 (0 … 133), not of a window starting before the text.
    const units = snippet.split("")
    for (let i = 3; i < 100; i += 3) units[i] = "#"
    const passage = units.join("")
    const text = passage + " " + filler(300, 9)
    const found = findNearest(text, snippet)!
    assert.strictEqual(found.span.start, 0)
    assert.isAtLeast(found.span.end, 99)
    assert.strictEqual(found.score, rounded(1 - 33 / 100))
  })
})
