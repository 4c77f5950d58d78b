/**
 * Binding an EVI1 document to the run's manifest: claims with their sentences and quoted sources,
 * the rest as uncited text.
 */
import * as Either from "effect/Either"
import type { Evi1Invalid, StaleManifest } from "../../Errors.js"
import type { Manifest } from "../../Manifest.js"
import { checkManifest, sentences } from "../Answer.js"
import type { BoundAnswer, Citation, UncitedText } from "../Records.js"
import { Issues } from "./Issues.js"
import type { Document } from "./Records.js"

/**
 * The document as an answer bound to this run: each claim's text is the
 * sentence its marker ends (markers removed), its citations the manifest's
 * sources with the quotes of the evidence lines. Text outside claims becomes
 * the answer's uncited sentences, with their lines.
 *
 * The manifest digest is named by a `MANIFEST` line or by the caller
 * (`manifestDigest`, e.g. `--manifest-digest`); one of them is required, and
 * both must be this run's manifest (`StaleManifest`). Source numbers outside
 * the manifest, or of sources missing in this run, are line issues.
 */
export const toAnswer = (
  document: Document,
  manifest: Manifest,
  options: { readonly manifestDigest?: string | undefined } = {}
): Either.Either<BoundAnswer, Evi1Invalid | StaleManifest> => {
  const checked = checkManifest(manifest, [document.appendix?.manifest, options.manifestDigest])
  if (Either.isLeft(checked)) return Either.left(checked.left)
  const issues = new Issues()
  const quotes = new Map((document.appendix?.evidence ?? []).map((e) => [`${e.claimId}|${e.source}`, e.quote]))
  const claims: Array<BoundAnswer["claims"][number]> = []
  const uncited: Array<UncitedText> = []
  // Prose is cut into lines (with their numbers) and sentences; the last sentence before a marker is its claim.
  let pending = ""
  let line = 1
  let pendingLine = 1
  const flushUncited = (text: string, at: number) => {
    if (/\S/u.test(text)) uncited.push({ text, line: at })
  }
  for (const segment of document.body) {
    if (segment._tag === "Text") {
      const parts = segment.text.split("\n")
      parts.forEach((part, i) => {
        if (i > 0) {
          flushUncited(pending, pendingLine)
          pending = ""
          line++
          pendingLine = line
        }
        pending += part
      })
      continue
    }
    const all = sentences(pending)
    const claimText = all.pop() ?? ""
    for (const s of all) flushUncited(s, pendingLine)
    pending = ""
    pendingLine = line
    const citations: Array<Citation> = []
    for (const n of segment.sources) {
      const entry = manifest.sources[n - 1] // none for 0 or past the end
      if (entry === undefined) {
        issues.push({ _tag: "Evi1SourceOutOfRange", line: segment.line, claimId: segment.claimId, source: n, sources: manifest.sources.length })
      } else if (entry.status !== "captured") {
        issues.push({ _tag: "Evi1SourceUnavailable", line: segment.line, claimId: segment.claimId, source: n, url: entry.source })
      } else {
        const quote = quotes.get(`${segment.claimId}|${n}`)
        // `parse` guarantees the evidence; a document built by hand may lack it.
        if (quote === undefined) issues.push({ _tag: "Evi1MissingEvidence", line: segment.line, claimId: segment.claimId, source: n })
        else citations.push({ source: entry.source, captureSha256: entry.captureSha256, quote })
      }
    }
    if (claimText === "") {
      issues.push({ _tag: "Evi1MalformedLine", line: segment.line, detail: `{${segment.claimId}} ends no sentence (no text before its citation group)` })
    }
    claims.push({ id: segment.claimId, text: claimText, citations })
  }
  flushUncited(pending, pendingLine)
  if (!issues.isEmpty) return Either.left(issues.toError())
  return Either.right({ manifest: checked.right, claims, uncited })
}

