/**
 * The shared coarse pass (src/anchor/CoarsePass.ts: one trigram look-up of the text for all quotes,
 * packed chunk counts, block bounds, exact counts of the blocks that may rank) against the old search
 * run for each quote alone (test/support/nearestReference.ts): every passage (method, score, span,
 * text) and every chosen window the same, on seeded prose and hostile texts: one character repeated,
 * periodic text (many ties), non-ASCII letters, astral characters and lone surrogates, CRLF, quotes
 * longer than the text, quotes that normalise to nothing, more quotes than one packed word holds
 * (eight), the hashed route (a large alphabet) and the full slide (near-uniform text).
 */
import { assert, describe, it } from "@effect/vitest"
import { SharedPass } from "../src/anchor/CoarsePass.js"
import { fineCandidates, maxFuzzyLength, minFuzzyLength, nearestAll, prepare } from "../src/anchor/Nearest.js"
import { normalize, normalizeCapture } from "../src/anchor/Normalize.js"
import { referenceNearestIn, referenceStarts } from "./support/nearestReference.js"
import { random } from "./support/seeded.js"

const words = ["net", "Sales", "rose", "fell", "by", "the", "Q3", "per", "cent", "units", "région", "Straße", "ﬁnal"]

const prose = (size: number, seed: number, lineBreak: string, extra: ReadonlyArray<string> = []) => {
  const next = random(seed)
  const pool = [...words, ...extra]
  let text = ""
  while (text.length < size) {
    const word = next() % 7 === 0 ? String(next() % 100_000) : pool[next() % pool.length]!
    text += next() % 13 === 0 ? `${word}.${lineBreak}` : `${word} `
  }
  return text
}

/** Quotes cut from the text and changed as near misses are, with a few hostile ones. */
const quotesFor = (text: string, seed: number, count: number): Array<string> => {
  const next = random(seed)
  return Array.from({ length: count }, (_, k) => {
    const length = 9 + (next() % 120)
    const start = next() % Math.max(1, text.length - length)
    const exact = text.slice(start, start + length)
    switch (k % 6) {
      case 0:
        return `absent ${k} ${exact}`
      case 1:
        return exact.replace(/[0-9a-z]/, "#")
      case 2:
        return exact.toUpperCase() + " not"
      case 3:
        return exact.slice(0, length >> 1) + "xq" + exact.slice(length >> 1)
      case 4:
        return exact
      default:
        return exact.split(" ").reverse().join(" ")
    }
  })
}

const hostileQuotes = (text: string) => [
  // Longer than the text, nothing left after normalisation, too short for a fuzzy search.
  text + " and more",
  "\u00ad\u200b\u200b",
  "ab",
  "a".repeat(40) + "b",
  "\ud800x\udc00 net sales",
  "net sales net sales net sales"
]

const cases = (): Array<{ readonly name: string; readonly text: string; readonly quotes: ReadonlyArray<string> }> => {
  const out: Array<{ name: string; text: string; quotes: ReadonlyArray<string> }> = []
  for (let seed = 1; seed <= 12; seed++) {
    const next = random(seed * 7919)
    const size = 2_000 + (next() % 30_000)
    const text = prose(size, seed, seed % 3 === 0 ? "\r\n" : "\n", seed % 4 === 0 ? ["\u{1F600}", "\u{10348}x"] : [])
    // One packed word (at most eight quotes) or two.
    out.push({ name: `prose ${seed}`, text, quotes: quotesFor(text, seed, 1 + (next() % 12)) })
  }
  const base = prose(6_000, 99, "\n")
  out.push(
    { name: "one character repeated", text: "a".repeat(20_000), quotes: ["a".repeat(60) + "b", "b" + "a".repeat(30), "aaaaaaaaaa", ...hostileQuotes("a")] },
    { name: "a run inside prose", text: base + "e".repeat(9_000) + base, quotes: [...quotesFor(base, 5, 5), "e".repeat(70) + "net", "net " + "e".repeat(50)] },
    { name: "periodic text: ties everywhere", text: "net sales rose ".repeat(2_000), quotes: ["net sales rose by", "sales rose net sales rose net", "rose net sales fell", "xnet sales rose net sales rosex"] },
    { name: "period of the quote's length", text: "abcdefghij".repeat(3_000), quotes: ["abcdefghijabcdefghij", "bcdefghijabcdefghijz", "jihgfedcba"] },
    { name: "lone surrogates and astral characters", text: Array.from({ length: 4_000 }, (_, k) => ["\ud800", "net ", "\u{1F600}", "\udc00x ", "Sales "][k % 5]!).join(""), quotes: ["net \ud800net \u{1F600}\udc00x sales", "\u{1F600}\u{1F600} net", "sales net sales net \udc00"] },
    { name: "a large alphabet (the hashed route)", text: Array.from({ length: 12_000 }, (_, k) => String.fromCharCode(0x4e00 + ((k * 37) % 90))).join(""), quotes: [] },
    { name: "the bench's kind of quote among many", text: base.repeat(3), quotes: [...quotesFor(base, 8, 9), ...hostileQuotes(base)] },
    { name: "shorter than twice a quote", text: "net sales rose by 12 per cent", quotes: ["net sales rose by 13 per cent", "sales rose"] }
  )
  const large = out.find((c) => c.name.startsWith("a large alphabet"))!
  large.quotes = quotesFor(large.text, 3, 6)
  return out
}

describe("the shared coarse pass equals the old search, quote by quote", () => {
  it("on seeded prose and hostile texts, under each minimum score", () => {
    let fuzzy = 0
    let compared = 0
    for (const { name, quotes, text } of cases()) {
      for (const minScore of [undefined, 0]) {
        const prepared = prepare(text)
        const shared = nearestAll(prepared, quotes, { minScore })
        quotes.forEach((quote, k) => {
          const expected = referenceNearestIn(prepare(text), quote, { minScore })
          assert.deepStrictEqual(shared[k], expected, `${name}, quote ${k} ${JSON.stringify(quote.slice(0, 40))}, minScore ${minScore}`)
          compared++
          if (expected?.method === "fuzzy") fuzzy++
        })
      }
    }
    // Not vacuous: most comparisons went through the coarse pass.
    assert.isAbove(compared, 200)
    assert.isAbove(fuzzy, 150, `${fuzzy} fuzzy passages of ${compared}`)
  })
})

describe("the shared coarse pass chooses the old search's windows", () => {
  // The windows (the best of each of the best blocks, best first) show a miscounted window that the
  // final passage may hide: the fine pass often finds the same passage from a neighbouring start.
  it("on seeded prose and hostile texts, every quote of one pass (one or two packed words)", () => {
    let compared = 0
    for (const { name, quotes, text } of cases()) {
      const normalized = normalizeCapture(text).text
      const patterns = quotes.map((quote) => normalize(quote).text)
        .filter((p) => p.length >= minFuzzyLength && p.length <= maxFuzzyLength && normalized.length > 2 * p.length)
      // Quotes cut again from the normalised text: more windows that count high.
      const next = random(normalized.length)
      for (let k = 0; k < 10 && normalized.length > 400; k++) {
        const start = next() % (normalized.length - 150)
        const cut = normalized.slice(start, start + 9 + (next() % 140))
        patterns.push(k % 2 === 0 ? cut : cut.slice(0, 20) + "zz" + cut.slice(22))
      }
      const pass = new SharedPass(normalized, patterns, fineCandidates)
      patterns.forEach((pattern, k) => {
        assert.deepStrictEqual(pass.starts(k, pattern.length), referenceStarts(normalized, pattern), `${name}, pattern ${k} ${JSON.stringify(pattern.slice(0, 40))}`)
        compared++
      })
    }
    assert.isAbove(compared, 150)
  })
})
