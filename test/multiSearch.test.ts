import { assert, describe, it } from "@effect/vitest"
import { searchAll } from "../src/internal/multiSearch.js"
import { random } from "./support/seeded.js"

/** The reference: one indexOf scan per snippet, counting overlapping occurrences. */
const reference = (text: string, snippet: string) => {
  const start = text.indexOf(snippet)
  if (start === -1) return undefined
  let occurrences = 1
  for (let at = text.indexOf(snippet, start + 1); at !== -1; at = text.indexOf(snippet, at + 1)) occurrences++
  return { start, occurrences }
}

describe("multi-snippet search", () => {
  it("agrees with indexOf on a large text with many snippets (the one-pass path)", () => {
    const next = random(42)
    const alphabet = ["a", "b", "ab", " ", "é", "€", "😀", "\n", "aaaa", "Net sales "]
    const parts: Array<string> = []
    let length = 0
    while (length < 200_000) {
      const piece = alphabet[next() % alphabet.length]!
      parts.push(piece)
      length += piece.length
    }
    const text = parts.join("")
    const snippets: Array<string> = []
    for (let i = 0; i < 120; i++) {
      const start = next() % (text.length - 80)
      const len = 8 + (next() % 60)
      snippets.push(text.slice(start, start + len))
    }
    snippets.push(
      text.slice(0, 12), // at the very start
      text.slice(text.length - 12), // at the very end
      "aaaaaaaaaaaa", // overlapping occurrences
      "not in the text at all",
      "Net sales Net sales ",
      snippets[3]!, // the same snippet twice
      "ab", // short: searched with indexOf
      "\ud83d\ude00\ud83d\ude00" // a surrogate pair, twice
    )
    const found = searchAll(text, snippets)
    snippets.forEach((snippet, i) => assert.deepStrictEqual(found[i], reference(text, snippet), JSON.stringify(snippet)))
  })

  it("agrees with indexOf on a small text (the indexOf path)", () => {
    const text = "Net sales rose. Net sales fell. Net sales"
    const snippets = ["Net sales", "rose", "absent", "s"]
    const found = searchAll(text, snippets)
    snippets.forEach((snippet, i) => assert.deepStrictEqual(found[i], reference(text, snippet)))
  })

  // A real collision of the prefix hash is constructed in mutants.multiSearch.test.ts.
  it("snippets sharing a long prefix with the text are confirmed in full, not matched on their prefix", () => {
    const text = "x".repeat(70_000) + "the exact snippet here" + "y".repeat(70_000)
    const snippets = Array.from({ length: 40 }, (_, i) => `the exact snippet ${i}`).concat(["the exact snippet here"])
    const found = searchAll(text, snippets)
    assert.deepStrictEqual(found.slice(0, 40), new Array(40).fill(undefined))
    assert.deepStrictEqual(found[40], { start: 70_000, occurrences: 1 })
  })
})
