/**
 * The judge's section of every rendering (text, Markdown, HTML; JSON carries the `judge` object):
 * appended after the provenance rendering under its own heading, never merged into a footnote or
 * fact, so a verdict can never read as provenance or the other way round. Pure; every value from an
 * answer, a report or a judge is escaped for its format.
 *
 * @since 0.3.0
 */
import type { CitationJudgement, JudgeReview } from "../review/Records.js"
import { html as h, markdown as md, quoted, terminal } from "./Escape.js"
import { withSection } from "./Section.js"

const title = "Judge (semantic review)"

const intro = (r: JudgeReview) =>
  `Prompt ${r.prompt}, ${r.provider} model ${r.model}, mode ${r.mode}. A model's reading of whether each verified quote supports its claim: ` +
  "not proof, and kept apart from provenance. A judge error is never support."

const fixed = (x: number | null) => (x === null ? "none" : x.toFixed(2))

const headline = (r: JudgeReview) => {
  const s = r.summary
  const verdict = s.supported ? "SUPPORTED" : "NOT SUPPORTED"
  return `${verdict}: ${s.claimsSupported} of ${s.claims} claims supported; citations: ${s.entailed} entailed, ` +
    `${s.partially_entailed} partially_entailed, ${s.overstated} overstated, ${s.insufficient} insufficient, ` +
    `${s.contradicted} contradicted, ${s.error} error; weakest claim score ${fixed(s.minClaimScore)}` +
    (r.mode === "require" && !s.supported ? " (review.judge.mode require: this fails the run)" : "")
}

const citationLine = (c: CitationJudgement) =>
  c.verdict === "error"
    ? `ERROR (${c.error?._tag ?? "unknown"}): ${c.error?.message ?? ""}; not judged, not support`
    : `${c.verdict}, confidence ${fixed(c.confidence)}, text match ${fixed(c.textMatch)}, score ${fixed(c.score)}${c.cut ? " (claim or quote cut to the judge's limit)" : ""}`

const where = (c: CitationJudgement) => `claim ${c.claimIndex + 1} (${c.claimId}), citation ${c.citationIndex + 1}`

export const text = (r: JudgeReview): string =>
  [
    "",
    `${title}:`,
    `  ${intro(r)}`,
    `  ${headline(r)}`,
    ...r.citations.map((c) => `  ${terminal(where(c))}: ${terminal(citationLine(c))}`),
    ...r.claims.filter((c) => !c.supported).map((c) => `  UNSUPPORTED claim ${c.claimIndex + 1} ${quoted(c.claimId)}: best verdict ${c.verdict}`)
  ].join("\n") + "\n"

export const markdown = (r: JudgeReview): string =>
  [
    "",
    `## ${title}`,
    "",
    `*${md(intro(r))}*`,
    "",
    `**${md(headline(r))}**`,
    "",
    ...r.citations.map((c) => `- ${md(where(c))}: ${md(citationLine(c))}`),
    ...r.claims.filter((c) => !c.supported).map((c) => `- **Unsupported** claim ${c.claimIndex + 1} (${md(c.claimId)}): best verdict ${md(c.verdict)}`),
    ""
  ].join("\n")

export const html = (r: JudgeReview): string =>
  [
    `<section class="judge" id="judge">`,
    `<h2>${h(title)}</h2>`,
    `<p class="note">${h(intro(r))}</p>`,
    `<p class="judge-summary ${r.summary.supported ? "supported" : "unsupported"}"><strong>${h(headline(r))}</strong></p>`,
    "<ul>",
    ...r.citations.map((c) => `<li data-verdict="${h(c.verdict)}">${h(where(c))}: ${h(citationLine(c))}</li>`),
    "</ul>",
    "</section>"
  ].join("\n")

/**
 * A rendered page with the judge's section added: after the text and Markdown, before `</body>` in
 * HTML. Unchanged without a review (judging off) and for JSON (its result carries `judge`).
 */
export const withJudge = (format: string, page: string, review: JudgeReview | undefined): string => {
  if (review === undefined || format === "json" || format === "jsonld") return page
  return withSection(format, page, review, { html, markdown, text })
}
