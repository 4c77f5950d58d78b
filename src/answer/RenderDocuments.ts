/**
 * How accepted document-level citations (provider formats under `answers.citations: "document"`)
 * read in the answer renderings: always in their own section, labelled "document-level: no quote
 * verified", never as footnotes of verified quotes, and counted apart in the headline.
 *
 * @since 0.4.0
 */
import { html as h, markdown as md, markdownCode, markdownUrl, quoted, terminal } from "../render/Escape.js"
import { digestPrefix, plural } from "../render/Rendering.js"
import { type DocumentLevelCitation, documentLevelLabel, type VerifiedAnswer } from "./Records.js"

interface Entry {
  readonly claimId: string
  readonly text: string
  /** Whether the claim also has a verified quote (then it is listed with the grounded claims too). */
  readonly grounded: boolean
  readonly documents: ReadonlyArray<DocumentLevelCitation>
}

const entries = (answer: VerifiedAnswer): Array<Entry> => [
  ...answer.claims.flatMap((c) => c.documents !== undefined && c.documents.length > 0
    ? [{ claimId: c.id, text: c.text, grounded: true, documents: c.documents }]
    : []),
  ...(answer.documentLevel ?? []).map((c) => ({ claimId: c.id, text: c.text, grounded: false, documents: c.documents }))
]

/** The headline's addition: how many claims stand on document-level citations only (empty outside provider formats). */
export const headlineNote = (answer: VerifiedAnswer): string => {
  const s = answer.summary
  if (s.claimsDocumentLevel === undefined) return ""
  return `; ${plural(s.claimsDocumentLevel, "claim")} and ${plural(s.citationsDocumentLevel ?? 0, "citation")} ${documentLevelLabel}` +
    ` (citations: ${answer.citationsPolicy ?? "quote"})`
}

const title = `Document-level citations (${documentLevelLabel})`
const warning = "These claims cite a whole document: citegate checked only that the document is an approved source with a capture in this run. " +
  "No passage was found to support them."

export const text = (answer: VerifiedAnswer): Array<string> => {
  const all = entries(answer)
  if (all.length === 0) return []
  const lines = ["", `${title}:`, `  ${warning}`]
  for (const e of all) {
    lines.push(`  DOCUMENT-LEVEL ${quoted(e.claimId)}${e.grounded ? " (also has a verified quote)" : ""}: ${quoted(e.text)}`)
    for (const d of e.documents) {
      lines.push(
        `    citation ${d.index + 1}: ${d.label}`,
        `      named   ${terminal(d.citation.document)} (${terminal(d.citation.format)})`,
        `      source  ${terminal(d.citation.source)}  capture sha256 ${digestPrefix(d.citation.captureSha256)}…`
      )
    }
  }
  return lines
}

export const markdown = (answer: VerifiedAnswer): Array<string> => {
  const all = entries(answer)
  if (all.length === 0) return []
  const out = [`## ${md(title)}`, "", `*${md(warning)}*`, ""]
  for (const e of all) {
    out.push(`**Document-level claim** ${markdownCode(e.claimId)}${e.grounded ? " (also has a verified quote)" : ""}: ${md(e.text)}`, "")
    for (const d of e.documents) {
      out.push(
        `- citation ${d.index + 1}: **${md(d.label)}**; named ${markdownCode(d.citation.document)} (${md(d.citation.format)}); ` +
          `source ${markdownUrl(d.citation.source)}, capture sha256 \`${digestPrefix(d.citation.captureSha256)}\`…`
      )
    }
    out.push("")
  }
  return out
}

export const htmlStyle = `
.document-level { border-left: 4px solid #b7791f; background: #fdf6e3; padding: .5rem 1rem; margin: .5rem 0; }
.document-level .label { font-weight: 600; color: #8a5a00; }
`

export const html = (answer: VerifiedAnswer): string => {
  const all = entries(answer)
  if (all.length === 0) return ""
  const parts = [`<h2>${h(title)}</h2>`, `<p class="note">${h(warning)}</p>`]
  for (const e of all) {
    parts.push(`<div class="document-level" data-claim="${h(e.claimId)}"><p class="claim">${h(e.text)}${e.grounded ? " (also has a verified quote)" : ""}</p><ul>` +
      e.documents.map((d) =>
        `<li><span class="label">${h(d.label)}</span>: citation ${d.index + 1}, named <code class="value">${h(d.citation.document)}</code> (${h(d.citation.format)}); ` +
        `source <code>${h(d.citation.source)}</code>, capture sha256 <code>${digestPrefix(d.citation.captureSha256)}…</code></li>`
      ).join("") + "</ul></div>")
  }
  return parts.join("\n")
}
