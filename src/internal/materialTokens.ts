/**
 * The lexical tokens material-change flags compare (src/audit/Material.ts) and semantic review reads
 * (src/review/): numbers, dates, negations and units, as normalised strings; nothing is parsed into
 * meaning (`thirty` is a word, not a number; `1,000` and `1000` are the same number; `30%` and `30`
 * are not). One left-to-right scan with one regular expression whose alternatives cannot backtrack
 * into each other: linear in the text's length.
 */
import type { MaterialKind } from "../audit/Records.js"

const months =
  "Jan(?:uary)?|Feb(?:ruary)?|Mar(?:ch)?|Apr(?:il)?|May|June?|July?|Aug(?:ust)?|Sep(?:t(?:ember)?)?|Oct(?:ober)?|Nov(?:ember)?|Dec(?:ember)?"

/**
 * One token per match, in priority order: dates, then numbers, then words.
 * Each alternative is anchored at the current position and bounded by what it
 * consumes; a failed position is retried one code unit later, so the scan is
 * linear (no alternative nests an unbounded quantifier inside another).
 */
const tokenPattern = new RegExp(
  [
    // ISO 8601 dates (2026-01-31), numeric dates (31/01/2026, 1.2.26).
    String.raw`(?<date>\b\d{4}-\d{2}-\d{2}\b|\b\d{1,2}[/.]\d{1,2}[/.]\d{2,4}\b`,
    // Month names with a day and/or a year: January 31, 2026 · Jan. 31 · 31 January 2026 · January 2026.
    String.raw`|\b(?:${months})\.?\s{1,3}\d{1,2}(?:st|nd|rd|th)?\b(?:,?\s{1,3}\d{4}\b)?`,
    String.raw`|\b\d{1,2}(?:st|nd|rd|th)?\s{1,3}(?:${months})\b\.?(?:,?\s{1,3}\d{4}\b)?`,
    String.raw`|\b(?:${months})\s{1,3}\d{4}\b)`,
    // Numbers: an optional minus sign (not after a letter or digit: `3-5` is a range), an optional currency
    // sign, thousands groups (comma, thin or no-break space) or plain digits, decimals, an optional percent sign.
    String.raw`|(?<number>(?:(?<![\p{L}\p{N}])[-\u2212](?=[$€£¥₹\d]))?(?:[$€£¥₹]\s?)?(?:\d{1,3}(?:[,\u202f\u00a0]\d{3})+|\d+)(?:\.\d+)?(?:\s?%)?)`,
    // Words, with inner apostrophes (don't, can’t).
    String.raw`|(?<word>\p{L}+(?:['’]\p{L}+)*)`
  ].join(""),
  "gu"
)

/** Words that negate or except, compared lower-cased with ’ read as '. Any word ending in n't counts too. */
const negations = new Set([
  "no",
  "not",
  "never",
  "none",
  "nor",
  "neither",
  "nothing",
  "nobody",
  "nowhere",
  "cannot",
  "without",
  "except",
  "excepting",
  "excluding",
  "unless",
  "prohibited",
  "forbidden"
])

/** Unit words counted when they directly follow a number (`30 days`, `5kg`, `2 business days`). */
const units = new Set([
  // time
  "ms", "s", "sec", "secs", "second", "seconds", "min", "mins", "minute", "minutes", "h", "hr", "hrs", "hour", "hours",
  "day", "days", "week", "weeks", "month", "months", "year", "years",
  // length, area, volume
  "mm", "cm", "m", "km", "in", "inch", "inches", "ft", "foot", "feet", "mi", "mile", "miles", "yd", "yard", "yards",
  "ml", "l", "litre", "litres", "liter", "liters", "gallon", "gallons",
  // mass
  "mg", "g", "kg", "t", "tonne", "tonnes", "ton", "tons", "lb", "lbs", "oz", "pound", "pounds",
  // data
  "b", "kb", "mb", "gb", "tb", "kib", "mib", "gib", "tib", "byte", "bytes",
  // currency codes and words
  "usd", "eur", "gbp", "jpy", "chf", "dollar", "dollars", "euro", "euros", "cent", "cents",
  // other
  "percent", "per", "times", "items", "requests", "users", "employees", "people", "pages", "characters"
])

/** Words that may stand between a number and its unit (`30 calendar days`). */
const unitQualifiers = new Set(["business", "calendar", "working", "consecutive", "full"])

export interface Token {
  readonly kind: MaterialKind
  /** As written. */
  readonly text: string
  /** What is compared. */
  readonly key: string
}

// U+2212 MINUS SIGN and the hyphen-minus are one sign.
const numberKey = (s: string) => s.replace(/[,\u202f\u00a0\s]/gu, "").replace(/\u2212/gu, "-")

const lower = (s: string) => s.toLowerCase().replace(/’/gu, "'")

/** A token with where it starts in the scanned text (UTF-16 code units): what semantic review (src/review/) reads. */
export interface PlacedToken extends Token {
  readonly at: number
}

/** The numbers, dates, negations and units of `text`, in order. Linear in its length. */
export const tokens = (text: string): ReadonlyArray<Token> => scan(text, false)

/** `tokens`, each with where it starts. */
export const placedTokens = (text: string): ReadonlyArray<PlacedToken> => scan(text, true) as ReadonlyArray<PlacedToken>

const scan = (text: string, placed: boolean): ReadonlyArray<Token> => {
  const out: Array<Token> = []
  // The audit compares tokens as they are; review needs where each starts.
  const push = (token: Token, at: number) => out.push(placed ? { ...token, at } as PlacedToken : token)
  // The number just seen (and where it ended), to attach a following unit to it.
  let lastNumberEnd = -1
  let qualifier: string | undefined
  for (const match of text.matchAll(tokenPattern)) {
    const groups = match.groups!
    const at = match.index
    if (groups["date"] !== undefined) {
      push({ kind: "dates", text: groups["date"], key: lower(groups["date"]).replace(/\s+/gu, " ") }, at)
      lastNumberEnd = -1
    } else if (groups["number"] !== undefined) {
      // The pattern starts at a sign or digit and ends at a digit or %: nothing to trim.
      const written = groups["number"]
      push({ kind: "numbers", text: written, key: numberKey(written) }, at)
      lastNumberEnd = at + groups["number"].length
      qualifier = undefined
    } else {
      const word = groups["word"]!
      const key = lower(word)
      // A unit only right after a number: at most a few spaces or a hyphen between them.
      const gap = lastNumberEnd < 0 ? undefined : text.slice(lastNumberEnd, at)
      const adjacent = gap !== undefined && gap.length <= 3 && /^[\s-]*$/u.test(gap)
      if (adjacent && unitQualifiers.has(key) && qualifier === undefined) {
        qualifier = key
        lastNumberEnd = at + word.length
      } else if (adjacent && units.has(key)) {
        const unit = qualifier === undefined ? key : `${qualifier} ${key}`
        push({ kind: "units", text: qualifier === undefined ? word : `${qualifier} ${word}`, key: unit }, at)
        lastNumberEnd = -1
        qualifier = undefined
      } else {
        lastNumberEnd = -1
        qualifier = undefined
      }
      if (negations.has(key) || key.endsWith("n't")) push({ kind: "negation", text: word, key }, at)
    }
  }
  return out
}
