/**
 * HTML rendering: a self-contained page with no script at all (a Content
 * Security Policy forbids any), every untrusted value escaped. Verified
 * excerpts are visually distinct from conclusions; each citation's link and
 * `[n]` marker open the exact capture text at the exact span, highlighted and
 * outlined when targeted, each highlight linking back to its fact. Facts are
 * numbered from 1; ids and data attributes keep the 0-based index.
 */
import * as Match from "effect/Match"
import { type CaptureRecord, captureFormat, type Evidence, recordBody } from "../Domain.js"
import type { FactRejection, VerifyError } from "../Errors.js"
import { formatPath } from "../Errors.js"
import { isVerifiedCitation } from "../Domain.js"
import type { VerifiedReport } from "../verify/VerifiedReport.js"
import * as Describe from "./Describe.js"
import * as Review from "./Review.js"
import { html as h } from "./Escape.js"
import {
  ambiguityNote,
  occurrencesText,
  anchorText,
  captureReads,
  counts,
  digestPrefix,
  factNumber,
  normalizedNote,
  visibilityNote,
  plural,
  type Rendering,
  withMatching,
  unavailableNote
} from "./Rendering.js"
import { terminal, terminalField } from "./Escape.js"
import * as HtmlPage from "./HtmlPage.js"
import { sourceText } from "./HtmlPage.js"

const style = `
body { font: 15px/1.5 system-ui, sans-serif; max-width: 60rem; margin: 2rem auto; padding: 0 1rem; color: #1d1d1f; }
.outcome { padding: .75rem 1rem; border-radius: 6px; font-weight: 600; }
.outcome.grounded { background: #e7f6ea; border: 1px solid #3a9d52; }
.outcome.no_evidence, .outcome.rejected { background: #fdecea; border: 1px solid #c0392b; }
.note { color: #555; font-style: italic; }
.fact { border-top: 1px solid #ddd; padding: .5rem 0 1rem; }
.label { font-family: ui-monospace, monospace; font-weight: 600; }
blockquote.excerpt { margin: .5rem 0; padding: .5rem 1rem; background: #f3f6fb; border-left: 4px solid #2d6cdf; white-space: pre-wrap; font-family: Georgia, serif; }
.excerpt-tag { font-size: .75rem; text-transform: uppercase; letter-spacing: .05em; color: #2d6cdf; font-weight: 700; }
.unavailable-tag { font-size: .75rem; text-transform: uppercase; letter-spacing: .05em; color: #8a6d00; font-weight: 700; }
.explanation { background: #fff8e1; padding: .25rem .5rem; white-space: pre-wrap; }
.citation { font-size: .85rem; color: #444; }
.ambiguous, .match.normalized { font-size: .85rem; font-weight: 600; color: #8a6d00; }
.visibility { font-size: .85rem; font-weight: 600; color: #a40000; }
.capture pre { white-space: pre-wrap; word-break: break-word; background: #fafafa; border: 1px solid #ddd; padding: 1rem; max-height: 30rem; overflow: auto; }
mark { background: #ffe066; }
.ctl { color: #c92a2a; font-size: 0.85em; }
mark a { color: inherit; text-decoration: none; }
.fact:target { background: #fffbe6; }
code.value { white-space: pre-wrap; word-break: break-word; background: #f1f1f1; border-radius: 3px; }
sup a { text-decoration: none; }
.failure { border-left: 4px solid #c0392b; padding-left: .75rem; margin: .75rem 0; }
code { font-family: ui-monospace, monospace; }
.page-marker { display: block; border-top: 1px dashed #999; color: #666; font: 12px system-ui, sans-serif; user-select: none; }
.page-marker::before { content: "page " attr(data-page); }
.anchor-name { font-weight: 600; }
`

const page = (title: string, body: string) => HtmlPage.page(title, style, body)


/**
 * The capture text with every cited span highlighted. Spans may overlap, so the
 * text is cut at every span boundary; each piece covered by a span is a
 * `<mark>` listing the facts it belongs to (a link back to the first of them),
 * and an empty anchor marks where each fact's excerpt starts.
 */

/** How highlights name what they belong to: a report's facts (by default) or an answer's footnotes. */
export interface HighlightNames {
  /** The id of the empty anchor where item `index`'s excerpt starts. */
  readonly anchor: (index: number) => string
  /** The id a highlight links back to. */
  readonly item: (index: number) => string
  /** The title of a highlight covering these items. */
  readonly title: (indices: ReadonlyArray<number>) => string
}

const factNames: HighlightNames = {
  anchor: (index) => `fact-${index}-excerpt`,
  item: (index) => `fact-${index}`,
  title: (indices) => `fact ${indices.map(factNumber).join(", ")}`
}

export const highlightedCapture = (
  text: string,
  spans: ReadonlyArray<{ readonly index: number; readonly start: number; readonly end: number }>,
  pages: ReadonlyArray<{ readonly number: number; readonly start: number }>,
  captureNumber: number,
  names: HighlightNames = factNames
) => {
  const cuts = [...new Set([0, text.length, ...spans.flatMap((s) => [s.start, s.end]), ...pages.map((p) => p.start)])]
    .sort((a, b) => a - b)
  const out: Array<string> = []
  // The last cut (the text's end) gets its markers too: an empty last page of a PDF starts there.
  for (let i = 0; i < cuts.length; i++) {
    const from = cuts[i]!
    const to = cuts[i + 1] ?? from
    // A page's number is drawn by CSS (::before), so copying the text never copies a marker into a quote.
    for (const page of pages) {
      if (page.start === from) {
        out.push(`<span class="page-marker" id="capture-${captureNumber}-page-${page.number}" data-page="${page.number}"></span>`)
      }
    }
    for (const span of spans) if (span.start === from) out.push(`<span class="anchor" id="${names.anchor(span.index)}"></span>`)
    if (to === from) continue
    const piece = sourceText(text.slice(from, to))
    const covering = spans.filter((s) => s.start <= from && to <= s.end).map((s) => s.index)
    // Each highlighted piece links back to its (first) fact; overlapping excerpts list every fact in the title.
    out.push(
      covering.length > 0
        ? `<mark data-facts="${covering.join(" ")}"><a href="#${names.item(covering[0]!)}" title="${names.title(covering)}">${piece}</a></mark>`
        : piece
    )
  }
  return out.join("")
}

/** The ambiguity flag and the normalised-match label with the capture's own text, when they apply. */
const matchNotes = (evidence: Evidence): string => {
  const notes: Array<string> = []
  const ambiguity = ambiguityNote(evidence)
  if (ambiguity !== undefined) notes.push(`\n<div class="ambiguous">${h(ambiguity)}</div>`)
  const visibility = visibilityNote(evidence)
  if (visibility !== undefined) notes.push(`\n<div class="visibility ${evidence.visibility === "ocr" ? "ocr" : "hidden"}">${h(visibility)}</div>`)
  const normalized = normalizedNote(evidence)
  if (normalized !== undefined) {
    notes.push(`\n<div class="match normalized">${h(normalized)}</div>`)
    const reads = captureReads(evidence)
    if (reads !== undefined) notes.push(`\n<div class="capture-reads">The capture's own text at this span: <q>${sourceText(reads)}</q></div>`)
  }
  return notes.join("")
}

const verified = (report: VerifiedReport, captures: ReadonlyMap<string, CaptureRecord>, reviewed: boolean): string => {
  const n = counts(report)
  const parts: Array<string> = [`<h1>Verified report</h1>`]
  parts.push(
    report.outcome === "grounded"
      ? `<p class="outcome grounded">Outcome: grounded (${h(report.mode)} mode): ${plural(n.cited, "verified citation")}, ${n.unavailable} unavailable.</p>`
      : `<p class="outcome no_evidence">Outcome: no evidence (${h(report.mode)} mode): no cited fact was verified; nothing here is grounded.</p>`,
    `<p class="note">${h(Review.provenanceNoteOf(report, reviewed))}</p>`
  )
  const sources = [...new Set(report.facts.flatMap((e) => (e.fact.state === "cited" ? [e.fact.source] : [])))]
  for (const entry of report.facts) {
    if (isVerifiedCitation(entry)) {
      const { evidence, fact } = entry
      parts.push(`<section class="fact cited" id="fact-${entry.index}">
<div class="label">${factNumber(entry.index)}. ${h(terminal(fact.label))}</div>
<div class="excerpt-tag">Verified excerpt</div>
<blockquote class="excerpt" data-fact="${entry.index}">${sourceText(fact.snippet)}</blockquote>
<div class="citation">Source <code>${h(fact.source)}</code> · capture sha256 <code>${digestPrefix(fact.captureSha256)}…</code> · accessed ${h(evidence.accessedAt)} · characters ${evidence.span.start}–${evidence.span.end}, ${occurrencesText(evidence.occurrences)}${anchorText(evidence) === undefined ? "" : ` · <span class="anchor-name">${sourceText(anchorText(evidence)!)}</span>`} · <a href="#fact-${entry.index}-excerpt">open in the captured text</a><sup><a href="#capture-${sources.indexOf(fact.source) + 1}">[${sources.indexOf(fact.source) + 1}]</a></sup></div>${matchNotes(evidence)}
</section>`)
    } else {
      const fact = entry.fact
      parts.push(`<section class="fact unavailable" id="fact-${entry.index}">
<div class="label">${factNumber(entry.index)}. ${h(terminal(fact.label))}</div>
<div class="unavailable-tag">Unavailable</div>
<p>Reason given by the drafter (unverified explanation, not evidence): <span class="explanation">${h(terminal(fact.reason))}</span></p>
</section>`)
    }
  }
  if (n.unavailable > 0) parts.push(`<p class="note">${h(unavailableNote)}</p>`)
  if (report.numberReview !== undefined) {
    const items = report.numberReview.facts.map((fact) => {
      const { details, headline } = Review.factLines(fact)
      return `<li class="review ${h(fact.outcome)}"><strong>${h(headline)}</strong><ul>${details.map((d) => `<li>${h(d)}</li>`).join("")}</ul></li>`
    })
    parts.push(`<section class="semantic-review"><h2>${h(Review.heading(report.numberReview))}</h2>\n<ul>${items.join("\n")}</ul></section>`)
  }
  if (report.retractions.length > 0) {
    parts.push(`<h2>Retracted facts (drop mode)</h2>`, ...report.retractions.map(rejection))
  }
  if (sources.length > 0) {
    parts.push(`<h2>Captured sources</h2>`)
    sources.forEach((source, i) => {
      const record = captures.get(source)
      const spans = report.facts.flatMap((e) =>
        isVerifiedCitation(e) && e.fact.source === source
          ? [{ index: e.index, start: e.evidence.span.start, end: e.evidence.span.end }]
          : []
      )
      parts.push(`<section class="capture" id="capture-${i + 1}">
<h3>[${i + 1}] <code>${h(source)}</code></h3>
${record === undefined
  ? `<p>Capture text not available to this renderer.</p>`
  : `<p class="citation">sha256 <code>${h(record.sha256)}</code> · accessed ${h(record.accessedAt)} · ${recordBody(record).byteLength} bytes · ${h(recordBody(record).contentType)}${record.format === captureFormat ? "" : ` · extraction ${h(record.extraction)} · body sha256 <code>${h(record.body.sha256)}</code>`}</p>
<pre>${highlightedCapture(record.text, spans, record.format === captureFormat ? [] : record.pages ?? [], i + 1)}</pre>`}
</section>`)
    })
  }
  // The excerpt a citation's link opens is outlined in the capture text (`:target`), every piece of it.
  const targeted = report.facts.filter(isVerifiedCitation).map((e) =>
    `#fact-${e.index}-excerpt:target ~ mark[data-facts~="${e.index}"] { background: #ffb347; outline: 2px solid #d9480f; }`
  ).join("\n")
  return HtmlPage.page("citegate: verified report", style + (targeted === "" ? "" : `\n${targeted}\n`), parts.join("\n"))
}

/**
 * Rejected values are where a reader looks for the difference (a double space,
 * a zero-width character): they keep their whitespace (`code.value` is
 * `pre-wrap`) and show controls and invisible characters as `\u{…}`, as in the
 * text rendering.
 */
const rejection = (failure: FactRejection): string => {
  const d = Describe.factError(failure.error)
  return `<div class="failure" data-tag="${h(failure.error._tag)}">
<div><strong>Fact ${factNumber(failure.index)}</strong> (label <code class="value">${h(terminal(failure.label))}</code>): <code>${h(failure.error._tag)}</code>: ${h(d.title)}</div>
<ul>${d.fields.map(([name, value]) => `<li>${h(name)}: <code class="value">${h(terminalField(name, value))}</code></li>`).join("")}</ul>
<div>What to do: ${h(d.fix)}</div>
</div>`
}

const rejected = (error: VerifyError): string =>
  Match.valueTags(error, {
    InvalidReport: (e) =>
      page(
        "citegate: report rejected",
        `<h1>Report rejected</h1>
<p class="outcome rejected">The report is not a valid report. Nothing in it is accepted.</p>
<ul>${e.issues.map((issue) => `<li><code>${h(terminal(formatPath(issue.path)))}</code>: ${h(terminal(issue.message))}</li>`).join("")}${
          Describe.omittedIssues(e.omitted).map((line) => `<li>${h(line)}</li>`).join("")
        }</ul>`
      ),
    ReportRejected: (e) =>
      page(
        "citegate: report rejected",
        `<h1>Report rejected</h1>
<p class="outcome rejected">${plural(e.failures.length, "failure")}. Nothing in this report is accepted.</p>
${e.failures.map(rejection).join("\n")}`
      ),
    VerificationTimeout: (e) => {
      const d = Describe.verifyError(e)
      return page(
        "citegate: report rejected",
        `<h1>Report rejected</h1>
<p class="outcome rejected">${h(d.title)}. Nothing in this report is accepted.</p>
<ul>${d.fields.map(([name, value]) => `<li>${h(name)}: <span class="value">${h(value)}</span></li>`).join("")}</ul>
<div>What to do: ${h(d.fix)}</div>`
      )
    }
  })

export const render = (rendering: Rendering): string =>
  withMatching(
    "html",
    Match.valueTags(rendering, {
      Verified: ({ captures, humanReview, judge, report }) => verified(report, captures, judge !== undefined || humanReview !== undefined),
      Rejected: ({ error }) => rejected(error)
    }),
    rendering.matching
  )
