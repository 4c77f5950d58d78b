/**
 * `countUpTo`: a search that stops counting at the limit gives exactly the old (full-count) answer
 * capped at the limit, on every path and on the hostile fixtures of the linear-search tests, and
 * stops early where many occurrences would otherwise be counted to the end of the text.
 */
import { assert, describe, it } from "@effect/vitest"
import { type Found, searchAll, type SearchOptions, start } from "../src/internal/multiSearch.js"
import { flat, naive, onePrefixSnippets, random, randomCase, repetitiveSnippets, searchPaths } from "./searchSupport.js"

const paths = searchPaths

const capped = (found: Found | undefined, limit: number): Found | undefined =>
  found === undefined ? undefined : { start: found.start, occurrences: Math.min(found.occurrences, limit) }

/** Every limit against the full count of the same search (the old semantics), on every path. */
const assertEquivalent = (text: string, snippets: ReadonlyArray<string>, context: string, limits = [1, 2, 3]) => {
  for (const [name, options] of paths) {
    const full = searchAll(text, snippets, options)
    for (const limit of limits) {
      const stopped = searchAll(text, snippets, { ...options, countUpTo: limit })
      assert.deepStrictEqual(stopped, full.map((found) => capped(found, limit)), `${name}, countUpTo ${limit}: ${context}`)
    }
  }
}

/** Work a search reports when driven in steps of `budget`. */
const workOf = (text: string, snippets: ReadonlyArray<string>, options: SearchOptions) => {
  const search = start(text, snippets, options)
  let work = 0
  while (!search.done) work += search.step(1 << 16)
  return { work, results: search.results() }
}

describe("search: counting stops at countUpTo", () => {
  it("equals the full count capped, on random texts over a two-letter alphabet, on every path", () => {
    const next = random(11)
    for (let round = 0; round < 150; round++) {
      const { snippets, text } = randomCase(next)
      snippets.push("")
      // The full count is the definition's, so the capped one is the definition's capped.
      assert.deepStrictEqual(searchAll(text, snippets), snippets.map((s) => naive(text, s)))
      assertEquivalent(text, snippets, JSON.stringify(text))
    }
  })

  it("overlapping occurrences, both ends and the empty snippet", () => {
    const text = flat("aaaa" + "ab".repeat(5) + "aaaa")
    assertEquivalent(text, ["aa", "abab", "aaaa", "baaaa", "aaaaa", "aaaaaa", ""], "fixed")
  })

  it("the hostile fixtures: repetitive texts, long snippets, one prefix for all", () => {
    const n = 1 << 18
    const a = flat("a".repeat(n))
    for (const [context, snippet] of repetitiveSnippets(n)) assertEquivalent(a, [snippet], context)
    assertEquivalent(flat("a".repeat(1 << 16)), onePrefixSnippets(), "40 snippets, one prefix", [2])
    assertEquivalent(flat("ab".repeat(1 << 15)), Array.from({ length: 40 }, (_, i) => flat("ab".repeat(500).slice(i % 2))), "40 × 1,000 over ab…", [2])
  })

  it("stops at the second occurrence: a snippet that occurs everywhere costs its first hits, not the text", () => {
    // 4 Mi units of one character: every position is an occurrence of each snippet.
    const text = flat("a".repeat(1 << 22))
    const snippets = [flat("a".repeat(10)), flat("a".repeat(100)), flat("a".repeat(5000))]
    for (const [name, options] of paths) {
      const full = workOf(text, snippets, options)
      const two = workOf(text, snippets, { ...options, countUpTo: 2 })
      assert.deepStrictEqual(two.results, snippets.map(() => ({ start: 0, occurrences: 2 })), name)
      // The full count runs to the end of the text for each snippet; the capped one stops after two hits
      // (KMP first builds its table: 2 units per snippet code unit).
      assert.isAbove(full.work, text.length, name)
      assert.isAtMost(two.work, 20_000 + 2 * 5110 * 3, name)
    }
  })

  it("a snippet that occurs once still scans to the end (uniqueness needs the whole text)", () => {
    const text = flat("b".repeat(1 << 16) + "needle" + "b".repeat(1 << 16))
    const { results, work } = workOf(text, ["needle"], { countUpTo: 2 })
    assert.deepStrictEqual(results, [{ start: 1 << 16, occurrences: 1 }])
    assert.isAtLeast(work, text.length - 6)
  })
})
