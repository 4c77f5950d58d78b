/** Shared by the search tests: the definition of a search result, a seeded generator, flat strings. */
import type { Found } from "../src/internal/multiSearch.js"

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

/** A seeded linear congruential generator: the same cases on every run. */
export const random = (seed: number) => {
  let state = seed >>> 0
  return () => (state = (Math.imul(state, 1664525) + 1013904223) >>> 0)
}

/** A flat string, as a capture or report decoded from JSON is (`repeat` builds a rope). */
export const flat = (s: string): string => JSON.parse(JSON.stringify(s)) as string
