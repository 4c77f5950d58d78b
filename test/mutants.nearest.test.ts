/**
 * Follow-up tests for the mutation run of `src/anchor/Nearest.ts` (docs/testing.md): hand-built
 * captures with one passage planted among filler words that share no trigram with the snippet,
 * so the expected passage, its raw span and its score are known without the code under test
 * (the score is `1 − edits / snippet length`, counted by hand). Decoys with more edits sit before
 * it; the edges are the length bounds of the fuzzy search (`minFuzzyLength`, `maxFuzzyLength`),
 * the minimum score, the widening to word boundaries (at most 32 code units) and `prepare`'s
 * clamping of [from, to).
 */
import { assert, describe, it } from "@effect/vitest"
import {
  defaultMinScore,
  fineCandidates,
  findNearest,
  maxFuzzyLength,
  minFuzzyLength,
  nearestIn,
  prepare
} from "../src/anchor/Nearest.js"
import { filler, seededRandom as random } from "./mutants.support.js"


const snippet = "net sales in the third quarter were 4,210 units" // 47 code units
/** `snippet` with the code unit at each index replaced by "#" (same length: each is one edit). */
const edited = (indices: ReadonlyArray<number>) => {
  const units = snippet.split("")
  for (const i of indices) units[i] = "#"
  return units.join("")
}

const rounded = (score: number) => Math.round(score * 1000) / 1000

describe("Nearest: planted passages, hand-counted scores", () => {
  it("the best of several similar passages wins, wherever it is, with 1 − edits / length", () => {
    // Four decoys with 9, 7, 6 and 5 edits, then the passage with 2 edits, in filler: the text is
    // far longer than twice the snippet, so the coarse pass chooses among blocks.
    const decoys = [[1, 5, 9, 14, 19, 24, 29, 34, 39], [2, 7, 12, 17, 22, 27, 32], [3, 10, 17, 24, 31, 38], [4, 12, 20, 28, 36]]
    const best = edited([18, 31])
    let capture = ""
    decoys.forEach((indices, k) => (capture += filler(400, k) + edited(indices) + " "))
    capture += filler(400, 9)
    const at = capture.length
    capture += best + " " + filler(400, 10)
    const found = findNearest(capture, snippet)
    assert.deepStrictEqual(found, { method: "fuzzy", score: rounded(1 - 2 / 47), span: { start: at, end: at + 47 }, text: best })
    // More candidate blocks than fineCandidates hold decoys: the best is found all the same.
    assert.isAbove(decoys.length, fineCandidates)
  })

  it("the passage first, then the decoys: the first of the best candidates is not replaced by a worse one", () => {
    const best = edited([20])
    let capture = filler(300, 1)
    const at = capture.length
    capture += best + " "
    for (const indices of [[3, 10, 17, 24, 31, 38], [4, 12, 20, 28, 36], [5, 15, 25]]) capture += filler(300, indices[0]!) + edited(indices) + " "
    const found = findNearest(capture, snippet)
    assert.deepStrictEqual(found, { method: "fuzzy", score: rounded(1 - 1 / 47), span: { start: at, end: at + 47 }, text: best })
  })

  it("a text at most twice the snippet is aligned whole; longer, the coarse pass finds the passage", () => {
    const passage = edited([10])
    // 47 + 1 + 46 = 94 = 2 × 47: aligned whole.
    const short = passage + " " + "q".repeat(46)
    assert.strictEqual(short.length, 94)
    assert.deepStrictEqual(findNearest(short, snippet), { method: "fuzzy", score: rounded(1 - 1 / 47), span: { start: 0, end: 47 }, text: passage })
    const longer = "q".repeat(60) + " " + passage + " " + "q".repeat(60)
    assert.deepStrictEqual(findNearest(longer, snippet), { method: "fuzzy", score: rounded(1 - 1 / 47), span: { start: 61, end: 108 }, text: passage })
  })

  it("raw offsets: the passage's raw span, past typographic variants and a restricted range", () => {
    const passage = edited([10])
    const head = "Q\u201cX\u201d  Z\u00a0\u00a0K\u00ad. " // normalises to `q"x" z k. `
    const capture = head + filler(300, 4) + passage.toUpperCase() + " " + filler(300, 5)
    const at = capture.indexOf(passage.toUpperCase())
    const found = findNearest(capture, snippet)
    assert.deepStrictEqual(found, { method: "fuzzy", score: rounded(1 - 1 / 47), span: { start: at, end: at + 47 }, text: passage.toUpperCase() })
    // The same, searching only from the passage's start: offsets are still into the whole text.
    assert.deepStrictEqual(findNearest(capture, snippet, { from: at }), found)
    assert.deepStrictEqual(findNearest(capture, snippet, { from: at, to: at + 47 }), found)
    // A range that cuts the passage: what is left scores lower.
    assert.isUndefined(findNearest(capture, snippet, { from: at + 30 }))
  })
})

describe("Nearest: the coarse pass and the fine pass", () => {
  it("a passage whose trigrams rank below a decoy's is still aligned: fineCandidates blocks are", () => {
    assert.strictEqual(fineCandidates, 3)
    // The decoy holds nearly all of the snippet's trigrams, in another order (its halves swapped):
    // the coarse pass ranks its blocks first, yet its edit distance is large. The passage with 4
    // edits, spread so that each removes 3 trigrams, ranks below it.
    const swapped = snippet.slice(24) + " " + snippet.slice(0, 23)
    const best = edited([4, 14, 26, 38])
    let capture = filler(300, 21) + swapped + " " + filler(300, 22)
    const at = capture.length
    capture += best + " " + filler(300, 24)
    assert.deepStrictEqual(findNearest(capture, snippet), { method: "fuzzy", score: rounded(1 - 4 / 47), span: { start: at, end: at + 47 }, text: best })
  })

  it("of two equally good passages, the first one in the text is reported", () => {
    const twin = edited([20])
    let capture = filler(300, 31)
    const at = capture.length
    capture += twin + " " + filler(300, 32) + twin + " " + filler(300, 33)
    assert.deepStrictEqual(findNearest(capture, snippet), { method: "fuzzy", score: rounded(1 - 1 / 47), span: { start: at, end: at + 47 }, text: twin })
  })

  it("the fine pass aligns a margin of a quarter snippet around the window, so a stretched passage is whole", () => {
    // A 200-unit snippet; its passage has "zz " inserted after every 20th code unit (10 times):
    // 230 code units, 30 edits. A coarse window of 200 lies inside it; only the margin (58 each
    // side) lets the alignment reach both of its ends.
    const next = random(5)
    const vocabulary = ["net", "sales", "rose", "in", "the", "third", "quarter", "units", "margin", "growth"]
    let source = ""
    while (source.length < 200) source += vocabulary[Math.floor(next() * vocabulary.length)] + " "
    const pattern = source.slice(0, 200)
    let stretched = ""
    for (let k = 0; k < 200; k += 20) stretched += pattern.slice(k, k + 20) + "zz "
    assert.strictEqual(stretched.length, 230)
    stretched = stretched.slice(0, 227) // the last insertion dropped: 227 units, 27 edits
    let capture = filler(600, 41)
    const at = capture.length
    capture += stretched + " " + filler(600, 42)
    const found = findNearest(capture, pattern)!
    assert.deepStrictEqual(found.span, { start: at, end: at + 227 })
    // One insertion lands before a space ("rose" "zz " " net"): normalised, the doubled space is one,
    // so 26 edits in 226 normalised code units.
    assert.strictEqual(found.score, rounded(1 - 26 / 226))
  })

  it("an alignment of no code units is no passage, even with a minimum score of 0", () => {
    // 10 ≤ 2 × 8: the text is aligned whole, and no code unit of it is worth keeping.
    assert.isUndefined(findNearest("qqqqqqqqqq", "abcdefgh", { minScore: 0 }))
  })
})

describe("Nearest: bounds", () => {
  it("fuzzy search for normalised snippets of minFuzzyLength to maxFuzzyLength code units, both included", () => {
    assert.strictEqual(minFuzzyLength, 8)
    assert.strictEqual(maxFuzzyLength, 1_000)
    const capture = "abcdefgh"
    // 8 code units, one edit: 1 − 1/8 = 0.875.
    assert.deepStrictEqual(findNearest(capture, "abcdefgX"), { method: "fuzzy", score: 0.875, span: { start: 0, end: 8 }, text: capture })
    // 7 code units: no fuzzy search.
    assert.isUndefined(findNearest("abcdefg", "abcdefX", { minScore: 0 }))
    // 1,000 and 1,001 code units, one edit each.
    const base = "ab".repeat(500)
    const thousand = base.slice(0, 999) + "X"
    assert.deepStrictEqual(findNearest(base, thousand), { method: "fuzzy", score: 0.999, span: { start: 0, end: 1_000 }, text: base })
    assert.isUndefined(findNearest(base + "a", thousand + "a", { minScore: 0 }))
  })

  it("minScore: a score equal to it is kept, below it is not; the default is 0.6", () => {
    assert.strictEqual(defaultMinScore, 0.6)
    // 10 code units, 4 edits: 0.6 exactly (the alignment "abcdef" is widened to the whole word).
    const capture = "abcdefghij"
    const four = "abcdefWXYZ"
    assert.deepStrictEqual(findNearest(capture, four), { method: "fuzzy", score: 0.6, span: { start: 0, end: 10 }, text: capture })
    assert.isUndefined(findNearest(capture, "abcdeVWXYZ"))
    assert.strictEqual(findNearest(capture, "abcdeVWXYZ", { minScore: 0.5 })!.score, 0.5)
    assert.isUndefined(findNearest(capture, four, { minScore: 0.601 }))
  })

  it("an empty normalised snippet finds nothing; a normalized/1 hit scores 1 with the raw span", () => {
    assert.isUndefined(findNearest("abc", ""))
    assert.isUndefined(findNearest("abc", "\u00ad\u200b"))
    assert.deepStrictEqual(findNearest("xx NET\u00a0Sales yy", "net sales"), {
      method: "normalized/1",
      score: 1,
      span: { start: 3, end: 12 },
      text: "NET\u00a0Sales"
    })
    assert.isUndefined(findNearest("", "net sales figures"))
  })
})

describe("Nearest: widening to word boundaries", () => {
  it("an alignment ending inside a word or number is widened to the word's ends", () => {
    // The snippet ends in "4,31": the alignment ("4,21", one edit) stops inside "4,2105"; the
    // passage ends with the number.
    const capture = filler(200, 7) + "net sales were 4,2105 units"
    const start = capture.indexOf("net")
    const found = findNearest(capture, "net sales were 4,31")
    // The widened passage "net sales were 4,2105" (21 units) against the snippet (19): 3 edits.
    assert.deepStrictEqual(found, {
      method: "fuzzy",
      score: rounded(1 - 3 / 21),
      span: { start, end: start + 21 },
      text: "net sales were 4,2105"
    })
    // At the start too: "sales" is cut by the alignment's start ("les were 4,2105" would not be quoted).
    const back = findNearest(capture, "les werX 4,2105 units")
    assert.strictEqual(back!.text, "sales were 4,2105 units")
    // "sa" inserted, X for e: 3 edits in 23.
    assert.strictEqual(back!.score, rounded(1 - 3 / 23))
  })

  it("widening stops after 32 code units at each end", () => {
    const long = "k".repeat(40)
    const capture = filler(200, 8) + `${long}abcdefghij${long} end`
    const found = findNearest(capture, "xabcdefghijx", { minScore: 0 })
    const inner = capture.indexOf("abcdefghij")
    // The alignment (abcdefghij, 2 edits) sits inside one 90-letter word: 32 more each side.
    assert.deepStrictEqual(found!.span, { start: inner - 32, end: inner + 10 + 32 })
  })

  it("non-ASCII letters and digits count as word characters; punctuation does not", () => {
    const capture = filler(200, 11) + "ventes nettes de 4\u00a0210 unit\u00e9s\u00e9 fin"
    const found = findNearest(capture, "ventes nettes de 4 210 unitX")
    assert.strictEqual(found!.text, "ventes nettes de 4\u00a0210 unit\u00e9s\u00e9")
    const dotted = filler(200, 12) + "net sales were.4 units"
    assert.strictEqual(findNearest(dotted, "net sales were")!.method, "normalized/1")
    assert.strictEqual(findNearest(dotted, "net sales werX")!.text, "net sales were")
  })
})

describe("Nearest: prepare", () => {
  it("clamps [from, to) into the text; offsets stay those of the whole text", () => {
    const text = "aaa net sales bbb"
    assert.deepStrictEqual([prepare(text, { from: -5 }).offset, prepare(text, { from: -5 }).normalized.text], [0, text])
    assert.deepStrictEqual([prepare(text, { from: 99 }).offset, prepare(text, { from: 99 }).normalized.text], [17, ""])
    assert.deepStrictEqual([prepare(text, { from: 4, to: 2 }).offset, prepare(text, { from: 4, to: 2 }).normalized.text], [4, ""])
    assert.deepStrictEqual([prepare(text, { from: 4, to: 99 }).offset, prepare(text, { from: 4, to: 99 }).normalized.text], [4, "net sales bbb"])
    assert.deepStrictEqual([prepare(text, { to: 13 }).offset, prepare(text, { to: 13 }).normalized.text], [0, "aaa net sales"])
    assert.deepStrictEqual(nearestIn(prepare(text, { from: 4 }), "NET sales"), {
      method: "normalized/1",
      score: 1,
      span: { start: 4, end: 13 },
      text: "net sales"
    })
  })
})
