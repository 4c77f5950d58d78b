/**
 * Verification step 5, evidence: each matched citation's evidence (span in
 * code units, code points and UTF-8 bytes, page or section, selectors), and
 * each absent one's `SnippetAbsent` with its repair diagnostic.
 *
 * @since 0.3.0
 */
import * as Either from "effect/Either"
import { captureFormat, type CaptureRecord, type Span, type TextPositionSelector, type TextQuoteSelector } from "../Domain.js"
import { type NearestPassage, SnippetAbsent } from "../Errors.js"
import * as Diagnostic from "../anchor/Diagnostic.js"
import { meaningChange, type MeaningChange } from "../anchor/MeaningGuard.js"
import { type Checkpoints, spanOffsets, type SpanOffsets } from "../anchor/Offsets.js"
import { contextCodePoints, selectors, textPosition } from "../anchor/Selectors.js"
import { locate } from "../internal/anchors.js"
import * as Boundaries from "./Boundaries.js"
import type { CaptureMatches, Matched } from "./Match.js"
import type { PolicyShape } from "./Policy.js"
import type { CitationInput, CitationResult, Failures } from "./Records.js"
import { hasContext } from "./Search.js"
import * as Visibility from "./Visibility.js"
import { ownedSlice } from "../internal/ownedSlice.js"

/**
 * Under any policy: when the nearest passage is the same text up to `normalized/1` (a diagnostic), the
 * number, sign or unit the quote changed in it, so that a repair does not call a meaning change typography.
 */
const changeAt = (text: string, snippet: string, nearest: NearestPassage | undefined): MeaningChange | undefined =>
  nearest?.method === "normalized/1" ? meaningChange(snippet, ownedSlice(text, nearest.span.start, nearest.span.end)) : undefined

/** `SnippetAbsent` for each citation found in neither search, with its nearest passage when diagnosed. */
export const absent = (
  record: CaptureRecord,
  citations: ReadonlyArray<CitationInput>,
  indices: ReadonlyArray<number>,
  changedBy: ReadonlyMap<number, MeaningChange>,
  diagnose: Diagnostic.Diagnoser,
  failures: Failures
): void => {
  if (indices.length === 0) return // the common case: nothing to diagnose, no set-up
  // The repair diagnostic (nearest passage) only for a bare snippet: with a prefix or suffix the snippet may occur, out of context.
  // All of this capture's at once, in order: they share one pass over the capture (Diagnostic.Diagnoser.all).
  const bare = indices.filter((i) => !hasContext(citations[i]!))
  const diagnosed = new Map<number, ReturnType<Diagnostic.Diagnose>>()
  if (bare.length > 0) diagnose.all(record, bare.map((i) => citations[i]!.snippet)).forEach((d, k) => diagnosed.set(bare[k]!, d))
  for (const i of indices) {
    const snippet = citations[i]!.snippet
    const nearest: ReturnType<Diagnostic.Diagnose> = diagnosed.get(i) ?? {}
    const changed = changedBy.get(i) ?? changeAt(record.text, snippet, nearest.nearest)
    failures[i]!.push(
      new SnippetAbsent({ source: record.source, captureSha256: record.sha256, snippet, ...nearest, ...(changed === undefined ? {} : { changed }) })
    )
  }
}

/** Longest text checked for being all ASCII before its selectors are made (as `spanOffsets` checks it). */
const asciiCheckUnits = 64 * 1024

/** Whether `text` is all ASCII (its UTF-8 length is its length): one native pass; only for a short text. */
const isShortAscii = (text: string): boolean => text.length <= asciiCheckUnits && Buffer.byteLength(text, "utf8") === text.length

/**
 * `selectors` of a span of an all-ASCII text: every code unit is a code point (no surrogate), so
 * the context is the `contextCodePoints` code units on each side, cut at the ends of the text,
 * without stepping over it one code unit at a time.
 */
const asciiSelectors = (text: string, span: Span, codePoints: Span): readonly [TextQuoteSelector, TextPositionSelector] => {
  const { end, start } = span
  const before = start <= 0 ? start : Math.max(0, start - contextCodePoints)
  const after = end >= text.length ? end : Math.min(text.length, end + contextCodePoints)
  return [
    { type: "TextQuoteSelector", exact: ownedSlice(text, start, end), prefix: ownedSlice(text, before, start), suffix: ownedSlice(text, end, after) },
    textPosition(codePoints)
  ]
}

/**
 * The evidence of a span of a v1 capture, as `verified` and `settleOne` both write it. A v1 capture
 * has no pages, headings or hidden runs: `locate` and `Visibility.mark` add nothing, so the same keys
 * in the same order as the v2 evidence without its spreads (one object literal, one shape).
 */
const v1Evidence = (
  record: CaptureRecord,
  span: Span,
  occurrences: number,
  method: Matched["method"],
  ambiguous: boolean,
  units: SpanOffsets,
  selectorsOf: typeof selectors
): CitationResult =>
  Either.right({
    span,
    occurrences,
    accessedAt: record.accessedAt,
    method,
    ambiguous,
    offsets: units,
    selector: selectorsOf(record.text, span, units.codePoints)
  })

/**
 * Every verified span of this capture in code points and UTF-8 bytes, as evidence: one pass over
 * the text up to the last span, or with the cached capture's `checkpoints` a short scan per span.
 */
export const verified = (
  record: CaptureRecord,
  matched: ReadonlyArray<Matched>,
  results: Pending,
  checkpoints?: Checkpoints
): void => {
  const offsets = spanOffsets(record.text, matched.map((m) => m.span), checkpoints)
  const selectorsOf = isShortAscii(record.text) ? asciiSelectors : selectors
  matched.forEach((m, k) => {
    const units = offsets[k]!
    if (record.format === captureFormat) {
      results[m.i] = v1Evidence(record, m.span, m.occurrences, m.method, m.ambiguous, units, selectorsOf)
      return
    }
    results[m.i] = Either.right({
      span: m.span,
      occurrences: m.occurrences,
      accessedAt: record.accessedAt,
      ...locate(record, m.span),
      method: m.method,
      ambiguous: m.ambiguous,
      offsets: units,
      selector: selectorsOf(record.text, m.span, units.codePoints),
      // Absent for visible text; `visibility` and `hiddenBy` where the span overlaps hidden runs.
      ...Visibility.mark(record, m.span)
    })
  })
}

/**
 * `settle` of a v1 capture whose one citation `i` was found at `span` (exact, no failure, nothing
 * absent), when the policy's screens pass it as they are (no `verify.boundaries: "tokens"`; a v1
 * capture has no hidden runs): its evidence written as `verified` writes it, without the match
 * lists. `false`, with nothing done, for anything else (the caller then takes `settle`).
 */
export const settleOne = (
  policy: PolicyShape,
  record: CaptureRecord,
  i: number,
  span: Span,
  occurrences: number,
  ambiguous: boolean,
  results: Pending,
  checkpoints: Checkpoints | undefined
): boolean => {
  if (record.format !== captureFormat || policy.boundaries === "tokens") return false
  const units = spanOffsets(record.text, [span], checkpoints)[0]!
  const selectorsOf = isShortAscii(record.text) ? asciiSelectors : selectors
  results[i] = v1Evidence(record, span, occurrences, "exact", ambiguous, units, selectorsOf)
  return true
}

/**
 * Everything after one capture's matching, on both paths (Verifier.ts and Warm.ts): `SnippetAbsent`
 * for what neither search found, the opt-in screens, then the evidence of what is left.
 */
export const settle = (
  policy: PolicyShape,
  record: CaptureRecord,
  citations: ReadonlyArray<CitationInput>,
  { exact, normal }: CaptureMatches,
  diagnose: Diagnostic.Diagnoser,
  failures: Failures,
  results: Pending,
  checkpoints: Checkpoints | undefined
): void => {
  absent(record, citations, normal.stillAbsent, normal.changedBy, diagnose, failures)
  const matched = normal.matched.length === 0 ? exact.matched : [...exact.matched, ...normal.matched]
  // Text no reader sees: refused here under verify.hidden: "reject", else marked on the evidence (Visibility.ts).
  // Under verify.boundaries: "tokens", only occurrences that cut no number or word (Boundaries.ts).
  const whole = Boundaries.screen(policy.boundaries, record, citations, matched, failures)
  const shown = Visibility.screen(policy.hidden, record, citations, whole, failures)
  verified(record, shown, results, checkpoints)
}

/**
 * The repair diagnostics of one verification (nearest passage on `SnippetAbsent`), bounded in count
 * and to a quarter of the deadline (at most 500 ms): anchor/Diagnostic.ts.
 */
export const diagnoser = (policy: PolicyShape): Diagnostic.Diagnoser => Diagnostic.forVerification(policy.timeoutMs / 4)

/**
 * A verification's results as they are being set: one slot per citation, empty until its evidence is
 * written (`verified`, `settleOne`); `failed` makes the final list from it.
 */
export type Pending = Array<CitationResult | undefined>

/** The pending results of `n` citations, none set yet (the results need not be made beforehand). */
export const pending = (n: number): Pending => new Array(n)

/**
 * The results, one per citation in order, in a new dense list: each citation with a failure gets all
 * of its failures, one with evidence and no failure its evidence, and one with neither (should one be
 * left so) its empty list of failures.
 */
export const failed = (results: Pending, failures: Failures): Array<CitationResult> => {
  const all: Array<CitationResult> = []
  for (let i = 0; i < failures.length; i++) {
    const list = failures[i]!
    const result = results[i]
    all.push(list.length > 0 || result === undefined ? Either.left(list) : result)
  }
  return all
}
