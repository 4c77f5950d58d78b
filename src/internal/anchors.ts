/**
 * Page and heading anchors of v2 captures, for the verifier: where a fact's
 * named anchor lies in the text, and which anchors hold a verified span.
 */
import type { CaptureRecord, Span } from "../Domain.js"

/** A fact's named anchors as `[start, end)` ranges of the text (several sections may share one heading path). */
export interface NamedAnchor {
  /** `page 3`, `heading Results > Q3`: how errors and renderings name it. */
  readonly label: string
  readonly ranges: ReadonlyArray<readonly [number, number]>
}

const samePath = (a: ReadonlyArray<string>, b: ReadonlyArray<string>) =>
  a.length === b.length && a.every((part, i) => part === b[i])

/** Whether a fact names a page, a page range or a heading: only then has it anchors to check. */
export const namesAnchor = (fact: {
  readonly page?: number | undefined
  readonly pages?: unknown
  readonly heading?: unknown
}): boolean => fact.page !== undefined || fact.pages !== undefined || fact.heading !== undefined

/** The anchors a fact names, or `undefined` when it names none. A v1 capture has none to name. */
export const namedAnchors = (
  record: CaptureRecord,
  fact: {
    readonly page?: number | undefined
    /** Pages `start` to `end - 1` (1-based, end exclusive, as an answer's `page` and Anthropic's `page_location`). */
    readonly pages?: { readonly start: number; readonly end: number } | undefined
    readonly heading?: ReadonlyArray<string> | undefined
  }
): ReadonlyArray<NamedAnchor> | undefined => {
  if (!namesAnchor(fact)) return undefined
  const pages = record.format === "citegate.capture/2" ? record.pages ?? [] : []
  const headings = record.format === "citegate.capture/2" ? record.headings ?? [] : []
  const named: Array<NamedAnchor> = []
  if (fact.page !== undefined) {
    const page = pages[fact.page - 1]
    named.push({ label: `page ${fact.page}`, ranges: page === undefined ? [] : [[page.start, page.end]] })
  }
  if (fact.pages !== undefined) {
    const { end, start } = fact.pages
    // Pages are in order and contiguous in the text: the range runs from the first page's start to the last's end.
    const first = pages[start - 1]
    const last = pages[end - 2]
    named.push({
      label: end - start === 1 ? `page ${start}` : `pages ${start}–${end - 1}`,
      ranges: first === undefined || last === undefined || end <= start ? [] : [[first.start, last.end]]
    })
  }
  if (fact.heading !== undefined) {
    const path = fact.heading
    named.push({
      label: `heading ${path.join(" > ")}`,
      ranges: headings.filter((h) => samePath(h.path, path)).map((h) => [h.start, h.end] as const)
    })
  }
  return named
}

/** The page a span starts on and the innermost heading section holding all of it, when the capture has them. */
export const locate = (record: CaptureRecord, span: Span): { page?: number; heading?: ReadonlyArray<string> } => {
  if (record.format !== "citegate.capture/2") return {}
  const located: { page?: number; heading?: ReadonlyArray<string> } = {}
  const pages = record.pages ?? []
  // Pages are in order (checked when the record is read): binary search for the one holding span.start.
  let low = 0
  let high = pages.length - 1
  while (low <= high) {
    const mid = (low + high) >> 1
    const page = pages[mid]!
    if (span.start < page.start) high = mid - 1
    else if (span.start >= page.end && !(span.start === page.end && span.end === page.end)) low = mid + 1
    else {
      located.page = page.number
      break
    }
  }
  let best: { readonly start: number; readonly path: ReadonlyArray<string> } | undefined
  for (const heading of record.headings ?? []) {
    if (heading.start <= span.start && span.end <= heading.end && (best === undefined || heading.path.length > best.path.length)) {
      best = heading
    }
  }
  if (best !== undefined) located.heading = best.path
  return located
}

/** At most this many of a capture's heading paths are listed in an AnchorMismatch (the rest are counted). */
export const maxListedHeadings = 50

/**
 * What an AnchorMismatch adds so a drafter can repair the anchor: where the excerpt actually is
 * (`foundPage`, `foundHeading`, for a span that occurs), how many pages the capture has, and its
 * distinct heading paths in text order, at most `maxListedHeadings` (`headingsOmitted` counts the rest).
 */
export const anchorHints = (record: CaptureRecord, found: Span | undefined) => {
  if (record.format !== "citegate.capture/2") return {}
  const where = found === undefined ? {} : locate(record, found)
  // A quote across a page break: the page its last character is on, so the hint names the whole range.
  const last = found === undefined || found.end <= found.start ? undefined : locate(record, { start: found.end - 1, end: found.end }).page
  const seen = new Set<string>()
  const headings: Array<ReadonlyArray<string>> = []
  let omitted = 0
  for (const heading of record.headings ?? []) {
    const key = JSON.stringify(heading.path)
    if (seen.has(key)) continue
    seen.add(key)
    if (headings.length < maxListedHeadings) headings.push(heading.path)
    else omitted++
  }
  return {
    ...(where.page === undefined ? {} : { foundPage: where.page }),
    ...(where.page === undefined || last === undefined || last === where.page ? {} : { foundLastPage: last }),
    ...(where.heading === undefined ? {} : { foundHeading: where.heading }),
    ...(record.pages === undefined ? {} : { pages: record.pages.length }),
    ...(headings.length === 0 ? {} : { headings }),
    ...(omitted === 0 ? {} : { headingsOmitted: omitted })
  }
}
