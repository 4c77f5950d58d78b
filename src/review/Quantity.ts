/**
 * Values stated in text, for the number adapter: the drift audit's number
 * tokens (sign, currency sign, thousands separators, decimals, percent; see
 * src/audit/Material.ts), read here with what stands right next to them: a
 * scale word (`million`, `bn`), a currency code or word, `percent`, and the
 * unit word that follows. Linear in the text's length.
 *
 * @since 0.3.0
 */
import { type PlacedToken, placedTokens } from "../internal/materialTokens.js"
import type { Currency, ValueKind } from "./Records.js"

export interface Quantity {
  /** As written, with its currency, scale and percent words. */
  readonly text: string
  readonly start: number
  readonly end: number
  /** The number with its sign and scale applied (`$4.2 million` is 4200000). */
  readonly value: number
  /** Whether the value is a whole number once scaled (`1.1 million` is; `3.4` is not), decided on the digits. */
  readonly integral: boolean
  readonly percent: boolean
  /** The currencies the writing is consistent with (`$` alone: any dollar); empty when none is stated. */
  readonly currencies: ReadonlyArray<Currency>
  /** The currency as written (`$`, `EUR`, `euros`), when stated. */
  readonly currencyText: string | undefined
  /** The word(s) right after the number (and its scale), lower-case, as a unit candidate: `units`, `orders`. */
  readonly after: string | undefined
}

const symbols: Record<string, ReadonlyArray<Currency>> = {
  "$": ["USD", "CAD", "AUD"],
  "us$": ["USD"],
  "c$": ["CAD"],
  "a$": ["AUD"],
  "€": ["EUR"],
  "£": ["GBP"],
  "¥": ["JPY", "CNY"],
  "₹": ["INR"]
}
const words: Record<string, ReadonlyArray<Currency>> = {
  usd: ["USD"], eur: ["EUR"], gbp: ["GBP"], jpy: ["JPY"], chf: ["CHF"], cad: ["CAD"], aud: ["AUD"], inr: ["INR"], cny: ["CNY"],
  dollar: ["USD", "CAD", "AUD"], dollars: ["USD", "CAD", "AUD"], euro: ["EUR"], euros: ["EUR"],
  pound: ["GBP"], pounds: ["GBP"], yen: ["JPY"], francs: ["CHF"], rupees: ["INR"], yuan: ["CNY"], renminbi: ["CNY"]
}
const scales: Record<string, number> = {
  thousand: 1e3, k: 1e3, million: 1e6, millions: 1e6, m: 1e6, mn: 1e6, mln: 1e6, billion: 1e9, billions: 1e9, bn: 1e9, b: 1e9,
  trillion: 1e12, tn: 1e12
}

/** At most this many code units after a number are read for its scale, currency and unit words. */
const lookahead = 48

const codeBefore = /(?<![\p{L}\p{N}])(?<code>USD|EUR|GBP|JPY|CHF|CAD|AUD|INR|CNY)\s?$/u
// `US$4.2m`, `C$3`, `A$3`: the audit's token starts at the `$`; its prefix letters stand right before it.
const dollarPrefix = /(?<![\p{L}\p{N}])(?<prefix>US|C|A)$/u

const readAfter = (text: string, end: number) => {
  const rest = text.slice(end, end + lookahead)
  // A scale word (attached or spaced), then `percent`/`per cent`, then a currency word or code, then a unit word.
  const m = /^(?<scale>\s?(?:thousand|millions?|billions?|trillion|mn|mln|bn|tn|[kmb])\b)?(?<pct>\s(?:percent|per\s{1,2}cent)\b)?(?:\s(?<cur>usd|eur|gbp|jpy|chf|cad|aud|inr|cny|dollars?|euros?|pounds?|yen|francs|rupees|yuan|renminbi)\b)?(?:\s{1,2}(?<unit>\p{L}+(?:[\s-]\p{L}+)?))?/iu.exec(rest)!
  return m
}

/** The values `text` states, in order. Numbers inside `skip` ranges (periods and dates) are not values. */
export const quantitiesIn = (
  text: string,
  skip: ReadonlyArray<{ readonly start: number; readonly end: number }>,
  scanned: ReadonlyArray<PlacedToken> = placedTokens(text)
): ReadonlyArray<Quantity> => {
  const out: Array<Quantity> = []
  // `skip` is in text order (periods are): one pointer walks it beside the tokens, so the check is linear.
  let next = 0
  for (const token of scanned) {
    if (token.kind !== "numbers") continue
    const end0 = token.at + token.text.length
    while (next < skip.length && skip[next]!.end <= token.at) next++
    if (skip.slice(next, next + 2).some((s) => token.at < s.end && end0 > s.start)) continue
    let written = token.text
    const negative = /^[-\u2212]/u.test(written)
    const symbol = /[$€£¥₹]/u.exec(written)?.[0]
    const percentSign = written.includes("%")
    const digits = written.replace(/[^\d.]/gu, "")
    let value = Number(digits) * (negative ? -1 : 1)
    const after = readAfter(text, end0).groups!
    const lead = text.slice(Math.max(0, token.at - 4), token.at)
    let start = token.at
    let currencies: ReadonlyArray<Currency> = []
    let currencyText: string | undefined
    if (symbol !== undefined) {
      const prefix = symbol === "$" && !negative ? dollarPrefix.exec(lead)?.groups?.["prefix"] : undefined
      currencyText = prefix === undefined ? symbol : `${prefix}$`
      currencies = symbols[currencyText.toLowerCase()]!
      if (prefix !== undefined) start -= prefix.length
    } else {
      const code = codeBefore.exec(lead)
      if (code !== null) {
        currencyText = code.groups!["code"]!
        currencies = words[currencyText.toLowerCase()]!
        start -= code[0].length
      }
    }
    let end = end0
    let unit = after["unit"]?.toLowerCase()
    const scaleWritten = after["scale"]
    const scale = scaleWritten?.trim().toLowerCase()
    const decimals = /\.(\d+)/u.exec(written)?.[1]?.length ?? 0
    let integral = decimals === 0
    // A bare `m`/`b`/`k` is a scale only when attached or after a currency (`4.2m`, `$4.2 m`); else a unit (`12 m`).
    const bare = scale !== undefined && scale.length === 1 && scaleWritten!.startsWith(" ") && currencies.length === 0
    if (scale !== undefined && !bare) {
      value *= scales[scale]!
      end += scaleWritten!.length
      // Whole once scaled when the scale has at least as many zeros as there are decimals (exact, no float rounding).
      integral = decimals <= Math.log10(scales[scale]!)
    } else if (bare) unit = scale
    const percent = percentSign || after["pct"] !== undefined
    if (after["pct"] !== undefined) end += after["pct"].length
    if (after["cur"] !== undefined && currencies.length === 0) {
      currencyText = after["cur"]
      currencies = words[after["cur"].toLowerCase()]!
      end += after["cur"].length + 1
    }
    written = text.slice(start, end)
    out.push({ text: written, start, end, value, integral, percent, currencies, currencyText, after: unit })
  }
  return out
}

/** The value kind a quantity is written as. */
export const kindOf = (q: Quantity): ValueKind =>
  q.percent ? "percent" : q.currencies.length > 0 ? "currency-amount" : q.integral ? "integer" : "decimal"

/** Whether a quantity is a value of the expected kind: integers are decimals too; a percent or an amount is neither. */
export const fitsKind = (expected: ValueKind, q: Quantity): boolean => {
  const kind = kindOf(q)
  return expected === kind || (expected === "decimal" && kind === "integer")
}
