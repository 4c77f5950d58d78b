/**
 * Every measure of `src/anchor/Similarity.ts` against a plain reference written from its definition
 * (full dynamic-programming table, every substring tried, trigrams counted as strings) on seeded
 * random texts over small and wide alphabets. Light enough for the module's mutation run: the cut
 * at `maxRatioLength` is checked here with one long input against a short one (2,048 × 1 cells);
 * the 2,048 × 2,048 cases are in `mutants.similarity.test.ts`.
 */
import { assert, describe, it } from "@effect/vitest"
import {
  align,
  dice,
  diceNormalized,
  levenshtein,
  maxRatioLength,
  ratio,
  ratioNormalized
} from "../src/anchor/Similarity.js"
import { seededRandom as random } from "./mutants.support.js"

const word = (next: () => number, alphabet: ReadonlyArray<string>, maxLength: number): string => {
  const length = Math.floor(next() * (maxLength + 1))
  let out = ""
  for (let i = 0; i < length; i++) out += alphabet[Math.floor(next() * alphabet.length)]!
  return out
}

/** Levenshtein distance from the full table. */
const levenshteinReference = (a: string, b: string): number => {
  const table: Array<Array<number>> = []
  for (let i = 0; i <= a.length; i++) {
    table.push([])
    for (let j = 0; j <= b.length; j++) {
      table[i]![j] = i === 0
        ? j
        : j === 0
        ? i
        : Math.min(
          table[i - 1]![j]! + 1,
          table[i]![j - 1]! + 1,
          table[i - 1]![j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1)
        )
    }
  }
  return table[a.length]![b.length]!
}

/** Sørensen–Dice over trigram multisets, the trigrams kept as strings. */
const diceReference = (a: string, b: string): number => {
  if (a.length < 3 || b.length < 3) return a === b ? 1 : 0
  const counts = new Map<string, number>()
  for (let i = 0; i + 3 <= a.length; i++) counts.set(a.slice(i, i + 3), (counts.get(a.slice(i, i + 3)) ?? 0) + 1)
  let common = 0
  for (let i = 0; i + 3 <= b.length; i++) {
    const left = counts.get(b.slice(i, i + 3)) ?? 0
    if (left > 0) {
      common++
      counts.set(b.slice(i, i + 3), left - 1)
    }
  }
  return (2 * common) / (a.length - 2 + b.length - 2)
}

/**
 * The best approximate occurrence by trying every substring: the least distance; the first end
 * where it is reached; and, for that end, the latest start that reaches it.
 */
const alignReference = (pattern: string, text: string) => {
  let distance = Infinity
  for (let s = 0; s <= text.length; s++) {
    for (let e = s; e <= text.length; e++) distance = Math.min(distance, levenshteinReference(pattern, text.slice(s, e)))
  }
  let end = -1
  for (let e = 0; e <= text.length && end < 0; e++) {
    for (let s = 0; s <= e; s++) {
      if (levenshteinReference(pattern, text.slice(s, e)) === distance) {
        end = e
        break
      }
    }
  }
  let start = -1
  for (let s = end; s >= 0 && start < 0; s--) {
    if (levenshteinReference(pattern, text.slice(s, end)) === distance) start = s
  }
  return { start, end, distance }
}

const narrow = ["a", "b"]
const wide = ["a", "b", "c", "\u00e9", "\u4e00", "\u4e01", "\uffff", "\u0100", "\u0001"]

describe("Similarity against plain references", () => {
  it("levenshtein equals the full-table distance, whichever argument is longer", () => {
    const next = random(7)
    for (let k = 0; k < 400; k++) {
      const alphabet = k % 2 === 0 ? narrow : wide
      const a = word(next, alphabet, 9)
      const b = word(next, alphabet, 9)
      const expected = levenshteinReference(a, b)
      assert.strictEqual(levenshtein(a, b), expected, JSON.stringify([a, b]))
      assert.strictEqual(levenshtein(b, a), expected, JSON.stringify([b, a]))
    }
    // Hand-counted cases.
    assert.strictEqual(levenshtein("kitten", "sitting"), 3)
    assert.strictEqual(levenshtein("", "abc"), 3)
    assert.strictEqual(levenshtein("abc", ""), 3)
    assert.strictEqual(levenshtein("", ""), 0)
    assert.strictEqual(levenshtein("flaw", "lawn"), 2)
  })

  it("diceNormalized equals the trigram-multiset coefficient, wide code units included", () => {
    const next = random(11)
    for (let k = 0; k < 600; k++) {
      const alphabet = k % 3 === 0 ? narrow : wide
      const a = word(next, alphabet, 10)
      const b = k % 5 === 0 ? a : word(next, alphabet, 10)
      assert.strictEqual(diceNormalized(a, b), diceReference(a, b), JSON.stringify([a, b]))
    }
    // Hand-counted: "abcd" {abc, bcd} vs "bcde" {bcd, cde}: 2·1 / 4.
    assert.strictEqual(diceNormalized("abcd", "bcde"), 0.5)
    // Multisets: "aaaa" has aaa twice, "aaa" once: 2·1 / 3.
    assert.strictEqual(diceNormalized("aaaa", "aaa"), 2 / 3)
    assert.strictEqual(diceNormalized("aaa", "aaaa"), 2 / 3)
    // Trigrams differing only in the first, middle or last unit, by a high code unit, do not meet.
    assert.strictEqual(diceNormalized("\u4e00ab", "\u4e01ab"), 0)
    assert.strictEqual(diceNormalized("a\u4e00b", "a\u4e01b"), 0)
    assert.strictEqual(diceNormalized("ab\u4e00", "ab\u4e01"), 0)
    assert.strictEqual(diceNormalized("\u0001\u0000a", "\u0000\u0001a"), 0)
    // Too short for a trigram: equality decides.
    assert.strictEqual(diceNormalized("ab", "ab"), 1)
    assert.strictEqual(diceNormalized("ab", "abc"), 0)
    assert.strictEqual(diceNormalized("abc", "ab"), 0)
    assert.strictEqual(diceNormalized("", ""), 1)
  })

  it("dice and ratio compare the normalized/1 forms", () => {
    assert.strictEqual(dice("\u201cHello  World\u201d", "\"hello world\""), 1)
    assert.strictEqual(ratio("\u201cHello  World\u201d", "\"hello world\""), 1)
    assert.strictEqual(dice("AB", "ab"), 1)
    assert.strictEqual(ratio("ABCD", "abce"), 0.75)
  })

  it("ratioNormalized is one minus distance over the longer length, both cut to maxRatioLength", () => {
    const next = random(13)
    for (let k = 0; k < 200; k++) {
      const a = word(next, wide, 8)
      const b = word(next, wide, 8)
      const longer = Math.max(a.length, b.length)
      const expected = longer === 0 ? 1 : 1 - levenshteinReference(a, b) / longer
      assert.strictEqual(ratioNormalized(a, b), expected, JSON.stringify([a, b]))
    }
    assert.strictEqual(ratioNormalized("", ""), 1)
    assert.strictEqual(ratioNormalized("abcd", ""), 0)
    assert.strictEqual(ratioNormalized("", "abcd"), 0)
    // The cut, each side: 3,000 units against one. Cut, 2,047 edits over 2,048; uncut, 2,999 over 3,000.
    const long = "x".repeat(3_000)
    assert.strictEqual(ratioNormalized(long, "x"), 1 - 2_047 / maxRatioLength)
    assert.strictEqual(ratioNormalized("x", long), 1 - 2_047 / maxRatioLength)
    // Exactly maxRatioLength is not cut, one more unit is: a difference at the last unit counts,
    // one past it does not.
    assert.strictEqual(ratioNormalized("x".repeat(maxRatioLength - 1) + "y", "y"), 1 - (maxRatioLength - 1) / maxRatioLength)
    assert.strictEqual(ratioNormalized("y", "x".repeat(maxRatioLength - 1) + "y"), 1 - (maxRatioLength - 1) / maxRatioLength)
    assert.strictEqual(ratioNormalized("x".repeat(maxRatioLength) + "y", "y"), 1 - maxRatioLength / maxRatioLength)
    assert.strictEqual(maxRatioLength, 2_048)
  })

  it("align finds the least-distance substring: the first end, and the latest start for it", () => {
    const next = random(17)
    for (let k = 0; k < 300; k++) {
      const alphabet = k % 2 === 0 ? narrow : ["a", "b", "c"]
      const pattern = word(next, alphabet, 5)
      const text = word(next, alphabet, 9)
      const got = align(pattern, text)
      if (pattern.length === 0) {
        assert.deepStrictEqual(got, { start: 0, end: 0, distance: 0 })
        continue
      }
      assert.deepStrictEqual(got, alignReference(pattern, text), JSON.stringify([pattern, text]))
    }
    // Hand-checked cases.
    assert.deepStrictEqual(align("abc", "xxabcxx"), { start: 2, end: 5, distance: 0 })
    assert.deepStrictEqual(align("abc", "xxabxx"), { start: 2, end: 4, distance: 1 })
    assert.deepStrictEqual(align("abc", ""), { start: 0, end: 0, distance: 3 })
    assert.deepStrictEqual(align("abc", "zzz"), { start: 0, end: 0, distance: 3 })
    assert.deepStrictEqual(align("", "abc"), { start: 0, end: 0, distance: 0 })
    assert.deepStrictEqual(align("ab", "abab"), { start: 0, end: 2, distance: 0 })
    // A text character missing from the pattern, inside the passage: 1 edit. Without that step the
    // best is 2 ("ab" with "cd" missing, or "Xcd" for "abcd").
    assert.deepStrictEqual(align("abcd", "zzabXcdzz"), { start: 2, end: 7, distance: 1 })
    assert.deepStrictEqual(align("abcdef", "abcXdef"), { start: 0, end: 7, distance: 1 })
  })
})
