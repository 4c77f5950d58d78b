/** Plain-text rendering for terminals and logs; every untrusted value is made control-safe. */
import * as Match from "effect/Match"
import type { FactRejection, VerifyError } from "../Errors.js"
import { formatPath } from "../Errors.js"
import { isVerifiedCitation } from "../Domain.js"
import type { VerifiedReport } from "../verify/VerifiedReport.js"
import * as Describe from "./Describe.js"
import * as Review from "./Review.js"
import { quoted, terminal, terminalField } from "./Escape.js"
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

const indent = (lines: ReadonlyArray<string>, by = "    ") => lines.map((line) => by + line)

/** Fields whose exact characters matter (spaces included): shown quoted. */
const quotedFields = new Set(["snippet", "label", "prefix", "suffix", "nearest passage"])

const description = (d: Describe.Description): Array<string> => [
  ...d.fields.map(([name, value]) =>
    `${name}: ${quotedFields.has(name) ? quoted(value) : terminalField(name, value)}`
  ),
  `fix: ${d.fix}`
]

const rejection = (failure: FactRejection): Array<string> => {
  const d = Describe.factError(failure.error)
  return [`[${factNumber(failure.index)}] ${quoted(failure.label)}: ${failure.error._tag}: ${d.title}`, ...indent(description(d))]
}

const verified = (report: VerifiedReport, reviewed: boolean): string => {
  const n = counts(report)
  const headline = report.outcome === "grounded"
    ? `citegate: GROUNDED (${report.mode} mode): ${plural(n.cited, "verified citation")}, ${n.unavailable} unavailable`
    : `citegate: NO EVIDENCE (${report.mode} mode): no cited fact was verified; nothing here is grounded`
  const lines = [headline, Review.provenanceNoteOf(report, reviewed), ""]
  for (const entry of report.facts) {
    if (isVerifiedCitation(entry)) {
      const { fact, evidence } = entry
      lines.push(
        `[${factNumber(entry.index)}] ${quoted(fact.label)}`,
        `    VERIFIED EXCERPT  ${quoted(fact.snippet)}`,
        `    source    ${terminal(fact.source)}`,
        `    capture   sha256 ${digestPrefix(fact.captureSha256)}…  accessed ${evidence.accessedAt}`,
        `    span      ${evidence.span.start}–${evidence.span.end} (${occurrencesText(evidence.occurrences)})`
      )
      const anchor = anchorText(evidence)
      if (anchor !== undefined) lines.push(`    anchor    ${terminal(anchor)}`)
      const ambiguity = ambiguityNote(evidence)
      if (ambiguity !== undefined) lines.push(`    AMBIGUOUS ${ambiguity}`)
      const visibility = visibilityNote(evidence)
      if (visibility !== undefined) lines.push(`    VISIBILITY ${visibility}`)
      const normalized = normalizedNote(evidence)
      if (normalized !== undefined) {
        lines.push(`    MATCH     ${normalized}`)
        const reads = captureReads(evidence)
        if (reads !== undefined) lines.push(`    capture reads  ${quoted(reads)}`)
      }
    } else if (entry.fact.state === "unavailable") {
      lines.push(
        `[${factNumber(entry.index)}] ${quoted(entry.fact.label)}`,
        `    UNAVAILABLE  reason (unverified explanation): ${quoted(entry.fact.reason)}`
      )
    }
  }
  if (report.facts.length === 0) lines.push("(no facts)")
  if (n.unavailable > 0) lines.push("", unavailableNote)
  if (report.numberReview !== undefined) {
    lines.push("", `${Review.heading(report.numberReview)}:`)
    for (const fact of report.numberReview.facts) {
      const { details, headline } = Review.factLines(fact)
      lines.push(`  ${terminal(headline)}`, ...details.map((d) => `      ${terminal(d)}`))
    }
  }
  if (report.retractions.length > 0) {
    lines.push("", `Retracted in drop mode (${report.retractions.length}):`)
    for (const failure of report.retractions) lines.push(...indent(rejection(failure), "  "))
  }
  return lines.join("\n") + "\n"
}

const rejected = (error: VerifyError): string =>
  Match.valueTags(error, {
    InvalidReport: (e) =>
      [
        `citegate: REJECTED: the report is not a valid report (${plural(e.issues.length + (e.omitted ?? 0), "issue")})`,
        ...e.issues.map((issue) => `  ${terminal(formatPath(issue.path))}: ${terminal(issue.message)}`),
        ...Describe.omittedIssues(e.omitted).map((line) => `  ${line}`)
      ].join("\n") + "\n",
    ReportRejected: (e) => {
      const facts = new Set(e.failures.map((f) => f.index)).size
      return [
        `citegate: REJECTED: ${plural(e.failures.length, "failure")} in ${plural(facts, "fact")}; nothing in this report is accepted`,
        ...e.failures.flatMap((failure) => indent(rejection(failure), "  "))
      ].join("\n") + "\n"
    },
    VerificationTimeout: (e) =>
      [
        `citegate: REJECTED: ${Describe.verifyError(e).title.toLowerCase()}; nothing in this report is accepted`,
        ...indent(description(Describe.verifyError(e)), "  ")
      ].join("\n") + "\n"
  })

export const render = (rendering: Rendering): string =>
  withMatching(
    "text",
    Match.valueTags(rendering, {
      Verified: ({ humanReview, judge, report }) => verified(report, judge !== undefined || humanReview !== undefined),
      Rejected: ({ error }) => rejected(error)
    }),
    rendering.matching
  )

/** A configuration, run-directory or capture error as text lines (for stderr). */
export const describe = (tag: string, d: Describe.Description): string =>
  [`${tag}: ${d.title}`, ...indent(description(d), "  ")].join("\n") + "\n"
