/**
 * Recorded human review in renderings: each verified fact's current decision (and how many earlier
 * ones it superseded), in its own section after provenance and the judge, never inside a fact's
 * verified excerpt. Pure; every value from a report, a capture or a reviewer (labels, excerpts,
 * notes, reviewer names) is escaped for its format. JSON carries the `humanReview` object instead.
 *
 * @since 0.3.0
 */
import type { DecisionLog, HumanReview, RecordedDecision } from "../review/Records.js"
import { cut } from "../internal/bounded.js"
import { maxShownLength } from "./Describe.js"
import { html as h, markdown as md, quoted, terminal } from "./Escape.js"
import { withSection } from "./Section.js"

const title = "Human review (recorded decisions)"

const intro =
  "What reviewers recorded about verified excerpts: a person's decision, kept apart from provenance, " +
  "from the number adapter and from the judge. The log is append-only; a later decision about a fact supersedes an earlier one."

const who = (d: RecordedDecision) =>
  `#${d.seq} by ${d.record.reviewer} at ${d.record.recordedAt} (report ${d.record.report.slice(0, 12)}…)`

const factLine = (d: RecordedDecision) =>
  `fact ${d.record.fact.index + 1} ${JSON.stringify(cut(d.record.fact.label, maxShownLength))}: ${d.record.decision.toUpperCase()}`

const status = (d: RecordedDecision) => (d.supersededBy === null ? "current" : `superseded by #${d.supersededBy}`)

const supersededText = (n: number) => (n === 0 ? "" : ` (supersedes ${n} earlier decision${n === 1 ? "" : "s"}, kept in the log)`)

const note = (d: RecordedDecision) => cut(d.record.note, 2_000)

// --- the section beside a verified report ---------------------------------

export const text = (r: HumanReview): string =>
  [
    "",
    `${title}:`,
    `  ${intro}`,
    ...r.facts.flatMap(({ current, superseded }) => [
      `  ${terminal(factLine(current))}${supersededText(superseded)}`,
      `    ${terminal(who(current))}`,
      ...(current.record.note === "" ? [] : [`    note ${quoted(note(current))}`])
    ])
  ].join("\n") + "\n"

export const markdown = (r: HumanReview): string =>
  [
    "",
    `## ${title}`,
    "",
    `*${md(intro)}*`,
    "",
    ...r.facts.flatMap(({ current, superseded }) => [
      `- **${md(factLine(current))}**${md(supersededText(superseded))}: ${md(who(current))}` +
      (current.record.note === "" ? "" : `; note: ${md(note(current))}`)
    ]),
    ""
  ].join("\n")

export const html = (r: HumanReview): string =>
  [
    `<section class="human-review" id="human-review">`,
    `<h2>${h(title)}</h2>`,
    `<p class="note">${h(intro)}</p>`,
    "<ul>",
    ...r.facts.map(({ current, superseded }) =>
      `<li data-decision="${h(current.record.decision)}"><strong>${h(factLine(current))}</strong>${h(supersededText(superseded))}: ${h(who(current))}` +
      (current.record.note === "" ? "" : `<div class="review-note">${h(note(current))}</div>`) + "</li>"
    ),
    "</ul>",
    "</section>"
  ].join("\n")

/** A page with the section added: after text and Markdown, before `</body>` in HTML; unchanged without decisions and for JSON. */
export const withHumanReview = (format: string, page: string, review: HumanReview | undefined): string => {
  if (review === undefined || format === "json" || format === "jsonld") return page
  return withSection(format, page, review, { html, markdown, text })
}

// --- the whole log (`run-pipeline review list`) --------------------------------

const logLines = (log: DecisionLog) =>
  log.decisions.map((d) => ({
    head: `${factLine(d)} [${status(d)}]`,
    who: who(d),
    excerpt: cut(d.record.fact.excerpt, maxShownLength),
    where: `${d.record.fact.source} capture ${d.record.fact.captureSha256.slice(0, 12)}… span ${d.record.fact.span.start}–${d.record.fact.span.end}`,
    note: d.record.note === "" ? undefined : note(d)
  }))

const logHeadline = (log: DecisionLog) =>
  `Review log of run ${JSON.stringify(log.run)}: ${log.decisions.length} decision${log.decisions.length === 1 ? "" : "s"}, ` +
  `${log.decisions.filter((d) => d.supersededBy === null).length} current`

export const logText = (log: DecisionLog): string =>
  [
    terminal(logHeadline(log)),
    ...logLines(log).flatMap((l) => [
      `  ${terminal(l.head)}`,
      `    ${terminal(l.who)}`,
      `    reviewed excerpt ${quoted(l.excerpt)}`,
      `    at ${terminal(l.where)}`,
      ...(l.note === undefined ? [] : [`    note ${quoted(l.note)}`])
    ])
  ].join("\n") + "\n"

export const logMarkdown = (log: DecisionLog): string =>
  [
    `# ${md(logHeadline(log))}`,
    "",
    ...logLines(log).map((l) =>
      `- **${md(l.head)}**: ${md(l.who)}; reviewed excerpt “${md(l.excerpt)}” at ${md(l.where)}` +
      (l.note === undefined ? "" : `; note: ${md(l.note)}`)
    ),
    ""
  ].join("\n")

export const logHtml = (log: DecisionLog): string =>
  [
    "<!doctype html>",
    `<html lang="en"><head><meta charset="utf-8"><title>${h(logHeadline(log))}</title></head><body>`,
    `<h1>${h(logHeadline(log))}</h1>`,
    "<ul>",
    ...logLines(log).map((l) =>
      `<li><strong>${h(l.head)}</strong>: ${h(l.who)}; reviewed excerpt <q>${h(l.excerpt)}</q> at ${h(l.where)}` +
      (l.note === undefined ? "" : `<div class="review-note">${h(l.note)}</div>`) + "</li>"
    ),
    "</ul>",
    "</body></html>",
    ""
  ].join("\n")
