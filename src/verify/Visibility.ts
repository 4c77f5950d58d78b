/**
 * Whether a verified span lies in text a reader sees: the capture's `hidden`
 * runs (written by `pdf/2`) that the span overlaps. One bisection per span
 * (the runs are in text order and do not overlap; reading a record checks
 * that), then a walk over the runs it overlaps.
 *
 * Under `verify.hidden: "mark"` (the default) the evidence says
 * `visibility: "hidden"` or `"ocr"` with `hiddenBy`; under `"reject"` a span
 * overlapping any kind but `ocr` fails with `HiddenEvidence`. OCR text over a
 * scanned page is the page's content: always accepted, marked `ocr`.
 *
 * @since 0.4.0
 */
import type { CaptureRecord, HiddenKind, HiddenRun, Span, Visibility } from "../Domain.js"
import { HiddenEvidence } from "../Errors.js"
import { locate } from "../internal/anchors.js"
import type { Failures } from "./Records.js"

/** The fixed order `hiddenBy` lists kinds in. */
const order: ReadonlyArray<HiddenKind> = ["invisible", "background", "tiny", "offpage", "ocr"]

/** What the evidence says: nothing for visible text, else the visibility and the kinds overlapped. */
export interface Marked {
  readonly visibility?: Exclude<Visibility, "visible">
  readonly hiddenBy?: readonly [HiddenKind, ...Array<HiddenKind>]
}

/** The index of the first run ending after `at`. */
const firstEndingAfter = (runs: ReadonlyArray<HiddenRun>, at: number): number => {
  let lo = 0
  let hi = runs.length
  while (lo < hi) {
    const mid = (lo + hi) >>> 1
    if (runs[mid]![1] <= at) lo = mid + 1
    else hi = mid
  }
  return lo
}

/** The kinds of the runs a span overlaps (an empty span overlaps the run it lies in). */
export const kindsAt = (runs: ReadonlyArray<HiddenRun>, span: Span): Array<HiddenKind> => {
  const found = new Set<HiddenKind>()
  for (let i = firstEndingAfter(runs, span.start); i < runs.length && runs[i]![0] < Math.max(span.end, span.start + 1); i++) {
    found.add(runs[i]![2])
  }
  return order.filter((kind) => found.has(kind))
}

/** Visible text: nothing to mark (one shared value, as this runs once per verified citation). */
const visible: Marked = {}

/** The evidence fields for a span of a record. */
export const mark = (record: CaptureRecord, span: Span): Marked => {
  const runs = record.format === "citegate.capture/2" ? record.hidden : undefined
  if (runs === undefined || runs.length === 0) return visible
  const kinds = kindsAt(runs, span)
  const [first, ...rest] = kinds
  if (first === undefined) return visible
  return { visibility: kinds.some((kind) => kind !== "ocr") ? "hidden" : "ocr", hiddenBy: [first, ...rest] }
}

/**
 * The Verifier's hook, before evidence is made: under `reject`, each match overlapping hidden text
 * (OCR aside) gets `HiddenEvidence` in its failures and is left out; the others are returned (their
 * evidence is marked by `mark`). Under `mark` (or absent) every match is returned.
 */
export const screen = <M extends { readonly i: number; readonly span: Span }>(
  policy: "mark" | "reject" | undefined,
  record: CaptureRecord,
  citations: ReadonlyArray<{ readonly snippet: string }>,
  matched: ReadonlyArray<M>,
  failures: Failures
): ReadonlyArray<M> => {
  if (policy !== "reject" || record.format !== "citegate.capture/2" || record.hidden === undefined) return matched
  return matched.filter((m) => {
    const marked = mark(record, m.span)
    if (marked.visibility !== "hidden") return true
    const page = locate(record, m.span).page
    failures[m.i]!.push(
      new HiddenEvidence({
        source: record.source,
        captureSha256: record.sha256,
        snippet: citations[m.i]!.snippet,
        span: { start: m.span.start, end: m.span.end },
        ...(page === undefined ? {} : { page }),
        hiddenBy: marked.hiddenBy!
      })
    )
    return false
  })
}
