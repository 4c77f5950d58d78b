/**
 * Renderings of verified answers: text, Markdown, HTML and JSON. Pure
 * functions of an `AnswerRendering`; every value from an answer or a capture
 * is untrusted and escaped for its format (render/Escape.ts).
 *
 * Each grounded claim is shown with footnote markers; each footnote gives the
 * verified quote, source, capture and span. Removed claims are shown struck
 * out with the reasons; retracted citations and uncited sentences are listed.
 *
 * @since 0.1.0
 */
import * as Match from "effect/Match"
import * as Schema from "effect/Schema"
import { AnswerError, type CitationRejection, type UncitedSentence } from "../Errors.js"
import * as CompiledEncode from "../internal/compiledEncode.js"
import * as Describe from "../render/Describe.js"
import { html as h, markdown as md, markdownBlock, markdownCode, markdownCodeField, markdownUrl, quoted, terminal, terminalField } from "../render/Escape.js"
import * as HtmlPage from "../render/HtmlPage.js"
import * as JudgeSection from "../render/JudgeSection.js"
import * as Review from "../render/Review.js"
import { JudgeReview as JudgeReviewSchema } from "../review/Records.js"
import * as JsonLd from "../render/JsonLd.js"
import type { Format } from "../render/Render.js"
import { sourceText } from "../render/HtmlPage.js"
import {
  ambiguityNote,
  anchorText,
  captureReads,
  digestPrefix,
  isNormalized,
  normalizedNote,
  visibilityNote,
  plural,
  withMatching
} from "../render/Rendering.js"
import { capturedSources, sourcesOf } from "./RenderCaptures.js"
import * as RenderDocuments from "./RenderDocuments.js"
import {
  AnswerRendering,
  type RetractedCitation,
  type VerifiedAnswer,
  VerifiedAnswer as VerifiedAnswerSchema
} from "./Records.js"

/** The ambiguity flag, the normalised-match label and the visibility mark of a verified citation, when they apply (as for reports). */
const matchNotes = (evidence: Parameters<typeof ambiguityNote>[0] & Parameters<typeof normalizedNote>[0] & Parameters<typeof visibilityNote>[0]) =>
  [ambiguityNote(evidence), normalizedNote(evidence), visibilityNote(evidence)].filter((note): note is string => note !== undefined)

/** The same notes tagged for the text rendering: `AMBIGUOUS …`, `MATCH …`. */
const taggedNotes = (evidence: Parameters<typeof matchNotes>[0]) =>
  [
    ...(ambiguityNote(evidence) === undefined ? [] : [`AMBIGUOUS ${ambiguityNote(evidence)}`]),
    ...(normalizedNote(evidence) === undefined ? [] : [`MATCH     ${normalizedNote(evidence)}`]),
    ...(visibilityNote(evidence) === undefined ? [] : [`VISIBILITY ${visibilityNote(evidence)}`])
  ]

/** What an answer rendering shows (answer/Records.ts, where `render/Repair.ts` reads it too). */
export { AnswerRendering }

export const answerResultFormat = "citegate.answer-result/1" as const

/** The JSON rendering; decode with `decodeOptions`. */
export const RenderedAnswer = Schema.Union(
  Schema.Struct({
    format: Schema.Literal(answerResultFormat),
    status: Schema.Literal("verified"),
    answer: VerifiedAnswerSchema,
    // --- semantic review hooks ---
    judge: Schema.optional(JudgeReviewSchema)
  }),
  Schema.Struct({
    format: Schema.Literal(answerResultFormat),
    status: Schema.Literal("rejected"),
    error: AnswerError
  })
)
export type RenderedAnswer = typeof RenderedAnswer.Type

// `Schema.encodeSync(RenderedAnswer)`, compiled once (internal/compiledEncode.ts): the service renders one per request.
const encode = CompiledEncode.encodeSync(RenderedAnswer)

/** Footnote numbers: every verified citation of the answer, numbered from 1 in claim order. */
const footnotes = (answer: VerifiedAnswer) => {
  let n = 0
  return answer.claims.map((claim) => claim.citations.map((citation) => ({ n: ++n, citation })))
}

const headline = (answer: VerifiedAnswer) => {
  const s = answer.summary
  return answer.outcome === "grounded"
    ? `GROUNDED (${answer.mode} mode): ${s.claimsGrounded} of ${plural(s.claims, "claim")} grounded, ` +
      `${s.citationsVerified} of ${plural(s.citations, "citation")} verified, ${s.claimsRemoved} removed` + RenderDocuments.headlineNote(answer)
    : `NO EVIDENCE (${answer.mode} mode): no claim was grounded; nothing here is grounded` + RenderDocuments.headlineNote(answer)
}

const reasonLine = (r: RetractedCitation) => `${r.error._tag}: ${Describe.citationError(r.error).title}`

// --- text -------------------------------------------------------------------------------------

// Quotes are quoted; uncited sentences have their own line (textUncited), so no description here has a sentence field.
const textDescription = (d: Describe.Description, by: string) => [
  ...d.fields.map(([name, value]) => `${by}${name}: ${name === "quote" ? quoted(value) : terminalField(name, value)}`),
  `${by}fix: ${d.fix}`
]

const textRejection = (r: CitationRejection) => {
  const d = Describe.citationError(r.error)
  return [`  claim ${quoted(r.claimId)} citation ${r.citationIndex + 1}: ${r.error._tag}: ${d.title}`, ...textDescription(d, "      ")]
}

const textUncited = (u: UncitedSentence) => [`  UncitedSentence${u.line === null ? "" : ` (line ${u.line})`}: ${quoted(u.sentence)}`]

const text = (rendering: AnswerRendering): string =>
  Match.valueTags(rendering, {
    Verified: ({ answer, judge }) => {
      const notes = footnotes(answer)
      const lines = [`citegate answer: ${headline(answer)}`, Review.provenanceNoteOf({}, judge !== undefined), ""]
      answer.claims.forEach((claim, i) => {
        lines.push(`${quoted(claim.text)}${notes[i]!.map((f) => `[${f.n}]`).join("")}  (claim ${quoted(claim.id)})`)
        for (const r of claim.retracted) lines.push(`    RETRACTED citation ${r.index + 1}: ${reasonLine(r)}`)
      })
      if (answer.claims.length === 0) lines.push("(no grounded claims)")
      lines.push("", "Footnotes:")
      for (const f of notes.flat()) {
        const { citation, evidence } = f.citation
        lines.push(
          `[${f.n}] VERIFIED QUOTE ${quoted(citation.quote)}`,
          `    source  ${terminal(citation.source)}`,
          `    capture sha256 ${digestPrefix(citation.captureSha256)}…  accessed ${evidence.accessedAt}  span ${evidence.span.start}–${evidence.span.end}`,
          ...(anchorText(evidence) === undefined ? [] : [`    anchor    ${terminal(anchorText(evidence)!)}`]),
          ...taggedNotes(evidence).map((note) => `    ${note}`),
          // A normalised match is not the capture's text: show what the capture says, as reports do.
          ...(isNormalized(evidence) && captureReads(evidence) !== undefined ? [`    capture reads  ${quoted(captureReads(evidence)!)}`] : [])
        )
      }
      if (answer.removed.length > 0) {
        lines.push("", `Removed claims (${answer.removed.length}), with their text:`)
        for (const claim of answer.removed) {
          lines.push(`  REMOVED ${quoted(claim.id)}: ${quoted(claim.text)}`)
          for (const r of claim.reasons) {
            lines.push(`    citation ${r.index + 1}: ${reasonLine(r)}`, ...textDescription(Describe.citationError(r.error), "      "))
          }
        }
      }
      lines.push(...RenderDocuments.text(answer))
      if (answer.uncited.length > 0) {
        lines.push("", `Uncited factual-looking sentences (${answer.uncited.length}):`, ...answer.uncited.flatMap(textUncited))
      }
      return lines.join("\n") + "\n"
    },
    Rejected: ({ error }) => {
      const d = Describe.answerError(error)
      const lines = [`citegate answer: REJECTED: ${error._tag}: ${d.title}; nothing in this answer is accepted`]
      if (error._tag === "AnswerRejected") {
        lines.push(...error.citations.flatMap(textRejection), ...error.uncited.flatMap(textUncited))
      } else if (error._tag === "Evi1Invalid") {
        for (const issue of error.issues) {
          const di = Describe.evi1Issue(issue)
          lines.push(`  line ${issue.line}: ${issue._tag}: ${di.title}`, ...textDescription(di, "      ").filter((l) => !l.startsWith("      line:")))
        }
        lines.push(...Describe.omittedIssues(error.omitted).map((line) => `  ${line}`))
      } else {
        lines.push(...textDescription(d, "  "))
      }
      return lines.join("\n") + "\n"
    }
  })

// --- Markdown ---------------------------------------------------------------------------------

const mdDescription = (d: Describe.Description) => [
  ...d.fields.filter(([name]) => name !== "quote").map(([name, value]) => `- ${md(name)}: ${markdownCodeField(name, value)}`),
  ...d.fields.filter(([name]) => name === "quote").flatMap(([, value]) => ["", "The quote, exactly as given:", "", markdownBlock(value), ""]),
  `- what to do: ${md(d.fix)}`
]

const markdown = (rendering: AnswerRendering): string =>
  Match.valueTags(rendering, {
    Verified: ({ answer, judge }) => {
      const notes = footnotes(answer)
      const out = ["# Verified answer", "", `**${md(headline(answer))}**`, "", `*${Review.provenanceNoteOf({}, judge !== undefined)}*`, ""]
      answer.claims.forEach((claim, i) => {
        // Untrusted text never starts a line (it could start a list or a block); the claim number does.
        out.push(`**Claim ${i + 1}.** ${md(claim.text)} ${notes[i]!.map((f) => `\\[${f.n}\\]`).join("")}`, "")
        for (const r of claim.retracted) out.push(`- *Retracted citation ${r.index + 1}:* ${md(reasonLine(r))}`, "")
      })
      if (answer.claims.length === 0) out.push("*No grounded claims.*", "")
      if (notes.flat().length > 0) out.push("## Footnotes", "")
      for (const f of notes.flat()) {
        const { citation, evidence } = f.citation
        const reads = isNormalized(evidence) ? captureReads(evidence) : undefined
        out.push(
          isNormalized(evidence)
            ? `**\\[${f.n}\\]** verified quote (NOT verbatim: matched under ${md(evidence.method ?? "")}), as the answer gives it:`
            : `**\\[${f.n}\\]** verified quote (verbatim from the capture):`,
          "",
          markdownBlock(citation.quote),
          "",
          ...(reads === undefined ? [] : ["The capture's own text at this span:", "", markdownBlock(reads), ""]),
          `Source: ${markdownUrl(citation.source)}  `,
          `Capture: sha256 \`${digestPrefix(citation.captureSha256)}\`…, accessed ${md(evidence.accessedAt)}, characters ${evidence.span.start}–${evidence.span.end}` +
            (anchorText(evidence) === undefined ? "" : `, ${md(anchorText(evidence)!)}`),
          "",
          ...matchNotes(evidence).flatMap((note) => [`**${md(note)}.**`, ""])
        )
      }
      if (answer.removed.length > 0) {
        out.push(`## Removed claims (${answer.removed.length})`, "")
        for (const claim of answer.removed) {
          out.push(`~~${md(claim.text)}~~ (claim ${markdownCode(claim.id)}): removed, no citation verified`, "")
          for (const r of claim.reasons) out.push(`### Citation ${r.index + 1}: \`${r.error._tag}\``, "", ...mdDescription(Describe.citationError(r.error)), "")
        }
      }
      out.push(...RenderDocuments.markdown(answer))
      if (answer.uncited.length > 0) {
        out.push(`## Uncited factual-looking sentences (${answer.uncited.length})`, "")
        for (const u of answer.uncited) out.push(`- ${u.line === null ? "" : `line ${u.line}, `}sentence: ${md(u.sentence)}`)
        out.push("")
      }
      return out.join("\n")
    },
    Rejected: ({ error }) => {
      const d = Describe.answerError(error)
      const out = ["# Answer rejected", "", `\`${error._tag}\`: ${md(d.title)}. Nothing in this answer is accepted.`, ""]
      if (error._tag === "AnswerRejected") {
        for (const r of error.citations) {
          out.push(`## Claim ${markdownCode(r.claimId)}, citation ${r.citationIndex + 1}: \`${r.error._tag}\``, "", ...mdDescription(Describe.citationError(r.error)), "")
        }
        for (const u of error.uncited) out.push(`- UncitedSentence${u.line === null ? "" : ` (line ${u.line})`}: ${md(u.sentence)}`)
      } else if (error._tag === "Evi1Invalid") {
        for (const issue of error.issues) {
          out.push(`## Line ${issue.line}: \`${issue._tag}\``, "", ...mdDescription(Describe.evi1Issue(issue)), "")
        }
        out.push(...Describe.omittedIssues(error.omitted).map((line) => `*${md(line)}*`))
      } else {
        out.push(...mdDescription(d))
      }
      return out.join("\n") + "\n"
    }
  })

// --- HTML -------------------------------------------------------------------------------------

const style = `
body { font: 15px/1.5 system-ui, sans-serif; max-width: 60rem; margin: 2rem auto; padding: 0 1rem; color: #1d1d1f; }
.outcome { padding: .75rem 1rem; border-radius: 6px; font-weight: 600; }
.outcome.grounded { background: #e7f6ea; border: 1px solid #3a9d52; }
.outcome.no_evidence, .outcome.rejected { background: #fdecea; border: 1px solid #c0392b; }
.note { color: #555; font-style: italic; }
p.claim, p.removed { white-space: pre-wrap; }
del { color: #8a1c1c; }
blockquote.quote { margin: .5rem 0; padding: .5rem 1rem; background: #f3f6fb; border-left: 4px solid #2d6cdf; white-space: pre-wrap; }
code.value { white-space: pre-wrap; word-break: break-word; background: #f1f1f1; }
.failure { border-left: 4px solid #c0392b; padding-left: .75rem; margin: .5rem 0; }
sup a { text-decoration: none; }
`

const page = (title: string, body: string) => HtmlPage.page(title, style, body)


const htmlDescription = (tag: string, d: Describe.Description, heading: string) =>
  `<div class="failure" data-tag="${h(tag)}">
<div>${heading}<code>${h(tag)}</code>: ${h(d.title)}</div>
<ul>${d.fields.map(([name, value]) => `<li>${h(name)}: <code class="value">${h(terminalField(name, value))}</code></li>`).join("")}</ul>
<div>What to do: ${h(d.fix)}</div>
</div>`

const html = (rendering: AnswerRendering): string =>
  Match.valueTags(rendering, {
    Verified: ({ answer, captures, judge }) => {
      const notes = footnotes(answer)
      const sources = sourcesOf(answer)
      const parts = [
        "<h1>Verified answer</h1>",
        `<p class="outcome ${answer.outcome}">${h(headline(answer))}</p>`,
        `<p class="note">${h(Review.provenanceNoteOf({}, judge !== undefined))}</p>`
      ]
      answer.claims.forEach((claim, i) => {
        const marks = notes[i]!.map((f) => `<sup><a href="#fn-${f.n}" id="ref-${f.n}">[${f.n}]</a></sup>`).join("")
        parts.push(`<p class="claim" id="claim-${claim.index}" data-claim="${h(claim.id)}">${h(claim.text)}${marks}</p>`)
        for (const r of claim.retracted) {
          parts.push(htmlDescription(r.error._tag, Describe.citationError(r.error), `Retracted citation ${r.index + 1}: `))
        }
      })
      if (notes.flat().length > 0) {
        parts.push("<h2>Footnotes</h2>", "<ol class=\"footnotes\">")
        for (const f of notes.flat()) {
          const { citation, evidence } = f.citation
          const reads = isNormalized(evidence) ? captureReads(evidence) : undefined
          const captureNumber = sources.indexOf(citation.source) + 1
          parts.push(`<li id="fn-${f.n}"><blockquote class="quote">${h(citation.quote)}</blockquote>
Source <code>${h(citation.source)}</code> · capture sha256 <code>${digestPrefix(citation.captureSha256)}…</code> · accessed ${h(evidence.accessedAt)} · characters ${evidence.span.start}–${evidence.span.end}${
            anchorText(evidence) === undefined ? "" : ` · ${h(anchorText(evidence)!)}`
          }${matchNotes(evidence).map((note) => ` · <strong>${h(note)}</strong>`).join("")}${
            // Only where the capture's text is on the page: a link never points at nothing.
            captures.has(citation.source)
              ? ` · <a href="#fn-${f.n}-excerpt">open in the captured text</a><sup><a href="#capture-${captureNumber}">[${captureNumber}]</a></sup>`
              : ""
          } <a href="#ref-${f.n}">↩</a>${
            reads === undefined ? "" : `\n<div class="capture-reads">The capture's own text at this span: <q>${sourceText(reads)}</q></div>`
          }</li>`)
        }
        parts.push("</ol>")
      }
      if (answer.removed.length > 0) {
        parts.push(`<h2>Removed claims (${answer.removed.length})</h2>`)
        for (const claim of answer.removed) {
          parts.push(`<p class="removed" data-claim="${h(claim.id)}"><del>${h(claim.text)}</del> (removed: no citation verified)</p>`)
          for (const r of claim.reasons) parts.push(htmlDescription(r.error._tag, Describe.citationError(r.error), `Citation ${r.index + 1}: `))
        }
      }
      const documentLevel = RenderDocuments.html(answer)
      if (documentLevel !== "") parts.push(documentLevel)
      if (answer.uncited.length > 0) {
        parts.push(`<h2>Uncited factual-looking sentences (${answer.uncited.length})</h2>`, "<ul>")
        for (const u of answer.uncited) parts.push(`<li>${u.line === null ? "" : `line ${u.line}: `}<code class="value">${h(terminal(u.sentence))}</code></li>`)
        parts.push("</ul>")
      }
      const captured = capturedSources(answer, captures)
      if (captured.html !== "") parts.push(captured.html)
      return HtmlPage.page("citegate: verified answer", style + (documentLevel === "" ? "" : RenderDocuments.htmlStyle) + captured.style, parts.join("\n"))
    },
    Rejected: ({ error }) => {
      const d = Describe.answerError(error)
      const parts = [
        "<h1>Answer rejected</h1>",
        `<p class="outcome rejected"><code>${h(error._tag)}</code>: ${h(d.title)}. Nothing in this answer is accepted.</p>`
      ]
      if (error._tag === "AnswerRejected") {
        for (const r of error.citations) {
          parts.push(htmlDescription(r.error._tag, Describe.citationError(r.error), `Claim <code class="value">${h(terminal(r.claimId))}</code>, citation ${r.citationIndex + 1}: `))
        }
        for (const u of error.uncited) parts.push(htmlDescription(u._tag, Describe.uncitedSentence(u), ""))
      } else if (error._tag === "Evi1Invalid") {
        for (const issue of error.issues) parts.push(htmlDescription(issue._tag, Describe.evi1Issue(issue), `Line ${issue.line}: `))
        for (const line of Describe.omittedIssues(error.omitted)) parts.push(`<p>${h(line)}</p>`)
      } else {
        parts.push(htmlDescription(error._tag, d, ""))
      }
      return page("citegate: answer rejected", parts.join("\n"))
    }
  })

// --- JSON -------------------------------------------------------------------------------------

export const toResult = (rendering: AnswerRendering): RenderedAnswer =>
  Match.valueTags(rendering, {
    Verified: ({ answer, judge }): RenderedAnswer => ({
      format: answerResultFormat,
      status: "verified",
      answer,
      // --- semantic review hooks ---
      ...(judge === undefined ? {} : { judge })
    }),
    Rejected: ({ error }): RenderedAnswer => ({ format: answerResultFormat, status: "rejected", error })
  })

/** The JSON value the `json` format writes (`citegate.answer-result/1`). */
export const toJson = (rendering: AnswerRendering): typeof RenderedAnswer.Encoded => encode(toResult(rendering))

const json = (rendering: AnswerRendering): string => JSON.stringify(toJson(rendering), null, 2) + "\n"

export const render = (format: Format, rendering: AnswerRendering): string =>
  // --- semantic review hooks: the judge's section after the provenance rendering (render/JudgeSection.ts) ---
  JudgeSection.withJudge(format, renderProvenance(format, rendering), rendering._tag === "Verified" ? rendering.judge : undefined)

const renderProvenance = (format: Format, rendering: AnswerRendering): string =>
  Match.value(format).pipe(
    Match.when("text", () => withMatching("text", text(rendering), rendering.matching)),
    Match.when("json", () => json(rendering)),
    Match.when("markdown", () => withMatching("markdown", markdown(rendering), rendering.matching)),
    Match.when("html", () => withMatching("html", html(rendering), rendering.matching)),
    Match.when("jsonld", () => JsonLd.answer(toJson(rendering) as unknown as JsonLd.JsonObject)),
    Match.exhaustive
  )
