/**
 * The coarse pass's chunk bounds (src/anchor/CoarsePass.ts: packed counts per 8 code units, eight
 * patterns to a word) against the search it replaced, kept verbatim in test/support/nearestReference.ts:
 * seeded texts of a small vocabulary (the bench's shape, where most windows look alike), hostile
 * texts (one code unit repeated, two alternating, surrogate pairs, runs of one trigram), quotes
 * longer than a block and than a chunk, empty-ish quotes, text lengths around chunk ends, and more
 * than eight quotes on one capture (several packed words, asked in any order). Every passage
 * (method, score, span, text) must be the same.
 */
import { assert, describe, it } from "@effect/vitest"
import { maxFuzzyLength, minFuzzyLength, nearestAll, nearestEach, type Prepared, prepare } from "../src/anchor/Nearest.js"
import { referenceNearestIn } from "./support/nearestReference.js"
import { random } from "./support/seeded.js"

/** Text of a small vocabulary with numbers and line breaks, as the bench's captures are made. */
const smallVocabulary = (size: number, seed: number) => {
  const words = ["net", "sales", "units", "quarter", "inventory", "rose", "fell", "by", "to", "of", "the", "Q3", "per", "cent"]
  const next = random(seed)
  const parts: Array<string> = []
  let length = 0
  while (length < size) {
    const word = next() % 7 === 0 ? String(next() % 100_000) : words[next() % words.length]!
    const piece = next() % 13 === 0 ? `${word}.\n` : `${word} `
    parts.push(piece)
    length += piece.length
  }
  return parts.join("").slice(0, size)
}

const reference = (prepared: Prepared, snippets: ReadonlyArray<string>, minScore?: number) =>
  snippets.map((snippet) => referenceNearestIn(prepared, snippet, { minScore }))

/** Near misses cut from `text` at seeded places: the bench's `absent N` prefix, edits, and lengths around the bounds. */
const nearMisses = (text: string, next: () => number, count: number) =>
  Array.from({ length: count }, (_, k) => {
    const lengths = [minFuzzyLength - 1, minFuzzyLength, 9, 17, 33, 60, 61, 200, 999, maxFuzzyLength]
    const length = lengths[next() % lengths.length]!
    const start = next() % Math.max(1, text.length - length)
    const exact = text.slice(start, start + length)
    const at = next() % Math.max(1, exact.length)
    switch (k % 5) {
      case 0:
        return `absent ${k} ${exact}`
      case 1:
        return exact.slice(0, at) + "#" + exact.slice(at + 1)
      case 2:
        return exact.slice(0, at) + " not " + exact.slice(at)
      case 3:
        return exact.split(" ").reverse().join(" ")
      default:
        return exact.toUpperCase() + exact.slice(0, at)
    }
  })

/** nearestAll, nearestEach in reverse order, and the reference: all the same, at the default and at no minimum score. */
const same = (text: string, snippets: ReadonlyArray<string>) => {
  const prepared = prepare(text)
  const expected = reference(prepared, snippets)
  assert.deepStrictEqual(nearestAll(prepared, snippets), expected)
  const each = nearestEach(prepared, snippets)
  const backwards: Array<unknown> = []
  for (let k = snippets.length - 1; k >= 0; k--) backwards[k] = each(k)
  assert.deepStrictEqual(backwards, expected)
  assert.deepStrictEqual(nearestAll(prepared, snippets, { minScore: 0 }), reference(prepared, snippets, 0))
}

describe("chunk bounds: the same passages as the reference", () => {
  it("a small vocabulary (most windows alike), seeded, several sizes and quote counts", () => {
    for (const [size, count, seed] of [[20_000, 5, 1], [65_536, 8, 2], [120_003, 9, 3], [40_001, 17, 4]] as const) {
      const text = smallVocabulary(size, seed)
      same(text, nearMisses(text, random(seed * 31), count))
    }
  })

  it("text lengths around the end of a chunk", () => {
    const base = smallVocabulary(3_000, 7)
    for (let cut = 2_990; cut <= 3_000; cut++) {
      const text = base.slice(0, cut)
      same(text, nearMisses(text, random(cut), 6))
    }
  })

  it("one code unit repeated, and two alternating: every window alike", () => {
    const quotes = ["a".repeat(40), "a".repeat(39) + "b", "b" + "a".repeat(60), "ab".repeat(30), "a".repeat(maxFuzzyLength), "aaaaaaaa", "aaaaaaab"]
    same("a".repeat(30_001), quotes)
    same("ab".repeat(15_000) + "a", quotes)
    same("aab".repeat(10_000), quotes)
  })

  it("surrogate pairs and one trigram in long runs", () => {
    const pair = "\u{1F600}"
    const text = (pair.repeat(50) + " net sales " + "\u{1D400}x".repeat(40) + " 4,201 ").repeat(200)
    const quotes = [
      pair.repeat(10) + " net sales",
      "net sale " + "\u{1D400}x".repeat(20),
      "\u{1D400}".repeat(30),
      pair.repeat(600),
      "absent 3 " + text.slice(101, 171),
      text.slice(5_000, 5_000 + 400).replace(/x/g, "y")
    ]
    same(text, quotes)
  })

  it("quotes longer than a block and a chunk, and empty-ish quotes", () => {
    const text = smallVocabulary(50_000, 11)
    const next = random(5)
    const long = Array.from({ length: 6 }, () => {
      const start = next() % (text.length - 2_000)
      return text.slice(start, start + 700 + (next() % 300)).replace(/e/g, "E") + " tail"
    })
    same(text, [...long, "", " ", "\u00AD", "\u200B\u200B", " \n\t ", ".", "net", "net sale", text.slice(0, 12)])
  })

  it("more than eight quotes on one capture: several packed words, asked in any order", () => {
    const text = smallVocabulary(80_000, 13)
    same(text, nearMisses(text, random(99), 30))
  })

  it("seeded texts of two letters and a space: near ties everywhere, quotes at the end, lengths of every residue", () => {
    for (let seed = 1; seed <= 12; seed++) {
      const next = random(seed)
      const size = 1_500 + (next() % 600)
      const text = Array.from({ length: size }, () => "ab "[next() % 3]).join("")
      const quotes = Array.from({ length: 24 }, (_, k) => {
        const length = 10 + (k % 16) + 8 * (next() % 3)
        // Every third from the very end of the text, where the last chunk is short.
        const start = k % 3 === 0 ? text.length - length + (next() % 3) : next() % (text.length - length)
        const exact = text.slice(start, start + length)
        const at = next() % exact.length
        return exact.slice(0, at) + "ba"[next() % 2] + exact.slice(at + 1)
      })
      same(text, quotes)
    }
  })

  it("planted copies with a few edits each in unrelated text: near ties between a few blocks, one at the very end", () => {
    const letters = "abcdefghijklmnopqrstuvwxyz"
    for (let seed = 1; seed <= 40; seed++) {
      const next = random(seed * 7)
      const word = (length: number) => Array.from({ length }, () => letters[next() % 26]).join("")
      const quote = word(12 + (next() % 40))
      const edit = (s: string, edits: number) => {
        let out = s
        for (let e = 0; e < edits; e++) {
          const at = next() % out.length
          out = out.slice(0, at) + letters[next() % 26] + out.slice(at + 1)
        }
        return out
      }
      const parts: Array<string> = []
      for (let c = 0; c < 4; c++) parts.push(word(200 + (next() % 300)), edit(quote, 1 + (next() % 3)))
      // The last copy ends the text, or nearly.
      const text = parts.join("") + word(next() % 3)
      same(text, [quote, edit(quote, 1), quote.slice(1) + "q"])
    }
  })
})
