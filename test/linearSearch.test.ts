import { assert, describe, it } from "@effect/vitest"
import { searchAll, type SearchOptions, start } from "../src/internal/multiSearch.js"
import { flat, naive, random } from "./searchSupport.js"


/** Drives a search in small steps, returning the results and the work it reported. */
const stepped = (text: string, snippets: ReadonlyArray<string>, budget: number, options?: SearchOptions) => {
  const search = start(text, snippets, options)
  let work = 0
  let steps = 0
  while (!search.done) {
    const used = search.step(budget)
    if (!(used >= 1)) assert.fail(`a step reported ${used} units of work`)
    work += used
    steps++
  }
  return { results: search.results(), work, steps }
}

// Two letters: "a" and a surrogate pair. Slicing at code-unit positions also yields lone halves.
const letters = ["a", "\ud83d\ude00"]

const paths: ReadonlyArray<readonly [string, SearchOptions]> = [
  ["default (native indexOf)", {}],
  ["Knuth-Morris-Pratt only", { fastPathFactor: 0 }],
  ["native, then Knuth-Morris-Pratt mid-search", { fastPathFactor: 0.001 }],
  ["one pass", { onePass: true }],
  ["one pass abandoned at once", { onePass: true, fastPathFactor: 0 }],
  ["one pass abandoned mid-scan", { onePass: true, fastPathFactor: 0.001 }]
]

describe("linear search", () => {
  it("agrees with the definition on random texts over a two-letter alphabet, on every path", () => {
    const next = random(7)
    for (let round = 0; round < 300; round++) {
      const parts: Array<string> = []
      const pieces = next() % 40
      for (let i = 0; i < pieces; i++) parts.push(letters[next() % 2]!)
      const text = parts.join("")
      const snippets: Array<string> = []
      for (let i = 0; i < 12; i++) {
        if (next() % 2 === 0 && text.length > 0) {
          const from = next() % text.length
          snippets.push(text.slice(from, from + 1 + (next() % 12)))
        } else {
          const own: Array<string> = []
          const count = 1 + (next() % 8)
          for (let j = 0; j < count; j++) own.push(letters[next() % 2]!)
          snippets.push(own.join(""))
        }
      }
      // Long enough for the one-pass window too.
      snippets.push("a".repeat(8), "\ud83d\ude00".repeat(4), "a\ud83d\ude00".repeat(4), "\ude00a")
      const expected = snippets.map((snippet) => naive(text, snippet))
      for (const [name, options] of paths) {
        const context = `${name}: ${JSON.stringify(text)}`
        assert.deepStrictEqual(searchAll(text, snippets, options), expected, context)
        // Resuming after every unit of work gives the same answer.
        assert.deepStrictEqual(stepped(text, snippets, 1, options).results, expected, `${context} (stepped)`)
      }
    }
  })

  it("counts overlapping occurrences and finds matches at both ends", () => {
    // a a a a a b a b a b a b a b a a a a
    const text = flat("aaaa" + "ab".repeat(5) + "aaaa")
    const snippets = ["aa", "abab", "aaaa", "baaaa", "aaaaa", "aaaaaa", ""]
    const expected = [
      { start: 0, occurrences: 7 },
      { start: 4, occurrences: 4 },
      { start: 0, occurrences: 3 },
      { start: 13, occurrences: 1 },
      { start: 0, occurrences: 1 },
      undefined,
      { start: 0, occurrences: text.length + 1 }
    ]
    assert.deepStrictEqual(snippets.map((snippet) => naive(text, snippet)), expected)
    for (const [name, options] of paths) assert.deepStrictEqual(searchAll(text, snippets, options), expected, name)
  })

  it("does work linear in text plus snippet on a repetitive text, on every path", () => {
    const n = 1 << 20
    const text = flat("a".repeat(n))
    const cases: ReadonlyArray<ReadonlyArray<string>> = [
      [flat("a".repeat(n / 2))], // half the text: every position but the last half matches
      [flat("a".repeat(n / 2 - 1) + "b")], // almost matches everywhere
      [flat("a".repeat(3000) + "b" + "a".repeat(3000))] // defeats native indexOf on a long pattern
    ]
    for (const snippets of cases) {
      for (const [name, options] of paths) {
        const { work } = stepped(text, snippets, 1 << 16, options)
        const linear = snippets.reduce((sum, s) => sum + text.length + s.length, 0)
        assert.isAtMost(work, 8 * linear + 100_000, `${name}: ${snippets[0]!.length}`)
      }
    }
  })

  it("keeps many snippets over one repetitive text linear per snippet, one pass or not", () => {
    const text = flat("a".repeat(1 << 19))
    // One prefix for all: every position is a candidate for every snippet.
    const snippets = Array.from({ length: 40 }, (_, i) => flat("a".repeat(1000 - i) + (i % 2 === 0 ? "" : "b")))
    const expected = snippets.map((s) =>
      s.endsWith("b") ? undefined : { start: 0, occurrences: text.length - s.length + 1 }
    )
    for (const onePass of [true, false]) {
      const { results, work } = stepped(text, snippets, 1 << 16, { onePass })
      assert.deepStrictEqual(results, expected)
      const linear = snippets.reduce((sum, s) => sum + text.length + s.length, 0)
      assert.isAtMost(work, 8 * linear + 100_000)
    }
  })

  it("one pass: probing a crowded cluster of the hash table is counted as work", () => {
    // Find 200 distinct 8-unit prefixes whose hashes land in the same slot of a 1024-slot table.
    const BASE = 0x01000193
    const hash = (s: string) => {
      let h = 0
      for (let j = 0; j < 8; j++) h = (Math.imul(h, BASE) + s.charCodeAt(j)) | 0
      return h
    }
    const slotOf = (s: string) => {
      const h = hash(s)
      return (h ^ (h >>> 15)) & 1023
    }
    const snippets: Array<string> = []
    for (let i = 0; snippets.length < 200; i++) {
      const candidate = flat(`zz${i.toString(36).padStart(6, "0")}`)
      if (slotOf(candidate) === slotOf("aaaaaaaa")) snippets.push(candidate)
    }
    const text = flat("a".repeat(1 << 18))
    const { results, work } = stepped(text, snippets, 1 << 16, { onePass: true })
    assert.deepStrictEqual(results, snippets.map(() => undefined))
    const linear = snippets.reduce((sum, s) => sum + text.length + s.length, 0)
    assert.isAtMost(work, 8 * linear + 100_000)
    // Every position probes the whole cluster, or each snippet is searched alone: about 200 units per
    // position either way, and the count must say so (it decides when the Verifier yields).
    assert.isAbove(work, 100 * text.length)
  })

  // The reproductions of the hostile-input finding: each took from most of a minute to minutes before
  // (more than the 30 s test timeout).
  it("an 800 KB capture of one repeated character and a 400 KB snippet", () => {
    const text = flat("a".repeat(800_000))
    assert.deepStrictEqual(searchAll(text, [flat("a".repeat(400_000))]), [{ start: 0, occurrences: 400_001 }])
  })

  it("40 snippets of 1,000 characters over a 1 MB repetitive capture", () => {
    const text = flat("ab".repeat(500_000))
    const snippets = Array.from({ length: 40 }, (_, i) => flat("ab".repeat(500).slice(i % 2)))
    const found = searchAll(text, snippets)
    snippets.forEach((snippet, i) => {
      // "abab…ab" at every even position, "bab…ab" at every odd one, up to the end.
      assert.strictEqual(snippet.length, 1000 - (i % 2))
      assert.deepStrictEqual(found[i], { start: i % 2, occurrences: 499_501 })
    })
  })

  it("a long snippet that makes a single native indexOf take most of a minute", () => {
    const text = flat("a".repeat(1 << 20))
    const snippet = flat("a".repeat(60_000) + "b" + "a".repeat(60_000))
    assert.deepStrictEqual(searchAll(text, [snippet]), [undefined])
    assert.deepStrictEqual(searchAll(text + snippet, [snippet]), [{ start: text.length, occurrences: 1 }])
  })
})
