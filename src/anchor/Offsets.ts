/**
 * Offsets of verified spans in the three units other stacks count in: UTF-16
 * code units (JavaScript, Java, Anthropic Citations: the Verifier's own
 * `span`), Unicode code points (Python, the W3C TextPositionSelector) and
 * UTF-8 bytes (byte-offset APIs, the capture file itself).
 *
 * One pass over the text, up to the last position asked for, converts any
 * number of positions: O(text + k log k) for k positions, whatever the text.
 * The pass is native where it can be (`Buffer.byteLength`, a regular test for
 * surrogates): over ten times faster (measured) than a JavaScript loop per code unit.
 *
 * @since 0.2.0
 */
import type { Span } from "../Domain.js"

/**
 * A span in every unit, all end exclusive. `utf16` is the Verifier's `span`;
 * `codePoints` and `utf8` count the same characters as code points and as
 * bytes of the text's UTF-8 encoding (the bytes its `sha256` covers).
 *
 * @since 0.2.0
 * @category models
 */
export interface SpanOffsets {
  readonly utf16: Span
  readonly codePoints: Span
  readonly utf8: Span
}

/** A position in every unit. */
export interface Position {
  readonly utf16: number
  readonly codePoint: number
  readonly utf8: number
}

/**
 * Each UTF-16 position of `text` as code points and UTF-8 bytes, in one pass.
 * A position past the end counts as the end. A position between the halves of
 * a surrogate pair (never a verified span's boundary: see `CitedFact`) counts
 * as the boundary before the pair. A lone surrogate counts as one code point
 * of three bytes, as `TextEncoder` encodes it (U+FFFD).
 *
 * @since 0.2.0
 * @category conversions
 */
export const positions = (text: string, utf16: ReadonlyArray<number>): Array<Position> => {
  const order = utf16.map((_, i) => i).sort((a, b) => utf16[a]! - utf16[b]!)
  const out: Array<Position> = new Array(utf16.length)
  const n = text.length
  let done = 0 // code units counted so far
  let cp = 0
  let bytes = 0
  for (const k of order) {
    let target = Math.min(Math.max(utf16[k]!, 0), n)
    // Inside a surrogate pair: the boundary before it. At 0 and at `n` the unit read is `NaN`, no surrogate.
    if (isHigh(text.charCodeAt(target - 1)) && isLow(text.charCodeAt(target))) target -= 1
    if (target > done) {
      // Native work per segment (the segments add up to one pass): UTF-8 length by Buffer (a lone
      // surrogate counts 3 bytes, as encoded), code points as code units minus surrogate pairs.
      const segment = text.slice(done, target)
      bytes += Buffer.byteLength(segment, "utf8")
      cp += segment.length - pairsIn(segment)
      done = target
    }
    out[k] = { utf16: utf16[k]!, codePoint: cp, utf8: bytes }
  }
  return out
}

const isHigh = (c: number) => c >= 0xd800 && c <= 0xdbff
const isLow = (c: number) => c >= 0xdc00 && c <= 0xdfff
const anyHigh = /[\ud800-\udbff]/

/** Surrogate pairs in a string that starts and ends between characters; a regular test skips BMP-only text. */
const pairsIn = (s: string): number => {
  if (!anyHigh.test(s)) return 0
  let pairs = 0
  for (let i = 0; i + 1 < s.length; i++) {
    if (isHigh(s.charCodeAt(i)) && isLow(s.charCodeAt(i + 1))) {
      pairs++
      i++
    }
  }
  return pairs
}

/**
 * Every span of `text` in all three units, in one pass.
 *
 * @since 0.2.0
 * @category conversions
 */
export const spanOffsets = (text: string, spans: ReadonlyArray<Span>): Array<SpanOffsets> => {
  const at = positions(text, spans.flatMap((span) => [span.start, span.end]))
  return spans.map((span, k) => {
    const start = at[2 * k]!
    const end = at[2 * k + 1]!
    return {
      utf16: { start: span.start, end: span.end },
      codePoints: { start: start.codePoint, end: end.codePoint },
      utf8: { start: start.utf8, end: end.utf8 }
    }
  })
}
