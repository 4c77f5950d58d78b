/**
 * Renderings of a drift audit (`AuditResult`): text, Markdown, HTML and JSON.
 * Pure functions; every value from a report, an answer or a capture (labels,
 * claim ids, sources, excerpts, candidates, headings, tokens, error details) is
 * untrusted and escaped for its format (render/Escape.ts).
 *
 * Each finding shows its status, the old and new capture digests and spans,
 * the candidate with its similarity and threshold, and the material flags with
 * their tokens; then the affected facts or claims, the outcome and the note
 * that the audit is lexical. The HTML page shows each changed passage side by
 * side (old excerpt, new candidate) with the changed words highlighted (a
 * bounded word diff, WordDiff.ts), and runs no script (its CSP forbids any).
 *
 * Human renderings cut an excerpt or candidate longer than `maxShown` code
 * units (stating the full length); the JSON rendering is the record itself and
 * decodes with `AuditResult`.
 *
 * @since 0.1.0
 */
import * as Match from "effect/Match"
import * as Schema from "effect/Schema"
import { cut } from "../internal/bounded.js"
import { html as h, markdown as md, markdownBlock, markdownCode, quoted, terminal } from "../render/Escape.js"
import * as HtmlPage from "../render/HtmlPage.js"
import { sourceText } from "../render/HtmlPage.js"
import * as JsonLd from "../render/JsonLd.js"
import type { Format } from "../render/Render.js"
import { plural } from "../render/Rendering.js"
import {
  type Affected,
  type AuditResult,
  AuditResult as AuditResultSchema,
  type Candidate,
  type Finding,
  type Location,
  type MaterialFlag,
  type NewCapture,
  limits,
  type Subject
} from "./Records.js"
import { diffLimits, head, type Piece, wordDiff } from "./WordDiff.js"

/** Longest excerpt or candidate a human rendering shows in full (code units); longer ones are cut with their length. */
export const maxShown = 2_000

const encode = Schema.encodeSync(AuditResultSchema)

// --- shared wording ---------------------------------------------------------------------------

const statusWord: Record<Finding["status"], string> = {
  unchanged: "UNCHANGED",
  relocated: "RELOCATED",
  changed: "CHANGED",
  deleted: "DELETED",
  source_missing: "SOURCE MISSING"
}

/** What was cited, numbered from 1; `q` escapes the label or claim id for the format. */
const subjectText = (s: Subject, q: (value: string) => string = quoted): string =>
  s.kind === "fact"
    ? `fact ${s.index + 1} ${q(s.label)}`
    : `claim ${s.claimIndex + 1} ${q(s.claimId)}, citation ${s.citationIndex + 1}`

const affectedText = (a: Affected, q: (value: string) => string = quoted): string =>
  a.kind === "fact"
    ? `fact ${a.index + 1} ${q(a.label)}: ${a.status}`
    : `claim ${a.claimIndex + 1} ${q(a.claimId)}: ${a.citations.map((c) => `citation ${c.citationIndex + 1} ${c.status}`).join(", ")}`

const htmlQuoted = (value: string) => `<code>${h(quoted(value))}</code>`

const headline = (r: AuditResult): string => {
  const s = r.summary
  const counts = `${plural(s.citations, "citation")}: ${s.unchanged} unchanged, ${s.relocated} relocated, ` +
    `${s.changed} changed (${s.material} material), ${s.deleted} deleted, ${s.source_missing} source missing`
  return r.outcome === "stable" ? `STABLE (${r.of}): ${counts}` : `DRIFTED (${r.of}): ${counts}`
}

const thresholdsText = (r: AuditResult) =>
  `similarity thresholds: ${r.thresholds.anchor} under the same heading or page, ${r.thresholds.document} anywhere in the text`

const anchorOf = (l: { readonly page?: number | undefined; readonly heading?: ReadonlyArray<string> | undefined }) => {
  const parts: Array<string> = []
  if (l.page !== undefined) parts.push(`page ${l.page}`)
  if (l.heading !== undefined) parts.push(`section ${l.heading.join(" › ")}`)
  return parts.length === 0 ? undefined : parts.join(", ")
}

const locationText = (l: Location): string => {
  const anchor = anchorOf(l)
  return `sha256 ${l.captureSha256}  span ${l.span.start}–${l.span.end}${anchor === undefined ? "" : `  ${terminal(anchor)}`}  accessed ${l.accessedAt}`
}

const newCaptureText = (c: NewCapture) => `sha256 ${c.captureSha256}  (excerpt not found verbatim)  accessed ${c.accessedAt}`

const similarity = (c: Candidate) => c.similarity.toFixed(3)

const candidateText = (c: Candidate) => {
  const anchor = anchorOf(c)
  return `span ${c.span.start}–${c.span.end}, similarity ${similarity(c)} (threshold ${c.threshold}, ${c.scope} scope, ${terminal(c.method)})` +
    (anchor === undefined ? "" : `, ${terminal(anchor)}`)
}

const flagText = (f: MaterialFlag) =>
  `${f.kind}: ${f.oldTokens.length === 0 ? "(none)" : f.oldTokens.map(quoted).join(" ")} -> ${
    f.newTokens.length === 0 ? "(none)" : f.newTokens.map(quoted).join(" ")
  }`

const missingText: Record<"not-captured" | "capture-failed" | "unreadable", string> = {
  "not-captured": "the new run holds no capture of the source",
  "capture-failed": "the new capture of the source failed",
  unreadable: "the new run's capture of the source cannot be trusted"
}

const unsearchedText =
  `no candidate searched: the excerpt is longer than the candidate search takes (${limits.maxCandidateExcerpt} code units), so a changed passage cannot be told from a deleted one`

// --- text -------------------------------------------------------------------------------------

const textFinding = (f: Finding): Array<string> => {
  const lines = [
    `[${statusWord[f.status]}] ${subjectText(f.subject)}`,
    `    source     ${terminal(f.source)}`,
    `    excerpt    ${quoted(cut(f.snippet, maxShown))}`,
    `    old        ${locationText(f.old)}`
  ]
  Match.value(f).pipe(
    Match.discriminatorsExhaustive("status")({
      unchanged: (u) => void lines.push(`    new        ${locationText(u.new)}`),
      relocated: (u) => void lines.push(`    new        ${locationText(u.new)}`),
      changed: (c) =>
        void lines.push(
          `    new        ${newCaptureText(c.new)}`,
          `    candidate  ${quoted(cut(c.candidate.text, maxShown))}`,
          `               ${candidateText(c.candidate)}`,
          ...(c.material.length === 0
            ? [`    material   none flagged (no number, negation, date or unit changed)`]
            : c.material.map((m) => `    MATERIAL   ${flagText(m)}`))
        ),
      deleted: (d) =>
        void lines.push(
          `    new        ${newCaptureText(d.new)}`,
          ...(d.unsearched !== undefined
            ? [`    nearest    ${unsearchedText}`]
            : d.nearest === undefined
            ? [`    nearest    no passage found`]
            : [
              `    nearest    ${quoted(cut(d.nearest.text, maxShown))}`,
              `               ${candidateText(d.nearest)}: below the threshold`
            ])
        ),
      source_missing: (m) =>
        void lines.push(`    new        ${missingText[m.reason]} (${m.reason}): ${terminal(m.errorTag)}: ${terminal(cut(m.detail, maxShown))}`)
    })
  )
  return lines
}

export const text = (r: AuditResult): string => {
  const lines = [`citegate audit: ${headline(r)}`, thresholdsText(r), ""]
  for (const f of r.findings) lines.push(...textFinding(f), "")
  lines.push(
    r.affected.length === 0
      ? "Affected: none"
      : `Affected (${r.affected.length}):`,
    ...r.affected.map((a) => `    ${affectedText(a)}`),
    "",
    `Outcome: ${r.outcome}`,
    `Note: ${r.note}`
  )
  return lines.join("\n") + "\n"
}

// --- Markdown ---------------------------------------------------------------------------------

const mdAnchor = (l: { readonly page?: number | undefined; readonly heading?: ReadonlyArray<string> | undefined }) => {
  const anchor = anchorOf(l)
  return anchor === undefined ? "" : ` · ${md(anchor)}`
}

const mdLocation = (l: Location) =>
  `sha256 \`${l.captureSha256}\` · span ${l.span.start}–${l.span.end}${mdAnchor(l)} · accessed ${l.accessedAt}`

const mdCandidate = (c: Candidate) =>
  `span ${c.span.start}–${c.span.end} · similarity **${similarity(c)}** (threshold ${c.threshold}, ${c.scope} scope, ${
    markdownCode(c.method)
  })${mdAnchor(c)}`

const mdFlag = (f: MaterialFlag) =>
  `**${f.kind}**: ${f.oldTokens.length === 0 ? "(none)" : f.oldTokens.map(markdownCode).join(" ")} → ${
    f.newTokens.length === 0 ? "(none)" : f.newTokens.map(markdownCode).join(" ")
  }`

const mdFinding = (f: Finding, n: number): Array<string> => {
  const lines = [
    `### ${n}. ${statusWord[f.status]}: ${subjectText(f.subject, markdownCode)}`,
    "",
    `- source: ${markdownCode(f.source)}`,
    `- old: ${mdLocation(f.old)}`
  ]
  const newLine = Match.value(f).pipe(
    Match.discriminatorsExhaustive("status")({
      unchanged: (u) => `- new: ${mdLocation(u.new)}`,
      relocated: (u) => `- new: ${mdLocation(u.new)}`,
      changed: (c) => `- new: sha256 \`${c.new.captureSha256}\` · excerpt not found verbatim · accessed ${c.new.accessedAt}`,
      deleted: (d) => `- new: sha256 \`${d.new.captureSha256}\` · excerpt not found verbatim · accessed ${d.new.accessedAt}`,
      source_missing: (m) => `- new: ${md(missingText[m.reason])} (\`${m.reason}\`): ${markdownCode(m.errorTag)}: ${md(cut(m.detail, maxShown))}`
    })
  )
  lines.push(newLine, "", "Excerpt as cited:", "", markdownBlock(cut(f.snippet, maxShown)), "")
  if (f.status === "changed") {
    lines.push(
      `Candidate: ${mdCandidate(f.candidate)}`,
      "",
      markdownBlock(cut(f.candidate.text, maxShown)),
      "",
      ...(f.material.length === 0
        ? ["Material changes: none flagged.", ""]
        : ["Material changes:", "", ...f.material.map((m) => `- ${mdFlag(m)}`), ""])
    )
  } else if (f.status === "deleted") {
    lines.push(
      ...(f.unsearched !== undefined
        ? [`${unsearchedText}.`, ""]
        : f.nearest === undefined
        ? ["No similar passage was found.", ""]
        : [`Nearest passage, below the threshold: ${mdCandidate(f.nearest)}`, "", markdownBlock(cut(f.nearest.text, maxShown)), ""])
    )
  }
  return lines
}

export const markdown = (r: AuditResult): string => {
  const lines = [
    "# citegate drift audit",
    "",
    `**${headline(r)}**`,
    "",
    `${thresholdsText(r)}.`,
    "",
    "## Findings",
    ""
  ]
  r.findings.forEach((f, i) => lines.push(...mdFinding(f, i + 1)))
  lines.push("## Affected", "")
  if (r.affected.length === 0) lines.push("None.", "")
  else lines.push(...r.affected.map((a) => `- ${affectedText(a, markdownCode)}`), "")
  lines.push(`**Outcome: ${r.outcome}**`, "", `> ${md(r.note)}`)
  return lines.join("\n") + "\n"
}

// --- JSON -------------------------------------------------------------------------------------

/** The record itself (`citegate.audit/1`); decodes with `AuditResult`. */
export const json = (r: AuditResult): string => JSON.stringify(encode(r), null, 2) + "\n"

// --- HTML -------------------------------------------------------------------------------------

const style = `
body { font: 15px/1.5 system-ui, sans-serif; max-width: 72rem; margin: 2rem auto; padding: 0 1rem; color: #1d1d1f; }
.outcome { padding: .75rem 1rem; border-radius: 6px; font-weight: 600; }
.outcome.stable { background: #e7f6ea; border: 1px solid #3a9d52; }
.outcome.drifted { background: #fdecea; border: 1px solid #c0392b; }
.note { color: #555; font-style: italic; }
.finding { border-top: 1px solid #ddd; padding: .5rem 0 1rem; }
.status { font-size: .75rem; letter-spacing: .05em; font-weight: 700; padding: .1rem .4rem; border-radius: 3px; }
.status.unchanged, .status.relocated { background: #e7f6ea; }
.status.changed { background: #fff3bf; }
.status.deleted, .status.source_missing { background: #fdecea; }
.meta { font-size: .85rem; color: #444; margin: .15rem 0; }
code { font-family: ui-monospace, monospace; }
.passage { margin: .5rem 0; padding: .5rem 1rem; background: #f3f6fb; border-left: 4px solid #2d6cdf; white-space: pre-wrap; word-break: break-word; font-family: Georgia, serif; }
.sbs { display: grid; grid-template-columns: 1fr 1fr; gap: 1rem; }
.sbs .side-tag { font-size: .75rem; text-transform: uppercase; letter-spacing: .05em; font-weight: 700; color: #555; }
del.chg { background: #ffc9c9; text-decoration: line-through; }
ins.chg { background: #b2f2bb; text-decoration: none; }
.ctl { color: #c92a2a; font-size: .85em; }
.material { color: #a61e4d; font-weight: 600; }
.cut { color: #666; font-style: italic; }
`

const page = (title: string, body: string) => HtmlPage.page(title, style, body)



const cutNote = (length: number | undefined, shown: number) =>
  length === undefined ? "" : `<span class="cut">… (${length} characters; the first ${shown} are shown)</span>`

const shownPassage = (s: string) =>
  s.length <= maxShown ? sourceText(s) : sourceText(head(s, maxShown)) + cutNote(s.length, maxShown)

const diffSide = (side: ReadonlyArray<Piece>, tag: "del" | "ins") =>
  side.map((p) => (p.changed ? `<${tag} class="chg">${sourceText(p.text)}</${tag}>` : sourceText(p.text))).join("")

/** The old excerpt and the new passage side by side, changed words highlighted on each side. */
const sideBySide = (oldText: string, candidate: Candidate, newTag: string) => {
  const d = wordDiff(oldText, candidate.text)
  return `<div class="sbs">
<div class="old"><div class="side-tag">Old excerpt (as cited)</div><div class="passage" data-side="old">${diffSide(d.old, "del")}${cutNote(d.oldCut, diffLimits.maxChars)}</div></div>
<div class="new"><div class="side-tag">${h(newTag)}</div><div class="passage" data-side="new">${diffSide(d.new, "ins")}${cutNote(d.newCut, diffLimits.maxChars)}</div></div>
</div>${d.exact ? "" : `<p class="meta">Too many word changes to align: the differing middle is highlighted as a whole.</p>`}`
}

// A heading is capture text: its controls and bidi characters are shown, as in an excerpt, not left to reorder the line.
const htmlAnchor = (l: { readonly page?: number | undefined; readonly heading?: ReadonlyArray<string> | undefined }) => {
  const anchor = anchorOf(l)
  return anchor === undefined ? "" : ` · ${sourceText(anchor)}`
}

const htmlLocation = (what: string, l: Location) =>
  `<p class="meta">${what}: capture sha256 <code>${h(l.captureSha256)}</code> · span <code>${l.span.start}–${l.span.end}</code>${
    htmlAnchor(l)
  } · accessed ${h(l.accessedAt)}</p>`

const htmlNewCapture = (c: NewCapture) =>
  `<p class="meta">New: capture sha256 <code>${h(c.captureSha256)}</code> · excerpt not found verbatim · accessed ${h(c.accessedAt)}</p>`

const htmlCandidate = (what: string, c: Candidate) =>
  `<p class="meta">${what}: span <code>${c.span.start}–${c.span.end}</code> · similarity <strong class="similarity">${similarity(c)}</strong> (threshold ${
    c.threshold
  }, ${h(c.scope)} scope, <code>${h(c.method)}</code>)${htmlAnchor(c)}</p>`

const htmlFlag = (f: MaterialFlag) =>
  `<li class="material" data-kind="${h(f.kind)}">${h(f.kind)}: ${
    f.oldTokens.length === 0 ? "(none)" : f.oldTokens.map((t) => `<code>${sourceText(t)}</code>`).join(" ")
  } → ${f.newTokens.length === 0 ? "(none)" : f.newTokens.map((t) => `<code>${sourceText(t)}</code>`).join(" ")}</li>`

const htmlFinding = (f: Finding, i: number): string => {
  const top = `<section class="finding" id="finding-${i + 1}" data-status="${f.status}">
<h3>${i + 1}. <span class="status ${f.status}">${statusWord[f.status]}</span> ${subjectText(f.subject, htmlQuoted)}</h3>
<p class="meta">Source <code>${h(f.source)}</code></p>
${htmlLocation("Old", f.old)}`
  const body = Match.value(f).pipe(
    Match.discriminatorsExhaustive("status")({
      unchanged: (u) => `${htmlLocation("New", u.new)}\n<div class="passage">${shownPassage(u.snippet)}</div>`,
      relocated: (u) => `${htmlLocation("New", u.new)}\n<div class="passage">${shownPassage(u.snippet)}</div>`,
      changed: (c) =>
        `${htmlNewCapture(c.new)}
${htmlCandidate("Candidate", c.candidate)}
${sideBySide(c.snippet, c.candidate, "New candidate")}
${c.material.length === 0 ? `<p class="meta">Material changes: none flagged.</p>` : `<ul class="flags">${c.material.map(htmlFlag).join("")}</ul>`}`,
      deleted: (d) =>
        `${htmlNewCapture(d.new)}
${
          d.nearest === undefined
            ? `<div class="passage">${shownPassage(d.snippet)}</div>\n<p class="meta">${
              d.unsearched !== undefined ? h(unsearchedText) : "No similar passage was found."
            }</p>`
            : `${htmlCandidate("Nearest passage, below the threshold", d.nearest)}\n${sideBySide(d.snippet, d.nearest, "Nearest new passage")}`
        }`,
      source_missing: (m) =>
        `<p class="meta">New: ${h(missingText[m.reason])} (<code>${h(m.reason)}</code>): <code>${h(terminal(m.errorTag))}</code>: ${
          h(terminal(cut(m.detail, maxShown)))
        }</p>\n<div class="passage">${shownPassage(m.snippet)}</div>`
    })
  )
  return `${top}\n${body}\n</section>`
}

export const html = (r: AuditResult): string => {
  const parts = [
    `<h1>Drift audit</h1>`,
    `<p class="outcome ${r.outcome}">${h(headline(r))}</p>`,
    `<p class="meta">${h(thresholdsText(r))}</p>`,
    `<p class="note">${h(r.note)}</p>`,
    `<h2>Findings</h2>`,
    ...r.findings.map(htmlFinding),
    `<h2>Affected</h2>`,
    r.affected.length === 0
      ? `<p>None.</p>`
      : `<ul class="affected">${r.affected.map((a) => `<li>${affectedText(a, htmlQuoted)}</li>`).join("")}</ul>`,
    `<p class="outcome ${r.outcome}">Outcome: ${r.outcome}</p>`
  ]
  return page(`citegate: drift audit (${r.outcome})`, parts.join("\n"))
}

// --- entry ------------------------------------------------------------------------------------

export const render = (format: Format, result: AuditResult): string =>
  Match.value(format).pipe(
    Match.when("text", () => text(result)),
    Match.when("json", () => json(result)),
    Match.when("markdown", () => markdown(result)),
    Match.when("html", () => html(result)),
    Match.when("jsonld", () => JsonLd.audit(encode(result) as unknown as JsonLd.JsonObject)),
    Match.exhaustive
  )
