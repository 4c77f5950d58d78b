/**
 * Similarity scores for repair diagnostics and the drift audit. None of them
 * ever decides acceptance: a quote with one digit changed or a "not" inserted
 * scores high on every measure here.
 *
 * Every input length is bounded: the quadratic measures (`ratio`, `align`) cut
 * their inputs to documented lengths first, so their cost is bounded whatever
 * the caller passes.
 *
 * @since 0.2.0
 */
import { normalizeText } from "./Normalize.js"

/**
 * The longest input (normalised code units) `ratio` compares; longer inputs are
 * cut to this many code units first (at most 2,048 × 2,048 cells, a few ms).
 */
export const maxRatioLength = 2_048

/** The trigram multiset of a string as counts keyed by the three code units. */
const trigrams = (s: string): Map<number, number> => {
  const counts = new Map<number, number>()
  for (let i = 0; i + 3 <= s.length; i++) {
    const key = s.charCodeAt(i) * 4294967296 + s.charCodeAt(i + 1) * 65536 + s.charCodeAt(i + 2)
    counts.set(key, (counts.get(key) ?? 0) + 1)
  }
  return counts
}

/**
 * Sørensen–Dice coefficient over the character-trigram multisets of two
 * already-normalised strings: 2·|A ∩ B| / (|A| + |B|), in [0, 1]. Linear time
 * and memory. Two strings too short for a trigram are compared for equality.
 */
export const diceNormalized = (a: string, b: string): number => {
  if (a.length < 3 || b.length < 3) return a === b ? 1 : 0
  const ta = trigrams(a)
  let common = 0
  for (let i = 0; i + 3 <= b.length; i++) {
    const key = b.charCodeAt(i) * 4294967296 + b.charCodeAt(i + 1) * 65536 + b.charCodeAt(i + 2)
    const left = ta.get(key)
    if (left !== undefined && left > 0) {
      common++
      ta.set(key, left - 1)
    }
  }
  return (2 * common) / (a.length - 2 + b.length - 2)
}

/** `diceNormalized` of the `normalized/1` forms of `a` and `b`. */
export const dice = (a: string, b: string): number => diceNormalized(normalizeText(a), normalizeText(b))

/** Levenshtein distance between two strings (code units), in two rows of memory. */
export const levenshtein = (a: string, b: string): number => {
  if (a.length < b.length) [a, b] = [b, a]
  const m = b.length
  if (m === 0) return a.length
  let previous = new Int32Array(m + 1)
  let current = new Int32Array(m + 1)
  for (let j = 0; j <= m; j++) previous[j] = j
  for (let i = 1; i <= a.length; i++) {
    current[0] = i
    const ca = a.charCodeAt(i - 1)
    for (let j = 1; j <= m; j++) {
      const substitute = previous[j - 1]! + (ca === b.charCodeAt(j - 1) ? 0 : 1)
      const remove = previous[j]! + 1
      const insert = current[j - 1]! + 1
      current[j] = substitute < remove ? (substitute < insert ? substitute : insert) : remove < insert ? remove : insert
    }
    ;[previous, current] = [current, previous]
  }
  return previous[m]!
}

/** `1 − distance / longer length` of two already-normalised strings, each cut to `maxRatioLength`. */
export const ratioNormalized = (a: string, b: string): number => {
  const x = a.slice(0, maxRatioLength)
  const y = b.slice(0, maxRatioLength)
  const longer = Math.max(x.length, y.length)
  return longer === 0 ? 1 : 1 - levenshtein(x, y) / longer
}

/**
 * Similarity of two texts in [0, 1]: one minus the Levenshtein distance of
 * their `normalized/1` forms over the longer form's length (so typography,
 * case and spacing cost nothing, and one changed character in 300 scores
 * about 0.997). Each normalised form is cut to `maxRatioLength` code units.
 */
export const ratio = (a: string, b: string): number => ratioNormalized(normalizeText(a), normalizeText(b))

/** The best approximate occurrence of a pattern in a text. */
export interface Alignment {
  /** Start and end in the text (code units). */
  readonly start: number
  readonly end: number
  /** The edit distance between the pattern and `text.slice(start, end)`. */
  readonly distance: number
}

/**
 * The least edit distance of `pattern` against any substring of `text` ending at each text
 * position (semi-global: the text's start is free), scanning text positions left to right in one
 * column of memory. Returns the first end with the least distance, and that distance.
 */
const bestEnd = (pattern: Uint16Array, text: Uint16Array): { end: number; distance: number } => {
  const m = pattern.length
  const column = new Int32Array(m + 1)
  for (let i = 0; i <= m; i++) column[i] = i
  let best = m
  let end = 0
  for (let j = 0; j < text.length; j++) {
    const c = text[j]!
    let diagonal = 0 // column[0] of the previous column: a free start
    for (let i = 1; i <= m; i++) {
      const above = column[i]! // previous column, same row
      let value = diagonal + (pattern[i - 1] === c ? 0 : 1)
      const left = column[i - 1]! + 1 // this column, row above: a pattern character missing
      if (left < value) value = left
      if (above + 1 < value) value = above + 1 // a text character missing from the pattern
      diagonal = above
      column[i] = value
    }
    if (column[m]! < best) {
      best = column[m]!
      end = j + 1
    }
  }
  return { end, distance: best }
}

const codes = (s: string, reversed: boolean): Uint16Array => {
  const out = new Uint16Array(s.length)
  for (let i = 0; i < s.length; i++) out[reversed ? s.length - 1 - i : i] = s.charCodeAt(i)
  return out
}

/**
 * The substring of `text` with the least edit distance to `pattern`
 * (semi-global alignment: the pattern whole, the text's ends free). Two passes
 * of pattern × text cells, one column of memory: the first finds where the best
 * match ends, the second (both reversed, up to that end) where it starts.
 * Callers bound both lengths (the nearest-passage search passes at most
 * 1,000 × 2,000).
 */
export const align = (pattern: string, text: string): Alignment => {
  if (pattern.length === 0) return { start: 0, end: 0, distance: 0 }
  const { distance, end } = bestEnd(codes(pattern, false), codes(text, false))
  const back = bestEnd(codes(pattern, true), codes(text.slice(0, end), true))
  return { start: end - back.end, end, distance }
}
