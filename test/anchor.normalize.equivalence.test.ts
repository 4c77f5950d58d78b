import { assert, describe, it } from "@effect/vitest"
import { maxSegment, normalize, type RawSpan } from "../src/anchor/Normalize.js"
import { random as seededInts } from "./support/seeded.js"

/**
 * `normalized/1` written again, straight from its definition (issue #12's list and the module's
 * doc), with none of the fast paths: every segment goes through steps 1–5, every normalised code
 * unit gets its own raw span in a plain array. The real implementation must agree with it on the
 * text and on every offset.
 */
const reference = (raw: string) => {
  const dropAndMap = (s: string) =>
    s.split("")
      .filter((ch) => !/[\u00ad\u200b-\u200d\ufeff]/.test(ch))
      .map((ch) => /[\u201c-\u201f\u00ab\u00bb]/.test(ch) ? "\"" : /[\u2018-\u201b]/.test(ch) ? "'" : /[\u2010-\u2015\u2212]/.test(ch) ? "-" : ch)
      .join("")
  const continues = (cp: number) =>
    /\p{M}/u.test(String.fromCodePoint(cp)) || (cp >= 0x1160 && cp <= 0x11ff) || (cp >= 0xd7b0 && cp <= 0xd7ff)
  const units: Array<string> = []
  const starts: Array<number> = []
  const ends: Array<number> = []
  let i = 0
  while (i < raw.length) {
    const from = i
    i += raw.codePointAt(i)! > 0xffff ? 2 : 1
    while (i < raw.length && continues(raw.codePointAt(i)!)) {
      const width = raw.codePointAt(i)! > 0xffff ? 2 : 1
      if (i + width - from > maxSegment) break
      i += width
    }
    const out = dropAndMap(dropAndMap(raw.slice(from, i)).normalize("NFKC").toLowerCase())
    for (const unit of out.split("")) {
      const space = /\p{White_Space}/u.test(unit)
      if (space && units.length > 0 && units[units.length - 1] === " ") {
        ends[ends.length - 1] = i
        continue
      }
      units.push(space ? " " : unit)
      starts.push(from)
      ends.push(i)
    }
  }
  const length = units.length
  return {
    text: units.join(""),
    // A negative index counts as 0; with nothing normalised that is offset 0.
    rawStart: (index: number) => (index >= length ? raw.length : starts[Math.max(0, index)] ?? 0),
    toRaw: (start: number, end: number): RawSpan => {
      const s = Math.max(0, Math.min(start, length))
      const e = Math.max(s, Math.min(end, length))
      if (e === s) {
        const at = s === length ? (length === 0 ? 0 : ends[length - 1]!) : starts[s]!
        return { start: at, end: at }
      }
      return { start: starts[s]!, end: ends[e - 1]! }
    }
  }
}

/** A small deterministic generator (mulberry32), so a failure names a reproducible seed. */
const random = (seed: number) => () => {
  seed = (seed + 0x6d2b79f5) | 0
  let t = Math.imul(seed ^ (seed >>> 15), 1 | seed)
  t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296
}

/** Pieces chosen to sit on every branch: ASCII and its white space, the dropped and mapped characters, NFKC expansions, marks, surrogates. */
const pieces = [
  "a", "Z", "Quick", "brown fox", " ", "  ", "\t", "\n", "\r\n", "\r", "\v\f", "\u0000", "\u001f", "\u007f", "0", "9.5%",
  "\u00a0", "\u0085", "\u1680", "\u2000", "\u2009", "\u200a", "\u2028", "\u2029", "\u202f", "\u205f", "\u3000",
  "\u00ad", "\u200b", "\u200c", "\u200d", "\ufeff", "inven\u00adtory",
  "\u201c", "\u201d", "\u201e", "\u201f", "\u00ab", "\u00bb", "\u2018", "\u2019", "\u201a", "\u201b",
  "\u2010", "\u2011", "\u2013", "\u2014", "\u2015", "\u2212", "\u207b", "\u208b", "\ufe31", "\ufe32", "\ufe58",
  "\ufb01", "\ufb04", "\ufdfa", "\u2474", "\u216b", "\uff26", "\u00a8", "\u203e", "\u3392", "\u00bd",
  "e\u0301", "\u00e9", "\u0301", "\u0308\u0308", "x\u0300\u0316", " \u0301", "\t\u0301", "A\u030a", "\u00c5",
  "\u0130", "\u03a3", "\u039f\u03a3", "\u00df", "\u1e9e", "\u0149",
  "\u1100\u1161\u11a8", "\ud55c", "\u1100", "\u1161", "\ud7b0", "\u0915\u093f",
  "\ud83d\ude00", "\ud835\udc00", "\ud835\udc00\u0301", "\ud800", "\udc00", "a\ud800", "\udc00a", "\u{1d5d4}\u{e0100}",
  "caf\u00e9 ", "na\u00efve", "CRLF\r\n\r\nNEXT", "\u00a0 \u00a0", "a\u00ad\u00adb", "A\u0301\u0301\u0301B"
]

const randomString = (next: () => number, maxPieces: number) => {
  let s = ""
  const count = Math.floor(next() * maxPieces)
  for (let k = 0; k < count; k++) {
    const r = next()
    if (r < 0.6) s += pieces[Math.floor(next() * pieces.length)]!
    else if (r < 0.7) s += String.fromCharCode(Math.floor(next() * 0x10000)) // any BMP unit, lone surrogates included
    else if (r < 0.75) s += String.fromCodePoint(0x10000 + Math.floor(next() * 0x100000))
    else if (r < 0.8) s += "\u0301".repeat(Math.floor(next() * (maxSegment + 8))) // runs of marks around the segment limit
    else if (r < 0.9) s += String.fromCharCode(0x20 + Math.floor(next() * 0x60)) // printable ASCII
    else s += "The Quick  Brown\tFox".slice(0, Math.floor(next() * 20))
  }
  return s
}

/** Text, raw length, `rawStart` at every index and `toRaw` on every span (out-of-range ends included). */
const assertSame = (raw: string, label: string) => {
  const actual = normalize(raw)
  const expected = reference(raw)
  assert.strictEqual(actual.text, expected.text, `${label}: text of ${JSON.stringify(raw)}`)
  assert.strictEqual(actual.rawLength, raw.length)
  const length = expected.text.length
  for (let s = -1; s <= length + 1; s++) {
    assert.strictEqual(actual.rawStart(s), expected.rawStart(s), `${label}: rawStart(${s}) of ${JSON.stringify(raw)}`)
    for (let e = s - 1; e <= length + 1; e++) {
      assert.deepStrictEqual(actual.toRaw(s, e), expected.toRaw(s, e), `${label}: toRaw(${s}, ${e}) of ${JSON.stringify(raw)}`)
    }
  }
}

describe("normalized/1, fast implementation against the reference", () => {
  it("agrees on every adversarial piece alone, doubled, and between ASCII", () => {
    for (const piece of pieces) {
      assertSame(piece, "alone")
      assertSame(piece + piece, "doubled")
      assertSame(`Ab ${piece}cD`, "inside ASCII")
      assertSame(` ${piece} `, "between spaces")
      assertSame(`x\n${piece}\u0301\t`, "before a mark")
    }
  }, 60_000)

  it("agrees on random strings, with every span's offsets", () => {
    for (let seed = 1; seed <= 1200; seed++) assertSame(randomString(random(seed), 20), `seed ${seed}`)
  }, 180_000)

  it("agrees on long mixed texts (ASCII runs broken by every kind of non-ASCII segment)", () => {
    for (let seed = 1; seed <= 20; seed++) {
      const next = random(10_000 + seed)
      let raw = ""
      while (raw.length < 20_000) raw += next() < 0.7 ? "Plain ASCII Text, with  spaces.\r\n" : randomString(next, 6)
      const actual = normalize(raw)
      const expected = reference(raw)
      assert.strictEqual(actual.text, expected.text, `long text, seed ${seed}`)
      const length = expected.text.length
      for (let k = 0; k < 3000; k++) {
        const s = Math.floor(next() * (length + 2))
        const e = s + Math.floor(next() * 400)
        assert.strictEqual(actual.rawStart(s), expected.rawStart(s))
        assert.deepStrictEqual(actual.toRaw(s, e), expected.toRaw(s, e), `long text, seed ${seed}, toRaw(${s}, ${e})`)
      }
      // Every unit's own span, in order: catches a map that is right on average but off by one somewhere.
      for (let j = 0; j < length; j++) assert.deepStrictEqual(actual.toRaw(j, j + 1), expected.toRaw(j, j + 1))
    }
  }, 180_000)

  it("agrees on large plain ASCII, where the fast path does all the work", () => {
    const line = "The Quick Brown Fox JUMPS over 12 lazy dogs;  twice\tand\r\nagain. "
    const raw = line.repeat(4096)
    const actual = normalize(raw)
    const expected = reference(raw)
    assert.strictEqual(actual.text, expected.text)
    for (let j = 0; j < expected.text.length; j += 7) {
      assert.deepStrictEqual(actual.toRaw(j, j + 1), expected.toRaw(j, j + 1))
      assert.deepStrictEqual(actual.toRaw(j, j + 97), expected.toRaw(j, j + 97))
    }
  })

  it("agrees on plain ASCII (single spaces and newlines only), the path that lower-cases the whole text at once", () => {
    const next = seededInts(7)
    const pieces = ["Net", "SALES", "q3", "2026", "x.", "\n", " ", "\u0001", "\u001f", "\u007f", "A-Z", "[", "@"]
    const texts = [
      "A", "\n", " ", "a\n", "\nA", "Net sales\nRose", "\u0000\u0008\u000e\u001f\u007f",
      ...Array.from({ length: 40 }, () => {
        let text = ""
        const length = next() % 200
        while (text.length < length) {
          const piece = pieces[next() % pieces.length]!
          // Plain: no white space right after white space.
          if (/[\n ]$/.test(text) && /^[\n ]/.test(piece)) continue
          text += piece
        }
        return text
      }),
      // Just past plain: the walk must take these, with the same result.
      "a  b", "a\n\nb", "a \nb", "a\tb", "a\rb", "a\u000bb", "a\u000cb", "caf\u00e9 Net\nSales", "Net\u00a0sales",
      // Units past ASCII that the plain test must see (its first check counts UTF-8 bytes).
      "a\ud800b", "Net\udc00", "x\u0080", "a\u0085b", "\u00ff", "a\u2028b", "Q\u{1F600}3", "Net sales\n\u00c9"
    ]
    texts.forEach((raw, k) => assertSame(raw, `plain ASCII ${k}`))
    // Under normalized/2 as well: the two versions differ only beyond ASCII.
    for (const raw of texts) assert.strictEqual(normalize(raw, Infinity, "normalized/2").text, reference(raw).text)
  })

  it("agrees on long plain ASCII, made through a byte buffer from 16 Ki units on (every plain unit, both sides of that length)", () => {
    // Every unit below 0x80 but the white space that is not plain, each followed by a letter so no two white-space units meet.
    const units = Array.from({ length: 0x80 }, (_, c) => String.fromCharCode(c)).filter((u) => !"\t\v\f\r".includes(u))
    const block = units.map((u, k) => `${u}${"QaZz@[`{"[k % 8]}`).join("")
    const make = (length: number) => block.repeat(Math.ceil(length / block.length) + 1).slice(0, length).replace(/[\n ]$/, "x")
    for (const length of [16 * 1024 - 1, 16 * 1024, 16 * 1024 + 1, 40_000]) {
      const raw = make(length)
      const actual = normalize(raw)
      const expected = reference(raw)
      assert.strictEqual(actual.text, expected.text, `plain ASCII of ${length}`)
      for (let j = 0; j < length; j += 13) assert.deepStrictEqual(actual.toRaw(j, j + 7), expected.toRaw(j, j + 7))
    }
    // Past a mebibyte (decoded at once as ASCII, an external string), against the plain rule itself and the map at spots.
    for (const length of [1_031_913, 1_100_003]) {
      const raw = make(length)
      const actual = normalize(raw)
      assert.strictEqual(actual.text, raw.toLowerCase().replaceAll("\n", " "), `plain ASCII of ${length}`)
      assert.strictEqual(normalize(raw, Infinity, "normalized/2").text, actual.text)
      for (let j = 0; j < length; j += 9973) assert.deepStrictEqual(actual.toRaw(j, j + 5), { start: j, end: Math.min(j + 5, length) })
    }
  }, 120_000)

  it("agrees on long texts just past plain ASCII: two white-space units in a row anywhere (across the byte loop's checks too), tab, CR, VT, FF, a unit past 0x7f", () => {
    // Plain prose with single spaces and newlines only: every change below is the one thing that makes it not plain.
    const next = seededInts(4096)
    const words = ["Net", "sales", "ROSE", "by", "4,201", "units.\n", "Q3", "x"]
    let prose = ""
    while (prose.length < 20_000) prose += words[next() % words.length]! + (prose.endsWith("\n") ? "" : " ")
    prose = prose.replace(/\s+/g, (w) => w[0]!)
    const check = (raw: string, label: string) => {
      const actual = normalize(raw)
      const expected = reference(raw)
      assert.strictEqual(actual.text, expected.text, label)
      for (let j = 0; j < expected.text.length; j += 61) assert.deepStrictEqual(actual.toRaw(j, j + 9), expected.toRaw(j, j + 9), `${label} at ${j}`)
    }
    const put = (at: number, units: string) => prose.slice(0, at) + units + prose.slice(at + units.length)
    check(prose.slice(0, 17_000), "plain")
    for (const pair of ["  ", " \n", "\n ", "\n\n"]) {
      for (const at of [0, 1, 4094, 4095, 4096, 8191, 12_345, 16_382, 16_383]) check(put(at, pair).slice(0, 16_385), `${JSON.stringify(pair)} at ${at}`)
    }
    // Single white space on both sides of a check, and at the ends: still plain.
    check(put(4095, " ").slice(0, 16_384).replace(/^./, " ").replace(/.$/, "\n"), "single spaces at the ends and a check")
    for (const unit of ["\t", "\r", "\v", "\f", "\u0080", "\u00e9", "\u{1F600}"]) {
      for (const at of [0, 9_000, 16_383]) check(put(at, unit).slice(0, 16_384 + unit.length), `${JSON.stringify(unit)} at ${at}`)
    }
  }, 120_000)
})
