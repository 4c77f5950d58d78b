/**
 * The text's trigram ids by the direct route (src/anchor/TrigramIds.ts: small codes per code unit,
 * a table indexed by three codes) against the hash-table route they replace for small alphabets:
 * the same ids and the same packed chunk counts, position by position, on the bench's kind of
 * text, CRLF, long runs of one unit, astral characters, units in no quote, quotes of three units,
 * texts shorter than a chunk, and alphabets of 63 (direct) and 64 (hashed) distinct code units.
 */
import { assert, describe, it } from "@effect/vitest"
import { maxDirectAlphabet, patternTable, textIds } from "../src/anchor/TrigramIds.js"
import { random } from "./support/seeded.js"

/** Packed membership bits as the coarse pass makes them: bit 4·k for pattern k (of the first eight). */
const memberBits = (size: number, patternIds: ReadonlyArray<Uint16Array>) => {
  const bits = new Int32Array(size + 1)
  patternIds.slice(0, 8).forEach((ids, k) => ids.forEach((id) => bits[id] = bits[id]! | (1 << (4 * k))))
  return bits
}

/** Both routes on one text; the direct one must be taken when `direct`. */
const sameIds = (text: string, patterns: ReadonlyArray<string>, direct: boolean, label: string) => {
  const { patternIds, table } = patternTable(patterns)
  const bits = memberBits(table.size, patternIds)
  const chosen = textIds(text, patterns, patternIds, table, bits)
  const hashed = textIds(text, patterns, patternIds, table, bits, true)
  assert.strictEqual(chosen.route, direct ? "direct" : "hashed", label)
  assert.strictEqual(hashed.route, "hashed")
  assert.deepStrictEqual(Array.from(chosen.ids), Array.from(hashed.ids), `${label}: ids`)
  assert.deepStrictEqual(Array.from(chosen.packed), Array.from(hashed.packed), `${label}: packed counts`)
  // Not vacuous: some trigram of the text is in a quote.
  if (text.length >= 3 && patterns.some((p) => text.includes(p.slice(0, 3)))) assert.isTrue(hashed.ids.some((id) => id !== 0), label)
}

const cut = (text: string, next: () => number, count: number, length: number) =>
  Array.from({ length: count }, () => {
    const start = next() % Math.max(1, text.length - length)
    return text.slice(start, start + length)
  })

describe("trigram ids: the direct route equals the hash table's", () => {
  it("on the bench's kind of text, CRLF, runs of one unit and astral characters", () => {
    const next = random(27)
    const words = ["net", "sales", "units", "Q3", "rose", "by", "per", "cent", "2026", "\u{1F600}", "\u{10348}x"]
    for (let round = 0; round < 12; round++) {
      let text = ""
      while (text.length < 4_000 + round * 500) {
        const word = words[next() % words.length]!
        text += next() % 11 === 0 ? `${word}.\r\n` : `${word} `
      }
      if (round % 3 === 1) text = text.slice(0, 1000) + "a".repeat(2_000) + text.slice(1000)
      if (round % 3 === 2) text = text + "\u{1F600}".repeat(700) + "\r\n".repeat(300)
      const patterns = cut(text, next, 1 + (next() % 9), 8 + (next() % 90))
      // An absent quote and quotes of runs of one unit, of three units, of CR LF pairs.
      patterns.push("absent 1 " + patterns[0]!, "aaaaaaaaaa", "net", "\r\n\r\n\r\n", "\u{1F600}\u{1F600}\u{1F600}")
      sameIds(text, patterns, true, `round ${round}`)
    }
  })

  it("with units that are in no quote, and texts shorter than a chunk", () => {
    const next = random(5)
    for (let round = 0; round < 30; round++) {
      const length = 3 + (next() % 14)
      const text = Array.from({ length }, () => String.fromCharCode(0x61 + (next() % 3), 0x4e00 + (next() % 40))[next() % 2]).join("")
      sameIds(text, ["abcab", "ab" + text.slice(0, 3), "ccc"], true, `short ${round}: ${JSON.stringify(text)}`)
    }
    // Every code unit of the text absent from the quotes: every id 0.
    const { patternIds, table } = patternTable(["abcdef"])
    const ids = textIds("xyzzy".repeat(100), ["abcdef"], patternIds, table, memberBits(table.size, patternIds)).ids
    assert.isTrue(ids.every((id) => id === 0))
  })

  it(`directly up to ${maxDirectAlphabet} distinct code units in the quotes, by the hash table past that`, () => {
    const alphabet = (size: number) => Array.from({ length: size }, (_, k) => String.fromCharCode(0x21 + k)).join("")
    for (const size of [1, 2, 3, 7, 8, 31, 32, maxDirectAlphabet, maxDirectAlphabet + 1, 90]) {
      const letters = alphabet(size)
      const next = random(size)
      let text = ""
      while (text.length < 3_000) text += letters[next() % size]!
      // The quotes hold every letter (the alphabet's size is what chooses the route).
      const patterns = [letters.length >= 3 ? letters : letters.repeat(3), ...cut(text, next, 4, 40)]
      sameIds(text + alphabet(100), patterns, size <= maxDirectAlphabet, `alphabet of ${size}`)
    }
  })
})
