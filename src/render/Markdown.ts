/**
 * Markdown rendering. Verified excerpts are block quotes under a "Verified
 * excerpt" marker; conclusions and explanations are plain paragraphs. Every
 * untrusted value is escaped so no link, image or HTML can form.
 */
import { Match } from "effect"
import type { FactRejection, VerifyError } from "../Errors.js"
import { formatPath } from "../Errors.js"
import { isVerifiedCitation } from "../Domain.js"
import type { VerifiedReport } from "../VerifiedReport.js"
import * as Describe from "./Describe.js"
import { markdown as md } from "./Escape.js"
import { counts, digestPrefix, provenanceNote, type Rendering, unavailableNote } from "./Rendering.js"

const blockquote = (text: string) =>
  text.split(/\r\n|\r|\n/).map((line) => (line === "" ? ">" : `> ${md(line)}`)).join("\n")

const rejection = (failure: FactRejection): string => {
  const d = Describe.factError(failure.error)
  return [
    `- **Fact ${failure.index}** (label ${md(failure.label)}): \`${failure.error._tag}\`: ${md(d.title)}`,
    ...d.fields.map(([name, value]) => `  - ${md(name)}: ${md(value)}`),
    `  - what to do: ${md(d.fix)}`
  ].join("\n")
}

const verified = (report: VerifiedReport): string => {
  const n = counts(report)
  const out: Array<string> = [
    "# Verified report",
    "",
    report.outcome === "grounded"
      ? `**Outcome: grounded** (${report.mode} mode): ${n.cited} verified citation(s), ${n.unavailable} unavailable.`
      : `**Outcome: no evidence** (${report.mode} mode): no cited fact was verified; nothing here is grounded.`,
    "",
    `*${provenanceNote}*`,
    ""
  ]
  for (const entry of report.facts) {
    out.push(`## Fact ${entry.index}: ${md(entry.fact.label)}`, "")
    if (isVerifiedCitation(entry)) {
      const { fact, evidence } = entry
      out.push(
        "**Verified excerpt** (verbatim from the capture):",
        "",
        blockquote(fact.snippet),
        "",
        `Source: ${md(fact.source)}  `,
        `Capture: sha256 \`${digestPrefix(fact.captureSha256)}\`…, accessed ${md(evidence.accessedAt)}, ` +
          `characters ${evidence.span.start}–${evidence.span.end}, ${evidence.occurrences} occurrence(s)`,
        ""
      )
    } else if (entry.fact.state === "unavailable") {
      out.push(
        "**Unavailable.** Reason given by the drafter (unverified explanation, not evidence):",
        "",
        md(entry.fact.reason),
        ""
      )
    }
  }
  out.push(`*${unavailableNote}*`, "")
  if (report.retractions.length > 0) {
    out.push("## Retracted facts (drop mode)", "", ...report.retractions.map(rejection), "")
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
        ...e.issues.map((issue) => `- ${md(formatPath(issue.path))}: ${md(issue.message)}`),
        ""
      ].join("\n"),
    ReportRejected: (e) =>
      [
        "# Report rejected",
        "",
        `${e.failures.length} failure(s). Nothing in this report is accepted.`,
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
  Match.valueTags(rendering, {
    Verified: ({ report }) => verified(report),
    Rejected: ({ error }) => rejected(error)
  })
