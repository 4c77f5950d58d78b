/**
 * The nearest-passage search as it was before the shared trigram pass (src/anchor/Nearest.ts at
 * 0.4: one trigram table and one full pass over the text per snippet), kept verbatim as the
 * reference the shared pass must equal exactly (test/anchor.nearest.shared.test.ts). `prepare` is
 * the library's own: only the search is the reference here.
 */
import * as MultiSearch from "../../src/internal/multiSearch.js"
import {
  defaultMinScore,
  fineCandidates,
  maxFuzzyLength,
  minFuzzyLength,
  type Nearest,
  type NearestMethod,
  type Prepared
} from "../../src/anchor/Nearest.js"
import { normalize, normalizedVersion } from "../../src/anchor/Normalize.js"
import { align, ratioNormalized } from "../../src/anchor/Similarity.js"

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

/**
 * The coarse pass alone (text longer than twice the pattern): the start of the best window of each
 * of the best `fineCandidates` blocks, best first, as the old search chose them.
 */
export const referenceStarts = (text: string, pattern: string): Array<number> => {
  const m = pattern.length
  const n = text.length
  const starts: Array<number> = []
  // Coarse pass: Dice over trigrams in a sliding window of m code units (m − 2 trigrams).
  const table = new TrigramTable(m)
  const ids = new Int16Array(m - 2)
  for (let i = 0; i + 3 <= m; i++) ids[i] = table.add(pattern.charCodeAt(i), pattern.charCodeAt(i + 1), pattern.charCodeAt(i + 2))
  const wanted = new Int32Array(table.size)
  for (const id of ids) wanted[id]!++
  const have = new Int32Array(table.size)
  const count = n - 2 // trigrams in the text
  const textIds = new Int16Array(count)
  let c0 = text.charCodeAt(0)
  let c1 = text.charCodeAt(1)
  for (let i = 0; i < count; i++) {
    const c2 = text.charCodeAt(i + 2)
    textIds[i] = table.get(c0, c1, c2)
    c0 = c1
    c1 = c2
  }
  const window = m - 2
  const block = Math.max(1, m >> 1)
  const blocks = Math.ceil((count - window + 1) / block)
  const bestCommon = new Int32Array(blocks).fill(-1)
  const bestAt = new Int32Array(blocks)
  let common = 0
  for (let i = 0; i < count; i++) {
    const id = textIds[i]!
    if (id >= 0 && ++have[id]! <= wanted[id]!) common++
    const leaving = i - window
    if (leaving >= 0) {
      const old = textIds[leaving]!
      if (old >= 0 && have[old]!-- <= wanted[old]!) common--
    }
    const p = i - window + 1 // the window [p, p + m) is complete
    if (p >= 0) {
      const b = (p / block) | 0
      if (common > bestCommon[b]!) {
        bestCommon[b] = common
        bestAt[b] = p
      }
    }
  }
  // The best blocks, best first.
  const chosen = new Set<number>()
  for (let k = 0; k < fineCandidates; k++) {
    let best = -1
    for (let b = 0; b < blocks; b++) {
      if (!chosen.has(b) && bestCommon[b]! > 0 && (best === -1 || bestCommon[b]! > bestCommon[best]!)) best = b
    }
    if (best === -1) break
    chosen.add(best)
    starts.push(bestAt[best]!)
  }
  return starts
}

/** The best fuzzy passage in normalised coordinates, or undefined. */
const fuzzy = (text: string, pattern: string): { start: number; end: number; score: number } | undefined => {
  const m = pattern.length
  const n = text.length
  if (n === 0) return undefined
  const starts: Array<number> = []
  if (n <= 2 * m) {
    starts.push(0)
  } else {
    starts.push(...referenceStarts(text, pattern))
  }
  let found: { start: number; end: number; score: number } | undefined
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

/** The nearest passage to `snippet` in a prepared text, or undefined when none scores `minScore`. */
export const referenceNearestIn = (prepared: Prepared, snippet: string, options: { readonly minScore?: number | undefined } = {}): Nearest | undefined => {
  const pattern = normalize(snippet).text
  if (pattern.length === 0) return undefined
  const text = prepared.normalized.text
  // Only the first occurrence is used: the search stops there.
  const hit = MultiSearch.searchAll(text, [pattern], { countUpTo: 1 })[0]
  if (hit !== undefined) return passage(prepared, normalizedVersion, 1, hit.start, hit.start + pattern.length)
  if (pattern.length < minFuzzyLength || pattern.length > maxFuzzyLength) return undefined
  const found = fuzzy(text, pattern)
  const minScore = options.minScore ?? defaultMinScore
  if (found === undefined || found.score < minScore) return undefined
  // Never 1 for a passage that is not a normalized/1 hit.
  const score = Math.min(Math.round(found.score * 1000) / 1000, 0.999)
  return passage(prepared, "fuzzy", score, found.start, found.end)
}
