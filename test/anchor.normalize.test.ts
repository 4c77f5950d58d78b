import { assert, describe, it } from "@effect/vitest"
import { isSpace, maxSegment, normalize, normalizedVersion, normalizeText } from "../src/anchor/Normalize.js"
import { random } from "./support/seeded.js"

const isHighSurrogate = (c: number) => c >= 0xd800 && c <= 0xdbff
const isLowSurrogate = (c: number) => c >= 0xdc00 && c <= 0xdfff

/** Every normalised code unit's raw span: non-empty, ordered, and never splitting a surrogate pair. */
const assertMapSound = (raw: string) => {
  const n = normalize(raw)
  let previousStart = 0
  for (let j = 0; j < n.text.length; j++) {
    const { end, start } = n.toRaw(j, j + 1)
    assert.isTrue(start < end, `unit ${j} maps to an empty span`)
    assert.isTrue(start >= previousStart, `unit ${j} maps backwards`)
    previousStart = start
    assert.isTrue(end <= raw.length)
    assert.isFalse(start > 0 && isLowSurrogate(raw.charCodeAt(start)) && isHighSurrogate(raw.charCodeAt(start - 1)))
    assert.isFalse(end < raw.length && isLowSurrogate(raw.charCodeAt(end)) && isHighSurrogate(raw.charCodeAt(end - 1)))
  }
  return n
}

describe("normalized/1", () => {
  it("has a version label", () => {
    assert.strictEqual(normalizedVersion, "normalized/1")
  })

  it("drops soft hyphens, zero-width characters and the byte-order mark", () => {
    assert.strictEqual(normalizeText("inven\u00adtory\u200b\u200c\u200d\ufeff"), "inventory")
  })

  it("maps curly and angle quotes, apostrophes, dashes and the minus sign", () => {
    assert.strictEqual(normalizeText("\u201cA\u201d \u201eb\u201f «c» \u2018d\u2019 \u201ae\u201b"), "\"a\" \"b\" \"c\" 'd' 'e'")
    assert.strictEqual(normalizeText("1\u20102\u20113\u20124\u20135\u20146\u20157\u22128"), "1-2-3-4-5-6-7-8")
  })

  it("applies NFKC, lower case, and collapses whitespace runs (NBSP, ideographic space, tabs, line breaks)", () => {
    assert.strictEqual(normalizeText("The \uFB01nal\u00a0\u00a0Q3\t\r\n  FIGURE\u3000\u2460"), "the final q3 figure 1")
    // Composed and decomposed forms normalise alike.
    assert.strictEqual(normalizeText("Cafe\u0301"), normalizeText("Caf\u00e9"))
    assert.strictEqual(normalizeText("Cafe\u0301"), "caf\u00e9")
    // Nothing is trimmed.
    assert.strictEqual(normalizeText("  a  "), " a ")
  })

  it("applies the dash mapping again after NFKC, so normalising twice changes nothing", () => {
    // NFKC turns U+207B (superscript minus) into U+2212 and U+FE58 into U+2014.
    assert.strictEqual(normalizeText("x\u207b1 a\ufe58b"), "x-1 a-b")
    const samples = ["\u2011", "\u207b", "\u208b", "\ufe31", "\ufe32", "\ufe58", "\u0130stanbul", "\u01c4", "\ufdfa", "\u1e9b\u0323"]
    for (const s of samples) {
      const once = normalizeText(s)
      assert.strictEqual(normalizeText(once), once, `not idempotent on ${JSON.stringify(s)}`)
    }
  })

  it("pins the whitespace list to Unicode White_Space", () => {
    for (let c = 0; c <= 0xffff; c++) {
      assert.strictEqual(isSpace(c), /\p{White_Space}/u.test(String.fromCharCode(c)), `U+${c.toString(16)}`)
    }
  })

  it("maps every normalised span back to the raw text it came from", () => {
    const raw = "Net \u201cSales\u201d\u00a0rose \uFB01ve\u00ad-fold: \u0130 \ud83d\ude00 e\u0301 \u1100\u1161\u11a8 end"
    const n = assertMapSound(raw)
    assert.strictEqual(n.text, "net \"sales\" rose five-fold: i\u0307 \ud83d\ude00 \u00e9 \uac01 end")
    const at = (needle: string) => {
      const start = n.text.indexOf(needle)
      assert.isTrue(start >= 0, needle)
      const span = n.toRaw(start, start + needle.length)
      return raw.slice(span.start, span.end)
    }
    assert.strictEqual(at("\"sales\""), "\u201cSales\u201d")
    // The ligature expands to two code units; each maps to the whole ligature.
    assert.strictEqual(at("fi"), "\uFB01")
    assert.strictEqual(at("five-fold"), "\uFB01ve\u00ad-fold")
    // The whitespace run maps to its whole raw extent.
    assert.strictEqual(at("\" rose"), "\u201d\u00a0rose")
    // İ lower-cases to two code units (i + combining dot): a span of either unit maps to the whole İ.
    const dotted = n.text.indexOf("i\u0307")
    assert.deepStrictEqual(n.toRaw(dotted + 1, dotted + 2), n.toRaw(dotted, dotted + 1))
    assert.strictEqual(at("\ud83d\ude00"), "\ud83d\ude00")
    // A span of half the emoji's code units still maps to the whole emoji (never half a pair).
    const emoji = n.text.indexOf("\ud83d")
    assert.strictEqual(raw.slice(n.toRaw(emoji, emoji + 1).start, n.toRaw(emoji, emoji + 1).end), "\ud83d\ude00")
    assert.strictEqual(at("\u00e9"), "e\u0301")
    // Conjoining jamo compose into one syllable that maps to all three.
    assert.strictEqual(at("\uac01"), "\u1100\u1161\u11a8")
    assert.strictEqual(at("end"), "end")
  })

  it("maps empty spans and the ends of the text", () => {
    const raw = "\u00adAb\u00ad"
    const n = normalize(raw)
    assert.strictEqual(n.text, "ab")
    assert.deepStrictEqual(n.toRaw(0, 2), { start: 1, end: 3 })
    assert.deepStrictEqual(n.toRaw(2, 2), { start: 3, end: 3 })
    assert.deepStrictEqual(n.toRaw(0, 0), { start: 1, end: 1 })
    assert.strictEqual(n.rawStart(2), 4)
    assert.deepStrictEqual(normalize("").toRaw(0, 0), { start: 0, end: 0 })
    assert.strictEqual(normalize("\u00ad\u200b").text, "")
  })

  it("keeps lone surrogates as they are", () => {
    const n = assertMapSound("a\ud800b\udc00")
    assert.strictEqual(n.text, "a\ud800b\udc00")
  })

  it("splits a hostile run of combining marks into bounded segments", () => {
    const raw = "a" + "\u0301".repeat(10_000) + "b"
    const started = performance.now()
    const n = assertMapSound(raw)
    assert.isBelow(performance.now() - started, 2_000)
    // Every raw span of one unit is at most one segment long.
    for (let j = 0; j < n.text.length; j++) {
      const span = n.toRaw(j, j + 1)
      assert.isAtMost(span.end - span.start, maxSegment)
    }
    assert.isTrue(n.text.endsWith("b"))
  })

  /** A character dropped by step 1 (and maybe white space) right before a combining mark or a conjoining vowel or final jamo. */
  const droppedBeforeMark = /[\u00ad\u200b-\u200d\ufeff][\u00ad\u200b-\u200d\ufeff\s]*[\p{M}\u1160-\u11ff]/u

  it("maps soundly on random text of every kind of character", () => {
    const next = random(7)
    const alphabet = [
      "a", "Z", " ", "\t", "\u00a0", "\u00ad", "\u200b", "\ufeff", "\u201c", "\u2014", "\u2212", "\uFB03", "\u0130",
      "e\u0301", "\u0301", "\ud83d\ude00", "\ud800", "\u1100", "\u1161", "\u11a8", "\u3000", "\u2460", "\u03a3", "\r\n"
    ]
    for (let round = 0; round < 50; round++) {
      let raw = ""
      for (let k = 0; k < 200; k++) raw += alphabet[next() % alphabet.length]
      const n = assertMapSound(raw)
      // Normalising twice changes nothing, but where a dropped character split a base from its marks;
      // there, twice is what once is without the dropped characters.
      const twice = normalizeText(n.text)
      if (!droppedBeforeMark.test(raw)) assert.strictEqual(twice, n.text, JSON.stringify(raw))
      assert.strictEqual(twice, normalizeText(raw.replace(/[\u00ad\u200b-\u200d\ufeff]/gu, "")), JSON.stringify(raw))
    }
  })

  it("normalising twice changes nothing but where a dropped character stood between a base and its marks", () => {
    // The raw segment ends at the dropped character; the normalised text joins base and mark.
    assert.strictEqual(normalizeText("i\u00ad\u0301"), "i\u0301")
    assert.strictEqual(normalizeText("i\u0301"), "\u00ed")
    assert.strictEqual(normalizeText("\u1100\u200b\u1161"), "\u1100\u1161")
    assert.strictEqual(normalizeText("\u1100\u1161"), "\uac00")
    // Without the dropped character the first pass already composes, and a second changes nothing.
    for (const raw of ["i\u0301", "\uFB03\u0301", "e\u0301\u0308", "\u1100\u1161\u11a8", "\u00ad\u0301", "a\u00ad b"]) {
      const once = normalizeText(raw)
      assert.strictEqual(normalizeText(once), once, JSON.stringify(raw))
    }
  })

  it("normalises a 4 MiB text in linear time", () => {
    const unit = "Net sales rose to \u20ac4,210 million in Q3 \u2014 \u201cup 12%\u201d on the \uFB01rst quarter. "
    const small = unit.repeat(Math.ceil((1 << 18) / unit.length))
    const large = unit.repeat(Math.ceil((1 << 22) / unit.length))
    const time = (s: string) => {
      const started = performance.now()
      normalize(s)
      return performance.now() - started
    }
    time(small)
    const t1 = Math.min(time(small), time(small))
    const t16 = time(large)
    // 16 times the text: well under 64 times the time (a quadratic pass would be 256 times).
    assert.isBelow(t16, Math.max(64 * t1, 50))
  })
})
