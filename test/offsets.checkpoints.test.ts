/**
 * Span offsets counted from checkpoints (kept with a cached capture) are the offsets counted from
 * the start of the text: code points and UTF-8 bytes, on seeded random non-ASCII text (accents,
 * combining marks, CJK, emoji, astral-plane characters and lone surrogates), with astral characters
 * placed across checkpoint boundaries on purpose.
 */
import { assert, describe, it } from "@effect/vitest"
import { checkpoints, checkpointUnits, positions, spanOffsets } from "../src/anchor/Offsets.js"
import { random } from "./support/seeded.js"

/** The straightforward computation: the prefix before the position counted by the platform. */
const reference = (text: string, utf16: number) => {
  let at = Math.min(Math.max(utf16, 0), text.length)
  // Inside a surrogate pair: the boundary before it (as `positions` documents).
  if (at > 0 && at < text.length && (text.charCodeAt(at - 1) & 0xfc00) === 0xd800 && (text.charCodeAt(at) & 0xfc00) === 0xdc00) at -= 1
  const before = text.slice(0, at)
  return { utf16, codePoint: [...before].length, utf8: new TextEncoder().encode(before).length }
}

const seeded = (seed: number) => {
  const next = random(seed)
  return (bound: number) => next() % bound
}

const pieces = [
  "a", "b", " ", "\n", "\r\n", "7", // ASCII
  "é", "ß", "e\u0301", "z\u0301\u0323", // accents, combining marks (2 bytes)
  "€", "漢", "字", "한", "ー", // three-byte BMP, CJK
  "\u{1F600}", "\u{1F469}\u200D\u{1F52C}", "\u{1D11E}", "\u{20000}", "\u{10FFFF}", // astral: surrogate pairs
  "\ud800", "\udfff" // lone surrogates (one code point, three bytes as encoded)
]

/** Random text of about `length` code units; with `every`, an astral character straddles each multiple of it. */
const randomText = (next: (bound: number) => number, length: number, every?: number): string => {
  let text = ""
  while (text.length < length) {
    if (every === undefined) {
      text += pieces[next(pieces.length)]!
      continue
    }
    // Random pieces up to just before the next multiple of `every`, then an emoji whose low half lies on it.
    const multiple = (Math.floor((text.length + 1) / every) + 1) * every
    while (text.length + 6 < multiple - 1) text += pieces[next(pieces.length)]!
    while (text.length < multiple - 1) text += "a"
    text += "\u{1F600}"
  }
  return text
}

describe("Offsets from checkpoints", () => {
  it("every position, on seeded random non-ASCII text and at several checkpoint spacings, equals the count from the start", () => {
    for (let seed = 1; seed <= 60; seed++) {
      const next = seeded(seed)
      const every = [2, 3, 7, 16, 64, 129][seed % 6]!
      const text = randomText(next, 200 + next(1500), seed % 2 === 0 ? every : undefined)
      const table = checkpoints(text, every)
      const asked = Array.from({ length: 1 + next(40) }, () => next(text.length + 3) - 1)
      // Every multiple of the spacing and its neighbours too: where a checkpoint was moved off a surrogate pair.
      for (let at = 0; at <= text.length + every; at += every) asked.push(at - 1, at, at + 1)
      const got = positions(text, asked, table)
      assert.deepStrictEqual(got, asked.map((at) => reference(text, at)), `seed ${seed}, every ${every}`)
      assert.deepStrictEqual(got, positions(text, asked), `seed ${seed}: the same as without checkpoints`)
    }
  })

  it("spans of a long capture at the default spacing, astral characters straddling every checkpoint", () => {
    const next = seeded(4242)
    const text = randomText(next, 20 * checkpointUnits + 17, checkpointUnits)
    // The astral characters were placed so a checkpoint would split them: each was moved before its pair.
    for (let j = 1; j <= 20; j++) {
      const at = j * checkpointUnits
      assert.strictEqual(text.charCodeAt(at) & 0xfc00, 0xdc00, `a pair straddles ${at}`)
    }
    const table = checkpoints(text)
    assert.strictEqual(table.table[3 * 5], 5 * checkpointUnits - 1)
    const spans = Array.from({ length: 50 }, () => {
      let start = next(text.length - 100)
      if ((text.charCodeAt(start) & 0xfc00) === 0xdc00) start -= 1
      let end = start + 1 + next(90)
      if ((text.charCodeAt(end) & 0xfc00) === 0xdc00) end += 1
      return { start, end }
    })
    const got = spanOffsets(text, spans, table)
    assert.deepStrictEqual(got, spanOffsets(text, spans))
    got.forEach((o, k) => {
      const start = reference(text, spans[k]!.start)
      const end = reference(text, spans[k]!.end)
      assert.deepStrictEqual(o.codePoints, { start: start.codePoint, end: end.codePoint })
      assert.deepStrictEqual(o.utf8, { start: start.utf8, end: end.utf8 })
    })
  })

  it("text shorter than one spacing, the empty text, and positions past either end", () => {
    for (const text of ["", "é", "\u{1F600}", "ab\u{20000}c"]) {
      const table = checkpoints(text)
      const asked = [-5, 0, 1, 2, 3, text.length, text.length + 9]
      assert.deepStrictEqual(positions(text, asked, table), asked.map((at) => reference(text, at)))
    }
  })

  it("the table is small: 12 bytes per checkpoint", () => {
    const table = checkpoints("x".repeat(1 << 20))
    assert.strictEqual(table.table.length, 3 * ((1 << 20) / checkpointUnits + 1))
    assert.isAtMost(table.bytes, 12 * ((1 << 20) / checkpointUnits + 1) + 64)
  })
})
