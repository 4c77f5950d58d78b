/**
 * Verification step 4, anchors: a citation that names a PDF page or a heading
 * must have an occurrence inside it.
 *
 * @since 0.3.0
 */
import type { CaptureRecord, Span } from "../Domain.js"
import { AnchorMismatch } from "../Errors.js"
import { anchorHints, namedAnchors } from "../internal/anchors.js"
import * as MultiSearch from "../internal/multiSearch.js"
import type { CitationInput } from "./Records.js"
import type { Needle } from "./Search.js"

/**
 * After the search: a fact that names a page or heading must have an
 * occurrence inside it. The first occurrence is used when it lies inside;
 * otherwise (exact matches only) each named range is searched on its own with
 * the same exact search, for the needle with its context. Returns where the
 * snippet starts, or why the anchor does not hold.
 */
export const checkAnchors = (
  record: CaptureRecord,
  fact: CitationInput,
  first: Span,
  needle: Needle | undefined
): number | AnchorMismatch => {
  const named = namedAnchors(record, fact)
  if (named === undefined) return first.start
  const length = first.end - first.start
  let start = first.start
  for (const anchor of named) {
    const fail = (reason: "outside" | "no-such-anchor") =>
      new AnchorMismatch({
        source: record.source,
        captureSha256: record.sha256,
        snippet: fact.snippet,
        anchor: anchor.label,
        reason,
        ...anchorHints(record, first)
      })
    if (anchor.ranges.length === 0) return fail("no-such-anchor")
    const inside = (at: number) => anchor.ranges.some(([from, to]) => from <= at && at + length <= to)
    if (inside(start)) continue
    if (needle === undefined) return fail("outside")
    let found: number | undefined
    for (const [from, to] of anchor.ranges) {
      // The context may reach outside the range; the snippet itself must lie inside. Only the first
      // occurrence is used, so the search stops there.
      const sliceFrom = Math.max(0, from - needle.lead)
      const hit = MultiSearch.searchAll(record.text.slice(sliceFrom, to + needle.trail), [needle.text], { countUpTo: 1 })[0]
      const at = hit === undefined ? undefined : sliceFrom + hit.start + needle.lead
      if (at !== undefined && (found === undefined || at < found)) found = at
    }
    if (found === undefined) return fail("outside")
    start = found
  }
  // Both a page and a heading named: the occurrence found for the last must lie in every one.
  return named.every((anchor) => anchor.ranges.some(([from, to]) => from <= start && start + length <= to))
    ? start
    : new AnchorMismatch({
      source: record.source,
      captureSha256: record.sha256,
      snippet: fact.snippet,
      anchor: named.map((a) => a.label).join(" and "),
      reason: "outside",
      ...anchorHints(record, first)
    })
}
