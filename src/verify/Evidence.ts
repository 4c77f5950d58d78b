/**
 * Verification step 5, evidence: each matched citation's evidence (span in
 * code units, code points and UTF-8 bytes, page or section, selectors), and
 * each absent one's `SnippetAbsent` with its repair diagnostic.
 *
 * @since 0.3.0
 */
import * as Either from "effect/Either"
import type { CaptureRecord } from "../Domain.js"
import { type NearestPassage, SnippetAbsent } from "../Errors.js"
import type * as Diagnostic from "../anchor/Diagnostic.js"
import { meaningChange, type MeaningChange } from "../anchor/MeaningGuard.js"
import { type Checkpoints, spanOffsets } from "../anchor/Offsets.js"
import { selectors } from "../anchor/Selectors.js"
import { locate } from "../internal/anchors.js"
import type { Matched } from "./Match.js"
import type { CitationInput, CitationResult, Failures } from "./Records.js"
import { hasContext } from "./Search.js"
import { mark } from "./Visibility.js"

/**
 * Under any policy: when the nearest passage is the same text up to `normalized/1` (a diagnostic), the
 * number, sign or unit the quote changed in it, so that a repair does not call a meaning change typography.
 */
const changeAt = (text: string, snippet: string, nearest: NearestPassage | undefined): MeaningChange | undefined =>
  nearest?.method === "normalized/1" ? meaningChange(snippet, text.slice(nearest.span.start, nearest.span.end)) : undefined

/** `SnippetAbsent` for each citation found in neither search, with its nearest passage when diagnosed. */
export const absent = (
  record: CaptureRecord,
  citations: ReadonlyArray<CitationInput>,
  indices: ReadonlyArray<number>,
  changedBy: ReadonlyMap<number, MeaningChange>,
  diagnose: Diagnostic.Diagnoser,
  failures: Failures
): void => {
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

/**
 * Every verified span of this capture in code points and UTF-8 bytes, as evidence: one pass over
 * the text up to the last span, or with the cached capture's `checkpoints` a short scan per span.
 */
export const verified = (
  record: CaptureRecord,
  matched: ReadonlyArray<Matched>,
  results: Array<CitationResult>,
  checkpoints?: Checkpoints
): void => {
  const offsets = spanOffsets(record.text, matched.map((m) => m.span), checkpoints)
  matched.forEach((m, k) => {
    const units = offsets[k]!
    results[m.i] = Either.right({
      span: m.span,
      occurrences: m.occurrences,
      accessedAt: record.accessedAt,
      ...locate(record, m.span),
      method: m.method,
      ambiguous: m.ambiguous,
      offsets: units,
      selector: selectors(record.text, m.span, units.codePoints),
      // Absent for visible text; `visibility` and `hiddenBy` where the span overlaps hidden runs.
      ...mark(record, m.span)
    })
  })
}
