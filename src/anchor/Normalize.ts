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
 *    U+FE58 → dashes): so normalising twice changes nothing;
 * 6. every run of white space (Unicode White_Space, after the steps above, across
 *    segment boundaries) becomes one U+0020. Nothing is trimmed.
 *
 * Segments: a code point with the combining marks (\p{M}) and conjoining
 * Hangul jamo that follow it, at most `maxSegment` code units. NFKC and lower
 * casing can change lengths (ﬁ → fi, İ → i̇, é as e + U+0301 → é); each segment
 * is normalised on its own, so every normalised code unit maps to exactly one
 * raw segment and a raw span from the map never splits a surrogate pair or a
 * base from its marks. Cost and memory are linear: one pass, each segment
 * bounded, three growable typed arrays (8 bytes of map per normalised code
 * unit). ASCII runs take a fast path that calls no Unicode function.
 *
 * @since 0.2.0
 */

/** The version label of this normalisation: the `method` a hit under it reports. */
export const normalizedVersion = "normalized/1" as const
export type NormalizedVersion = typeof normalizedVersion

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
const mapped = (c: number): number =>
  (c >= 0x201c && c <= 0x201f) || c === 0xab || c === 0xbb
    ? 0x22
    : c >= 0x2018 && c <= 0x201b
    ? 0x27
    : (c >= 0x2010 && c <= 0x2015) || c === 0x2212
    ? 0x2d
    : c

/** Unicode White_Space (all in the BMP; the test pins the list against `\p{White_Space}`). */
export const isSpace = (c: number): boolean =>
  c < 0x80
    ? c === 0x20 || (c >= 0x09 && c <= 0x0d)
    : c === 0x85 || c === 0xa0 || c === 0x1680 || (c >= 0x2000 && c <= 0x200a) || c === 0x2028 || c === 0x2029 ||
      c === 0x202f || c === 0x205f || c === 0x3000

const mark = /^[\p{M}]$/u
/** Does the code point at `i` continue the segment before it (a combining mark or a conjoining jamo)? */
const continues = (text: string, i: number): boolean => {
  const c = text.charCodeAt(i)
  // Nothing below U+0300 combines; the common case costs one comparison.
  if (c < 0x300) return false
  if ((c >= 0x1160 && c <= 0x11ff) || (c >= 0xd7b0 && c <= 0xd7ff)) return true
  const cp = text.codePointAt(i)!
  return mark.test(String.fromCodePoint(cp))
}

/** Steps 1–2 on a short string. */
const dropAndMap = (s: string): string => {
  let out = ""
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i)
    if (!dropped(c)) out += String.fromCharCode(mapped(c))
  }
  return out
}

/** Steps 1–5 on one segment. */
const normalizeSegment = (segment: string): string =>
  dropAndMap(dropAndMap(segment).normalize("NFKC").toLowerCase())

/** Results for segments of one BMP code unit, filled on first use (a text repeats its few non-ASCII characters). */
const singleUnit: Array<string | undefined> = []
const normalizeUnit = (c: number): string => {
  let out = singleUnit[c]
  if (out === undefined) singleUnit[c] = out = normalizeSegment(String.fromCharCode(c))
  return out
}

/**
 * The normalisation of `text` (a capture or a snippet) with its offset map. With `maxUnits`, it
 * stops before the segment that would pass that many normalised code units (`truncated`).
 */
export const normalize = (text: string, maxUnits: number = Number.POSITIVE_INFINITY): Normalized => {
  const n = text.length
  // Never below the raw length: the ASCII fast path (one unit per unit) does not check the cap.
  const cap = Math.max(maxUnits, n)
  let truncated = false
  // Normalised output rarely outgrows the raw text; the arrays double when it does.
  let capacity = Math.max(16, n + (n >> 4))
  let units = new Uint16Array(capacity)
  let starts = new Int32Array(capacity)
  let ends = new Int32Array(capacity)
  let length = 0
  let lastWasSpace = false

  const grow = () => {
    capacity *= 2
    const u = new Uint16Array(capacity)
    u.set(units)
    units = u
    const s = new Int32Array(capacity)
    s.set(starts)
    starts = s
    const e = new Int32Array(capacity)
    e.set(ends)
    ends = e
  }

  const emit = (c: number, from: number, to: number) => {
    if (isSpace(c)) {
      if (lastWasSpace) {
        // One space for the whole run: it maps to the run's raw extent.
        ends[length - 1] = to
        return
      }
      c = 0x20
      lastWasSpace = true
    } else {
      lastWasSpace = false
    }
    if (length === capacity) grow()
    units[length] = c
    starts[length] = from
    ends[length] = to
    length++
  }

  let i = 0
  while (i < n) {
    const c = text.charCodeAt(i)
    // ASCII not followed by a combining mark: NFKC changes nothing, lower casing is arithmetic.
    if (c < 0x80 && (i + 1 >= n || text.charCodeAt(i + 1) < 0x300)) {
      if (c > 0x20 && length < capacity) {
        // The hot path, inlined: a visible ASCII character.
        units[length] = c >= 0x41 && c <= 0x5a ? c + 0x20 : c
        starts[length] = i
        ends[length] = i + 1
        length++
        lastWasSpace = false
      } else {
        emit(c >= 0x41 && c <= 0x5a ? c + 0x20 : c, i, i + 1)
      }
      i++
      continue
    }
    const from = i
    i += c >= 0xd800 && c <= 0xdbff && i + 1 < n && (text.charCodeAt(i + 1) & 0xfc00) === 0xdc00 ? 2 : 1
    while (i < n && continues(text, i)) {
      const width = text.codePointAt(i)! > 0xffff ? 2 : 1
      if (i + width - from > maxSegment) break
      i += width
    }
    const out = i === from + 1 ? normalizeUnit(c) : normalizeSegment(text.slice(from, i))
    // ASCII never expands, so only here can the output pass the cap: stop at a segment boundary.
    if (length + out.length > cap) {
      truncated = true
      break
    }
    for (let k = 0; k < out.length; k++) emit(out.charCodeAt(k), from, i)
  }

  // fromCharCode keeps lone surrogates as they are (a UTF-16 decoder would replace them).
  let normalized = ""
  for (let k = 0; k < length; k += 8192) {
    normalized += String.fromCharCode.apply(null, units.subarray(k, Math.min(length, k + 8192)) as unknown as Array<number>)
  }
  const rawStart = (index: number) => (index >= length ? n : starts[Math.max(0, index)]!)
  return {
    text: normalized,
    rawLength: n,
    truncated,
    rawStart,
    toRaw: (start, end) => {
      const s = Math.max(0, Math.min(start, length))
      const e = Math.max(s, Math.min(end, length))
      if (e === s) {
        const at = s === length ? (length === 0 ? 0 : ends[length - 1]!) : starts[s]!
        return { start: at, end: at }
      }
      return { start: starts[s]!, end: ends[e - 1]! }
    }
  }
}

/**
 * A capture's normalisation, bounded by `maxExpansion` (`truncated` past it). Snippets are never
 * cut (a cut snippet could match where the whole one does not): use `normalize` for them.
 */
export const normalizeCapture = (text: string): Normalized =>
  normalize(text, maxExpansion * text.length + expansionAllowance)

/** The normalised text alone (for a snippet, when no map is needed). */
export const normalizeText = (text: string): string => normalize(text).text
