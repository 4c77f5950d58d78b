/**
 * The second half of `normalized/2`: a normalised match is accepted only when the quote and the
 * capture's raw text at the match say the same numbers, signs and units.
 *
 * Both texts are read as a sequence of meaning tokens, and the sequences must be equal:
 * - a **number**: a run of number characters (\p{N}: digits, superscripts, fractions, Roman
 *   numerals, circled digits) with `.` or `,` between digits, and its sign (`+ - − – — ‐ ± ∓ ⁺ ⁻`
 *   and their small and full-width forms) when the sign is not preceded by a letter or a number
 *   (`3–5` is a range, ` −5` a sign). Decimal digits compare by value (`１` = `1`); every other
 *   character, signs included, compares as written (`10⁶` ≠ `106`, `−5` ≠ `-5`, `½` ≠ `1⁄2`);
 * - a **unit**: the word (letters, marks, symbols such as `°` `℃` `%`) right after a number, with
 *   only white space between, every word chained to it by `/`, `·` or `⋅`, and every word so
 *   chained to another even without a number (`MB/s`, `km/h`, `and/or`); compared
 *   after NFKC without case folding (`℃` = `°C`, `MW` ≠ `mW`, `°C` ≠ `°c`);
 * - a **case-sensitive word** anywhere: a word with an upper-case letter after a lower-case one or
 *   a lower-case letter before an upper-case one (`mW`, `kWh`, `GHz`, `pH`, `MiB`), compared the
 *   same way. A word in capitals only or capitalised (`THE`, `The`) is folded as in
 *   `normalized/1`, unless it follows a number.
 *
 * One pass over each text with regular expressions that cannot backtrack (every repetition is
 * delimited by a character class its successor excludes): linear in the lengths.
 *
 * @since 0.5.0
 */

/** The first token where quote and capture differ; `""` stands for a token one side lacks. */
export interface MeaningChange {
  readonly quote: string
  readonly capture: string
}

interface Token {
  readonly kind: "number" | "unit" | "word"
  /** What is compared. */
  readonly key: string
  /** The raw text, shown in a diagnostic. */
  readonly raw: string
}

const signs = "+\\-\u2212\u2013\u2014\u2010\u2011\u2012\u00b1\u2213\u207a\u207b\u208a\u208b\ufe62\ufe63\uff0b\uff0d"
// A number (optional sign, number characters, separators between them) or a word (letters, marks, unit symbols).
const token = new RegExp(
  `([${signs}]?)(\\p{N}+(?:[.,\\uff0c\\uff0e]\\p{N}+)*)|([\\p{L}\\p{So}%\\u2030][\\p{L}\\p{M}\\p{So}%\\u2030]*)`,
  "gu"
)
import { isSpace } from "./Normalize.js"

const alnum = /[\p{L}\p{N}]/u
const ascii = /^[\x00-\x7f]*$/
const nfkc = (s: string) => s.normalize("NFKC")
const decimal = /\p{Nd}/gu
const upper = /\p{Lu}/u
const lower = /\p{Ll}/u

/** A word is case-sensitive when it holds a small letter and a capital after its first letter. */
const caseSensitive = (word: string): boolean => {
  let small = false
  let capital = false
  for (let i = 0; i < word.length; i++) {
    const c = word.charCodeAt(i)
    // The character classes are regular expressions only outside ASCII: tokens are checked by the thousand.
    if (c >= 0x80) return lower.test(word) && upper.test(word.slice(1))
    if (c >= 0x61 && c <= 0x7a) small = true
    else if (i > 0 && c >= 0x41 && c <= 0x5a) capital = true
  }
  return small && capital
}

const isJoin = (c: number) => c === 0x2f || c === 0xb7 || c === 0x22c5
/** Is the code unit at `i` a letter or a number? */
const alnumAt = (text: string, i: number): boolean => {
  const c = text.charCodeAt(i)
  if (c < 0x80) return (c >= 0x30 && c <= 0x39) || ((c | 0x20) >= 0x61 && (c | 0x20) <= 0x7a)
  return alnum.test(text[i]!)
}
/** Exactly one joining character (`/`, `·`, `⋅`) between `from` and `to`, or (`spaces`) only white space. */
const joins = (text: string, from: number, to: number, spaces: boolean): boolean => {
  if (to - from === 1 && isJoin(text.charCodeAt(from))) return true
  if (!spaces) return to === from
  for (let i = from; i < to; i++) if (!isSpace(text.charCodeAt(i))) return false
  return true
}

/** White space between a number and its unit, in code units: normalisation collapses a run of it to one space. */
const maxGap = 8
/** Normalisation drops these (soft hyphen, zero-width characters, byte-order mark): so does the comparison. */
const invisible = /[\u00ad\u200b-\u200d\ufeff]/gu

/** The meaning tokens of `text`, in order. */
export const tokens = (raw: string): Array<Token> => {
  const text = raw.replace(invisible, "")
  const out: Array<Token> = []
  // Where the last number or unit ended: a word starting after white space or one `/`, `·`, `⋅` from it is a unit.
  let unitFrom = -2
  // After a number white space may separate the unit; after a unit only a joining character continues it.
  let afterNumber = false
  for (const m of text.matchAll(token)) {
    const at = m.index
    if (m[2] !== undefined) {
      let sign = m[1]!
      // A dash after a letter or a number joins (a range, a compound), it is no sign.
      if (sign !== "" && at > 0 && alnumAt(text, at - 1)) sign = ""
      const digits = ascii.test(m[2]) ? m[2] : m[2].replace(decimal, nfkc).replace(/[\uff0c\uff0e]/gu, nfkc)
      out.push({ kind: "number", key: sign + digits, raw: sign + m[2] })
      unitFrom = at + m[0].length
      afterNumber = true
      continue
    }
    const word = m[3]!
    const end = at + word.length
    // `MB/s`, `km/h`: words joined by a slash or a dot operator are a unit even without a number before them.
    const compound = end + 1 < text.length && isJoin(text.charCodeAt(end)) && alnumAt(text, end + 1)
    const unit = compound || (unitFrom >= 0 && at - unitFrom <= maxGap && joins(text, unitFrom, at, afterNumber))
    afterNumber = false
    if (unit) {
      out.push({ kind: "unit", key: ascii.test(word) ? word : word.normalize("NFKC"), raw: word })
      unitFrom = end
    } else {
      unitFrom = -2
      if (caseSensitive(word)) out.push({ kind: "word", key: ascii.test(word) ? word : word.normalize("NFKC"), raw: word })
    }
  }
  return out
}

/**
 * The first number, sign or unit the quote changes relative to the capture's raw text at its
 * match, or `undefined` when they say the same.
 */
export const meaningChange = (quote: string, capture: string): MeaningChange | undefined => {
  const q = tokens(quote)
  const c = tokens(capture)
  for (let i = 0; i < Math.max(q.length, c.length); i++) {
    const a = q[i]
    const b = c[i]
    if (a === undefined || b === undefined || a.kind !== b.kind || a.key !== b.key) {
      return { quote: a?.raw ?? "", capture: b?.raw ?? "" }
    }
  }
  return undefined
}
