/**
 * Verification step 3, search: every quote of one capture found in one pass
 * (internal/multiSearch.ts), sliced so the deadline can interrupt a long
 * search, and the ambiguity rule that picks an occurrence. The same search and
 * rule serve exact and normalised matching.
 *
 * @since 0.3.0
 */
import * as Effect from "effect/Effect"
import * as MultiSearch from "../internal/multiSearch.js"
import type { PolicyShape } from "./Policy.js"
import type { CitationInput } from "./Records.js"

/**
 * Units of search work (about one code unit examined each) between yields to the event loop: a
 * few milliseconds, so the deadline's timer can fire during a long search, rarely enough that
 * yielding costs nothing measurable.
 */
const searchSlice = 1 << 22

/**
 * Yields to the event loop's timers. `Effect.yieldNow` resumes on the microtask queue, where a
 * timer (the deadline) cannot run in between.
 */
const yieldToTimers: Effect.Effect<void> = Effect.async<void>((resume) => {
  const handle = setImmediate(() => resume(Effect.void))
  return Effect.sync(() => clearImmediate(handle))
})

/**
 * Occurrences are counted up to this many and no further: whether a quote is ambiguous needs only
 * "more than one", so each key's search ends at its second occurrence (or at the end of the text,
 * for a key that occurs at most once). `occurrences` in evidence and in `AmbiguousSnippet` is thus
 * 1, or 2 meaning "two or more".
 */
export const countUpTo = 2

/** Searches `text` for every key at once: one result per key, in order. */
export type SlicedSearch = (
  text: string,
  keys: ReadonlyArray<string>
) => Effect.Effect<Array<MultiSearch.Found | undefined>>

/**
 * A search that yields to the timers every `searchSlice` units of work. One per verification:
 * the work credit carries over from one capture to the next.
 */
export const sliced = (): SlicedSearch => {
  let credit = searchSlice
  return (text, keys) =>
    Effect.gen(function*() {
      const search = MultiSearch.start(text, keys, { countUpTo })
      while (!search.done) {
        credit -= search.step(credit)
        if (credit <= 0) {
          yield* yieldToTimers
          credit = searchSlice
        }
      }
      return search.results()
    })
}

/**
 * What a citation's search looks for: the snippet, or with a `prefix` and/or
 * `suffix` the whole string prefix + snippet + suffix (an occurrence of it is
 * exactly an occurrence of the snippet with that context), and where the
 * snippet lies inside it.
 */
export interface Needle {
  readonly text: string
  /** Code units before the snippet (the prefix's length). */
  readonly lead: number
  /** Code units after the snippet (the suffix's length). */
  readonly trail: number
}

export const hasContext = (citation: CitationInput): boolean =>
  citation.prefix !== undefined || citation.suffix !== undefined

export const needleOf = (prefix: string, snippet: string, suffix: string): Needle => ({
  text: prefix + snippet + suffix,
  lead: prefix.length,
  trail: suffix.length
})

/** Each citation's snippet, then (with context) its needle: the keys of one search and their positions. */
export const keysOf = (list: ReadonlyArray<readonly [string | undefined, string, string | undefined]>) => {
  const keys: Array<string> = []
  const at = list.map(([prefix, snippet, suffix]) => {
    const k = keys.length
    keys.push(snippet)
    if (prefix !== undefined || suffix !== undefined) keys.push(needleOf(prefix ?? "", snippet, suffix ?? "").text)
    return k
  })
  return { keys, at }
}

/** One occurrence picked for a citation (in the searched text's units), or why none can be. */
export type Picked =
  | { readonly _tag: "Picked"; readonly start: number; readonly occurrences: number; readonly ambiguous: boolean }
  | { readonly _tag: "Absent" }
  | { readonly _tag: "Ambiguous"; readonly occurrences: number }

/**
 * The ambiguity rule, the same for exact and normalised matches. Without
 * context: the first occurrence, flagged `ambiguous` when there are several
 * (or refused under `verify.ambiguous: "reject"`). With a prefix and/or
 * suffix: exactly one occurrence of the needle, else absent or ambiguous.
 */
export const pick = (
  policy: PolicyShape,
  withContext: boolean,
  snippetHit: MultiSearch.Found | undefined,
  needleHit: MultiSearch.Found | undefined,
  lead: number
): Picked => {
  if (snippetHit === undefined) return { _tag: "Absent" }
  if (!withContext) {
    if (snippetHit.occurrences > 1 && policy.ambiguous === "reject") {
      return { _tag: "Ambiguous", occurrences: snippetHit.occurrences }
    }
    return { _tag: "Picked", start: snippetHit.start, occurrences: snippetHit.occurrences, ambiguous: snippetHit.occurrences > 1 }
  }
  if (needleHit === undefined) return { _tag: "Absent" }
  if (needleHit.occurrences > 1) return { _tag: "Ambiguous", occurrences: needleHit.occurrences }
  return { _tag: "Picked", start: needleHit.start + lead, occurrences: snippetHit.occurrences, ambiguous: false }
}
