/** Shared by the search tests: the definition of a search result, a seeded generator, flat strings. */
import type { Found, SearchOptions } from "../src/internal/multiSearch.js"

/** The definition, position by position: the first start and every (overlapping) occurrence. */
export const naive = (text: string, snippet: string): Found | undefined => {
  let first = -1
  let occurrences = 0
  for (let at = 0; at + snippet.length <= text.length; at++) {
    if (text.startsWith(snippet, at)) {
      if (first === -1) first = at
      occurrences++
    }
  }
  return first === -1 ? undefined : { start: first, occurrences }
}

/** A seeded generator of the state's high 24 bits: the same cases on every run (support/seeded.ts). */
export { random } from "./support/seeded.js"

/** A flat string, as a capture or report decoded from JSON is (`repeat` builds a rope). */
export const flat = (s: string): string => JSON.parse(JSON.stringify(s)) as string

/** Two letters: "a" and a surrogate pair. Slicing at code-unit positions also yields lone halves. */
export const letters = ["a", "\ud83d\ude00"]

/** Every search path: native indexOf, Knuth-Morris-Pratt, the switch between them, one pass. */
export const searchPaths: ReadonlyArray<readonly [string, SearchOptions]> = [
  ["default (native indexOf)", {}],
  ["Knuth-Morris-Pratt only", { fastPathFactor: 0 }],
  ["native, then Knuth-Morris-Pratt mid-search", { fastPathFactor: 0.001 }],
  ["one pass", { onePass: true }],
  ["one pass abandoned at once", { onePass: true, fastPathFactor: 0 }],
  ["one pass abandoned mid-scan", { onePass: true, fastPathFactor: 0.001 }]
]

/**
 * A random text over the two letters and 16 snippets: 12 cut from the text or made of the letters,
 * then four long enough for the one-pass window.
 */
export const randomCase = (next: () => number): { readonly text: string; readonly snippets: Array<string> } => {
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
      snippets.push(Array.from({ length: 1 + (next() % 8) }, () => letters[next() % 2]!).join(""))
    }
  }
  snippets.push("a".repeat(8), "\ud83d\ude00".repeat(4), "a\ud83d\ude00".repeat(4), "\ude00a")
  return { text, snippets }
}

/** The hostile snippets over `"a".repeat(n)`, each alone. */
export const repetitiveSnippets = (n: number): ReadonlyArray<readonly [string, string]> => [
  ["half the text", flat("a".repeat(n / 2))], // every position but the last half matches
  ["almost everywhere", flat("a".repeat(n / 2 - 1) + "b")], // almost matches everywhere
  ["defeats native indexOf", flat("a".repeat(3000) + "b" + "a".repeat(3000))] // on a long pattern
]

/** 40 snippets of about 1,000 "a"s, every other one ending in "b": one prefix for all. */
export const onePrefixSnippets = (): Array<string> =>
  Array.from({ length: 40 }, (_, i) => flat("a".repeat(1000 - i) + (i % 2 === 0 ? "" : "b")))
