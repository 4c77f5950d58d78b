/** The runs list and one run: status, sources with their capture state, the manifest, an answer to verify live. */
import { ApiError, getJson, streamAnswer } from "./api.ts"
import { append, appendText, el, textSpan } from "./dom.ts"
import { uploadInto } from "./Upload.ts"
import type { View } from "./view.ts"

interface RunsList {
  readonly runs: ReadonlyArray<{ readonly id: string; readonly status: string }>
  readonly truncated: boolean
}

type Source =
  | { readonly number: number; readonly source: string; readonly status: "captured"; readonly captureSha256: string; readonly byteLength: number; readonly contentType: string; readonly accessedAt: string }
  | { readonly number: number; readonly source: string; readonly status: "missing"; readonly reason: { readonly _tag: string } }

export interface RunInfo {
  readonly id: string
  readonly status: string
  readonly manifest: { readonly digest: string; readonly sources: ReadonlyArray<Source> }
}

export const runHref = (id: string): `#/${string}` => `#/runs/${encodeURIComponent(id)}`

export const errorText = (error: unknown): string =>
  error instanceof ApiError
    ? `${error.status} ${String(error.body._tag ?? "error")}${typeof error.body["message"] === "string" ? `: ${error.body["message"]}` : ""}`
    : error instanceof Error ? error.message : String(error)

export const runsPage = async (view: View): Promise<void> => {
  view.title("Runs")
  const list = await getJson<RunsList>("/v1/runs")
  const rows = list.runs.map((run) =>
    el("tr", {}, el("td", {}, el("a", { href: runHref(run.id) }, run.id)), el("td", {}, el("span", { class: `status status-${run.status}` }, run.status)))
  )
  append(
    view.root,
    el("h1", {}, "Runs"),
    list.runs.length === 0
      ? el("p", {}, "No run this session may read.")
      : el("table", { class: "runs", "aria-label": "Runs" }, el("thead", {}, el("tr", {}, el("th", {}, "Run"), el("th", {}, "Status"))), el("tbody", {}, ...rows)),
    list.truncated ? el("p", {}, "More runs exist than are listed.") : null
  )
}

const sourceRow = (s: Source) =>
  el(
    "tr",
    { "data-outcome": s.status },
    el("td", {}, `[${s.number}]`),
    el("td", { class: "url" }, textSpan(s.source)),
    el("td", {}, el("span", { class: `status status-${s.status}` }, s.status)),
    s.status === "captured"
      ? el("td", {}, el("code", { title: s.captureSha256 }, `${s.captureSha256.slice(0, 12)}…`), ` ${s.byteLength} bytes, `, textSpan(s.contentType), `, ${s.accessedAt}`)
      : el("td", {}, `not available: ${s.reason._tag}`)
  )

const sourcesTable = (run: RunInfo) =>
  el(
    "table",
    { class: "sources", "aria-label": "Sources" },
    el("thead", {}, el("tr", {}, el("th", {}, "#"), el("th", {}, "Source"), el("th", {}, "State"), el("th", {}, "Capture"))),
    el("tbody", {}, ...run.manifest.sources.map(sourceRow))
  )

/**
 * A queued or running run's events, followed with an EventSource (the session cookie authenticates
 * it); `started` calls `onStarted` (a queued run took a capture slot).
 */
const followEvents = (view: View, run: RunInfo, log: HTMLElement, onStarted: () => void) => {
  const events = new EventSource(`/v1/runs/${encodeURIComponent(run.id)}/events`)
  view.onLeave(() => events.close())
  const show = (tag: string) => (message: MessageEvent<string>) => {
    const data = JSON.parse(message.data) as Record<string, unknown>
    const item = el("li", {}, `${tag}${typeof data["number"] === "number" ? ` [${data["number"]}]` : ""} `)
    if (typeof data["source"] === "string") appendText(item, data["source"])
    log.appendChild(item)
    if (tag === "started") onStarted()
    if (tag === "done") {
      events.close()
      view.reload()
    }
  }
  for (const tag of ["started", "captured", "failed", "missing", "aborted", "done"]) events.addEventListener(tag, show(tag))
}

export const runPage = async (view: View, runId: string): Promise<void> => {
  const run = await getJson<RunInfo>(`/v1/runs/${encodeURIComponent(runId)}`)
  view.title(`Run ${run.id}`)
  const captured = run.manifest.sources.filter((s) => s.status === "captured").length
  // Queued (waiting for a capture slot) or running: its events are followed until `done`.
  const capturing = run.status === "queued" || run.status === "running"
  const statusLabel = el("span", { class: `status status-${run.status}` }, run.status)
  const progressHeading = el("h2", {}, run.status === "queued" ? "Queued" : "Capturing")
  const log = el("ol", { class: "events", "aria-live": "polite", "aria-label": "Capture events" })
  const answer = el("textarea", { id: "answer-input", rows: "12", cols: "80", spellcheck: "false", "aria-describedby": "answer-help" })
  const status = el("p", { role: "status", "aria-live": "polite", class: "form-status" })
  const submit = el("button", { type: "submit" }, "Verify live")
  const form = el(
    "form",
    { class: "answer-form", "aria-label": "Verify an answer" },
    el("label", { for: "answer-input" }, "Answer to verify (EVI1: claims with [n]{cX} markers, then the EVI1 appendix)"),
    el("p", { id: "answer-help", class: "help" }, `It is verified against this run's captures (manifest ${run.manifest.digest.slice(0, 12)}…), live.`),
    answer,
    uploadInto("answer-file", "Or upload an answer file", answer, status),
    el("div", {}, submit),
    status
  )
  form.addEventListener("submit", (event) => {
    event.preventDefault()
    submit.disabled = true
    status.textContent = "Sending…"
    streamAnswer(run.id, answer.value).then(
      (streamId) => view.go(`#/runs/${encodeURIComponent(run.id)}/streams/${encodeURIComponent(streamId)}`),
      (error: unknown) => {
        submit.disabled = false
        status.textContent = `Refused: ${errorText(error)}`
      }
    )
  })
  append(
    view.root,
    el("h1", {}, "Run ", el("code", {}, run.id)),
    el(
      "dl",
      { class: "facts" },
      el("dt", {}, "Status"),
      el("dd", {}, statusLabel),
      el("dt", {}, "Manifest"),
      el("dd", {}, el("code", { class: "digest" }, run.manifest.digest)),
      el("dt", {}, "Sources"),
      el("dd", {}, `${captured} of ${run.manifest.sources.length} captured`)
    ),
    sourcesTable(run),
    el(
      "nav",
      { "aria-label": "Run pages", class: "run-nav" },
      el("a", { href: `#/runs/${encodeURIComponent(run.id)}/report`, id: "report-link" }, "Review a report"),
      " · ",
      el("a", { href: `#/runs/${encodeURIComponent(run.id)}/drift`, id: "drift-link" }, "Drift audit")
    ),
    capturing ? el("section", { "aria-label": "Capture progress" }, progressHeading, log) : null,
    el("h2", {}, "Verify an answer"),
    form
  )
  if (capturing) {
    followEvents(view, run, log, () => {
      statusLabel.className = "status status-running"
      statusLabel.textContent = "running"
      progressHeading.textContent = "Capturing"
    })
  }
}
