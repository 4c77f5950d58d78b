/**
 * The shared trigram pass (`nearestEach`, `nearestAll`, `Diagnoser.all`) against the search it
 * replaced, kept verbatim in test/support/nearestReference.ts: on seeded near misses (one character,
 * a digit, an inserted "not", swapped or dropped words, a prefix), hostile texts (one character
 * repeated, periodic text, NFKC expansion, combining marks, surrogate pairs), the fixtures, empty,
 * short and over-long snippets, snippets longer than the text, and many snippets on one capture,
 * every passage (method, score, span, text) must be the same.
 */
import { assert, describe, it } from "@effect/vitest"
import * as fs from "node:fs"
import * as path from "node:path"
import * as Diagnostic from "../src/anchor/Diagnostic.js"
import { differences } from "../src/anchor/Differences.js"
import { maxFuzzyLength, nearestAll, nearestEach, nearestIn, type Prepared, prepare } from "../src/anchor/Nearest.js"
import { cut } from "../src/internal/bounded.js"
import { referenceNearestIn } from "./support/nearestReference.js"
import { random } from "./support/seeded.js"

const vocabulary = (
  "net sales rose to million in the third quarter revenue margin cost inventory growth decline compared with " +
  "prior year period operating income units shipped region north south guidance raised lowered not"
).split(" ")

/** Prose from a small vocabulary with numbers (many passages look alike, as in the bench's captures). */
const prose = (size: number, seed: number) => {
  const next = random(seed)
  const parts: Array<string> = []
  let length = 0
  while (length < size) {
    const word = next() % 6 === 0 ? String(next() % 100_000) : vocabulary[next() % vocabulary.length]!
    const piece = word + (next() % 11 === 0 ? ".\n" : " ")
    parts.push(piece)
    length += piece.length
  }
  return parts.join("").slice(0, size)
}

const fixture = (name: string) => fs.readFileSync(path.join("fixtures", name), "utf8")

/** Texts the two searches are compared on: prose, fixtures and hostile shapes. */
const texts: ReadonlyArray<readonly [string, string]> = [
  ["empty", ""],
  ["tiny", "net sales"],
  ["prose 300", prose(300, 1)],
  ["prose 5,000", prose(5_000, 2)],
  ["prose 40,000", prose(40_000, 3)],
  ["q3-sales", fixture("sources/q3-sales.txt")],
  ["q3-inventory", fixture("sources/q3-inventory.txt")],
  ["unicode-nfd", fixture("sources/unicode-nfd.txt")],
  ["review", fixture("review/q3-revenue.txt")],
  ["report.md", fixture("extraction/report.md")],
  ["one character", "a".repeat(20_000)],
  ["periodic", "abcab".repeat(4_000)],
  ["NFKC expansion", "\uFDFA".repeat(2_000) + " net sales rose " + "\uFB01".repeat(2_000)],
  ["combining marks", ("e" + "\u0301".repeat(40) + " Zoe\u0308 cafe\u0301 ").repeat(300)],
  ["surrogate pairs", ("\u{1F600}\u{1D400}x \u{20000}\u{20001} net sales ").repeat(500)],
  ["CJK and spaces", ("\u6771\u4EAC\u3000\u5E02\u5834\u00A0\u2003 Umsatz stieg um 4,2 %\u2028").repeat(400)],
  ["digits", Array.from({ length: 3_000 }, (_, i) => String((i * 7_919) % 10_007)).join(" ")]
]

/** Near misses of a passage of `text`, as a drafting model makes them. */
const variants = (text: string, next: () => number): Array<string> => {
  const out: Array<string> = ["", " ", "a", "net", "x".repeat(7), "absent", "\u{1F600}"]
  if (text.length === 0) return out
  const lengths = [3, 8, 12, 30, 60, 140, 400, maxFuzzyLength + 40]
  for (const length of lengths) {
    const start = next() % Math.max(1, text.length - length)
    const exact = text.slice(start, start + length)
    const at = next() % Math.max(1, exact.length)
    const words = exact.split(" ")
    const swap = words.length > 2 ? next() % (words.length - 1) : 0
    const swapped = [...words]
    if (words.length > 2) [swapped[swap], swapped[swap + 1]] = [swapped[swap + 1]!, swapped[swap]!]
    out.push(
      exact,
      exact.toUpperCase(),
      exact.slice(0, at) + "#" + exact.slice(at + 1), // one character changed
      exact.replace(/\d/, (d) => String((Number(d) + 1) % 10)), // one digit changed
      exact.slice(0, at) + " not " + exact.slice(at), // a "not" inserted
      swapped.join(" "), // two words swapped
      words.filter((_, k) => k !== swap).join(" "), // a word dropped
      `absent ${next() % 100} ${exact}`, // the bench's shape
      exact + exact // longer than its passage
    )
  }
  out.push(text + " and more", text.slice(1) + text.slice(0, 1), "zebras juggle xylophones at dawn, quietly")
  return out
}

/** The reference on each snippet, one at a time. */
const reference = (prepared: Prepared, snippets: ReadonlyArray<string>, minScore?: number) =>
  snippets.map((snippet) => referenceNearestIn(prepared, snippet, { minScore }))

describe("nearestAll: the same passages as one search per snippet", () => {
  for (const [name, text] of texts) {
    it(`${name}: every variant, at the default and at no minimum score`, () => {
      const next = random(text.length + 17)
      const snippets = variants(text, next)
      const prepared = prepare(text)
      const expected = reference(prepared, snippets)
      assert.deepStrictEqual(nearestAll(prepared, snippets), expected)
      assert.deepStrictEqual(snippets.map((snippet) => nearestIn(prepared, snippet)), expected)
      // The audit's use: no minimum, so every coarse candidate's alignment is compared.
      assert.deepStrictEqual(nearestAll(prepared, snippets, { minScore: 0 }), reference(prepared, snippets, 0))
    })
  }

  it("a prepared range: offsets stay raw and passages stay inside it", () => {
    const text = prose(20_000, 9)
    const next = random(5)
    for (let round = 0; round < 6; round++) {
      const from = next() % 10_000
      const to = from + 500 + (next() % 9_000)
      const prepared = prepare(text, { from, to })
      const snippets = variants(text.slice(from, to), next)
      assert.deepStrictEqual(nearestAll(prepared, snippets, { minScore: 0 }), reference(prepared, snippets, 0))
    }
  })

  it("answers do not depend on the order they are asked in", () => {
    const text = prose(30_000, 11)
    const prepared = prepare(text)
    const snippets = variants(text, random(3))
    const expected = reference(prepared, snippets)
    const each = nearestEach(prepared, snippets)
    const order = snippets.map((_, k) => k).reverse()
    const got: Array<unknown> = []
    for (const k of order) got[k] = each(k)
    assert.deepStrictEqual(got, expected)
    // Asked twice, the same object.
    assert.strictEqual(each(0), each(0))
  })

  it("many snippets on one capture, past one shared table's trigrams (several passes)", () => {
    const text = prose(60_000, 13)
    const next = random(21)
    // 40 near misses of about 900 code units: more trigrams than one shared table holds.
    const snippets = Array.from({ length: 40 }, (_, k) => {
      const start = next() % (text.length - 900)
      const exact = text.slice(start, start + 900)
      return k % 3 === 0 ? `absent ${k} ${exact}` : k % 3 === 1 ? exact.replace(/ /g, " not ").slice(0, 990) : exact.toUpperCase() + "!"
    })
    const prepared = prepare(text)
    assert.deepStrictEqual(nearestAll(prepared, snippets, { minScore: 0 }), reference(prepared, snippets, 0))
  })

  it("seeded near misses of the bench's shape on a long capture", () => {
    const text = prose(300_000, 17)
    const next = random(99)
    const snippets = Array.from({ length: 12 }, (_, i) => {
      const start = next() % (text.length - 60)
      return `absent ${i} ${text.slice(start, start + 60)}`
    })
    const prepared = prepare(text)
    const expected = reference(prepared, snippets)
    assert.isTrue(expected.every((found) => found?.method === "fuzzy"))
    assert.deepStrictEqual(nearestAll(prepared, snippets), expected)
  })
})

describe("Diagnoser.all: the same diagnostics as one call per snippet", () => {
  it("per capture and per verification bounds, in order, across captures", () => {
    const captures = [{ text: prose(50_000, 31) }, { text: prose(8_000, 32) }, { text: fixture("sources/q3-sales.txt") }]
    const next = random(77)
    const batches = captures.map((capture) => variants(capture.text, next).slice(5, 16))
    const batched = Diagnostic.forVerification(60_000)
    const single = Diagnostic.forVerification(60_000)
    const prepared = captures.map((capture) => prepare(capture.text))
    batches.forEach((snippets, c) => {
      const got = batched.all(captures[c]!, snippets)
      const one = snippets.map((snippet) => single(captures[c]!, snippet))
      assert.deepStrictEqual(got, one)
      // The first maxPerCapture (and at most maxPerVerification in all) are diagnosed, as the reference finds them.
      got.forEach((diagnosis, k) => {
        const diagnosedBefore = batches.slice(0, c).reduce((sum, b) => sum + Math.min(b.length, Diagnostic.maxPerCapture), 0)
        const inBounds = k < Diagnostic.maxPerCapture && diagnosedBefore + k < Diagnostic.maxPerVerification
        const found = inBounds ? referenceNearestIn(prepared[c]!, snippets[k]!) : undefined
        assert.deepStrictEqual(
          diagnosis,
          found === undefined ? {} : {
            nearest: {
              method: found.method,
              score: found.score,
              span: found.span,
              text: cut(found.text, Diagnostic.maxPassageText),
              differences: differences(snippets[k]!, found.text)
            }
          }
        )
      })
    })
  })
})
