/**
 * The search of one snippet (`start` with a single snippet, as for a capture cited once) against
 * the general loop over single searches, which a repeated snippet still takes (`[s, s]` searches `s`
 * once): for seeded texts over small alphabets (repetitive, so the fast path hands over to
 * Knuth-Morris-Pratt), snippets taken from the text or made up, short and past the probe's length,
 * every count limit and fast-path factor, and budgets from 1 up, every step must report the same
 * work, `done` must turn true at the same step, and the result must be the same.
 */
import { assert, describe, it } from "@effect/vitest"
import { type Found, probeLength, type SearchOptions, start } from "../src/internal/multiSearch.js"

/** Seeded (LCG) so that a failure is reproducible. */
const random = (seed: number) => () => (seed = (seed * 1664525 + 1013904223) >>> 0) / 2 ** 32

/** Each step's work and `done` after it, with a budget drawn for each step, and the results. */
const run = (text: string, snippets: ReadonlyArray<string>, options: SearchOptions, budgets: () => number) => {
  const search = start(text, snippets, options)
  const trace: Array<readonly [number, boolean]> = [[0, search.done]]
  while (!search.done) trace.push([search.step(budgets()), search.done])
  return { trace, results: search.results() }
}

describe("multiSearch: one snippet, the general loop's steps and results", () => {
  it("seeded texts, snippets, limits, factors and budgets", () => {
    const next = random(20261203)
    let cases = 0
    let found = 0
    for (let n = 0; n < 1_500; n++) {
      const alphabet = ["ab", "abc", "a", "abcdefgh é😀"][n % 4]!
      const length = Math.floor(next() * (n % 10 === 0 ? 4_000 : 300))
      const text = Array.from({ length }, () => alphabet[Math.floor(next() * alphabet.length)]).join("")
      const snippetLength = n % 7 === 0 ? probeLength + Math.floor(next() * 40) : Math.floor(next() * 12)
      const from = Math.floor(next() * Math.max(1, text.length - snippetLength))
      const snippet = next() < 0.7 && text.length > 0
        ? text.slice(from, from + snippetLength)
        : Array.from({ length: snippetLength }, () => alphabet[Math.floor(next() * alphabet.length)]).join("")
      const options: SearchOptions = {
        ...(n % 3 === 0 ? {} : { countUpTo: [1, 2, 5][n % 3]! }),
        ...(n % 5 === 0 ? { fastPathFactor: 0 } : n % 5 === 1 ? { fastPathFactor: 0.01 } : {}),
        ...(n % 11 === 0 ? { onePass: false } : {})
      }
      const budgetSeed = Math.floor(next() * 2 ** 31)
      const budgetsOf = () => {
        const draw = random(budgetSeed)
        return () => (n % 4 === 0 ? Number.MAX_SAFE_INTEGER : 1 + Math.floor(draw() * (n % 2 === 0 ? 8 : 200)))
      }
      const one = run(text, [snippet], options, budgetsOf())
      const general = run(text, [snippet, snippet], options, budgetsOf())
      const name = `case ${n}: ${JSON.stringify(snippet).slice(0, 40)} in ${text.length} units`
      assert.deepStrictEqual(one.trace, general.trace, name)
      assert.deepStrictEqual<Array<Found | undefined>>(one.results, [general.results[0]], name)
      assert.deepStrictEqual(general.results[1], general.results[0], name)
      cases++
      if (one.results[0] !== undefined) found++
    }
    assert.strictEqual(cases, 1_500)
    assert.isAbove(found, 500)
    assert.isAbove(cases - found, 100)
  })
})
