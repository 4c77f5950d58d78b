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
 * search (linear), one trigram pass (linear, 2 bytes per code unit). Several
 * snippets of one text (`nearestEach`) share the exact search and the trigram
 * look-up; each then slides a bound (array reads only) and counts exactly only
 * the blocks that may rank among its best three, or, past an eighth of the
 * blocks, all of them in one slide: linear per snippet either way, with the
 * same passages as one search per snippet (test/anchor.nearest.shared.test.ts).
 *
 * @since 0.2.0
 */
import * as MultiSearch from "../internal/multiSearch.js"
import { type Normalized, normalize, normalizeCapture, normalizedVersion, type RawSpan } from "./Normalize.js"
import { align, ratioNormalized } from "./Similarity.js"

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
  return { method, score, span: raw, text: prepared.raw.slice(raw.start, raw.end) }
}

/**
 * Open-addressing table from a trigram (three code units) to its index among the snippet's
 * distinct trigrams. Integer keys (the first two units packed, the third apart), so a lookup is
 * a multiply-shift hash and one or two integer compares.
 */
class TrigramTable {
  private readonly head: Int32Array
  private readonly tail: Int32Array
  private readonly values: Int16Array
  private readonly shift: number
  private readonly mask: number
  size = 0
  constructor(capacity: number) {
    let bits = 6
    while (1 << bits < capacity * 4) bits++
    this.head = new Int32Array(1 << bits)
    this.tail = new Int32Array(1 << bits).fill(-1)
    this.values = new Int16Array(1 << bits)
    this.shift = 32 - bits
    this.mask = (1 << bits) - 1
  }
  private slot(c0: number, c1: number, c2: number): number {
    const head = (c0 << 16) | c1
    let h = (Math.imul(head ^ Math.imul(c2, 0x85ebca77), 0x9e3779b1) >>> this.shift) & this.mask
    while (this.tail[h] !== -1 && (this.tail[h] !== c2 || this.head[h] !== head)) h = (h + 1) & this.mask
    return h
  }
  /** The index of the trigram, added if new. */
  add(c0: number, c1: number, c2: number): number {
    const h = this.slot(c0, c1, c2)
    if (this.tail[h] !== -1) return this.values[h]!
    this.head[h] = (c0 << 16) | c1
    this.tail[h] = c2
    this.values[h] = this.size
    return this.size++
  }
  /** The index of the trigram, or -1. */
  get(c0: number, c1: number, c2: number): number {
    const h = this.slot(c0, c1, c2)
    return this.tail[h] === -1 ? -1 : this.values[h]!
  }
}

/** The most code units a passage is widened by at each end to reach a word boundary. */
const maxWiden = 32

const wordUnit = /[\p{L}\p{N}]/u
const isWord = (text: string, i: number) => {
  const c = text.charCodeAt(i)
  return c < 0x80 ? (c >= 0x30 && c <= 0x39) || (c >= 0x61 && c <= 0x7a) : wordUnit.test(text[i]!)
}

type Found = { start: number; end: number; score: number }

/** Fuzzy patterns whose trigrams share one table and one pass over the text: at most this many trigrams in all (the ids are 16-bit). */
const maxSharedTrigrams = 32_000

/**
 * The coarse pass of several patterns over one text. The text's trigrams are looked up once, in
 * one table of every pattern's trigrams (`ids`: 1 + the trigram's index in that table, 0 for a
 * trigram in no pattern); each pattern then slides its window over those ids, which is array
 * reads and no hashing. Same windows, same counts and same choice of blocks as one pass per pattern.
 */
class SharedPass {
  private readonly table: TrigramTable
  private readonly patternIds: Array<Uint16Array> = []
  private ids: Uint16Array | undefined
  constructor(private readonly text: string, patterns: ReadonlyArray<string>) {
    this.table = new TrigramTable(patterns.reduce((sum, p) => sum + p.length - 2, 0))
    for (const pattern of patterns) {
      const ids = new Uint16Array(pattern.length - 2)
      for (let i = 0; i + 3 <= pattern.length; i++) {
        ids[i] = this.table.add(pattern.charCodeAt(i), pattern.charCodeAt(i + 1), pattern.charCodeAt(i + 2)) + 1
      }
      this.patternIds.push(ids)
    }
  }

  /** Drops the text's trigram ids (2 bytes per code unit); they are computed again if needed. */
  release(): void {
    this.ids = undefined
  }

  /** The text's trigram ids, computed on first use (one hash look-up per code unit). */
  private textIds(): Uint16Array {
    if (this.ids !== undefined) return this.ids
    const { table, text } = this
    const count = text.length - 2
    const ids = new Uint16Array(count)
    let c0 = text.charCodeAt(0)
    let c1 = text.charCodeAt(1)
    for (let i = 0; i < count; i++) {
      const c2 = text.charCodeAt(i + 2)
      ids[i] = table.get(c0, c1, c2) + 1
      c0 = c1
      c1 = c2
    }
    return this.ids = ids
  }

  /**
   * Where the fine pass looks for pattern `k` (of length `m`): the best window of each half-pattern
   * block by Dice count, the best `fineCandidates` blocks, best first (ties: the earlier block).
   *
   * A window's count is at most its number of trigrams that occur in the pattern at all (its
   * hits), which a cheap slide gives for every block. Blocks are then counted exactly in order of
   * that bound, best first, until no block left can enter the best three: on prose a few hundred
   * of some 30,000 blocks per MiB. When more than `maxExactShare` of the blocks would need exact
   * counts (a text where most windows look alike), the full slide counts every block instead.
   */
  starts(k: number, m: number): Array<number> {
    const ids = this.textIds()
    // Counts indexed by shared id: an id of another pattern's trigram (or 0, none) is wanted 0 times,
    // so it enters and leaves the window without ever counting.
    const wanted = new Int32Array(this.table.size + 1)
    for (const id of this.patternIds[k]!) wanted[id]!++
    const member = new Int32Array(this.table.size + 1)
    for (let id = 1; id < member.length; id++) member[id] = wanted[id]! > 0 ? 1 : 0
    const window = m - 2
    const block = Math.max(1, m >> 1)
    const last = ids.length - window // the last window's start
    const blocks = Math.floor(last / block) + 1
    // Each block's bound: the most hits of any of its windows.
    const bound = new Int32Array(blocks)
    let hits = 0
    for (let i = 0; i < window; i++) hits += member[ids[i]!]!
    for (let b = 0, from = 0; b < blocks; b++, from += block) {
      const to = Math.min(from + block - 1, last)
      let best = from === 0 ? hits : 0
      for (let p = from === 0 ? 1 : from; p <= to; p++) {
        hits += member[ids[p + window - 1]!]! - member[ids[p - 1]!]!
        if (hits > best) best = hits
      }
      bound[b] = best
    }
    // Blocks by bound, highest first, then by position (a counting sort: bounds are at most `window`).
    const byBound = new Int32Array(window + 2)
    for (let b = 0; b < blocks; b++) byBound[bound[b]!]!++
    for (let v = window, at = 0; v >= 0; v--) {
      const n = byBound[v]!
      byBound[v] = at
      at += n
    }
    const order = new Int32Array(blocks)
    for (let b = 0; b < blocks; b++) order[byBound[bound[b]!]!++] = b
    const have = new Int32Array(this.table.size + 1)
    const top = new Top()
    const limit = Math.max(64, Math.ceil(blocks * maxExactShare))
    for (let r = 0; r < blocks; r++) {
      const b = order[r]!
      // No block from here on can rank above the third best (an equal count ranks below an earlier block).
      if (!top.admits(bound[b]!, b)) break
      if (r >= limit) return this.slideAll(ids, wanted, m)
      const from = b * block
      const to = Math.min(from + block - 1, last)
      let common = 0
      for (let i = from; i < from + window; i++) {
        const id = ids[i]!
        const h = have[id]!
        have[id] = h + 1
        common -= (h - wanted[id]!) >> 31
      }
      let best = common
      let bestAt = from
      for (let p = from + 1; p <= to; p++) {
        const entering = ids[p + window - 1]!
        const h = have[entering]!
        have[entering] = h + 1
        common -= (h - wanted[entering]!) >> 31
        const leaving = ids[p - 1]!
        const g = have[leaving]!
        have[leaving] = g - 1
        common -= 1 + ((wanted[leaving]! - g) >> 31)
        if (common > best) {
          best = common
          bestAt = p
        }
      }
      // Back to all zeros for the next block.
      for (let i = to; i < to + window; i++) have[ids[i]!]!--
      top.offer(best, b, bestAt)
    }
    return top.starts()
  }

  /** The general path: every block's best window by one slide over the whole text. */
  private slideAll(ids: Uint16Array, wanted: Int32Array, m: number): Array<number> {
    const have = new Int32Array(wanted.length)
    const window = m - 2
    const block = Math.max(1, m >> 1)
    const last = ids.length - window // the last window's start
    // common = Σ min(have, wanted) over this pattern's trigrams, kept as windows enter and leave;
    // (h - w) >> 31 is -1 when h < w, else 0 (counts are far below 2^31): no data-dependent branch.
    let common = 0
    for (let i = 0; i < window; i++) {
      const id = ids[i]!
      const h = have[id]!
      have[id] = h + 1
      common -= (h - wanted[id]!) >> 31
    }
    const top = new Top()
    for (let b = 0, from = 0; from <= last; b++, from += block) {
      const to = Math.min(from + block - 1, last)
      // The window at 0 is complete already; every later one enters one trigram and drops one.
      let best = from === 0 ? common : -1
      let bestAt = from
      for (let p = from === 0 ? 1 : from; p <= to; p++) {
        const entering = ids[p + window - 1]!
        const h = have[entering]!
        have[entering] = h + 1
        common -= (h - wanted[entering]!) >> 31
        const leaving = ids[p - 1]!
        const g = have[leaving]!
        have[leaving] = g - 1
        // min(have, wanted) drops when have was at most wanted: (wanted - g) >> 31 is 0 then, else -1.
        common -= 1 + ((wanted[leaving]! - g) >> 31)
        if (common > best) {
          best = common
          bestAt = p
        }
      }
      top.offer(best, b, bestAt)
    }
    return top.starts()
  }
}

/** Above this share of blocks counted exactly, `SharedPass.starts` counts them all in one slide. */
const maxExactShare = 1 / 8

/** The best `fineCandidates` blocks by count (positive only), then by position: the fine pass's starts, best first. */
class Top {
  private readonly count = [-1, -1, -1]
  private readonly block = [0, 0, 0]
  private readonly at = [0, 0, 0]
  /** Whether a block with count `value` at `block` would enter the best three. */
  admits(value: number, block: number): boolean {
    const last = fineCandidates - 1
    return value > 0 && (value > this.count[last]! || (value === this.count[last]! && block < this.block[last]!))
  }
  offer(value: number, block: number, at: number): void {
    if (!this.admits(value, block)) return
    let r = fineCandidates - 1
    while (r > 0 && (this.count[r - 1]! < value || (this.count[r - 1]! === value && this.block[r - 1]! > block))) {
      this.count[r] = this.count[r - 1]!
      this.block[r] = this.block[r - 1]!
      this.at[r] = this.at[r - 1]!
      r--
    }
    this.count[r] = value
    this.block[r] = block
    this.at[r] = at
  }
  starts(): Array<number> {
    const out: Array<number> = []
    for (let r = 0; r < fineCandidates && this.count[r]! > 0; r++) out.push(this.at[r]!)
    return out
  }
}

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
  // Only one pass holds its text ids at a time: memory stays 2 bytes per code unit, whatever the number of snippets.
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
        const pass = new SharedPass(text, group.map((j) => patterns[j]!))
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
