/**
 * Markdown rendering (CommonMark + GFM). Verified excerpts and rejected
 * snippets are fenced code blocks, so every character and space of them shows
 * as it is (a double space stays visible) and nothing in them is markup. Other
 * untrusted values are code spans or minimally escaped text placed mid-line:
 * no link, image, emphasis or HTML can form from a source or a report. The
 * only links are the sources of verified citations, as autolinks, and only for
 * canonical http(s) URLs.
 */
import * as Match from "effect/Match"
import type { FactRejection, VerifyError } from "../Errors.js"
import { formatPath } from "../Errors.js"
import { isVerifiedCitation } from "../Domain.js"
import type { VerifiedReport } from "../verify/VerifiedReport.js"
import * as Describe from "./Describe.js"
import * as Review from "./Review.js"
import { markdown as md, markdownBlock, markdownCode, markdownCodeField, markdownUrl } from "./Escape.js"
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
  isNormalized,
  type Rendering,
  withMatching,
  unavailableNote
} from "./Rendering.js"

/** Fields whose exact characters and spacing the reader must compare: shown as blocks. */
const blockFields = new Set(["snippet"])

const rejection = (failure: FactRejection): string => {
  const d = Describe.factError(failure.error)
  const inline = d.fields.filter(([name]) => !blockFields.has(name))
  const blocks = d.fields.filter(([name]) => blockFields.has(name))
  return [
    `### Fact ${factNumber(failure.index)}: \`${failure.error._tag}\`: ${md(d.title)}`,
    "",
    `- label: ${markdownCode(failure.label)}`,
    ...inline.map(([name, value]) => `- ${md(name)}: ${markdownCodeField(name, value)}`),
    "",
    ...blocks.flatMap(([name, value]) => [`The ${md(name)}, exactly as given:`, "", markdownBlock(value), ""]),
    `What to do: ${md(d.fix)}`,
    ""
  ].join("\n")
}

const verified = (report: VerifiedReport, reviewed: boolean): string => {
  const n = counts(report)
  const out: Array<string> = [
    "# Verified report",
    "",
    report.outcome === "grounded"
      ? `**Outcome: grounded** (${report.mode} mode): ${plural(n.cited, "verified citation")}, ${n.unavailable} unavailable.`
      : `**Outcome: no evidence** (${report.mode} mode): no cited fact was verified; nothing here is grounded.`,
    "",
    `*${Review.provenanceNoteOf(report, reviewed)}*`,
    ""
  ]
  for (const entry of report.facts) {
    out.push(`## Fact ${factNumber(entry.index)}: ${md(entry.fact.label)}`, "")
    if (isVerifiedCitation(entry)) {
      const { fact, evidence } = entry
      out.push(
        isNormalized(evidence)
          ? `**Verified excerpt** (NOT verbatim: matched under ${md(evidence.method ?? "")}), as the report gives it:`
          : "**Verified excerpt** (verbatim from the capture):",
        "",
        markdownBlock(fact.snippet),
        "",
        `Source: ${markdownUrl(fact.source)}  `,
        `Capture: sha256 \`${digestPrefix(fact.captureSha256)}\`…, accessed ${md(evidence.accessedAt)}, ` +
          `characters ${evidence.span.start}–${evidence.span.end}, ${occurrencesText(evidence.occurrences)}` +
          (anchorText(evidence) === undefined ? "" : `, ${md(anchorText(evidence)!)}`),
        ""
      )
      const ambiguity = ambiguityNote(evidence)
      if (ambiguity !== undefined) out.push(`**Ambiguous:** ${md(ambiguity)}.`, "")
      const visibility = visibilityNote(evidence)
      if (visibility !== undefined) out.push(`**Visibility: ${md(visibility)}.**`, "")
      const normalized = normalizedNote(evidence)
      if (normalized !== undefined) {
        out.push(`**Match: ${md(normalized)}.**`, "")
        const reads = captureReads(evidence)
        if (reads !== undefined) out.push("The capture's own text at this span:", "", markdownBlock(reads), "")
      }
    } else if (entry.fact.state === "unavailable") {
      out.push(
        `**Unavailable.** Reason given by the drafter (unverified explanation, not evidence): ${md(entry.fact.reason)}`,
        ""
      )
    }
  }
  if (n.unavailable > 0) out.push(`*${unavailableNote}*`, "")
  if (report.numberReview !== undefined) {
    out.push(`## ${md(Review.heading(report.numberReview))}`, "")
    for (const fact of report.numberReview.facts) {
      const { details, headline } = Review.factLines(fact)
      out.push(`- **${md(headline)}**`, ...details.map((d) => `  - ${md(d)}`))
    }
    out.push("")
  }
  if (report.retractions.length > 0) {
    out.push(`## Retracted facts (drop mode): ${plural(report.retractions.length, "failure")}`, "", ...report.retractions.map(rejection))
  }
  return out.join("\n")
}

const rejected = (error: VerifyError): string =>
  Match.valueTags(error, {
    InvalidReport: (e) =>
      [
        "# Report rejected",
        "",
        "The report is not a valid report. Nothing in it is accepted.",
        "",
        ...e.issues.map((issue) => `- ${markdownCode(formatPath(issue.path))}: ${md(issue.message)}`),
        ...Describe.omittedIssues(e.omitted).map((line) => `- ${line}`),
        ""
      ].join("\n"),
    ReportRejected: (e) =>
      [
        "# Report rejected",
        "",
        `${plural(e.failures.length, "failure")} in ${plural(new Set(e.failures.map((f) => f.index)).size, "fact")}. ` +
        "Nothing in this report is accepted.",
        "",
        ...e.failures.map(rejection),
        ""
      ].join("\n"),
    VerificationTimeout: (e) => {
      const d = Describe.verifyError(e)
      return [
        "# Report rejected",
        "",
        `${md(d.title)}. Nothing in this report is accepted.`,
        "",
        ...d.fields.map(([name, value]) => `- ${md(name)}: ${md(value)}`),
        "",
        md(d.fix),
        ""
      ].join("\n")
    }
  })

export const render = (rendering: Rendering): string =>
  withMatching(
    "markdown",
    Match.valueTags(rendering, {
      Verified: ({ humanReview, judge, report }) => verified(report, judge !== undefined || humanReview !== undefined),
      Rejected: ({ error }) => rejected(error)
    }),
    rendering.matching
  )
