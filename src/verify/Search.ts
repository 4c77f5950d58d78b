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
import type { SuffixIndex } from "../internal/suffixArray.js"
import { type CaptureIndex, maxIndexedUnits } from "./CaptureIndex.js"
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
export const yieldToTimers: Effect.Effect<void> = Effect.async<void>((resume) => {
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

/**
 * Searches `text` for every key at once: one result per key, in order. With the capture's `index`
 * (a cached capture), each key is looked up in it instead, with the same answer.
 */
export interface SlicedSearch {
  (text: string, keys: ReadonlyArray<string>, index?: CaptureIndex | undefined): Effect.Effect<Array<MultiSearch.Found | undefined>>
  /**
   * The same search begun now: its results at once when it ends without yielding (a small capture,
   * a built index), else the effect that goes on with it, to be run at once.
   */
  readonly now: (
    text: string,
    keys: ReadonlyArray<string>,
    index?: CaptureIndex | undefined
  ) => Array<MultiSearch.Found | undefined> | Effect.Effect<Array<MultiSearch.Found | undefined>>
}

/** The options of every search a verification makes (one object, not one per capture). */
const searchOptions: MultiSearch.SearchOptions = { countUpTo }

/** Code units an index build is measured to take per millisecond (about 200 ms per Mi units, docs/performance.md). */
const buildUnitsPerMs = 5_000

/**
 * Code units of index a verification under a deadline of `timeoutMs` may build: about a quarter
 * of the deadline's worth, and at most `CaptureIndex.maxIndexedUnits`. A capture whose index does
 * not fit in what is left is searched linearly, so building indexes adds at most about a quarter of
 * the deadline to a verification and cannot make it time out where the linear search would not.
 */
export const indexUnitsFor = (timeoutMs: number): number => Math.min(maxIndexedUnits, Math.floor(timeoutMs / 4) * buildUnitsPerMs)

/** Every key looked up in a built index: one result per key, in order, as the linear search gives them. */
export const lookup = (index: SuffixIndex, keys: ReadonlyArray<string>): Array<MultiSearch.Found | undefined> =>
  keys.map((key) => index.find(key, countUpTo))

/**
 * A search that yields to the timers every `searchSlice` units of work. One per verification:
 * the work credit carries over from one capture to the next, as does `indexUnits`, what is left of
 * the verification's allowance for building indexes.
 */
export const sliced = (indexUnits = 0): SlicedSearch => {
  let credit = searchSlice
  let buildLeft = indexUnits
  // A loop that returns an effect only to yield, not a generator: this runs once per capture, and a
  // search of a small capture ends within the slice it starts in, with no effect at all (`now`).
  const resume = (search: MultiSearch.Search): Array<MultiSearch.Found | undefined> | Effect.Effect<Array<MultiSearch.Found | undefined>> => {
    while (!search.done) {
      credit -= search.step(credit)
      if (credit <= 0) {
        credit = searchSlice
        return Effect.flatMap(yieldToTimers, () => asEffect(resume(search)))
      }
    }
    return search.results()
  }
  const now: SlicedSearch["now"] = (text, keys, index) => {
    if (index === undefined) return resume(MultiSearch.start(text, keys, searchOptions))
    const built = index.ready()
    if (built !== undefined) return lookup(built, keys)
    if (index.units > buildLeft) return resume(MultiSearch.start(text, keys, searchOptions))
    buildLeft -= index.units
    // The deadline's timer may fire before the build, which cannot be interrupted once started.
    // `build` checks again: another verification may have built it while this one yielded.
    return Effect.zipRight(yieldToTimers, Effect.sync(() => lookup(index.build(), keys)))
  }
  const search = (text: string, keys: ReadonlyArray<string>, index?: CaptureIndex | undefined) =>
    Effect.suspend(() => asEffect(now(text, keys, index)))
  return Object.assign(search, { now })
}

const asEffect = <A>(found: Array<A> | Effect.Effect<Array<A>>): Effect.Effect<Array<A>> =>
  Array.isArray(found) ? Effect.succeed(found) : found as Effect.Effect<Array<A>>

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
