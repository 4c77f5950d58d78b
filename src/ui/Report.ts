/**
 * A drafted report verified against a run (`POST /v1/verify/report`), pasted or uploaded: its facts
 * by outcome, each opening its capture in the source viewer, each verified fact with the decision
 * form that records a reviewer's decision (`POST /v1/runs/{id}/reviews`, the session cookie and the
 * CSRF token), and the run's review log (`GET /v1/runs/{id}/reviews`), updated after each decision.
 */
import { getJson, postText } from "./api.ts"
import { append, clear, el, textSpan } from "./dom.ts"
import { uploadInto } from "./Upload.ts"
import { errorText, runHref } from "./Runs.ts"
import { type Citation, viewer, type Viewer } from "./Source.ts"
import type { View } from "./view.ts"

/** What a reviewer may decide (`Decision` in the review records). */
export const decisions = ["supported", "wrong-metric", "wrong-unit", "wrong-period", "wrong-value-kind", "not-supported", "unsure"] as const

interface Evidence {
  readonly span: { readonly start: number; readonly end: number }
  readonly occurrences: number
  readonly page?: number
  readonly method?: string
}

interface CitedEntry {
  readonly index: number
  readonly fact: { readonly state: "cited"; readonly label: string; readonly source: string; readonly captureSha256: string; readonly snippet: string }
  readonly evidence: Evidence
}

type Entry = CitedEntry | { readonly index: number; readonly fact: { readonly state: "unavailable"; readonly label: string; readonly reason: string } }

interface Recorded {
  readonly seq: number
  readonly supersededBy: number | null
  readonly record: { readonly fact: { readonly index: number; readonly label: string }; readonly decision: string; readonly note: string; readonly reviewer: string; readonly recordedAt: string }
}

/** The last report text verified per run: the drift page offers it too. */
export const lastReport = new Map<string, string>()

const citationOf = (entry: CitedEntry): Citation => ({
  footnote: entry.index + 1,
  claimId: entry.fact.label,
  sourceNumber: 0,
  source: entry.fact.source,
  captureSha256: entry.fact.captureSha256,
  quote: entry.fact.snippet,
  span: entry.evidence.span,
  occurrences: entry.evidence.occurrences,
  ...(entry.evidence.page === undefined ? {} : { page: entry.evidence.page }),
  ...(entry.evidence.method === undefined ? {} : { method: entry.evidence.method })
})

/** The page's live parts. */
interface ReportParts {
  readonly form: HTMLFormElement
  readonly input: HTMLTextAreaElement
  readonly status: HTMLElement
  readonly facts: HTMLElement
  readonly log: HTMLElement
  readonly source: Viewer
}

/** Builds the page: the report form, the facts beside the source viewer, the log of decisions. */
const layout = (view: View, runId: string): ReportParts => {
  const input = el("textarea", { id: "report-input", rows: "10", cols: "80", spellcheck: "false" })
  input.value = lastReport.get(runId) ?? ""
  const status = el("p", { role: "status", "aria-live": "polite", id: "report-status" })
  const form = el(
    "form",
    { class: "report-form", "aria-label": "Verify a report" },
    el("label", { for: "report-input" }, "Report to verify (JSON: {\"facts\": […]})"),
    input,
    uploadInto("report-file", "Or upload a report file", input, status),
    el("div", {}, el("button", { type: "submit", id: "report-submit" }, "Verify")),
    status
  )
  const facts = el("ol", { id: "facts", class: "facts-list", "aria-label": "Facts" })
  const log = el("tbody", {})
  const logTable = el(
    "table",
    { id: "decisions", class: "decisions", "aria-label": "Recorded decisions" },
    el("thead", {}, el("tr", {}, el("th", {}, "#"), el("th", {}, "Fact"), el("th", {}, "Decision"), el("th", {}, "Note"), el("th", {}, "Reviewer"), el("th", {}, "Recorded"))),
    log
  )
  const source = viewer(runId, () => undefined)
  append(
    view.root,
    el("p", {}, el("a", { href: runHref(runId) }, `Run ${runId}`)),
    el("h1", {}, "Report review"),
    form,
    el("div", { class: "answer-layout" }, el("section", { class: "answer", role: "region", "aria-label": "Facts", id: "report" }, el("h2", {}, "Facts"), facts), source.element),
    el("h2", {}, "Recorded decisions"),
    logTable
  )
  return { form, input, status, facts, log, source }
}

/** Reads the run's review log into `log` (`GET /v1/runs/{id}/reviews`). */
const refreshLog = (runId: string, log: HTMLElement) =>
  getJson<{ readonly decisions: ReadonlyArray<Recorded> }>(`/v1/runs/${encodeURIComponent(runId)}/reviews`).then((l) => {
    clear(log)
    for (const d of l.decisions) {
      log.appendChild(el(
        "tr",
        { "data-seq": String(d.seq), "data-status": d.supersededBy === null ? "current" : "superseded" },
        el("td", {}, String(d.seq)),
        el("td", {}, `${d.record.fact.index + 1} `, textSpan(d.record.fact.label)),
        el("td", {}, d.record.decision, d.supersededBy === null ? "" : ` (superseded by ${d.supersededBy})`),
        el("td", {}, textSpan(d.record.note)),
        el("td", {}, textSpan(d.record.reviewer)),
        el("td", {}, d.record.recordedAt)
      ))
    }
  }, (error: unknown) => {
    clear(log)
    log.appendChild(el("tr", {}, el("td", { role: "alert" }, `The review log is not available: ${errorText(error)}`)))
  })

/** The form recording a decision on one fact of the report `text`; the log is read again after each. */
const decisionForm = (runId: string, log: HTMLElement, entry: Entry, text: string) => {
  const n = entry.index + 1
  const choice = el("select", { id: `decision-${n}`, name: "decision" }, ...decisions.map((d) => el("option", { value: d }, d)))
  const note = el("textarea", { id: `note-${n}`, rows: "2", cols: "40" })
  const result = el("p", { role: "status", class: "review-result", id: `review-result-${n}` })
  const form = el(
    "form",
    { "aria-label": `Decision on fact ${n}`, class: "review" },
    el("label", { for: `decision-${n}` }, "Decision "),
    choice,
    el("label", { for: `note-${n}` }, " Note"),
    note,
    el("button", { type: "submit", id: `record-${n}` }, "Record decision"),
    result
  )
  form.addEventListener("submit", (event) => {
    event.preventDefault()
    result.textContent = "Recording…"
    const body = JSON.stringify({ report: text, fact: entry.index, decision: choice.value, ...(note.value === "" ? {} : { note: note.value }) })
    postText(`/v1/runs/${encodeURIComponent(runId)}/reviews`, body).then(({ body: answer, status: code }) => {
      if (code !== 201) {
        result.textContent = `Not recorded: ${code} ${String(answer._tag ?? "error")}${typeof answer.message === "string" ? `: ${answer.message}` : ""}`
        return
      }
      result.textContent = `Recorded: ${answer.record.decision} (#${answer.seq})`
      return refreshLog(runId, log)
    }, (error: unknown) => (result.textContent = `Not recorded: ${errorText(error)}`))
  })
  return form
}

/** One verified fact: its button opening the source, its snippet, its current decision, its decision form. */
const citedItem = (runId: string, parts: ReportParts, item: HTMLElement, cited: CitedEntry, current: string | undefined, text: string) => {
  const n = cited.index + 1
  const normalized = (cited.evidence.method ?? "exact") !== "exact"
  const outcome = normalized ? "normalized" : "verified"
  const open = el(
    "button",
    { type: "button", class: `fn fn-${outcome}`, "data-footnote": String(n), "aria-label": `Fact ${n}: ${normalized ? "normalized match, NOT verbatim" : "verified, verbatim"}; open the source` },
    `[${n}]`
  )
  open.addEventListener("click", () => void parts.source.open(citationOf(cited), normalized ? "normalized match, NOT verbatim" : "verified, verbatim", open))
  append(item, open, " “", textSpan(cited.fact.snippet), "”")
  if (current !== undefined) append(item, el("p", { class: "help" }, `Current decision: ${current}`))
  item.appendChild(decisionForm(runId, parts.log, cited, text))
}

/** Shows the service's answer to the report `text`: its facts by outcome, or why it was rejected. */
const show = (runId: string, parts: ReportParts, text: string, result: any) => {
  const { facts, status } = parts
  clear(facts)
  if (result.status !== "verified") {
    status.textContent = `Rejected: ${String(result.error?._tag ?? "error")}${typeof result.error?.message === "string" ? `: ${result.error.message}` : ""}`
    for (const f of result.error?.failures ?? []) {
      facts.appendChild(el("li", { "data-outcome": "rejected" }, el("span", { class: "fn fn-rejected" }, `fact ${Number(f.index) + 1} rejected`), ` ${String(f.error?._tag ?? "")}`))
    }
    return
  }
  const report = result.report as { readonly outcome: string; readonly facts: ReadonlyArray<Entry>; readonly retractions: ReadonlyArray<{ readonly index: number; readonly error: { readonly _tag: string } }> }
  status.textContent = `Verified: ${report.outcome}; ${report.facts.length} facts, ${report.retractions.length} retracted`
  const current = new Map<number, string>()
  for (const f of result.humanReview?.facts ?? []) current.set(f.index, `${f.current.record.decision} by ${f.current.record.reviewer}`)
  for (const entry of report.facts) {
    const n = entry.index + 1
    const item = el("li", { "data-fact": String(entry.index), "data-outcome": entry.fact.state === "cited" ? "verified" : "unavailable" }, el("strong", {}, `Fact ${n} `), textSpan(entry.fact.label), " ")
    if (entry.fact.state === "unavailable") {
      append(item, el("span", { class: "fn fn-document" }, "unavailable"), " ", textSpan(entry.fact.reason))
    } else {
      citedItem(runId, parts, item, entry as CitedEntry, current.get(entry.index), text)
    }
    facts.appendChild(item)
  }
  for (const r of report.retractions) {
    facts.appendChild(el("li", { "data-fact": String(r.index), "data-outcome": "retracted" }, el("span", { class: "fn fn-retracted" }, `Fact ${r.index + 1} retracted`), ` ${r.error._tag}`))
  }
}

export const reportPage = (view: View, runId: string): void => {
  view.title(`Report · run ${runId}`)
  const parts = layout(view, runId)
  const { form, input, status } = parts
  form.addEventListener("submit", (event) => {
    event.preventDefault()
    const text = input.value
    lastReport.set(runId, text)
    status.textContent = "Verifying…"
    postText(`/v1/verify/report?run=${encodeURIComponent(runId)}`, text).then(({ body, status: code }) => {
      if (code !== 200) {
        status.textContent = `Refused: ${code} ${String(body._tag ?? "error")}${typeof body.message === "string" ? `: ${body.message}` : ""}`
        return
      }
      show(runId, parts, text, body)
    }, (error: unknown) => (status.textContent = `Refused: ${errorText(error)}`))
  })
  void refreshLog(runId, parts.log)
}
