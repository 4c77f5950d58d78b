/**
 * Periods for the number adapter: the operator's expected period (a value or
 * a `*` pattern) and the periods a sentence states. Dates are the drift
 * audit's date tokens (src/audit/Material.ts), read here into months and
 * days; quarters, halves and years with a marker are recognised here. One
 * bounded scan per text: linear in its length.
 *
 * @since 0.3.0
 */
import { type PlacedToken, placedTokens } from "../internal/materialTokens.js"

/**
 * A stretch of one year: `from`..`to` inclusive, as month * 32 + day (a month is day 0..31).
 * `year` undefined: the text did not say which year (`Q3`); in an expected period: any year (`Q3 *`).
 * `fiscal`: a fiscal year, whose months are not calendar months.
 */
export interface Period {
  readonly year: number | undefined
  readonly from: number
  readonly to: number
  readonly fiscal: boolean
}

/** A period found in text, with where it is and how it is written. */
export interface FoundPeriod extends Period {
  readonly text: string
  readonly start: number
  readonly end: number
  /** Written as a comparison base (`up 12% on Q2 2026`, `versus 2025`): not the value's own period. */
  readonly comparison: boolean
}

const monthIndex: Record<string, number> = {
  jan: 1, feb: 2, mar: 3, apr: 4, may: 5, jun: 6, jul: 7, aug: 8, sep: 9, oct: 10, nov: 11, dec: 12
}
const ordinals: Record<string, number> = { first: 1, second: 2, third: 3, fourth: 4, "1st": 1, "2nd": 2, "3rd": 3, "4th": 4 }

const months = (year: number | undefined, first: number, last: number, fiscal = false): Period => ({
  year,
  from: first * 32,
  to: last * 32 + 31,
  fiscal
})
const quarter = (year: number | undefined, q: number) => months(year, 3 * q - 2, 3 * q)
const half = (year: number | undefined, h: number) => months(year, 6 * h - 5, 6 * h)

const fullYear = (digits: string | undefined): number | undefined =>
  digits === undefined ? undefined : digits.length === 2 ? 2000 + Number(digits) : Number(digits)

/**
 * Quarters (`Q3 2026`, `Q3'26`, `3Q26`, `Q3 FY2026`, `third quarter of 2026`), halves (`H1 2026`, `first half
 * of 2026`), fiscal years (`FY2026`, `FY26`) and years after a marker (`in 2026`, `full year 2026`). Each
 * alternative is bounded; no nested unbounded quantifier.
 */
const periodPattern = new RegExp(
  [
    String.raw`\b(?:Q(?<q>[1-4])|(?<q2>[1-4])Q)(?:\s{0,2}(?:FY\s?)?'?(?<qy>\d{4}|\d{2}))?\b`,
    String.raw`|\b(?<qo>first|second|third|fourth|1st|2nd|3rd|4th)\s{1,3}quarter(?:\s{1,3}(?:of\s{1,3})?(?:FY\s?)?(?<qoy>\d{4}))?\b`,
    String.raw`|\b(?:H(?<h>[12])|(?<ho>first|second)\s{1,3}half)(?:\s{1,3}(?:of\s{1,3})?(?:FY\s?)?'?(?<hy>\d{4}|\d{2}))?\b`,
    String.raw`|\bFY\s?'?(?<fy>\d{4}|\d{2})\b`,
    String.raw`|\b(?<ym>in|for|during|year|of)\s{1,3}(?<y>(?:19|20)\d{2})\b(?![.,]\d)`
  ].join(""),
  "giu"
)

/** Words right before a period that make it a comparison base rather than the value's own period. */
const comparisonBefore = /\b(?:on|over|from|than|versus|vs\.?|against|compared\s{1,3}(?:with|to)|since|relative\s{1,3}to)\s{0,3}(?:the\s{1,3})?$/iu

const dateToken = (text: string): Period | undefined => {
  const iso = /^(\d{4})-(\d{2})-(\d{2})$/.exec(text)
  if (iso !== null) return day(Number(iso[1]), Number(iso[2]), Number(iso[3]))
  const numeric = /^(\d{1,2})[/.](\d{1,2})[/.](\d{2,4})$/.exec(text)
  // 03/04/2026 is 3 April or 4 March depending on the writer: a day is not determinable, the month neither.
  if (numeric !== null) return undefined
  const lower = text.toLowerCase()
  const month = /\b(jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)/.exec(lower)?.[1]
  if (month === undefined) return undefined
  const m = monthIndex[month]!
  const year = /\b(\d{4})\b/.exec(lower)?.[1]
  const dayOf = /(?:^|\D)(\d{1,2})(?:st|nd|rd|th)?(?!\d)/.exec(lower.replace(/\b\d{4}\b/, ""))?.[1]
  return dayOf === undefined ? months(fullYear(year), m, m) : day(fullYear(year), m, Number(dayOf))
}

const day = (year: number | undefined, m: number, d: number): Period | undefined =>
  m >= 1 && m <= 12 && d >= 1 && d <= 31 ? { year, from: m * 32 + d, to: m * 32 + d, fiscal: false } : undefined

const fromGroups = (g: Record<string, string | undefined>): Period | undefined => {
  if (g["q"] !== undefined || g["q2"] !== undefined) return quarter(fullYear(g["qy"]), Number(g["q"] ?? g["q2"]))
  if (g["qo"] !== undefined) return quarter(fullYear(g["qoy"]), ordinals[g["qo"].toLowerCase()]!)
  if (g["h"] !== undefined || g["ho"] !== undefined) {
    return half(fullYear(g["hy"]), g["h"] !== undefined ? Number(g["h"]) : g["ho"]!.toLowerCase() === "first" ? 1 : 2)
  }
  if (g["fy"] !== undefined) return months(fullYear(g["fy"]), 1, 12, true)
  if (g["y"] !== undefined) return months(Number(g["y"]), 1, 12)
  return undefined
}

/** Every period `text` states, in order: quarters, halves and years found here, and the audit's dates. */
export const periodsIn = (text: string, scanned: ReadonlyArray<PlacedToken> = placedTokens(text)): ReadonlyArray<FoundPeriod> => {
  const found: Array<FoundPeriod> = []
  const isComparison = (start: number) => comparisonBefore.test(text.slice(Math.max(0, start - 24), start))
  for (const match of text.matchAll(periodPattern)) {
    const period = fromGroups(match.groups!)
    if (period === undefined) continue
    // A year after a marker word: the period is the year alone, not the marker.
    const offset = match.groups!["ym"] === undefined ? 0 : match[0].length - match.groups!["y"]!.length
    const start = match.index + offset
    found.push({ ...period, text: match[0].slice(offset), start, end: match.index + match[0].length, comparison: isComparison(start) })
  }
  for (const token of scanned) {
    if (token.kind !== "dates") continue
    const period = dateToken(token.text)
    if (period === undefined) continue
    found.push({ ...period, text: token.text, start: token.at, end: token.at + token.text.length, comparison: isComparison(token.at) })
  }
  return found.sort((a, b) => a.start - b.start)
}

/**
 * The operator's period: one value, or a pattern with `*` for the year (`Q3 *`) or the quarter (`Q* 2026`,
 * read as the year). `undefined` when it is not in the grammar (the catalogue's decoder reports that).
 */
export const parseExpected = (written: string): Period | undefined => {
  const text = written.trim()
  const anyYear = /^(.*\S)\s+\*$/.exec(text)
  if (anyYear !== null) {
    const inner = parseExpected(`${anyYear[1]} 2000`)
    return inner === undefined || inner.fiscal ? undefined : { ...inner, year: undefined }
  }
  const anyQuarter = /^Q\*\s+(\d{4})$/i.exec(text)
  if (anyQuarter !== null) return months(Number(anyQuarter[1]), 1, 12)
  if (/^\d{4}$/.test(text)) return months(Number(text), 1, 12)
  const found = periodsIn(text)
  const only = found.length === 1 ? found[0] : undefined
  // The whole value must be one period, with its year (a pattern says `*` for any year).
  return only !== undefined && only.start === 0 && only.end === text.length && only.year !== undefined
    ? { year: only.year, from: only.from, to: only.to, fiscal: only.fiscal }
    : undefined
}

/** How a found period relates to the expected one. */
export type Relation = "within" | "disjoint" | "undetermined"

export const relate = (expected: Period, found: Period): Relation => {
  // Fiscal and calendar months differ by company: only fiscal against fiscal is comparable.
  if (expected.fiscal !== found.fiscal) return "undetermined"
  const disjointMonths = found.to < expected.from || found.from > expected.to
  if (expected.year !== undefined && found.year !== undefined && expected.year !== found.year) return "disjoint"
  if (disjointMonths) return "disjoint"
  if (expected.year !== undefined && found.year === undefined) return "undetermined"
  return found.from >= expected.from && found.to <= expected.to ? "within" : "undetermined"
}
