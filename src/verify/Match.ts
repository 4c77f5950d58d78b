/**
 * Verification steps 3 and 4 for one capture: every quote searched exactly,
 * then (only when the policy opts in) what the exact search missed, in the
 * capture normalised once; each occurrence picked by the ambiguity rule and
 * checked against the page or heading the citation names.
 *
 * @since 0.3.0
 */
import * as Effect from "effect/Effect"
import type { CaptureRecord, MatchMethod, Span } from "../Domain.js"
import { namesAnchor } from "../internal/anchors.js"
import type * as MultiSearch from "../internal/multiSearch.js"
import type { SuffixIndex } from "../internal/suffixArray.js"
import { AmbiguousSnippet } from "../Errors.js"
import { meaningChange, type MeaningChange } from "../anchor/MeaningGuard.js"
import * as Normalized from "../anchor/Normalize.js"
import { checkAnchors } from "./Anchors.js"
import type { CaptureIndex } from "./CaptureIndex.js"
import type { PolicyShape } from "./Policy.js"
import type { CitationInput, Failures } from "./Records.js"
import { hasContext, keysOf, lookup, needleOf, pick, type SlicedSearch } from "./Search.js"
import { ownedSlice } from "../internal/ownedSlice.js"

/** A citation matched in the capture: where, how often, and how. */
export interface Matched {
  readonly i: number
  readonly span: Span
  readonly occurrences: number
  readonly ambiguous: boolean
  readonly method: MatchMethod
}

/** One capture and the citations (by index) to look for in it. */
export interface CaptureSearch {
  readonly policy: PolicyShape
  readonly search: SlicedSearch
  readonly record: CaptureRecord
  /** The capture's search index (a cached capture), used by the exact search only. */
  readonly index?: CaptureIndex | undefined
  readonly citations: ReadonlyArray<CitationInput>
  readonly indices: ReadonlyArray<number>
  readonly failures: Failures
}

const ambiguous = (record: CaptureRecord, citation: CitationInput, occurrences: number) => {
  const { prefix, snippet, suffix } = citation
  return new AmbiguousSnippet({
    source: record.source,
    captureSha256: record.sha256,
    snippet,
    occurrences,
    ...(prefix === undefined ? {} : { prefix }),
    ...(suffix === undefined ? {} : { suffix })
  })
}

/** The exact step's outcome for one capture: the citations matched, and those it did not find. */
export interface ExactMatches {
  readonly matched: ReadonlyArray<Matched>
  readonly absent: ReadonlyArray<number>
}

/** The normalised step's outcome: what it matched, what is still absent, and the meaning changes it refused. */
export interface NormalMatches {
  readonly matched: ReadonlyArray<Matched>
  readonly stillAbsent: ReadonlyArray<number>
  readonly changedBy: ReadonlyMap<number, MeaningChange>
}

const noMatches: ReadonlyArray<Matched> = []
const noChanges: ReadonlyMap<number, MeaningChange> = new Map()

const noAbsent: ReadonlyArray<number> = []

/**
 * `pickExact` of a capture cited once, without context (most captures of a verification of many
 * small captures): the same pick, anchors and failure, from the one search result, without the lists
 * and objects the general loop makes per capture.
 */
const pickOne = (
  { citations, failures, indices, policy, record }: Omit<CaptureSearch, "search" | "index">,
  found: MultiSearch.Found | undefined
): ExactMatches => {
  const i = indices[0]!
  const citation = citations[i]!
  const picked = pick(policy, false, found, undefined, 0)
  if (picked._tag === "Absent") return { matched: noMatches, absent: [i] }
  if (picked._tag === "Ambiguous") {
    failures[i]!.push(ambiguous(record, citation, picked.occurrences))
    return { matched: noMatches, absent: noAbsent }
  }
  const length = citation.snippet.length
  const span = { start: picked.start, end: picked.start + length }
  // `checkAnchors` looks at the needle only for a citation that names a page or heading.
  const anchored = checkAnchors(record, citation, span, namesAnchor(citation) ? needleOf("", citation.snippet, "") : undefined)
  if (typeof anchored !== "number") {
    failures[i]!.push(anchored)
    return { matched: noMatches, absent: noAbsent }
  }
  return {
    matched: [{
      i,
      // The span checked is kept only when it is the one found: `checkAnchors` keeps no reference to it.
      span: anchored === span.start ? span : { start: anchored, end: anchored + length },
      occurrences: picked.occurrences,
      ambiguous: picked.ambiguous,
      method: "exact"
    }],
    absent: noAbsent
  }
}

/** The one citation of a capture cited once without context, else `undefined` (the general loop). */
const onlyCitation = ({ citations, indices }: Pick<CaptureSearch, "citations" | "indices">): CitationInput | undefined => {
  if (indices.length !== 1) return undefined
  const citation = citations[indices[0]!]!
  return hasContext(citation) ? undefined : citation
}

/** Each citation's exact occurrence picked from the search results `found` (at `at` in the keys). */
const pickExact = (
  { citations, failures, indices, policy, record }: Omit<CaptureSearch, "search" | "index">,
  at: ReadonlyArray<number>,
  found: ReadonlyArray<MultiSearch.Found | undefined>
): ExactMatches => {
  const matched: Array<Matched> = []
  const absent: Array<number> = []
  indices.forEach((i, k) => {
    const citation = citations[i]!
    const withContext = hasContext(citation)
    const picked = pick(policy, withContext, found[at[k]!], withContext ? found[at[k]! + 1] : undefined, citation.prefix?.length ?? 0)
    if (picked._tag === "Absent") return absent.push(i)
    if (picked._tag === "Ambiguous") return failures[i]!.push(ambiguous(record, citation, picked.occurrences))
    const needle = needleOf(citation.prefix ?? "", citation.snippet, citation.suffix ?? "")
    const span = { start: picked.start, end: picked.start + citation.snippet.length }
    const anchored = checkAnchors(record, citation, span, needle)
    if (typeof anchored !== "number") return failures[i]!.push(anchored)
    matched.push({
      i,
      span: { start: anchored, end: anchored + citation.snippet.length },
      occurrences: picked.occurrences,
      ambiguous: picked.ambiguous,
      method: "exact"
    })
  })
  return { matched, absent }
}

/** The keys of the exact search of this capture: every snippet (and needle), and where each citation's are. */
const exactKeys = ({ citations, indices }: Pick<CaptureSearch, "citations" | "indices">) =>
  keysOf(indices.map((i) => [citations[i]!.prefix, citations[i]!.snippet, citations[i]!.suffix]))

/** Every snippet (and needle) of this capture in one search, with the capture's index when it has one. */
const searchExact = (capture: CaptureSearch) => {
  const { index, record, search } = capture
  const exact = exactKeys(capture)
  // With the capture's index when it has one: the same answers as the linear search (tested).
  return { at: exact.at, found: search(record.text, exact.keys, index) }
}

/** Both steps' outcomes for one capture. */
export interface CaptureMatches {
  readonly exact: ExactMatches
  readonly normal: NormalMatches
}

/** The outcome when the normalised step has nothing to do: what the exact step missed is absent. */
const exactOnly = (exact: ExactMatches): CaptureMatches => ({
  exact,
  normal: { matched: noMatches, stillAbsent: exact.absent, changedBy: noChanges }
})

/**
 * `matchCapture` on a capture whose index is built, synchronously: the same keys looked up in
 * the same index (`Search.lookup`) and the same picks. `undefined` when the normalised step would
 * run (an exact miss under `verify.matching: "normalized/2"`): that step searches linearly, in
 * slices, and is left to `matchCapture`. Its failures are pushed as `matchCapture` pushes them.
 */
export const matchIndexed = (
  capture: Omit<CaptureSearch, "search" | "index">,
  built: SuffixIndex
): CaptureMatches | undefined => {
  const keys = exactKeys(capture)
  const exact = pickExact(capture, keys.at, lookup(built, keys.keys))
  return capture.policy.matching === "exact" || exact.absent.length === 0 ? exactOnly(exact) : undefined
}

/**
 * Steps 3 and 4 for one capture: the exact search, then (only under `verify.matching:
 * "normalized/2"`, and only when the exact search missed a quote) the normalised one. One search
 * effect and one `flatMap` per capture in the common case: a verification may name thousands.
 */
export const matchCapture = (
  capture: CaptureSearch
): Effect.Effect<CaptureMatches> => {
  const { at, found } = searchExact(capture)
  return Effect.flatMap(found, (found) => {
    const exact = pickExact(capture, at, found)
    if (capture.policy.matching === "exact" || exact.absent.length === 0) return Effect.succeed(exactOnly(exact))
    return Effect.map(matchNormalized(capture, exact.absent), (normal) => ({ exact, normal }))
  })
}

/**
 * `matchCapture` begun now: the capture's matches at once when neither step needs an effect (the
 * exact search ends without yielding, and the normalised step has nothing to do), else the effect
 * that goes on with it, to be run at once. The same searches, picks and failures, in the same order.
 * `undefined` when `direct` took the capture's one citation (`Direct`).
 */
export const matchNow = (capture: CaptureSearch, direct?: Direct): CaptureMatches | Effect.Effect<CaptureMatches> | undefined => {
  const { index, record, search } = capture
  const only = onlyCitation(capture)
  if (only !== undefined) {
    // The keys `exactKeys` makes for it: the snippet alone.
    const found = search.now(record.text, [only.snippet], index)
    if (Array.isArray(found)) return directOne(capture, only, found[0], direct) ? undefined : afterExact(capture, pickOne(capture, found[0]))
    return Effect.flatMap(found, (found) => {
      const matches = afterExact(capture, pickOne(capture, found[0]))
      return Effect.isEffect(matches) ? matches : Effect.succeed(matches)
    })
  }
  const keys = exactKeys(capture)
  const found = search.now(record.text, keys.keys, index)
  return Array.isArray(found) ? afterExact(capture, pickExact(capture, keys.at, found)) : Effect.flatMap(found, (found) => {
    const matches = afterExact(capture, pickExact(capture, keys.at, found))
    return Effect.isEffect(matches) ? matches : Effect.succeed(matches)
  })
}

/**
 * What a caller does with a capture's one citation that `pickOne` would match as found, with no
 * failure and nothing absent: write its evidence now (`Evidence.settleOne`) and answer `true`, or
 * answer `false` (the citation then takes `pickOne` and the caller's `settle`, as any other).
 */
export type Direct = (capture: CaptureSearch, i: number, span: Span, occurrences: number, ambiguous: boolean) => boolean

/**
 * `pickOne` of a citation found, without its lists and objects, handed to `direct`: only where
 * `pickOne` would match it at the occurrence found (not refused as ambiguous, no page or heading
 * named, so `checkAnchors` returns the span's start). `false` when `direct` does not take it, or for
 * anything else: the caller then takes `pickOne`, which decides it from the same search result.
 */
const directOne = (
  capture: CaptureSearch,
  citation: CitationInput,
  found: MultiSearch.Found | undefined,
  direct: Direct | undefined
): boolean => {
  if (direct === undefined || found === undefined || namesAnchor(citation)) return false
  const ambiguous = found.occurrences > 1
  if (ambiguous && capture.policy.ambiguous === "reject") return false
  return direct(capture, capture.indices[0]!, { start: found.start, end: found.start + citation.snippet.length }, found.occurrences, ambiguous)
}

const afterExact = (capture: CaptureSearch, exact: ExactMatches): CaptureMatches | Effect.Effect<CaptureMatches> => {
  if (capture.policy.matching === "exact" || exact.absent.length === 0) return exactOnly(exact)
  return Effect.map(matchNormalized(capture, exact.absent), (normal) => ({ exact, normal }))
}

/**
 * Each capture matched in turn (`matchNow`), `settle` called with its matches before the next is
 * searched: no effect for a capture whose matching needs none (thousands of small captures). With
 * `direct`, a capture cited once and found now may be settled by it instead (`Direct`).
 */
export const matchEach = <A>(
  items: Iterable<A>,
  captureOf: (item: A) => CaptureSearch,
  settle: (capture: CaptureSearch, matches: CaptureMatches) => void,
  direct?: Direct
): Effect.Effect<void> =>
  Effect.suspend(() => {
    const iterator = items[Symbol.iterator]()
    const next = (): Effect.Effect<void> => {
      for (let item = iterator.next(); item.done !== true; item = iterator.next()) {
        const capture = captureOf(item.value)
        const matches = matchNow(capture, direct)
        if (matches === undefined) continue // settled by `direct`
        if (Effect.isEffect(matches)) {
          return Effect.flatMap(matches, (done) => {
            settle(capture, done)
            return next()
          })
        }
        settle(capture, matches)
      }
      return Effect.void
    }
    return next()
  })

/**
 * Opt-in (`verify.matching: "normalized/2"`): what the exact search missed, in the normalised
 * capture (normalised once, only when needed). A normalised hit that would change a number, sign
 * or unit is refused and stays absent, with the change recorded for its `SnippetAbsent`.
 */
export const matchNormalized = (
  { citations, failures, policy, record, search }: CaptureSearch,
  absent: ReadonlyArray<number>
): Effect.Effect<NormalMatches> =>
{
  // Nothing to do (the common case): no generator, no normalisation.
  if (policy.matching === "exact" || absent.length === 0) return Effect.succeed({ matched: noMatches, stillAbsent: absent, changedBy: noChanges })
  return Effect.gen(function*() {
    const matched: Array<Matched> = []
    const changedBy = new Map<number, MeaningChange>()
    // `normalized/1` in a policy is a deprecated alias: every normalised match is a `normalized/2` one.
    const normal = Normalized.normalizeCapture(record.text, Normalized.normalizedVersion2)
    // A capture whose normalised form passes the expansion cap gets exact matching only: a search in
    // its truncated form could miss a second occurrence and call an ambiguous snippet unique.
    if (normal.truncated) return { matched, stillAbsent: absent, changedBy }
    const stillAbsent: Array<number> = []
    const parts = absent.map((i) => {
      const { prefix, snippet, suffix } = citations[i]!
      return [
        prefix === undefined ? undefined : Normalized.normalizeText(prefix, Normalized.normalizedVersion2),
        Normalized.normalizeText(snippet, Normalized.normalizedVersion2),
        suffix === undefined ? undefined : Normalized.normalizeText(suffix, Normalized.normalizedVersion2)
      ] as const
    })
    const normalKeys = keysOf(parts)
    // Linear, never the index: the index covers the capture's raw text, not this normalised form, and
    // this search runs only for what the exact search missed (the failing path).
    const normalFound = yield* search(normal.text, normalKeys.keys)
    absent.forEach((i, k) => {
      const citation = citations[i]!
      const withContext = hasContext(citation)
      const [prefix, snippet] = parts[k]!
      const at = normalKeys.at[k]!
      // A snippet that normalises to nothing (only dropped characters) matches nothing.
      const picked = snippet.length === 0 || !/\S/u.test(snippet)
        ? { _tag: "Absent" as const }
        : pick(policy, withContext, normalFound[at], withContext ? normalFound[at + 1] : undefined, prefix?.length ?? 0)
      if (picked._tag === "Absent") return stillAbsent.push(i)
      if (picked._tag === "Ambiguous") return failures[i]!.push(ambiguous(record, citation, picked.occurrences))
      const span = normal.toRaw(picked.start, picked.start + snippet.length)
      const changed = meaningChange(citation.snippet, ownedSlice(record.text, span.start, span.end))
      if (changed !== undefined) {
        changedBy.set(i, changed)
        return stillAbsent.push(i)
      }
      // No search inside pages or sections here: the occurrence found must lie in them.
      const anchored = checkAnchors(record, citation, span, undefined)
      if (typeof anchored !== "number") return failures[i]!.push(anchored)
      matched.push({ i, span, occurrences: picked.occurrences, ambiguous: picked.ambiguous, method: Normalized.normalizedVersion2 })
    })
    return { matched, stillAbsent, changedBy }
  })
}
