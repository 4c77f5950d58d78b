/**
 * The direct route of the trigram look-up with its chunk body written out (src/anchor/TrigramIds.ts)
 * against the loop it replaces (test/support/trigramIdsBefore.ts) and against the hash-table route:
 * the same ids and packed chunk counts, position by position, for every text length from 3 to 80
 * code units (no whole chunk, then each remainder after whole chunks), longer texts of each
 * remainder, up to eight quotes packed in one word (every lane's four bits), alphabets of 1 to 63
 * units, units in no quote, CRLF and astral characters.
 */
import { assert, describe, it } from "@effect/vitest"
import { chunk, maxDirectAlphabet, patternTable, textIds } from "../src/anchor/TrigramIds.js"
import { random } from "./support/seeded.js"
import { directIdsBefore, directTablesBefore } from "./support/trigramIdsBefore.js"

const memberBits = (size: number, patternIds: ReadonlyArray<Uint16Array>) => {
  const bits = new Int32Array(size + 1)
  patternIds.slice(0, 8).forEach((ids, k) => ids.forEach((id) => bits[id] = bits[id]! | (1 << (4 * k))))
  return bits
}

const same = (text: string, patterns: ReadonlyArray<string>, label: string) => {
  const { patternIds, table } = patternTable(patterns)
  const bits = memberBits(table.size, patternIds)
  const now = textIds(text, patterns, patternIds, table, bits)
  const tables = directTablesBefore(patterns, patternIds)
  assert.strictEqual(now.route, tables === undefined ? "hashed" : "direct", label)
  const before = tables === undefined ? textIds(text, patterns, patternIds, table, bits, true) : directIdsBefore(text, tables, bits)
  const hashed = textIds(text, patterns, patternIds, table, bits, true)
  assert.strictEqual(now.ids.length, text.length - 2, label)
  assert.strictEqual(now.packed.length, Math.ceil((text.length - 2) / chunk), label)
  for (const [name, other] of [["before", before], ["hashed", hashed]] as const) {
    for (let i = 0; i < now.ids.length; i++) {
      if (now.ids[i] !== other.ids[i]) assert.fail(`${label}: id at ${i} ${now.ids[i]} against ${other.ids[i]} (${name})`)
    }
    for (let j = 0; j < now.packed.length; j++) {
      if (now.packed[j] !== other.packed[j]) assert.fail(`${label}: packed at ${j} ${now.packed[j]} against ${other.packed[j]} (${name})`)
    }
  }
  return now
}

const prose = (next: () => number, length: number) => {
  const words = ["net", "sales", "units", "Q3", "rose", "by", "per", "cent", "2026", "\u{1F600}", "x\r\n"]
  let text = ""
  while (text.length < length) text += words[next() % words.length]! + (next() % 9 === 0 ? ".\n" : " ")
  return text.slice(0, length)
}

describe("trigram ids, the direct route written out per chunk: the same as the loop before it", () => {
  it("for every length from 3 to 80 code units and each remainder of longer texts", () => {
    const next = random(2712)
    const base = prose(next, 40_000)
    const patterns = [base.slice(0, 12), base.slice(40, 70), "absent 3 " + base.slice(100, 160), "net sales", "x\r\n\u{1F600}"]
    let nonZero = 0
    for (let length = 3; length <= 80; length++) {
      const ids = same(base.slice(0, length), patterns, `length ${length}`).ids
      if (ids.some((id) => id !== 0)) nonZero++
    }
    for (const whole of [100, 1_000, 4_000]) {
      for (let rest = 0; rest < chunk; rest++) same(base.slice(0, whole * chunk + 2 + rest), patterns, `${whole} chunks and ${rest}`)
    }
    // Not vacuous: most of these texts hold trigrams of the quotes.
    assert.isAbove(nonZero, 60)
  })

  it("with eight quotes packed in one word, and a ninth", () => {
    const next = random(88)
    for (let round = 0; round < 12; round++) {
      const text = prose(next, 2_000 + round * 37)
      const patterns = Array.from({ length: 8 + (round % 2) }, () => {
        const start = next() % (text.length - 80)
        return text.slice(start, start + 8 + (next() % 70))
      })
      const { packed } = same(text, patterns, `round ${round}`)
      // Each lane counts in some chunk.
      for (let lane = 0; lane < 8; lane++) assert.isTrue(packed.some((p) => ((p >>> (4 * lane)) & 15) !== 0), `round ${round}, lane ${lane}`)
    }
  })

  it(`for alphabets of 1 to ${maxDirectAlphabet} units, with units in no quote`, () => {
    for (const size of [1, 2, 3, 4, 8, 15, 16, 31, 32, maxDirectAlphabet]) {
      const next = random(size * 7)
      const letters = Array.from({ length: size }, (_, k) => String.fromCharCode(0x21 + k)).join("")
      let text = ""
      while (text.length < 1_203 + size) text += next() % 10 === 0 ? "\u4e00" : letters[next() % size]!
      const quote = letters.length >= 3 ? letters : letters.repeat(3)
      same(text, [quote, text.slice(50, 90).replaceAll("\u4e00", letters[0]!)], `alphabet of ${size}`)
    }
  })
})
