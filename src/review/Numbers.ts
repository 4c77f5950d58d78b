/**
 * The structured-number adapter: for each verified citation, does the excerpt
 * (read with its sentence in the capture) state a value of the label's metric,
 * period, value kind and unit or currency, as the catalogue defines them?
 * `consistent`, `mismatch` with the tokens found on each side, or
 * `needs_review` with why: never a guess.
 *
 * It reads verification results only (the evidence's span, and the capture
 * text the verification already holds): no capture is read or hashed again.
 * Each fact costs one bounded window (its sentence, at most `windowLimit`
 * code units either side of the excerpt): linear in the window.
 *
 * @since 0.3.0
 */
import type { CaptureRecord, VerifiedEntry } from "../Domain.js"
import { isVerifiedCitation } from "../Domain.js"
import { type Catalogue, type CompiledLabel, fold, maxTermWords, termKey, wordPattern } from "./Catalogue.js"
import { placedTokens } from "../internal/materialTokens.js"
import * as Period from "./Period.js"
import { fitsKind, type Quantity, quantitiesIn } from "./Quantity.js"
import {
  adapterId,
  type FactReview,
  type FoundTokens,
  type Mismatch,
  type NumberReview,
  type NumbersPolicy
} from "./Records.js"
import { ownedSlice } from "../internal/ownedSlice.js"

/** Code units read around an excerpt to find its sentence, on each side. */
export const windowLimit = 320
/** Longest excerpt the adapter reads (code units); a longer one is `needs_review`. */
export const maxExcerpt = 1_000

interface Window {
  readonly text: string
  /** The excerpt's start and end within `text`. */
  readonly from: number
  readonly to: number
}

const isSpace = (c: string | undefined) => c !== undefined && /\s/u.test(c)

/** The excerpt's sentence: back to a line break or `. ` and on to the next one, at most `windowLimit` each side. */
export const sentenceWindow = (text: string, span: { readonly start: number; readonly end: number }): Window => {
  let start = span.start
  const min = Math.max(0, span.start - windowLimit)
  while (start > min) {
    const prev = text[start - 1]
    if (prev === "\n" || (isSpace(prev) && /[.!?]/u.test(text[start - 2] ?? ""))) break
    start--
  }
  let end = span.end
  const max = Math.min(text.length, span.end + windowLimit)
  while (end < max) {
    const c = text[end]
    if (c === "\n") break
    if (/[.!?]/u.test(c!) && (end + 1 === text.length || isSpace(text[end + 1]))) break
    end++
  }
  // A copy: every term, value and mismatch found in the window is a slice of it, kept in the review.
  return { text: ownedSlice(text, start, end), from: span.start - start, to: span.end - start }
}

interface Hit {
  readonly text: string
  readonly start: number
  readonly end: number
}

/** Metric terms in the window: longest catalogue term first at each word, left to right. */
const termHits = (catalogue: Catalogue, text: string): Array<Hit & { readonly labels: ReadonlySet<string> }> => {
  const words = [...text.matchAll(wordPattern)].map((m) => ({ key: fold(m[0]), start: m.index, end: m.index + m[0].length }))
  const hits: Array<Hit & { readonly labels: ReadonlySet<string> }> = []
  for (let i = 0; i < words.length;) {
    let matched = 0
    for (let n = Math.min(maxTermWords, words.length - i); n >= 1 && matched === 0; n--) {
      const labels = catalogue.terms.get(words.slice(i, i + n).map((w) => w.key).join(" "))
      if (labels !== undefined) {
        const start = words[i]!.start
        const end = words[i + n - 1]!.end
        hits.push({ text: text.slice(start, end), start, end, labels })
        matched = n
      }
    }
    i += matched === 0 ? 1 : matched
  }
  return hits
}

/**
 * The hit that governs a value at `at`: among those inside the excerpt if any, else in the sentence; the
 * nearest before the value, else the nearest after it.
 */
const governing = <H extends Hit>(hits: ReadonlyArray<H>, window: Window, at: number): H | undefined => {
  const inside = hits.filter((h) => h.start >= window.from && h.end <= window.to)
  const pool = inside.length > 0 ? inside : hits
  let before: H | undefined
  let after: H | undefined
  for (const h of pool) {
    if (h.end <= at) before = h
    else if (after === undefined && h.start >= at) after = h
  }
  return before ?? after ?? pool[0]
}

/** A catalogued missing-value marker standing alone in the excerpt (`n/a`, `—`, `not reported`). */
const missingMarker = (label: CompiledLabel, excerpt: string): string | undefined => {
  const lower = excerpt.toLowerCase()
  for (const marker of label.missing) {
    const m = marker.toLowerCase()
    for (let at = lower.indexOf(m); at >= 0; at = lower.indexOf(m, at + 1)) {
      const before = lower[at - 1]
      const after = lower[at + m.length]
      const alone = (c: string | undefined) => c === undefined || !/[\p{L}\p{N}]/u.test(c)
      if (alone(before) && alone(after)) return excerpt.slice(at, at + m.length)
    }
  }
  return undefined
}

const unitWords = (q: Quantity): ReadonlyArray<string> => {
  if (q.after === undefined) return []
  const words = q.after.split(/[\s-]+/u)
  return words.length > 1 ? [termKey(q.after), fold(words[0]!)] : [fold(words[0]!)]
}

type Unit = { readonly ok: true } | { readonly mismatch: Mismatch } | { readonly review: string }

/** The unit or currency check of a value of the right kind. */
const checkUnit = (label: CompiledLabel, catalogue: Catalogue, q: Quantity): Unit => {
  const spec = label.spec
  if (spec.valueKind === "currency-amount") {
    if (spec.currency === undefined) return { ok: true }
    return q.currencies.includes(spec.currency)
      ? { ok: true }
      : { mismatch: { aspect: "unit", expected: [spec.currency], found: [q.currencyText ?? ""] } }
  }
  if (spec.valueKind === "percent" || label.units.size === 0) return { ok: true }
  const words = unitWords(q)
  if (words.some((w) => label.units.has(w))) return { ok: true }
  const other = words.find((w) => catalogue.units.has(w))
  if (other !== undefined || q.currencies.length > 0) {
    return { mismatch: { aspect: "unit", expected: spec.units ?? [], found: [q.currencyText ?? q.after ?? ""] } }
  }
  return { review: `no unit of the label stated next to the value ${JSON.stringify(q.text)}` }
}

const unitFits = (label: CompiledLabel, catalogue: Catalogue, q: Quantity) => "ok" in checkUnit(label, catalogue, q)

/** The value the fact cites: of the expected kind and unit if the excerpt has one, else of the kind, else the first. */
const chooseValue = (label: CompiledLabel, catalogue: Catalogue, values: ReadonlyArray<Quantity>) =>
  values.find((q) => fitsKind(label.spec.valueKind, q) && unitFits(label, catalogue, q)) ??
    values.find((q) => fitsKind(label.spec.valueKind, q)) ?? values[0]

/** The adapter's outcome for one verified citation, from its capture text and span. */
export const reviewFact = (
  catalogue: Catalogue,
  fact: { readonly index: number; readonly label: string },
  text: string,
  span: { readonly start: number; readonly end: number }
): FactReview => {
  const found: { metric: Array<string>; period: Array<string>; value: Array<string>; unit: Array<string> } = {
    metric: [],
    period: [],
    value: [],
    unit: []
  }
  const base = { index: fact.index, label: fact.label, found: found as FoundTokens }
  const label = catalogue.labels.get(fact.label)
  if (label === undefined) return { outcome: "needs_review", ...base, reasons: ["the label is not in the review catalogue"] }
  if (span.end - span.start > maxExcerpt) {
    return { outcome: "needs_review", ...base, reasons: [`the excerpt is longer than ${maxExcerpt} characters`] }
  }
  const window = sentenceWindow(text, span)
  const excerpt = window.text.slice(window.from, window.to)
  // One scan of the window by the audit's tokeniser, shared by periods and values.
  const scanned = placedTokens(window.text)
  const periods = Period.periodsIn(window.text, scanned)
  const values = quantitiesIn(window.text, periods, scanned).filter((q) => q.start < window.to && q.end > window.from)
  const mismatches: Array<Mismatch> = []
  const reasons: Array<string> = []
  const value = chooseValue(label, catalogue, values)
  const at = value?.start ?? window.from

  const hits = termHits(catalogue, window.text)
  const metric = governing(hits, window, at)
  if (metric === undefined) reasons.push("no metric term of the catalogue in the sentence")
  else {
    found.metric.push(metric.text)
    if (!metric.labels.has(fact.label)) {
      mismatches.push({ aspect: "metric", expected: [...label.spec.metric.terms], found: [metric.text] })
    }
  }

  if (label.spec.period !== undefined && label.period !== undefined) {
    const period = governing(periods.filter((p) => !p.comparison), window, at)
    if (period === undefined) reasons.push("no period stated in the sentence")
    else {
      found.period.push(period.text)
      const relation = Period.relate(label.period, period)
      if (relation === "disjoint") mismatches.push({ aspect: "period", expected: [label.spec.period], found: [period.text] })
      else if (relation === "undetermined") {
        reasons.push(`the period ${JSON.stringify(period.text)} is not comparable with ${JSON.stringify(label.spec.period)}`)
      }
    }
  }

  if (value === undefined) {
    const marker = missingMarker(label, excerpt)
    if (marker !== undefined) {
      found.value.push(marker)
      mismatches.push({ aspect: "value-kind", expected: [label.spec.valueKind], found: [marker], missing: true })
    } else reasons.push("the excerpt states no number")
  } else {
    found.value.push(value.text)
    if (!fitsKind(label.spec.valueKind, value)) {
      mismatches.push({ aspect: "value-kind", expected: [label.spec.valueKind], found: [value.text] })
    } else {
      const unit = checkUnit(label, catalogue, value)
      const stated = value.currencyText ?? (label.units.size > 0 ? value.after : undefined)
      if (stated !== undefined) found.unit.push(stated)
      if ("mismatch" in unit) mismatches.push(unit.mismatch)
      else if ("review" in unit) reasons.push(unit.review)
    }
  }
  if (mismatches.length > 0) return { outcome: "mismatch", ...base, mismatches: [mismatches[0]!, ...mismatches.slice(1)] }
  if (reasons.length > 0) return { outcome: "needs_review", ...base, reasons: [reasons[0]!, ...reasons.slice(1)] }
  return { outcome: "consistent", ...base }
}

/**
 * The adapter over a verification's accepted entries: one outcome per verified citation, in report order,
 * reading each capture's text from the records the verification already holds.
 */
export const review = (
  catalogue: Catalogue,
  policy: Exclude<NumbersPolicy, "off">,
  entries: ReadonlyArray<VerifiedEntry>,
  captures: ReadonlyMap<string, CaptureRecord>
): NumberReview => {
  const facts: Array<FactReview> = []
  for (const entry of entries) {
    if (!isVerifiedCitation(entry)) continue
    const record = captures.get(entry.fact.source)
    if (record === undefined) {
      facts.push({
        outcome: "needs_review",
        index: entry.index,
        label: entry.fact.label,
        found: { metric: [], period: [], value: [], unit: [] },
        reasons: ["the capture text is not in the verification result"]
      })
    } else facts.push(reviewFact(catalogue, { index: entry.index, label: entry.fact.label }, record.text, entry.evidence.span))
  }
  return { adapter: adapterId, policy, facts }
}
