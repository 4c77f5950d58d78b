/**
 * Token boundaries, opt-in (`verify.boundaries: "tokens"`): a match counts
 * only where it cuts no number or word, so `4,210` quoted from a capture that
 * says `4,210,000` is refused with `SnippetCutsToken`. Under the default
 * `"substring"` every match is returned unchanged: the core property is that
 * the excerpt occurs verbatim, and that property does not change.
 *
 * The occurrence checked is the one the matching path picked (the first, the
 * one a prefix or suffix names, or the one inside the named page or heading).
 * Only a citation with none of those (an exact match, no context, no anchor)
 * moves on to a later occurrence that keeps its boundaries, by `indexOf` from
 * the previous one: each occurrence is looked at once, in constant time.
 *
 * @since 0.4.0
 */
import type { CaptureRecord, Span } from "../Domain.js"
import { SnippetCutsToken } from "../Errors.js"
import { insideToken, widened } from "../anchor/Tokens.js"
import type { CitationInput, Failures } from "./Records.js"
import { ownedSlice } from "../internal/ownedSlice.js"

const cutsToken = (text: string, span: Span) => insideToken(text, span.start) || insideToken(text, span.end)

/** Whether the matching path was free to use any occurrence of the snippet. */
const anyOccurrence = (citation: CitationInput, method: string) =>
  method === "exact" && citation.prefix === undefined && citation.suffix === undefined &&
  citation.page === undefined && citation.pages === undefined && citation.heading === undefined

/** The first occurrence after `span` that cuts no token, or undefined. */
const laterWholeOccurrence = (text: string, snippet: string, span: Span): Span | undefined => {
  for (let at = text.indexOf(snippet, span.start + 1); at >= 0; at = text.indexOf(snippet, at + 1)) {
    const candidate = { start: at, end: at + snippet.length }
    if (!cutsToken(text, candidate)) return candidate
  }
  return undefined
}

/**
 * The Verifier's hook, before evidence is made: under `tokens`, each match whose occurrence cuts a
 * token moves to a later whole occurrence where it may (its span changes), else gets
 * `SnippetCutsToken` in its failures and is left out. Under `substring` (or absent) every match is
 * returned as it is.
 */
export const screen = <M extends { readonly i: number; readonly span: Span; readonly method: string }>(
  policy: "substring" | "tokens" | undefined,
  record: CaptureRecord,
  citations: ReadonlyArray<CitationInput>,
  matched: ReadonlyArray<M>,
  failures: Failures
): ReadonlyArray<M> => {
  if (policy !== "tokens") return matched
  const kept: Array<M> = []
  for (const m of matched) {
    if (!cutsToken(record.text, m.span)) {
      kept.push(m)
      continue
    }
    const citation = citations[m.i]!
    const later = anyOccurrence(citation, m.method) ? laterWholeOccurrence(record.text, citation.snippet, m.span) : undefined
    if (later !== undefined) {
      kept.push({ ...m, span: later })
      continue
    }
    const token = widened(record.text, m.span.start, m.span.end)
    failures[m.i]!.push(
      new SnippetCutsToken({
        source: record.source,
        captureSha256: record.sha256,
        snippet: citation.snippet,
        span: { start: m.span.start, end: m.span.end },
        token: ownedSlice(record.text, token.start, token.end)
      })
    )
  }
  return kept
}
