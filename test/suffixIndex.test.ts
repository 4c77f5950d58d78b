/**
 * The search index of a cached capture (internal/suffixArray.ts, verify/CaptureIndex.ts): the same
 * answer as the linear search (first occurrence, count up to the limit) on random texts and on the
 * hostile fixtures of the linear-search tests; a build linear on one repeated character and on
 * periodic text; the same answers as the look-up before it carried the matched lengths of its bounds
 * (test/support/suffixArrayBefore.ts), on seeded texts chosen to share long prefixes; and a report verified with the index renders byte for byte as without it, under
 * every matching policy.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Either, Layer, Option } from "effect"
import type { PipelineConfig } from "../src/Config.js"
import { makeCaptureRecord, type SourceUrl } from "../src/Domain.js"
import { searchAll } from "../src/internal/multiSearch.js"
import { build, indexBytes } from "../src/internal/suffixArray.js"
import * as Render from "../src/render/Render.js"
import { CaptureStore, type CaptureStoreShape } from "../src/store/CaptureStore.js"
import * as MemoryStore from "../src/store/Memory.js"
import * as CaptureCache from "../src/verify/CaptureCache.js"
import * as CaptureIndex from "../src/verify/CaptureIndex.js"
import * as Gate from "../src/verify/Gate.js"
import * as Search from "../src/verify/Search.js"
import { flat, naive, random } from "./searchSupport.js"
import { build as buildBefore } from "./support/suffixArrayBefore.js"
import { accessedAt } from "./support.js"

/** The index against the linear search with the same limit, and against the definition for the full count. */
const assertEquivalent = (text: string, patterns: ReadonlyArray<string>, context: string) => {
  const index = build(text)
  for (const limit of [1, 2, 3]) {
    const linear = searchAll(text, patterns, { countUpTo: limit })
    assert.deepStrictEqual(patterns.map((p) => index.find(p, limit)), linear, `countUpTo ${limit}: ${context}`)
  }
  if (text.length <= 4096) {
    assert.deepStrictEqual(patterns.map((p) => index.find(p, Infinity)), patterns.map((p) => naive(text, p)), `full count: ${context}`)
  }
}

const letters = ["a", "b", "\ud83d\ude00"]

describe("suffix index: the linear search's answers", () => {
  it("on random texts over small alphabets (lone surrogate halves included), every limit", () => {
    const next = random(27)
    for (let round = 0; round < 400; round++) {
      const alphabet = letters.slice(0, 1 + (round % 3))
      const text = Array.from({ length: next() % 80 }, () => alphabet[next() % alphabet.length]!).join("")
      const patterns: Array<string> = []
      for (let i = 0; i < 16; i++) {
        if (next() % 2 === 0 && text.length > 0) {
          const from = next() % text.length
          patterns.push(text.slice(from, from + 1 + (next() % 12)))
        } else {
          patterns.push(Array.from({ length: 1 + (next() % 6) }, () => alphabet[next() % alphabet.length]!).join(""))
        }
      }
      patterns.push(text, text + "a", "\ude00a", "\ud83d", "")
      assertEquivalent(text, patterns, JSON.stringify(text))
    }
  })

  it("on random prose-like text of 64 Ki units, with snippets cut anywhere", () => {
    const next = random(5)
    const words = ["net", "sales", "rose", "4%", "to", "1,180", "units", "in", "Q3", "2026.", "\u00e9t\u00e9", "\u4e2d\u6587"]
    const parts: Array<string> = []
    while (parts.join(" ").length < 1 << 16) parts.push(words[next() % words.length]!)
    const text = flat(parts.join(" "))
    const patterns = Array.from({ length: 300 }, () => {
      const from = next() % text.length
      return text.slice(from, from + 1 + (next() % 80))
    })
    assertEquivalent(text, [...patterns, "absent from it", "sales rose 4% to 1,180 units in Q3 2026. net sales rose"], "prose")
  })

  it("the fixed fixture: overlapping occurrences, both ends, the empty pattern", () => {
    const text = flat("aaaa" + "ab".repeat(5) + "aaaa")
    assertEquivalent(text, ["aa", "abab", "aaaa", "baaaa", "aaaaa", "aaaaaa", ""], "fixed")
    assertEquivalent("", ["", "a"], "empty text")
    assertEquivalent("a", ["", "a", "aa", "b"], "one unit")
  })

  it("the hostile fixtures of the linear-search tests", () => {
    const n = 1 << 18
    const a = flat("a".repeat(n))
    assertEquivalent(a, [flat("a".repeat(n / 2)), flat("a".repeat(n / 2 - 1) + "b"), flat("a".repeat(3000) + "b" + "a".repeat(3000))], "one character")
    assertEquivalent(flat("a".repeat(1 << 16)), Array.from({ length: 40 }, (_, i) => flat("a".repeat(1000 - i) + (i % 2 === 0 ? "" : "b"))), "40 snippets, one prefix")
    assertEquivalent(flat("ab".repeat(1 << 15)), Array.from({ length: 40 }, (_, i) => flat("ab".repeat(500).slice(i % 2))), "40 × 1,000 over ab…")
    const long = flat("a".repeat(60_000) + "b" + "a".repeat(60_000))
    assertEquivalent(flat("a".repeat(1 << 18) + long), [long, flat("a".repeat(120_001))], "a long snippet, found at the end")
  })

  it("builds in linear time on one repeated character and on periodic text (no worse than prose of the same length)", () => {
    const n = 1 << 20
    const next = random(3)
    const prose = flat(Array.from({ length: n }, () => "etaoin shrdlu"[next() % 13]!).join(""))
    // Fibonacci words: the classic worst case for suffix sorting by comparison.
    let fa = "a", fb = "ab"
    while (fb.length < n) [fa, fb] = [fb, fb + fa]
    const hostile = [flat("a".repeat(n)), flat("ab".repeat(n / 2)), flat("abcdefg".repeat(n / 7)), flat(fb.slice(0, n))]
    const cpu = (text: string) => {
      const start = process.cpuUsage()
      build(text)
      const used = process.cpuUsage(start)
      return used.user + used.system
    }
    cpu(prose) // warm up the compiler
    const base = Math.min(cpu(prose), cpu(prose))
    for (const text of hostile) {
      // Quadratic would be thousands of times the base at this length; linear stays within a small factor.
      assert.isBelow(Math.min(cpu(text), cpu(text)), 5 * base + 200_000, text.slice(0, 16))
    }
  })

  it("counts its memory: 4 bytes per code unit and a range-minimum table", () => {
    assert.strictEqual(build(flat("abc".repeat(1000))).bytes, indexBytes(3000))
    assert.isAtLeast(indexBytes(1 << 20), 4 << 20)
    assert.isAtMost(indexBytes(1 << 20), 5 << 20)
  })
})

/** The linear definition by indexOf: the first start, and overlapping occurrences counted up to `limit`. */
const byIndexOf = (text: string, pattern: string, limit: number) => {
  const start = text.indexOf(pattern)
  if (start === -1) return undefined
  let first = start
  let occurrences = 1
  // indexOf clamps its start to the length, so the empty pattern's last occurrence (at the end) would repeat.
  for (let at = text.indexOf(pattern, first + 1); at > first && at !== -1 && occurrences < limit; first = at, at = text.indexOf(pattern, at + 1)) occurrences++
  return { start, occurrences: Math.min(occurrences, limit) }
}

/** `find` against the look-up before this one (same text, its own build) and against indexOf, for every limit. */
const assertAsBefore = (text: string, patterns: ReadonlyArray<string>, context: string) => {
  const now = build(text)
  const before = buildBefore(text)
  for (const limit of [1, 2, 3, 7, 1_000_000, Infinity]) {
    for (const pattern of patterns) {
      const found = now.find(pattern, limit)
      const where = `limit ${limit}, pattern ${JSON.stringify(pattern.slice(0, 40))} (${pattern.length} units): ${context}`
      assert.deepStrictEqual(found, before.find(pattern, limit), `as before, ${where}`)
      assert.deepStrictEqual(found, byIndexOf(text, pattern, limit), `as indexOf, ${where}`)
    }
  }
}

/** Patterns cut from `text` at both ends, anywhere, and a step past it, plus some over `alphabet`. */
const patternsOf = (text: string, alphabet: ReadonlyArray<string>, next: () => number, count: number, longest: number) => {
  const patterns: Array<string> = ["", text, text + alphabet[0]!, alphabet[0]! + text, text.slice(1), text.slice(0, -1)]
  for (let i = 0; i < count; i++) {
    const length = 1 + (next() % longest)
    switch (next() % 5) {
      case 0:
        patterns.push(text.slice(0, length))
        break
      case 1:
        patterns.push(text.slice(Math.max(0, text.length - length)))
        break
      case 2: {
        // Cut from the text, then one unit changed: a near miss among suffixes that share long prefixes.
        const from = text.length === 0 ? 0 : next() % text.length
        const cut = text.slice(from, from + length)
        const at = next() % (cut.length + 1)
        patterns.push(cut.slice(0, at) + alphabet[next() % alphabet.length]! + cut.slice(at + 1))
        break
      }
      case 3:
        patterns.push(Array.from({ length }, () => alphabet[next() % alphabet.length]!).join(""))
        break
      default: {
        const from = text.length === 0 ? 0 : next() % text.length
        patterns.push(text.slice(from, from + length))
      }
    }
  }
  return patterns
}

describe("suffix index: the same answers as the look-up before it (matched lengths carried through the search)", () => {
  it("random texts over 2 to 4 letters (very repetitive), surrogate pairs and lone halves included", () => {
    const next = random(2027)
    const alphabets = [["a", "b"], ["a", "b", "c"], ["a", "b", "c", "d"], ["a", "\ud83d\ude00"], ["\ud83d\ude00", "\ud83d\ude01", "x"]]
    for (let round = 0; round < 300; round++) {
      const alphabet = alphabets[round % alphabets.length]!
      // Mostly one letter, so suffixes share long prefixes and the carried lengths matter.
      const bias = next() % 4
      const text = flat(Array.from({ length: next() % 300 }, () => alphabet[next() % 4 < bias ? 0 : next() % alphabet.length]!).join(""))
      assertAsBefore(text, [...patternsOf(text, alphabet, next, 40, 24), "\ude00", "\ud83d", "\ude00a"], `round ${round}: ${JSON.stringify(text.slice(0, 60))}`)
    }
  })

  it("periodic texts and Fibonacci words, with long patterns cut from them", () => {
    const next = random(31)
    let fa = "a", fb = "ab"
    while (fb.length < 5000) [fa, fb] = [fb, fb + fa]
    const texts = [
      "a".repeat(2000),
      "ab".repeat(1000),
      "aab".repeat(700),
      "abcabd".repeat(300),
      "\ud83d\ude00a".repeat(500),
      fb.slice(0, 4000),
      "a".repeat(1000) + "b" + "a".repeat(1000)
    ].map(flat)
    for (const text of texts) assertAsBefore(text, patternsOf(text, ["a", "b"], next, 120, 1500), JSON.stringify(text.slice(0, 12)))
  })

  it("prose whose sorted suffixes share long prefixes (generated from 25 words, as the service benchmark's captures)", () => {
    const next = random(99)
    const words = ["net", "sales", "units", "quarter", "rose", "fell", "by", "to", "of", "the", "in", "and", "2026", "Q3", "per", "cent", "north", "south", "\u00e9t\u00e9", "\ud83d\ude00"]
    const parts: Array<string> = []
    let size = 0
    while (size < 1 << 16) {
      const word = next() % 7 === 0 ? String(next() % 100) : words[next() % words.length]!
      const piece = next() % 13 === 0 ? `${word}.\n` : `${word} `
      parts.push(piece)
      size += piece.length
    }
    const text = flat(parts.join(""))
    assertAsBefore(text, patternsOf(text, words, next, 400, 300), "prose")
  })

  it("the fixtures' texts, the empty text, and patterns longer than the text", () => {
    const next = random(7)
    const fixtures = [
      flat("aaaa" + "ab".repeat(5) + "aaaa"),
      flat("Net sales rose 4% to 1,180 units in Q3 2026. Revenue was 4,210,000 euros. ".repeat(40) + "A unique closing line, once."),
      flat("# Results\n\nNet  sales ROSE 4% to 1,180 units.\n\n## Outlook\n\nNet sales rose 4% to 1,180 units.\n" + "filler text. ".repeat(200)),
      "",
      "a",
      "\ud83d\ude00"
    ]
    for (const text of fixtures) {
      assertAsBefore(text, [...patternsOf(text, ["a", "N", " "], next, 60, 90), text + text, "zzz", "\u0000", "\uffff"], JSON.stringify(text.slice(0, 20)))
    }
  })
})

// ---------------------------------------------------------------------------
// Verification: with the index (a cached capture) and without, byte for byte.

const source = (name: string) => `https://index.example.com/${name}` as SourceUrl
const prose = "Net sales rose 4% to 1,180 units in Q3 2026. Revenue was 4,210,000 euros. "
const captures = [
  makeCaptureRecord({ source: source("a.txt"), text: flat(prose.repeat(300) + "A unique closing line, once."), accessedAt, contentType: "text/plain" }),
  makeCaptureRecord({
    source: source("b.md"),
    text: flat("# Results\n\nNet  sales ROSE 4% to 1,180 units.\n\n## Outlook\n\nNet sales rose 4% to 1,180 units.\n" + "filler text. ".repeat(500)),
    accessedAt,
    contentType: "text/markdown"
  })
]
const [a, b] = captures as [typeof captures[0], typeof captures[0]]
const facts = [
  { source: a.source, snippet: "A unique closing line, once." },
  { source: a.source, snippet: "Net sales rose 4% to 1,180 units" }, // ambiguous: 300 occurrences
  { source: a.source, snippet: "4,210" }, // cuts a number (boundaries: tokens)
  { source: a.source, snippet: "units in Q3", prefix: "1,180 ", suffix: " 2026" }, // ambiguous with context
  { source: a.source, snippet: "once.", prefix: "closing line, " }, // unique with context
  { source: a.source, snippet: "not in the capture at all" },
  { source: b.source, snippet: "Net sales rose 4% to 1,180 units." }, // normalised and exact occurrences
  { source: b.source, snippet: "net sales rose 4% to 1,180 UNITS." }, // only after normalisation
  { source: b.source, snippet: "Net sales rose 4% to 1,180 units.", heading: ["Outlook"] },
  { source: b.source, snippet: "Net sales rose 4% to 1,180 units.", heading: ["Results"] },
  { source: b.source, snippet: "filler text. filler" }
].map((fact, i) => ({ state: "cited", label: `fact_${i}`, captureSha256: fact.source === a.source ? a.sha256 : b.sha256, ...fact }))
const reportJson = JSON.stringify({ facts })

const policies: ReadonlyArray<Record<string, unknown>> = [
  {},
  { mode: "drop" },
  { mode: "drop", matching: "normalized/2" },
  { mode: "drop", matching: "normalized/1" },
  { mode: "drop", boundaries: "tokens" },
  { mode: "drop", ambiguous: "reject" },
  { mode: "drop", ambiguous: "reject", boundaries: "tokens", matching: "normalized/2" }
]

/** Every rendering of the report under `verify`, through the Gate over a memory store, with `cache` when given. */
const renderings = (verify: Record<string, unknown>, store: CaptureStoreShape, cache?: CaptureCache.CaptureCacheShape) =>
  Effect.gen(function*() {
    const config = { sources: captures.map((r) => r.source), labels: facts.map((f) => f.label), verify } as unknown as PipelineConfig
    const gate = Gate.layerWithStore(config).pipe(
      Layer.provide(Layer.succeed(CaptureStore, store)),
      Layer.orDie
    )
    // As the service provides its cache: to the effect that builds the Gate (server/Handlers.ts).
    const outcome = yield* Effect.either(Effect.flatMap(Gate.Gate, (g) => g.checkJsonWithCaptures(reportJson))).pipe(
      Effect.provide(gate),
      CaptureCache.provideOption(Option.fromNullable(cache))
    )
    const rendering = Render.fromOutcome(Either.mapLeft(outcome, (e) => e as never), String(verify["matching"] ?? "exact"))
    return Render.formats.map((format) => Render.render(format, rendering))
  })

describe("suffix index: a verification renders the same with it and without", () => {
  it.effect("every matching policy, every format; the index is built once and counted in the cache", () =>
    Effect.gen(function*() {
      for (const verify of policies) {
        const store = yield* MemoryStore.make({ records: captures })
        const cache = CaptureCache.make({ maxBytes: 64 << 20 })
        const linear = yield* renderings(verify, store)
        const first = yield* renderings(verify, store, cache) // reads, caches, builds the indexes
        const textBytes = (yield* cache.stats).bytes
        const indexed = yield* renderings(verify, store, cache) // from memory, searched in the index
        // The report decoded and was searched: verified (drop mode) or rejected for its facts, never invalid.
        assert.notInclude(linear[1]!, "InvalidReport")
        if (verify["mode"] === "drop") assert.include(linear[1]!, `"status": "verified"`)
        assert.deepStrictEqual(first, linear, JSON.stringify(verify))
        assert.deepStrictEqual(indexed, linear, JSON.stringify(verify))
        // Both indexes were built on the first verification and are counted: 2 captures, no rebuild.
        const stats = yield* cache.stats
        assert.isAtLeast(textBytes, 2 * a.text.length + indexBytes(a.text.length) + indexBytes(b.text.length), JSON.stringify(verify))
        assert.strictEqual(stats.bytes, textBytes)
        assert.deepInclude(stats, { entries: 2, evictions: 0 })
      }
    }))

  it.effect("the verification consults the index: one over another text (a fault injected) changes the evidence", () =>
    Effect.gen(function*() {
      const store = yield* MemoryStore.make({ records: captures })
      const cache = CaptureCache.make({ maxBytes: 64 << 20 })
      // The same cache, except that capture a's index is built over a's text shifted by two units.
      const shifted = build(flat("XX" + a.text))
      const fault = (v: CaptureCache.VerifiedCapture) => ({ ...v, index: { units: v.record.text.length, ready: () => shifted, build: () => shifted } })
      const faulty: CaptureCache.CaptureCacheShape = {
        ...cache,
        load: (s, url, read) => Effect.map(cache.load(s, url, read), (v) => url === a.source ? fault(v) : v),
        // A hit taken without `load` (the common case) carries the faulty index too.
        cached: (s, url, stamp, count) => {
          const v = cache.cached(s, url, stamp, count)
          return v !== undefined && url === a.source ? fault(v) : v
        }
      }
      const linear = yield* renderings({ mode: "drop" }, store)
      const wrong = yield* renderings({ mode: "drop" }, store, faulty)
      assert.notDeepEqual(wrong, linear)
      assert.include(wrong[1]!, `"start": ${prose.length * 300 + 2}`)
      assert.include(linear[1]!, `"start": ${prose.length * 300},`)
      // The real index of the cached capture: its answers are the linear search's.
      const loaded = yield* cache.load(store, a.source, Effect.die("not read again"))
      assert.deepStrictEqual(loaded.index!.build().find("A unique closing line, once.", 2), { start: prose.length * 300, occurrences: 1 })
    }))

  it.effect("bounded: an index that does not fit beside its capture is not built, and building one evicts the least recently used", () =>
    Effect.gen(function*() {
      const store = yield* MemoryStore.make({ records: captures })
      const read = (r: typeof a) => Effect.map(store.read(r.source), (record) => ({ record, textSha256: record.sha256 }))
      // Room for both captures, and for one index at most (but not both captures then).
      const probe = CaptureCache.make({ maxBytes: 64 << 20 })
      yield* probe.load(store, b.source, read(b))
      yield* probe.load(store, a.source, read(a))
      const room = (yield* probe.stats).bytes + indexBytes(a.text.length) - 1
      const cache = CaptureCache.make({ maxBytes: room })
      const first = yield* cache.load(store, b.source, read(b))
      const second = yield* cache.load(store, a.source, read(a))
      assert.deepInclude(yield* cache.stats, { entries: 2, evictions: 0 })
      second.index!.build()
      // a's index pushed b out; b's own index was never built, so nothing more was counted for it.
      const stats = yield* cache.stats
      assert.deepInclude(stats, { entries: 1, evictions: 1 })
      assert.isAtLeast(stats.bytes, indexBytes(a.text.length))
      assert.isUndefined(first.index!.ready())
      // Too small for text and index together: kept, searched linearly.
      const small = CaptureCache.make({ maxBytes: 2 * a.text.length + 8192 })
      assert.isUndefined((yield* small.load(store, a.source, read(a))).index)
      assert.strictEqual((yield* small.stats).entries, 1)
    }))

  it.effect("a verification builds indexes only within its allowance (a quarter of its deadline); the rest is searched linearly", () =>
    Effect.gen(function*() {
      assert.strictEqual(Search.indexUnitsFor(16), 4 * 5_000)
      assert.strictEqual(Search.indexUnitsFor(600_000), CaptureIndex.maxIndexedUnits)
      const big = CaptureIndex.lazy(a.text, () => {})
      const small = CaptureIndex.lazy(b.text, () => {})
      // Room for b's index (6,593 units) but not a's (22,228).
      const search = Search.sliced(Search.indexUnitsFor(16))
      const keys = [facts[0]!.snippet, facts[1]!.snippet]
      const inA = yield* search(a.text, keys, big)
      const inB = yield* search(b.text, [facts[6]!.snippet], small)
      assert.isUndefined(big.ready(), "a's index was built past the allowance")
      assert.isDefined(small.ready())
      assert.deepStrictEqual(inA, searchAll(a.text, keys, { countUpTo: 2 }))
      assert.deepStrictEqual(inB, searchAll(b.text, [facts[6]!.snippet], { countUpTo: 2 }))
      // Without an allowance (0) nothing is built; a built index is used whatever the allowance.
      const none = CaptureIndex.lazy(b.text, () => {})
      yield* Search.sliced(0)(b.text, keys, none)
      assert.isUndefined(none.ready())
      assert.deepStrictEqual(yield* Search.sliced(0)(b.text, [facts[6]!.snippet], small), inB)
    }))
})
