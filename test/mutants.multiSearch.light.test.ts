/**
 * A light agreement test of `src/internal/multiSearch.ts` for mutation runs (docs/testing.md):
 * `linearSearch.test.ts` also measures work on megabyte texts, which instrumented code cannot do
 * within a mutant's timeout. Here every search path is compared with a plain scan on small random
 * and adversarial texts, stepped one unit at a time and all at once, and the work reported on a
 * 16 Ki-unit repetitive text is held to the same linear bound.
 */
import { assert, describe, it } from "@effect/vitest"
import { searchAll, type SearchOptions, start } from "../src/internal/multiSearch.js"
import { flat, naive as plain, random } from "./searchSupport.js"


const stepped = (text: string, snippets: ReadonlyArray<string>, budget: number, options?: SearchOptions) => {
  const search = start(text, snippets, options)
  let work = 0
  while (!search.done) {
    const used = search.step(budget)
    if (!(used >= 1)) assert.fail(`a step reported ${used} units of work`)
    work += used
  }
  return { results: search.results(), work }
}

const paths: ReadonlyArray<readonly [string, SearchOptions]> = [
  ["default", {}],
  ["Knuth-Morris-Pratt only", { fastPathFactor: 0 }],
  ["native, then Knuth-Morris-Pratt", { fastPathFactor: 0.001 }],
  ["one pass", { onePass: true }],
  ["one pass abandoned at once", { onePass: true, fastPathFactor: 0 }],
  ["one pass abandoned mid-scan", { onePass: true, fastPathFactor: 0.001 }]
]

const check = (text: string, snippets: ReadonlyArray<string>) => {
  const expected = snippets.map((snippet) => plain(text, snippet))
  for (const [name, options] of paths) {
    const context = `${name}: ${JSON.stringify(text)} ${JSON.stringify(snippets)}`
    assert.deepStrictEqual(searchAll(text, snippets, options), expected, context)
    assert.deepStrictEqual(stepped(text, snippets, 1, options).results, expected, `${context} (stepped by 1)`)
    assert.deepStrictEqual(stepped(text, snippets, 7, options).results, expected, `${context} (stepped by 7)`)
  }
}

describe("multiSearch, light agreement with a plain scan", () => {
  it("random texts over two and three letters, snippets taken from the text or made up", () => {
    const next = random(41)
    for (let round = 0; round < 120; round++) {
      const letters = round % 2 === 0 ? ["a", "\ud83d\ude00"] : ["a", "b", "c"]
      let text = ""
      const pieces = next() % 40
      for (let i = 0; i < pieces; i++) text += letters[next() % letters.length]!
      const snippets: Array<string> = []
      for (let i = 0; i < 10; i++) {
        if (next() % 2 === 0 && text.length > 0) {
          const from = next() % text.length
          snippets.push(text.slice(from, from + 1 + (next() % 14)))
        } else {
          let own = ""
          const count = 1 + (next() % 10)
          for (let j = 0; j < count; j++) own += letters[next() % letters.length]!
          snippets.push(own)
        }
      }
      // Repeats of one snippet, and ones long enough for the one-pass window.
      if (snippets.length > 0) snippets.push(snippets[0]!)
      snippets.push("a".repeat(8), "a".repeat(9), "ab".repeat(5), "\ud83d\ude00".repeat(4), "\ude00a", text, text + "a")
      check(flat(text), snippets)
    }
  })

  it("adversarial texts: overlaps, matches at both ends, near misses, the empty snippet", () => {
    check(flat("aaaa" + "ab".repeat(5) + "aaaa"), ["aa", "abab", "aaaa", "baaaa", "aaaaa", "aaaaaa", ""])
    check(flat("a".repeat(100)), ["a".repeat(50), "a".repeat(49) + "b", "a".repeat(100), "a".repeat(101), "a".repeat(8)])
    check(flat("ab".repeat(60) + "c"), ["ab".repeat(20), "ba".repeat(20), "ab".repeat(10) + "c", "c", "abc", "b".repeat(8)])
    check(flat("abcdefgh".repeat(10)), ["abcdefgh", "habcdefg", "abcdefghabcdefgha", "abcdefgi", "h"])
    check("", ["", "a", "a".repeat(8)])
    check(flat("xyz"), [])
    check(flat("x".repeat(70) + "y"), ["x".repeat(64) + "y", "x".repeat(65) + "y", "x".repeat(63), "x".repeat(71)])
  })

  it("the work reported on a repetitive 16 Ki-unit text is linear, on every path", () => {
    const n = 1 << 14
    const text = flat("a".repeat(n))
    const cases: ReadonlyArray<ReadonlyArray<string>> = [
      [flat("a".repeat(n / 2))],
      [flat("a".repeat(n / 2 - 1) + "b")],
      [flat("a".repeat(300) + "b" + "a".repeat(300))],
      Array.from({ length: 12 }, (_, i) => flat("a".repeat(100 - i) + (i % 2 === 0 ? "" : "b")))
    ]
    for (const snippets of cases) {
      const expected = snippets.map((s) => plain(text, s))
      for (const [name, options] of paths) {
        const { results, work } = stepped(text, snippets, 1 << 12, options)
        assert.deepStrictEqual(results, expected, name)
        const linear = snippets.reduce((sum, s) => sum + text.length + s.length, 0)
        assert.isAtMost(work, 8 * linear + 20_000, `${name}: ${snippets[0]!.length}`)
      }
    }
  })
})
