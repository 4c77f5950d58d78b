import { assert, describe, it } from "@effect/vitest"
import {
  defaultMinScore,
  findNearest,
  maxFuzzyLength,
  minFuzzyLength,
  nearestIn,
  prepare
} from "../src/anchor/Nearest.js"
import { align, dice, levenshtein, maxRatioLength, ratio } from "../src/anchor/Similarity.js"
import { random } from "./support/seeded.js"

const words = (
  "net sales rose to million in the third quarter revenue margin cost inventory growth decline compared with " +
  "prior year period operating income units shipped region north south guidance raised lowered"
).split(" ")

/** Prose-like text of about `size` code units from a small vocabulary (so many passages look alike). */
const prose = (size: number, seed = 1) => {
  const next = random(seed)
  const parts: Array<string> = []
  let length = 0
  while (length < size) {
    const word = words[next() % words.length]! + (next() % 9 === 0 ? ". " : " ")
    parts.push(word)
    length += word.length
  }
  return parts.join("")
}

/** The start of the word at or after `at` (snippets start and end at word boundaries, as quotes do). */
const wordStart = (text: string, at: number) => text.indexOf(" ", at) + 1

/** CPU milliseconds of `f` (less noisy than wall time on a busy machine). */
const cpuMs = (f: () => void) => {
  const before = process.cpuUsage()
  f()
  const used = process.cpuUsage(before)
  return (used.user + used.system) / 1000
}

describe("similarity", () => {
  it("levenshtein and ratio", () => {
    assert.strictEqual(levenshtein("kitten", "sitting"), 3)
    assert.strictEqual(levenshtein("", "abc"), 3)
    assert.strictEqual(ratio("abc", "abc"), 1)
    // Typography, case and spacing are normalised away before comparing.
    assert.strictEqual(ratio("\u201cNet  Sales\u201d", "\"net sales\""), 1)
    assert.strictEqual(ratio("revenue was 4,210", "revenue was 4,201"), 1 - 2 / 17)
    assert.strictEqual(ratio("", ""), 1)
    assert.strictEqual(ratio("abc", ""), 0)
  })

  it("dice over trigrams", () => {
    assert.strictEqual(dice("night", "nacht"), 0)
    assert.strictEqual(dice("Night", "night"), 1)
    // "abcd" has trigrams abc, bcd; "abce" has abc, bce: one shared of four.
    assert.strictEqual(dice("abcd", "abce"), 0.5)
    assert.strictEqual(dice("ab", "ab"), 1)
  })

  it("ratio cuts its inputs, so its cost is bounded whatever their length", () => {
    const a = "x".repeat(1_000_000)
    const b = "y".repeat(1_000_000)
    const ms = cpuMs(() => assert.strictEqual(ratio(a, b), 0))
    // Unbounded this would be 10^12 cells; bounded it is maxRatioLength² (about 4 million).
    assert.isBelow(ms, 5_000)
    assert.strictEqual(maxRatioLength, 2048)
  })

  it("align finds the best approximate substring and its exact bounds", () => {
    assert.deepStrictEqual(align("abc", "xxabcxx"), { start: 2, end: 5, distance: 0 })
    // Edit distance alone prefers "4,20" (one deletion) over "4,201" (two substitutions).
    assert.deepStrictEqual(align("net sales 4,210", "... net sales 4,201 ..."), { start: 4, end: 18, distance: 1 })
    assert.deepStrictEqual(align("abc", ""), { start: 0, end: 0, distance: 3 })
  })
})

describe("findNearest", () => {
  it("reports a normalized/1 hit with score 1 and the raw span of the capture", () => {
    const capture = "Intro.\n\u201cNet sales rose to \u20ac4,210\u00a0million\u201d \u2014 the com\u00adpany said."
    const found = findNearest(capture, "\"net sales rose to \u20ac4,210 million\" - the company said")
    assert.isDefined(found)
    assert.strictEqual(found!.method, "normalized/1")
    assert.strictEqual(found!.score, 1)
    assert.strictEqual(found!.text, "\u201cNet sales rose to \u20ac4,210\u00a0million\u201d \u2014 the com\u00adpany said")
    assert.strictEqual(capture.slice(found!.span.start, found!.span.end), found!.text)
    assert.strictEqual(found!.span.start, 7)
  })

  it("finds a near-verbatim passage fuzzily, with a score below 1, for a changed digit and an inserted negation", () => {
    const capture = prose(200_000, 3)
    const at = wordStart(capture, 123_457)
    const original = capture.slice(at, wordStart(capture, at + 295) - 1)
    const digit = original.slice(0, 140) + "4,210" + original.slice(145)
    const negated = original.slice(0, 100) + "not " + original.slice(100)
    for (const snippet of [digit, negated]) {
      const found = findNearest(capture, snippet)
      assert.isDefined(found)
      assert.strictEqual(found!.method, "fuzzy")
      assert.isAbove(found!.score, 0.95)
      assert.isBelow(found!.score, 1)
      // The passage is the original one, give or take its edges.
      assert.isAtMost(Math.abs(found!.span.start - at), 3)
      assert.isAtMost(Math.abs(found!.span.end - (at + original.length)), 3)
      assert.strictEqual(capture.slice(found!.span.start, found!.span.end), found!.text)
    }
  })

  it("widens a fuzzy passage to word boundaries, so it never ends inside a number", () => {
    const capture = "Other text first. In the third quarter net sales were 4,201 units, up from 3,950."
    const found = findNearest(capture, "In the third quarter net sales were 4,210")
    assert.strictEqual(found!.method, "fuzzy")
    assert.strictEqual(found!.text, "In the third quarter net sales were 4,201")
    assert.strictEqual(found!.score, 0.951) // 2 edits in 41
  })

  it("returns nothing below the minimum score", () => {
    const capture = prose(50_000, 5)
    assert.isUndefined(findNearest(capture, "Zebras quickly juggle forty-two xylophones at dawn, said nobody ever."))
    // An explicit lower minimum shows the best (poor) passage anyway.
    const poor = findNearest(capture, "Zebras quickly juggle forty-two xylophones at dawn, said nobody ever.", { minScore: 0 })
    assert.isDefined(poor)
    assert.isBelow(poor!.score, defaultMinScore)
  })

  it("searches only [from, to) and reports offsets into the whole text", () => {
    const capture = "alpha beta gamma delta. " + "filler text here. ".repeat(20) + "alpha beta gamma delta."
    const second = capture.lastIndexOf("alpha")
    const found = findNearest(capture, "Alpha  Beta Gamma Delta", { from: 30 })
    assert.strictEqual(found!.method, "normalized/1")
    assert.strictEqual(found!.span.start, second)
    assert.strictEqual(found!.text, "alpha beta gamma delta")
    assert.isUndefined(findNearest(capture, "alpha beta gamma delta", { from: 30, to: second + 5 }))
  })

  it("never returns a span that splits a surrogate pair", () => {
    const next = random(9)
    const pieces = ["\ud83d\ude00", "a", "b", " ", "\u00e9", "\ud835\udc00"]
    let capture = ""
    while (capture.length < 5_000) capture += pieces[next() % pieces.length]
    for (let k = 0; k < 40; k++) {
      const at = next() % 4_000
      const snippet = capture.slice(at, at + 60).replace(/a/g, "b")
      const found = findNearest(capture, snippet, { minScore: 0 })
      if (found === undefined) continue
      const { end, start } = found.span
      const high = (i: number) => i >= 0 && capture.charCodeAt(i) >= 0xd800 && capture.charCodeAt(i) <= 0xdbff
      assert.isFalse(high(start - 1) && capture.charCodeAt(start) >= 0xdc00 && capture.charCodeAt(start) <= 0xdfff)
      assert.isFalse(high(end - 1))
    }
  })

  it("a search range whose bounds split surrogate pairs leaves the half characters out", () => {
    const text = "Intro. \u{1F600} Net sales for Q3 2026 were 4,210 units. \u{1F600} End."
    const from = text.indexOf("\u{1F600}") + 1
    const to = text.lastIndexOf("\u{1F600}") + 1
    const found = findNearest(text, "\u{1F600} Net sales for Q3 2026 were 4,211 units. \u{1F600}", { from, to })
    assert.deepStrictEqual(found?.span, { start: from + 1, end: to - 1 })
    assert.strictEqual(found?.text, " Net sales for Q3 2026 were 4,210 units. ")
    // The prepared range itself starts and ends on whole characters.
    const prepared = prepare(text, { from, to })
    assert.strictEqual(prepared.offset, from + 1)
    assert.strictEqual(prepared.normalized.text.isWellFormed(), true)
    // Bounds on whole characters, and a range inside one pair, are left as they are (the latter empty).
    assert.strictEqual(prepare(text, { from: from - 1, to: to + 1 }).offset, from - 1)
    assert.strictEqual(prepare(text, { from, to: from }).normalized.text, "")
  })

  it("bounds the fuzzy search to snippets of a documented length", () => {
    const capture = prose(20_000, 11)
    const long = capture.slice(100, 100 + maxFuzzyLength + 50).replace(/e/g, "E").replace(/ s/, " z")
    assert.isUndefined(findNearest(capture, long, { minScore: 0 }))
    // Still found when it is a normalized/1 hit.
    assert.strictEqual(findNearest(capture, capture.slice(100, 100 + maxFuzzyLength + 50).toUpperCase())!.method, "normalized/1")
    assert.isUndefined(findNearest(capture, "x".repeat(minFuzzyLength - 1), { minScore: 0 }))
    assert.isUndefined(findNearest(capture, "\u00ad\u200b", { minScore: 0 }))
  })

  it("one prepared capture serves many snippets", () => {
    const capture = prose(100_000, 13)
    const prepared = prepare(capture)
    const a = nearestIn(prepared, capture.slice(500, 700).toUpperCase())
    const from = wordStart(capture, 90_000)
    const b = nearestIn(prepared, capture.slice(from, wordStart(capture, from + 200) - 1) + "!!")
    assert.strictEqual(a!.span.start, 500)
    assert.strictEqual(b!.method, "fuzzy")
    assert.isAtMost(Math.abs(b!.span.start - from), 2)
  })

  it("costs close to linear in the capture: 16 times the text, well under 64 times the CPU time", () => {
    const small = prose(1 << 18, 17)
    const large = prose(1 << 22, 17)
    const snippet = (text: string) => {
      const at = Math.floor(text.length * 0.6)
      return text.slice(at, at + 150) + "9" + text.slice(at + 151, at + 300)
    }
    const s = snippet(small)
    const l = snippet(large)
    findNearest(small, s)
    const t1 = Math.min(cpuMs(() => findNearest(small, s)), cpuMs(() => findNearest(small, s)))
    const t16 = cpuMs(() => assert.strictEqual(findNearest(large, l)!.method, "fuzzy"))
    assert.isBelow(t16, Math.max(64 * t1, 100))
  })

  it("stays linear on a hostile repetitive capture", () => {
    const capture = "a".repeat(1 << 20)
    const snippet = "a".repeat(500) + "b" + "a".repeat(499)
    const ms = cpuMs(() => {
      const found = findNearest(capture, snippet)
      assert.strictEqual(found!.method, "fuzzy")
      // Widened to word boundaries (at most 32 code units each side).
      assert.isAbove(found!.score, 0.9)
    })
    assert.isBelow(ms, 5_000)
  })
})
