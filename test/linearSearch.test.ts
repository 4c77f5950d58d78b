import { assert, describe, it } from "@effect/vitest"
import { searchAll, type SearchOptions, start } from "../src/internal/multiSearch.js"
import { flat, naive, onePrefixSnippets, random, randomCase, repetitiveSnippets, searchPaths } from "./searchSupport.js"


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

const paths = searchPaths

describe("linear search", () => {
  it("agrees with the definition on random texts over a two-letter alphabet, on every path", () => {
    const next = random(7)
    for (let round = 0; round < 300; round++) {
      const { snippets, text } = randomCase(next)
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
    const cases = repetitiveSnippets(n).map(([, snippet]) => [snippet])
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
    const snippets = onePrefixSnippets()
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
