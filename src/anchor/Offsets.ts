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
 * With the text's `checkpoints` (made once, kept with a cached capture), each
 * position is counted from the nearest checkpoint at or before it (or from the
 * previous position, when nearer): a few KiB of text per position instead of
 * the text up to it. The answers are the same (tested).
 *
 * @since 0.2.0
 * @category conversions
 */
export const positions = (text: string, utf16: ReadonlyArray<number>, checkpoints?: Checkpoints): Array<Position> => {
  // Positions given in order (a span's start and end, spans in text order) need no sort.
  const order = utf16.map((_, i) => i)
  if (!inOrder(utf16)) order.sort((a, b) => utf16[a]! - utf16[b]!)
  const out: Array<Position> = new Array(utf16.length)
  const n = text.length
  let done = 0 // code units counted so far
  let cp = 0
  let bytes = 0
  for (const k of order) {
    let target = Math.min(Math.max(utf16[k]!, 0), n)
    // Inside a surrogate pair: the boundary before it. At 0 and at `n` the unit read is `NaN`, no surrogate.
    if (isHigh(text.charCodeAt(target - 1)) && isLow(text.charCodeAt(target))) target -= 1
    if (checkpoints !== undefined && target - done > checkpoints.every) {
      // Jump to the last checkpoint at or before the target: checkpoint j lies at j * every or one
      // unit before it (off a surrogate pair), between characters as `target` does.
      const table = checkpoints.table
      const j = Math.floor(target / checkpoints.every)
      if (table[3 * j]! > done) {
        done = table[3 * j]!
        cp = table[3 * j + 1]!
        bytes = table[3 * j + 2]!
      }
    }
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

/**
 * Code units between checkpoints: a position costs a scan of at most this many (about 2 µs of
 * native counting), and a checkpoint 12 bytes, so the table is under 0.3% of the text it serves.
 */
export const checkpointUnits = 2048

/**
 * The code-point and UTF-8 counts of a text at every `every` code units (a checkpoint that would
 * split a surrogate pair is placed before the pair), so that a position is counted from the
 * nearest one instead of from the start of the text.
 *
 * @since 0.5.0
 * @category models
 */
export interface Checkpoints {
  readonly every: number
  /** Per checkpoint j: its UTF-16 position, code points and UTF-8 bytes before it, at 3j, 3j + 1, 3j + 2. */
  readonly table: Uint32Array
  /** What the table holds in memory, in bytes. */
  readonly bytes: number
}

/**
 * The checkpoints of `text`, in one pass over it (`every` is for tests; the default is
 * `checkpointUnits`).
 *
 * @since 0.5.0
 * @category constructors
 */
export const checkpoints = (text: string, every: number = checkpointUnits): Checkpoints => {
  const step = Math.max(2, Math.floor(every))
  const count = Math.floor(text.length / step) + 1
  const table = new Uint32Array(3 * count)
  let done = 0
  let cp = 0
  let bytes = 0
  for (let j = 1; j < count; j++) {
    let target = j * step
    if (isHigh(text.charCodeAt(target - 1)) && isLow(text.charCodeAt(target))) target -= 1
    const segment = text.slice(done, target)
    bytes += Buffer.byteLength(segment, "utf8")
    cp += segment.length - pairsIn(segment)
    done = target
    table[3 * j] = target
    table[3 * j + 1] = cp
    table[3 * j + 2] = bytes
  }
  return { every: step, table, bytes: table.byteLength + 64 }
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
 * Every span of `text` in all three units, in one pass (from the nearest of the text's
 * `checkpoints` for each position, when given).
 *
 * @since 0.2.0
 * @category conversions
 */
export const spanOffsets = (text: string, spans: ReadonlyArray<Span>, checkpoints?: Checkpoints): Array<SpanOffsets> => {
  if (text.length <= asciiCheckUnits && integral(spans) && Buffer.byteLength(text, "utf8") === text.length) {
    return asciiOffsets(text, spans)
  }
  const at = positions(text, spans.flatMap((span) => [span.start, span.end]), checkpoints)
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

/** Every span's ends are integers (a caller's `2.5` or `NaN` takes the general pass, which decides what it means). */
const integral = (spans: ReadonlyArray<Span>): boolean => {
  for (const span of spans) if (!Number.isInteger(span.start) || !Number.isInteger(span.end)) return false
  return true
}

const inOrder = (xs: ReadonlyArray<number>): boolean => {
  for (let i = 1; i < xs.length; i++) if (xs[i - 1]! > xs[i]!) return false
  return true
}

/**
 * Longest text `spanOffsets` first checks for being all ASCII (one native pass over the whole
 * text, where `positions` goes only up to the last span): small captures, many of them.
 */
const asciiCheckUnits = 64 * 1024

/**
 * `spanOffsets` of an all-ASCII text (as many UTF-8 bytes as code units: every unit under 0x80, so
 * no surrogate): one code point and one byte per code unit, each position clamped to the text as
 * `positions` clamps it. The same answers as the general pass (tested).
 */
const asciiOffsets = (text: string, spans: ReadonlyArray<Span>): Array<SpanOffsets> => {
  const n = text.length
  return spans.map((span) => {
    const start = Math.min(Math.max(span.start, 0), n)
    const end = Math.min(Math.max(span.end, 0), n)
    return { utf16: { start: span.start, end: span.end }, codePoints: { start, end }, utf8: { start, end } }
  })
}
