/**
 * The versioned normalisation `normalized/1`, applied identically to a capture
 * and to a snippet, with a map from every normalised code unit back to the raw
 * UTF-16 span it came from.
 *
 * Steps, in this order, on each segment of the raw text:
 * 1. drop U+00AD (soft hyphen), U+200B–U+200D (zero-width space, non-joiner,
 *    joiner) and U+FEFF (byte-order mark);
 * 2. map U+201C–U+201F, « and » to `"`; U+2018–U+201B to `'`; U+2010–U+2015 and
 *    U+2212 to `-`;
 * 3. NFKC;
 * 4. lower case (`toLowerCase`, per segment: no context-sensitive final sigma);
 * 5. steps 1–2 once more, because NFKC itself produces a few of those
 *    characters (U+2011 → U+2010, U+207B and U+208B → U+2212, U+FE31, U+FE32 and
 *    U+FE58 → dashes): so normalising twice changes nothing, with one exception:
 *    a character dropped in step 1 between a base and the combining marks or
 *    conjoining jamo after it ends the raw segment but leaves nothing in the
 *    normalised text, so normalising again composes what the first pass kept
 *    apart (i, U+00AD, U+0301 → i + U+0301 → í). Both sides of a comparison are
 *    normalised once, from raw text, so matching never depends on it;
 * 6. every run of white space (Unicode White_Space, after the steps above, across
 *    segment boundaries) becomes one U+0020. Nothing is trimmed.
 *
 * Segments: a code point with the combining marks (\p{M}) and conjoining
 * Hangul jamo that follow it, at most `maxSegment` code units. NFKC and lower
 * casing can change lengths (ﬁ → fi, İ → i̇, é as e + U+0301 → é); each segment
 * is normalised on its own, so every normalised code unit maps to exactly one
 * raw segment and a raw span from the map never splits a surrogate pair or a
 * base from its marks. Cost and memory are linear: one pass, each segment
 * bounded; the output in one typed array, the map as runs (a run of ASCII
 * maps one to one, every other run to one raw span), looked up by binary
 * search. ASCII runs take a fast path that calls no Unicode function.
 *
 * @since 0.2.0
 */
import { flatFrom, isPlain, plainLong } from "./PlainAscii.js"

/** The version label of this normalisation: the `method` a hit under it reports. */
export const normalizedVersion = "normalized/1" as const
export type NormalizedVersion = typeof normalizedVersion

/**
 * `normalized/2`: `normalized/1` minus every mapping that can change a number, a sign, an exponent,
 * a fraction or a unit (src/anchor/MeaningGuard.ts checks what per-segment rules cannot see). A
 * segment whose first code point is `keptVerbatim` is copied as it is (no NFKC, no lower casing):
 * superscripts and subscripts, vulgar fractions, circled/parenthesised/full-stop digits, Roman
 * numerals, modifier letters, letterlike symbols (℃, K, Ω, ℓ), squared CJK units (㎡, ㎒); so is
 * any segment whose NFKC form holds a number but which is not a decimal digit itself. U+2212 MINUS
 * SIGN is not mapped to `-`. Everything else is as in `normalized/1`.
 */
export const normalizedVersion2 = "normalized/2" as const
/** The normalisations: `normalized/1` (kept for results stored under it) and `normalized/2`. */
export type Version = typeof normalizedVersion | typeof normalizedVersion2

/**
 * The longest segment, in code units, normalised as one: a longer run of
 * combining marks (hostile "zalgo" text) is split into segments of this size,
 * so no single NFKC call sees an attacker-chosen length.
 */
export const maxSegment = 32

/**
 * A capture's normalised form is at most `maxExpansion` × its raw length + `expansionAllowance`
 * code units (`normalizeCapture`). NFKC expands a few characters a lot (U+FDFA becomes 18 code
 * units): without a cap a hostile capture of 8 MiB would normalise to about 50 M code units
 * (1 GB of map, seconds of work that no deadline can interrupt).
 */
export const maxExpansion = 2
export const expansionAllowance = 1_024

/** A raw UTF-16 span `[start, end)`. */
export interface RawSpan {
  readonly start: number
  readonly end: number
}

/** A normalised text and its way back to the raw text. */
export interface Normalized {
  /** The normalised text. */
  readonly text: string
  /** The raw text's length in UTF-16 code units. */
  readonly rawLength: number
  /**
   * The raw span `[start, end)` of the normalised span `[start, end)`: from the start of the
   * segment that produced the first normalised code unit to the end of the segment that
   * produced the last. An empty span maps to an empty raw span at the corresponding point.
   */
  readonly toRaw: (start: number, end: number) => RawSpan
  /**
   * True when the output reached `maxUnits` and normalisation stopped there: `text` is then the
   * normalisation of a prefix of the raw text (segments are normalised on their own), never of all of it.
   */
  readonly truncated: boolean
  /** The raw offset where normalised code unit `index` comes from (`rawLength` at the end). */
  readonly rawStart: (index: number) => number
}

const dropped = (c: number) => c === 0xad || (c >= 0x200b && c <= 0x200d) || c === 0xfeff

/** Step 2's mapping of one code unit (all mapped characters are in the BMP), or the unit itself. */
const mapped = (c: number, minus: boolean): number =>
  (c >= 0x201c && c <= 0x201f) || c === 0xab || c === 0xbb
    ? 0x22
    : c >= 0x2018 && c <= 0x201b
    ? 0x27
    : (c >= 0x2010 && c <= 0x2015) || (minus && c === 0x2212)
    ? 0x2d
    : c

/** Unicode White_Space (all in the BMP; the test pins the list against `\p{White_Space}`). */
export const isSpace = (c: number): boolean =>
  c < 0x80
    ? c === 0x20 || (c >= 0x09 && c <= 0x0d)
    : c === 0x85 || c === 0xa0 || c === 0x1680 || (c >= 0x2000 && c <= 0x200a) || c === 0x2028 || c === 0x2029 ||
      c === 0x202f || c === 0x205f || c === 0x3000

const mark = /^[\p{M}]$/u
/** `continues` for BMP code units, filled on first use: 1 no, 2 yes. */
const continuesUnit = new Uint8Array(0x10000)
/** Does the code point at `i` continue the segment before it (a combining mark or a conjoining jamo)? */
const continues = (text: string, i: number): boolean => {
  const c = text.charCodeAt(i)
  // Nothing below U+0300 combines; the common case costs one comparison.
  if (c < 0x300) return false
  if ((c >= 0x1160 && c <= 0x11ff) || (c >= 0xd7b0 && c <= 0xd7ff)) return true
  const cp = text.codePointAt(i)!
  if (cp > 0xffff) return mark.test(String.fromCodePoint(cp))
  let known = continuesUnit[cp]!
  if (known === 0) continuesUnit[cp] = known = mark.test(String.fromCharCode(cp)) ? 2 : 1
  return known === 2
}

/** Steps 1–2 on a short string (`minus`: U+2212 becomes `-`, as in `normalized/1` only). */
const dropAndMap = (s: string, minus = true): string => {
  let out = ""
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i)
    if (!dropped(c)) out += String.fromCharCode(mapped(c, minus))
  }
  return out
}

/** Steps 1–5 on one segment. */
const normalizeSegment = (segment: string): string =>
  dropAndMap(dropAndMap(segment).normalize("NFKC").toLowerCase())

const numberOrModifier = /^[\p{No}\p{Nl}\p{Lm}]$/u
const holdsNumber = /\p{N}/u
const decimalDigit = /^\p{Nd}$/u

/** Code points `normalized/2` never maps (see `normalizedVersion2`): by category, then by block. */
export const keptVerbatim = (cp: number): boolean =>
  cp === 0xaa || cp === 0xba || // ordinal indicators: 1º is not 1o
  (cp >= 0x2070 && cp <= 0x209f) || // superscripts and subscripts (also ⁺ ⁻ ⁿ)
  (cp >= 0x2100 && cp <= 0x218f) || // letterlike symbols and number forms: ℃ K Å Ω ℓ ½ Ⅻ
  (cp >= 0x2460 && cp <= 0x24ff) || (cp >= 0x2776 && cp <= 0x2793) || // enclosed and dingbat digits
  (cp >= 0x3200 && cp <= 0x33ff) || (cp >= 0x1f100 && cp <= 0x1f1ff) || // enclosed CJK, squared units
  numberOrModifier.test(String.fromCodePoint(cp))

/** Steps 1–5 of `normalized/2` on one segment. */
const normalizeSegment2 = (segment: string): string => {
  const cp = segment.codePointAt(0)!
  if (keptVerbatim(cp)) return segment
  const nfkc = dropAndMap(segment, false).normalize("NFKC")
  // A compatibility form that turns into a number (㍘ → 0点) is a number written otherwise: kept.
  if (holdsNumber.test(nfkc) && !decimalDigit.test(String.fromCodePoint(cp))) return segment
  return dropAndMap(nfkc.toLowerCase(), false)
}

/** Results for segments of one BMP code unit, filled on first use (a text repeats its few non-ASCII characters). */
const singleUnit: Array<string | undefined> = []
const singleUnit2: Array<string | undefined> = []
const normalizeUnit = (c: number, version: Version): string => {
  const cache = version === normalizedVersion ? singleUnit : singleUnit2
  let out = cache[c]
  if (out === undefined) {
    const unit = String.fromCharCode(c)
    cache[c] = out = version === normalizedVersion ? normalizeSegment(unit) : normalizeSegment2(unit)
  }
  return out
}

/**
 * The normalised code units and their map back to the raw text, built as `normalize` walks it.
 * The map is a list of runs of normalised code units, not one entry per unit: a "linear" run
 * maps its k-th unit to raw [rawFrom + k, rawFrom + k + 1) (ASCII copied as is), any other run
 * maps every unit to the one raw span [rawFrom, rawTo) (a segment's output, a collapsed space).
 * A run ends where the next begins (`runAt`), the last at the text's end.
 */
class Output {
  capacity = 64
  runAt = new Int32Array(64)
  runFrom = new Int32Array(64)
  runTo = new Int32Array(64) // -1 for a linear run
  runs = 0
  length = 0
  lastWasSpace = false
  /** The normalised code units; normalised output rarely outgrows the raw text, the array doubles when it does. */
  units: Uint16Array

  constructor(rawLength: number) {
    this.units = new Uint16Array(Math.max(16, rawLength + (rawLength >> 4)))
  }

  reserve(count: number): void {
    if (this.length + count > this.units.length) {
      const u = new Uint16Array(Math.max(this.units.length * 2, this.length + count))
      u.set(this.units.subarray(0, this.length))
      this.units = u
    }
  }

  pushRun(at: number, from: number, to: number): void {
    if (this.runs === this.capacity) {
      this.capacity *= 2
      const a = new Int32Array(this.capacity)
      a.set(this.runAt)
      this.runAt = a
      const f = new Int32Array(this.capacity)
      f.set(this.runFrom)
      this.runFrom = f
      const t = new Int32Array(this.capacity)
      t.set(this.runTo)
      this.runTo = t
    }
    this.runAt[this.runs] = at
    this.runFrom[this.runs] = from
    this.runTo[this.runs] = to
    this.runs++
  }

  /** Appends units [length, length + count) mapping one by one to raw [from, from + count). */
  pushLinear(from: number, count: number): void {
    const last = this.runs - 1
    // Continues the previous linear run when both sides are contiguous.
    if (!(last >= 0 && this.runTo[last] === -1 && this.runFrom[last]! + (this.length - this.runAt[last]!) === from)) {
      this.pushRun(this.length, from, -1)
    }
    this.length += count
  }

  /** Appends one unit mapping to raw [from, to). */
  pushUnit(from: number, to: number): void {
    const last = this.runs - 1
    if (last >= 0 && this.runTo[last] !== -1 && this.runFrom[last] === from && this.runTo[last] === to) {
      this.length++ // another unit of the same segment
    } else if (to === from + 1) {
      this.pushLinear(from, 1)
    } else {
      this.pushRun(this.length, from, to)
      this.length++
    }
  }

  /** Makes the last unit (a space) map up to raw `to`: a run of white space is one space. */
  extendLast(to: number): void {
    const last = this.runs - 1
    const count = this.length - this.runAt[last]!
    const from = this.runTo[last] === -1 ? this.runFrom[last]! + count - 1 : this.runFrom[last]!
    if (count === 1) {
      this.runFrom[last] = from
      this.runTo[last] = to
    } else {
      this.pushRun(this.length - 1, from, to)
    }
  }

  /** Appends one normalised code unit from raw [from, to), white space collapsed (step 6). */
  emit(c: number, from: number, to: number): void {
    if (isSpace(c)) {
      if (this.lastWasSpace) {
        this.extendLast(to)
        return
      }
      c = 0x20
      this.lastWasSpace = true
    } else {
      this.lastWasSpace = false
    }
    this.reserve(1)
    this.units[this.length] = c
    this.pushUnit(from, to)
  }
}

/**
 * Copies the run of ASCII at `start` in which every space is a single U+0020: as it is, but for
 * lower casing (NFKC is the identity on ASCII), mapped one to one onto the raw text. Returns where
 * the run ends (an ASCII character followed by a combining mark is left to the mark's segment).
 */
const copyAscii = (out: Output, text: string, start: number): number => {
  const n = text.length
  const spaceBefore = out.lastWasSpace
  out.reserve(n - start)
  const units = out.units
  let lastWasSpace = spaceBefore
  let i = start
  let at = out.length
  let c = 0
  while (i < n) {
    c = text.charCodeAt(i)
    if (c > 0x20) {
      if (c >= 0x80) break
      units[at++] = c >= 0x41 && c <= 0x5a ? c + 0x20 : c
      lastWasSpace = false
    } else if (c === 0x20) {
      if (lastWasSpace) break
      units[at++] = c
      lastWasSpace = true
    } else if (c >= 0x09 && c <= 0x0d) {
      break
    } else {
      units[at++] = c
      lastWasSpace = false
    }
    i++
  }
  // An ASCII character followed by a combining mark belongs to the mark's segment.
  if (i < n && i > start && c >= 0x300 && continues(text, i)) {
    i--
    lastWasSpace = i > start ? text.charCodeAt(i - 1) === 0x20 : spaceBefore
  }
  out.lastWasSpace = lastWasSpace
  if (i > start) out.pushLinear(start, i - start)
  return i
}

/** Where the segment starting at `from` (code unit `c`) ends: its combining marks, at most `maxSegment` units. */
const segmentEnd = (text: string, from: number, c: number): number => {
  const n = text.length
  let i = from + (c >= 0xd800 && c <= 0xdbff && from + 1 < n && (text.charCodeAt(from + 1) & 0xfc00) === 0xdc00 ? 2 : 1)
  while (i < n && continues(text, i)) {
    const width = text.codePointAt(i)! > 0xffff ? 2 : 1
    if (i + width - from > maxSegment) break
    i += width
  }
  return i
}

/** Normalises `text` into `out`; true when it stopped before a segment that would pass `cap` units. */
const normalizeInto = (out: Output, text: string, cap: number, version: Version): boolean => {
  const n = text.length
  let i = 0
  while (i < n) {
    i = copyAscii(out, text, i)
    if (i >= n) break
    const c = text.charCodeAt(i)
    // ASCII not followed by a combining mark: NFKC changes nothing, lower casing is arithmetic.
    if (c < 0x80 && (i + 1 >= n || text.charCodeAt(i + 1) < 0x300)) {
      out.emit(c >= 0x41 && c <= 0x5a ? c + 0x20 : c, i, i + 1)
      i++
      continue
    }
    const from = i
    i = segmentEnd(text, from, c)
    const segment = i === from + 1
      ? normalizeUnit(c, version)
      : version === normalizedVersion
      ? normalizeSegment(text.slice(from, i))
      : normalizeSegment2(text.slice(from, i))
    // ASCII never expands, so only here can the output pass the cap: stop at a segment boundary.
    if (out.length + segment.length > cap) return true
    for (let k = 0; k < segment.length; k++) out.emit(segment.charCodeAt(k), from, i)
  }
  return false
}

/** The run map of a normalised text (`Output`'s). */
interface RunMap {
  readonly runAt: Int32Array
  readonly runFrom: Int32Array
  readonly runTo: Int32Array
  readonly runs: number
  readonly length: number
}

/** The result of `normalize`: the text and the lookups through the run map. */
const normalized = (map: RunMap, text: string, rawLength: number, truncated: boolean): Normalized => {
  const { length, runAt, runFrom, runTo, runs } = map

  /** The run holding normalised unit `index` (0 ≤ index < length). */
  const runOf = (index: number): number => {
    let lo = 0
    let hi = runs - 1
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1
      if (runAt[mid]! <= index) lo = mid
      else hi = mid - 1
    }
    return lo
  }
  const unitStart = (index: number): number => {
    const r = runOf(index)
    return runTo[r] === -1 ? runFrom[r]! + index - runAt[r]! : runFrom[r]!
  }
  const unitEnd = (index: number): number => {
    const r = runOf(index)
    return runTo[r] === -1 ? runFrom[r]! + index - runAt[r]! + 1 : runTo[r]!
  }
  // A negative index counts as 0 (and, with nothing normalised, gives 0, as it always has).
  const rawStart = (index: number) => (index >= length ? rawLength : length === 0 ? 0 : unitStart(Math.max(0, index)))
  return {
    text,
    rawLength,
    truncated,
    rawStart,
    toRaw: (start, end) => {
      const s = Math.max(0, Math.min(start, length))
      const e = Math.max(s, Math.min(end, length))
      if (e === s) {
        const at = s === length ? (length === 0 ? 0 : unitEnd(length - 1)) : unitStart(s)
        return { start: at, end: at }
      }
      return { start: unitStart(s), end: unitEnd(e - 1) }
    }
  }
}

/**
 * The normalisation of `text` (a capture or a snippet) with its offset map. With `maxUnits`, it
 * stops before the segment that would pass that many normalised code units (`truncated`).
 */
export const normalize = (
  text: string,
  maxUnits: number = Number.POSITIVE_INFINITY,
  version: Version = normalizedVersion
): Normalized => {
  const n = text.length
  // Plain ASCII: what the walk below makes of it is the lower-cased text with each \n a U+0020, one
  // unit per unit (a single linear run): a short text (a snippet) by the native functions, a long
  // one through a byte buffer (`plainLong`, which also decides whether it is plain); the same under both versions.
  const plain = n === 0 ? undefined : n < flatFrom ? (isPlain(text) ? text.toLowerCase().replaceAll("\n", " ") : undefined) : plainLong(text)
  if (plain !== undefined) {
    const map = { runAt: Int32Array.of(0), runFrom: Int32Array.of(0), runTo: Int32Array.of(-1), runs: 1, length: n }
    return normalized(map, plain, n, false)
  }
  const out = new Output(n)
  // Never below the raw length: the ASCII fast path (one unit per unit) does not check the cap.
  const truncated = normalizeInto(out, text, Math.max(maxUnits, n), version)
  // A UTF-16LE copy keeps lone surrogates as they are (String.fromCharCode would too; TextDecoder would not).
  return normalized(out, Buffer.from(out.units.buffer, out.units.byteOffset, out.length * 2).toString("utf16le"), n, truncated)
}

/** The normalised text alone (for a snippet, when no map is needed). */
export const normalizeText = (text: string, version: Version = normalizedVersion): string =>
  normalize(text, Number.POSITIVE_INFINITY, version).text

/**
 * A capture's normalisation, bounded by `maxExpansion` (`truncated` past it). Snippets are never
 * cut (a cut snippet could match where the whole one does not): use `normalize` for them.
 */
export const normalizeCapture = (text: string, version: Version = normalizedVersion): Normalized =>
  normalize(text, maxExpansion * text.length + expansionAllowance, version)
