/**
 * The audit's candidate search, for a citation whose excerpt the new
 * Verifier did not find as it stood: the nearest passage (under the old
 * heading or page first, then near the old position, then anywhere), and the
 * checks that a verbatim hit still keeps the old token boundaries.
 *
 * @since 0.3.0
 */
import type { CaptureRecord } from "../Domain.js"
import { locate, namedAnchors } from "../internal/anchors.js"
import { type Nearest, nearestIn, type Prepared, prepare } from "../anchor/Nearest.js"
import { ratio } from "../anchor/Similarity.js"
import { keepsBoundaries, occurrenceKeepingBoundaries, widened } from "./Boundaries.js"
import type { Candidate, Location, Thresholds } from "./Records.js"
import { ownedSlice } from "../internal/ownedSlice.js"

/** Code units each side of the old position searched first (at least; 16 excerpt lengths when longer). */
export const nearbyRadius = 16 * 1024

/**
 * The window around `center` searched before the whole text, or `undefined` when it would cover
 * most of the text anyway. Its ends never split a surrogate pair.
 */
const nearbyRange = (text: string, snippetLength: number, center: number): { from: number; to: number } | undefined => {
  const radius = Math.max(nearbyRadius, 16 * snippetLength)
  if (2 * radius + snippetLength >= text.length / 2) return undefined
  let from = Math.max(0, center - radius)
  let to = Math.min(text.length, center + snippetLength + radius)
  if (from > 0 && isLowSurrogate(text.charCodeAt(from))) from--
  if (to < text.length && isLowSurrogate(text.charCodeAt(to))) to++
  return { from, to }
}

const isLowSurrogate = (unit: number) => unit >= 0xdc00 && unit <= 0xdfff

/**
 * The candidate for an excerpt gone from the new text: the nearest passage
 * inside the sections with the old heading path (or the old page), held to
 * the anchor threshold; failing that, the nearest in the whole text, held to
 * the document threshold. `best` is the better of the two even when neither
 * passes (a deleted finding's `nearest`). Each text and section is prepared
 * (normalised) once per audit, through `prepared`.
 */
export const candidateOf = (
  record: CaptureRecord,
  snippet: string,
  old: Location,
  thresholds: Thresholds,
  prepared: (record: CaptureRecord, from: number, to: number) => Prepared,
  oldLength: number
): { readonly best: Candidate | undefined; readonly passed: boolean } => {
  const toCandidate = (found: Nearest, scope: "anchor" | "document"): Candidate => {
    const span = { start: found.span.start, end: found.span.end }
    return {
      text: found.text,
      span,
      // Rounded for stable renderings; the comparison with the threshold uses the same rounded value.
      similarity: Math.round(found.score * 1e4) / 1e4,
      method: found.method,
      scope,
      threshold: scope === "anchor" ? thresholds.anchor : thresholds.document,
      ...locate(record, span)
    }
  }
  let anchored: Candidate | undefined
  const named = namedAnchors(record, { page: old.page, heading: old.heading })
  for (const anchor of named ?? []) {
    for (const [from, to] of anchor.ranges) {
      const found = nearestIn(prepared(record, from, to), snippet, { minScore: 0 })
      if (found !== undefined && (anchored === undefined || found.score > anchored.similarity)) {
        anchored = toCandidate(found, "anchor")
      }
    }
  }
  if (anchored !== undefined && anchored.similarity >= thresholds.anchor) return { best: anchored, passed: true }
  // Near the old position first (scaled to the new length): most edited passages stay roughly where
  // they were, and a window costs its size, not the text's. Held to the document threshold; the whole
  // text is searched only when nothing nearby passes.
  const near = nearbyRange(record.text, snippet.length, Math.round(old.span.start * (record.text.length / Math.max(1, oldLength))))
  if (near !== undefined) {
    const found = nearestIn(prepare(record.text, near), snippet, { minScore: 0 })
    if (found !== undefined) {
      const candidate = toCandidate(found, "document")
      if (candidate.similarity >= thresholds.document) return { best: candidate, passed: true }
    }
  }
  const found = nearestIn(prepared(record, 0, record.text.length), snippet, { minScore: 0 })
  const anywhere = found === undefined ? undefined : toCandidate(found, "document")
  if (anywhere !== undefined && anywhere.similarity >= thresholds.document) return { best: anywhere, passed: true }
  const best = anchored === undefined
    ? anywhere
    : anywhere === undefined || anchored.similarity >= anywhere.similarity
    ? anchored
    : anywhere
  return { best, passed: false }
}

export type Span = { readonly start: number; readonly end: number }

/**
 * Where an excerpt the new Verifier found still stands as it did: the old position, else the
 * Verifier's, else the first verbatim occurrence, each only when it keeps the old occurrence's token
 * boundaries (src/audit/Boundaries.ts); undefined when every occurrence cuts a number or word.
 */
export const boundedMatch = (oldText: string, oldSpan: Span, text: string, snippet: string, found: Span): Span | undefined => {
  const keeps = (span: Span) => keepsBoundaries(oldText, oldSpan, text, span)
  if (text.startsWith(snippet, oldSpan.start) && oldSpan.end - oldSpan.start === snippet.length && keeps(oldSpan)) return oldSpan
  if (keeps(found)) return found
  const at = occurrenceKeepingBoundaries(oldText, oldSpan, text, snippet)
  return at === undefined ? undefined : { start: at, end: at + snippet.length }
}

/** The excerpt's occurrence widened to the tokens it cuts (`4,210,000`): the candidate of a grown number. */
export const grownCandidate = (record: CaptureRecord, snippet: string, oldSpan: Span, found: Span, thresholds: Thresholds): Candidate => {
  const cut = record.text.startsWith(snippet, oldSpan.start) ? { start: oldSpan.start, end: oldSpan.start + snippet.length } : found
  const span = widened(record.text, cut.start, cut.end)
  const text = ownedSlice(record.text, span.start, span.end)
  return {
    text,
    span,
    similarity: Math.round(ratio(snippet, text) * 1e4) / 1e4,
    method: grownMethod,
    scope: "document",
    threshold: thresholds.document,
    ...locate(record, span)
  }
}

/** A candidate's `method` when the excerpt is there verbatim but inside a longer number or word. */
export const grownMethod = "token-boundary"

