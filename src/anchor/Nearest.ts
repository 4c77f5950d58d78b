/**
 * The passage of a capture nearest to a snippet that does not occur in it
 * verbatim: for repair diagnostics on `SnippetAbsent` and for the drift audit's
 * candidate passages. A diagnostic only: nothing here accepts a citation.
 *
 * 1. `normalized/1`: the normalised snippet occurs in the normalised capture
 *    (linear exact search). Score 1, method `normalized/1`.
 * 2. Otherwise `fuzzy`: a coarse pass slides a window of the snippet's length
 *    over the normalised capture, scoring each window by Sørensen–Dice over
 *    character trigrams (updated in O(1) per step, so linear in the capture);
 *    the best window of each half-snippet block is kept, and the best
 *    `fineCandidates` of those are aligned with the snippet (semi-global edit
 *    distance over the window plus a quarter snippet each side). The score is
 *    `1 − distance / max(snippet, passage)` over normalised text.
 * Below `minScore` (default `defaultMinScore`) there is no similar passage.
 *
 * Bounds: fuzzy search only for normalised snippets of `minFuzzyLength` to
 * `maxFuzzyLength` code units; the fine pass is at most `fineCandidates` × 2 ×
 * 1,000 × 1,516 cells. Cost: normalising the capture (linear), one exact
 * search (linear), one trigram pass (linear, 2.5 bytes per code unit, 3.5 with the shared block
 * bounds' pair maxima, plus at most 576 KiB of
 * direct-look-up tables while it runs: TrigramIds.ts). Several
 * snippets of one text (`nearestEach`) share the exact search and the trigram
 * look-up with its packed per-chunk counts (CoarsePass.ts); each then bounds
 * its blocks from those counts and counts exactly only the blocks that may rank
 * among its best three, or, past an eighth of the blocks, all of them in one
 * slide: linear per snippet either way, with the same passages as one search
 * per snippet (test/anchor.nearest.shared*.test.ts).
 *
 * @since 0.2.0
 */
import * as MultiSearch from "../internal/multiSearch.js"
import { maxSharedTrigrams, SharedPass } from "./CoarsePass.js"
import { type Normalized, normalize, normalizeCapture, normalizedVersion, type RawSpan } from "./Normalize.js"
import { align, ratioNormalized } from "./Similarity.js"
import { ownedSlice } from "../internal/ownedSlice.js"

/** How a nearest passage was found. */
export type NearestMethod = typeof normalizedVersion | "fuzzy"

/** The passage nearest to a snippet. */
export interface Nearest {
  readonly method: NearestMethod
  /** 1 for a `normalized/1` hit; otherwise the fuzzy score in [0, 1), rounded to 3 decimals. */
  readonly score: number
  /** Raw UTF-16 offsets into the whole capture text; never splitting a surrogate pair. */
  readonly span: RawSpan
  /** The capture's raw text in `span`. */
  readonly text: string
}

export interface NearestOptions {
  /** Search only the raw range [from, to) of the text (UTF-16 offsets; default: all of it). */
  readonly from?: number | undefined
  readonly to?: number | undefined
  /** Below this fuzzy score, no passage is returned (default `defaultMinScore`). */
  readonly minScore?: number | undefined
}

/**
 * Fuzzy scores below this mean "no similar passage". At 0.6 a 300-character
 * quote may differ in up to 120 normalised characters; honest paraphrases of a
 * sentence mostly score below it, near-verbatim edits (a digit, a "not", a
 * swapped word) far above (docs/verification.md).
 */
export const defaultMinScore = 0.6

/** Shorter normalised snippets get no fuzzy search: too few trigrams to mean anything. */
export const minFuzzyLength = 8

/** Longer normalised snippets get no fuzzy search (the normalized/1 search still runs): bounds the fine pass. */
export const maxFuzzyLength = 1_000

/** Candidate windows aligned in the fine pass. */
export const fineCandidates = 3

/** A capture (or a range of it) normalised once, for several snippets. */
export interface Prepared {
  readonly raw: string
  /** Where the prepared range starts in `raw`. */
  readonly offset: number
  readonly normalized: Normalized
}

/** Whether `i` falls between the two halves of a surrogate pair. */
const insidePair = (text: string, i: number) => {
  const high = text.charCodeAt(i - 1)
  const low = text.charCodeAt(i)
  return high >= 0xd800 && high <= 0xdbff && low >= 0xdc00 && low <= 0xdfff
}

/**
 * Normalise a text, or the raw range [from, to) of it, once for several searches. A bound that
 * falls inside a surrogate pair moves inward past the half character, so no passage found in the
 * range can hold half of one.
 */
export const prepare = (text: string, options: { readonly from?: number | undefined; readonly to?: number | undefined } = {}): Prepared => {
  let from = Math.max(0, Math.min(options.from ?? 0, text.length))
  if (insidePair(text, from)) from++
  let to = Math.max(from, Math.min(options.to ?? text.length, text.length))
  if (to > from && insidePair(text, to)) to--
  return { raw: text, offset: from, normalized: normalizeCapture(from === 0 && to === text.length ? text : text.slice(from, to)) }
}

const passage = (prepared: Prepared, method: NearestMethod, score: number, start: number, end: number): Nearest => {
  const span = prepared.normalized.toRaw(start, end)
  const raw = { start: span.start + prepared.offset, end: span.end + prepared.offset }
  return { method, score, span: raw, text: ownedSlice(prepared.raw, raw.start, raw.end) }
}

/** The most code units a passage is widened by at each end to reach a word boundary. */
const maxWiden = 32

const wordUnit = /[\p{L}\p{N}]/u
const isWord = (text: string, i: number) => {
  const c = text.charCodeAt(i)
  return c < 0x80 ? (c >= 0x30 && c <= 0x39) || (c >= 0x61 && c <= 0x7a) : wordUnit.test(text[i]!)
}

type Found = { start: number; end: number; score: number }

/**
 * The fine pass: the best alignment of `pattern` around each start (first best kept), widened to
 * word boundaries. Undefined when no alignment has a length.
 */
const fine = (text: string, pattern: string, starts: ReadonlyArray<number>): Found | undefined => {
  const m = pattern.length
  const n = text.length
  let found: Found | undefined
  // The best window can sit up to half a block off the passage, which insertions can also lengthen.
  const margin = (m >> 2) + 8
  for (const p of starts) {
    const from = Math.max(0, p - margin)
    const to = Math.min(n, p + m + margin)
    const hit = align(pattern, text.slice(from, to))
    const length = hit.end - hit.start
    if (length === 0) continue
    const score = 1 - hit.distance / Math.max(m, length)
    if (found === undefined || score > found.score) found = { start: from + hit.start, end: from + hit.end, score }
  }
  if (found === undefined) return undefined
  // An alignment's free ends may stop inside a word ("4,20" for "4,201"): a passage to quote
  // ends at word boundaries, so widen it to them (a few code units at most) and score that.
  let { end, start } = found
  for (let k = 0; k < maxWiden && start > 0 && isWord(text, start - 1) && isWord(text, start); k++) start--
  for (let k = 0; k < maxWiden && end < n && isWord(text, end - 1) && isWord(text, end); k++) end++
  if (start === found.start && end === found.end) return found
  return { start, end, score: ratioNormalized(pattern, text.slice(start, end)) }
}

/**
 * The nearest passages to several snippets in one prepared text, each computed when first asked
 * for: `(k) => ` exactly what `nearestIn(prepared, snippets[k], options)` returns. The exact
 * search runs once for all snippets, and the trigram look-up of the text once for all that need
 * a coarse pass (in groups of at most `maxSharedTrigrams` trigrams), so k snippets cost one pass
 * over the text plus k cheap slides instead of k full passes.
 */
export const nearestEach = (
  prepared: Prepared,
  snippets: ReadonlyArray<string>,
  options: { readonly minScore?: number | undefined } = {}
): (k: number) => Nearest | undefined => {
  const text = prepared.normalized.text
  const n = text.length
  const minScore = options.minScore ?? defaultMinScore
  const patterns = snippets.map((snippet) => normalize(snippet).text)
  const results = new Map<number, Nearest | undefined>()
  let exact: Array<MultiSearch.Found | undefined> | undefined
  // Which pass (and which pattern in it) serves each pattern that needs a coarse pass.
  let passes: Array<{ readonly pass: SharedPass; readonly at: number } | undefined> | undefined
  // Only one pass holds its text ids at a time: memory stays 3.5 bytes per code unit at most (ids, one word of packed counts and its pair maxima), whatever the number of snippets.
  let active: SharedPass | undefined
  const exactHits = () => {
    if (exact !== undefined) return exact
    const searched = patterns.flatMap((pattern, k) => pattern.length === 0 ? [] : [k])
    // Only the first occurrence is used: each snippet's search stops there.
    const hits = MultiSearch.searchAll(text, searched.map((k) => patterns[k]!), { countUpTo: 1 })
    exact = patterns.map(() => undefined)
    searched.forEach((k, j) => exact![k] = hits[j])
    return exact
  }
  const coarse = (k: number): { readonly pass: SharedPass; readonly at: number } => {
    if (passes === undefined) {
      const hits = exactHits()
      passes = patterns.map(() => undefined)
      let group: Array<number> = []
      let trigrams = 0
      const flush = () => {
        if (group.length === 0) return
        const pass = new SharedPass(text, group.map((j) => patterns[j]!), fineCandidates)
        group.forEach((j, at) => passes![j] = { pass, at })
        group = []
        trigrams = 0
      }
      patterns.forEach((pattern, j) => {
        const m = pattern.length
        if (hits[j] !== undefined || m < minFuzzyLength || m > maxFuzzyLength || n === 0 || n <= 2 * m) return
        if (trigrams + m - 2 > maxSharedTrigrams) flush()
        group.push(j)
        trigrams += m - 2
      })
      flush()
    }
    return passes[k]!
  }
  const compute = (k: number): Nearest | undefined => {
    const pattern = patterns[k]!
    if (pattern.length === 0) return undefined
    const hit = exactHits()[k]
    if (hit !== undefined) return passage(prepared, normalizedVersion, 1, hit.start, hit.start + pattern.length)
    const m = pattern.length
    if (m < minFuzzyLength || m > maxFuzzyLength || n === 0) return undefined
    let starts: Array<number>
    if (n <= 2 * m) {
      starts = [0]
    } else {
      const { at, pass } = coarse(k)
      if (active !== pass) active?.release()
      active = pass
      starts = pass.starts(at, m)
    }
    const found = fine(text, pattern, starts)
    if (found === undefined || found.score < minScore) return undefined
    // Never 1 for a passage that is not a normalized/1 hit.
    const score = Math.min(Math.round(found.score * 1000) / 1000, 0.999)
    return passage(prepared, "fuzzy", score, found.start, found.end)
  }
  return (k) => {
    if (!results.has(k)) results.set(k, compute(k))
    return results.get(k)
  }
}

/** `nearestIn` for several snippets: one exact search and one trigram look-up of the text for all of them. */
export const nearestAll = (
  prepared: Prepared,
  snippets: ReadonlyArray<string>,
  options: { readonly minScore?: number | undefined } = {}
): Array<Nearest | undefined> => {
  const each = nearestEach(prepared, snippets, options)
  return snippets.map((_, k) => each(k))
}

/** The nearest passage to `snippet` in a prepared text, or undefined when none scores `minScore`. */
export const nearestIn = (prepared: Prepared, snippet: string, options: { readonly minScore?: number | undefined } = {}): Nearest | undefined =>
  nearestEach(prepared, [snippet], options)(0)

/**
 * The passage of `text` nearest to `snippet`: a `normalized/1` hit (score 1),
 * else the best fuzzy passage scoring at least `minScore`, else undefined.
 * Offsets are raw UTF-16 offsets into `text`, also when `from`/`to` restrict the search.
 */
export const findNearest = (text: string, snippet: string, options: NearestOptions = {}): Nearest | undefined =>
  nearestIn(prepare(text, options), snippet, options)
