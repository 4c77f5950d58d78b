/**
 * An answer verified live: the streamed text with its footnotes coloured by outcome as the events
 * arrive (verified; normalized, NOT verbatim; retracted, its sentence struck through when the claim
 * has no citation left; rejected), counts, and the source viewer beside it. Follows
 * `GET /v1/stream/answer/{id}` with an EventSource; the session cookie authenticates it.
 */
import { append, clear, el, textSpan } from "./dom.ts"
import { runHref } from "./Runs.ts"
import { type Citation, viewer, type Viewer } from "./Source.ts"
import type { View } from "./view.ts"

type Outcome = "pending" | "verified" | "normalized" | "retracted" | "rejected"

const labels: Record<Outcome, string> = {
  pending: "verifying",
  verified: "verified, verbatim",
  normalized: "normalized match, NOT verbatim",
  retracted: "retracted",
  rejected: "rejected"
}

interface Footnote {
  readonly footnote: number
  readonly claimId: string
  readonly source: number
  readonly at: number
  outcome: Outcome
  citation?: Citation
  reasons?: ReadonlyArray<string>
}

type StreamEvent =
  | { readonly id: number; readonly type: "delta"; readonly text: string; readonly footnotes: ReadonlyArray<{ footnote: number; claimId: string; source: number; at: number }> }
  | ({ readonly id: number; readonly type: "citation" } & Citation)
  | { readonly id: number; readonly type: "retraction"; readonly footnote: number; readonly sentence: { start: number; end: number }; readonly removeSentence: boolean; readonly reasons: ReadonlyArray<{ _tag: string }> }
  | { readonly id: number; readonly type: "error"; readonly error: { readonly _tag: string } }
  | { readonly id: number; readonly type: "done"; readonly state: string; readonly summary: Record<string, number>; readonly uncited: ReadonlyArray<unknown> }

/** What the stream has said so far. */
interface AnswerState {
  text: string
  readonly footnotes: Map<number, Footnote>
  readonly removed: Array<{ start: number; end: number }>
  state: string | undefined
  readonly failures: Array<string>
}

/** The page's live parts. */
interface AnswerParts {
  readonly status: HTMLElement
  readonly body: HTMLElement
  readonly counts: HTMLElement
  readonly list: HTMLElement
  readonly source: Viewer
}

/** Builds the page: legend, status, the answer with its footnotes, the source viewer beside it. */
const layout = (view: View, runId: string): AnswerParts => {
  const status = el("p", { role: "status", "aria-live": "polite", id: "stream-status" }, "Verifying…")
  const body = el("div", { id: "answer-text", class: "answer-text", role: "document", "aria-label": "Answer text" })
  const counts = el("p", { id: "counts", class: "counts", "aria-live": "polite" })
  const list = el("ol", { id: "footnotes", class: "footnotes", "aria-label": "Footnotes" })
  const source = viewer(runId, (citation, container) =>
    append(
      container,
      el(
        "p",
        { class: "help", id: "answer-review-note" },
        `Decisions on an answer's citations (footnote ${citation.footnote}) are not recorded by this service; `,
        el("a", { href: `#/runs/${encodeURIComponent(runId)}/report` }, "verify a report"),
        " to record a decision on each of its facts."
      )
    ))
  append(
    view.root,
    el("p", {}, el("a", { href: runHref(runId) }, `Run ${runId}`)),
    el("h1", {}, "Answer"),
    el(
      "p",
      { class: "legend", "aria-label": "Legend" },
      ...(["verified", "normalized", "retracted", "rejected", "pending"] as const).map((o) => el("span", { class: `fn fn-${o}` }, labels[o])),
      el("span", { class: "fn fn-document" }, "document-level: no quote verified")
    ),
    status,
    el(
      "div",
      { class: "answer-layout" },
      el("section", { class: "answer", role: "region", "aria-label": "Answer", id: "answer" }, body, counts, el("h2", {}, "Footnotes"), list),
      source.element
    )
  )
  return { status, body, counts, list, source }
}

const footnoteButton = (note: Footnote, source: Viewer) => {
  const button = el(
    "button",
    { type: "button", class: `fn fn-${note.outcome}`, "data-footnote": String(note.footnote), "data-outcome": note.outcome, "aria-label": `Footnote ${note.footnote}: ${labels[note.outcome]}` },
    `[${note.footnote}]`
  )
  button.addEventListener("click", () => {
    if (note.citation !== undefined) void source.open(note.citation, labels[note.outcome], button)
  })
  return button
}

/** Plain text of `start`..`end`, the parts inside a removed sentence struck through. */
const appendPlain = (body: HTMLElement, answer: AnswerState, start: number, end: number) => {
  const points = new Set([start, end])
  for (const r of answer.removed) for (const p of [r.start, r.end]) if (p > start && p < end) points.add(p)
  const sorted = [...points].sort((a, b) => a - b)
  for (let i = 0; i + 1 < sorted.length; i++) {
    const [from, to] = [sorted[i]!, sorted[i + 1]!]
    const struck = answer.removed.some((r) => r.start <= from && to <= r.end)
    const part = answer.text.slice(from, to)
    body.appendChild(struck ? el("del", { title: "retracted: no citation left" }, textSpan(part)) : textSpan(part))
  }
}

/** Draws the answer text with its footnote buttons, the footnote list, the counts and the status. */
const render = (parts: AnswerParts, answer: AnswerState) => {
  const { body, counts, list, status } = parts
  const focused = document.activeElement instanceof HTMLElement ? document.activeElement.getAttribute("data-footnote") : null
  clear(body)
  let at = 0
  for (const note of [...answer.footnotes.values()].sort((a, b) => a.at - b.at)) {
    if (note.at < at) continue
    appendPlain(body, answer, at, note.at)
    body.appendChild(footnoteButton(note, parts.source))
    at = note.at + `[^${note.footnote}]`.length
  }
  appendPlain(body, answer, at, answer.text.length)
  if (focused !== null) body.querySelector<HTMLElement>(`button.fn[data-footnote="${Number(focused)}"]`)?.focus()
  clear(list)
  for (const note of [...answer.footnotes.values()].sort((a, b) => a.footnote - b.footnote)) {
    const item = el("li", { "data-outcome": note.outcome }, el("span", { class: `fn fn-${note.outcome}` }, `[${note.footnote}] ${labels[note.outcome]}`), ` source [${note.source}] `)
    if (note.citation !== undefined) append(item, "“", textSpan(note.citation.quote), "”")
    if (note.reasons !== undefined) append(item, ` (${note.reasons.join(", ")})`)
    list.appendChild(item)
  }
  const all = [...answer.footnotes.values()]
  const count = (o: Outcome) => all.filter((n) => n.outcome === o).length
  const state = answer.state
  counts.textContent = `${all.length} citations: ${count("verified")} verified, ${count("normalized")} normalized (NOT verbatim), ` +
    `${count("retracted") + count("rejected")} retracted${state === "rejected" ? " (answer rejected)" : ""}, ${count("pending")} pending`
  status.textContent = state === undefined ? "Verifying…" : `Done: ${state}${answer.failures.length > 0 ? ` (${answer.failures.join(", ")})` : ""}`
}

/** One stream event applied to what the page knows. */
const apply = (answer: AnswerState, event: StreamEvent) => {
  const footnotes = answer.footnotes
  switch (event.type) {
    case "delta":
      answer.text += event.text
      for (const f of event.footnotes) footnotes.set(f.footnote, { footnote: f.footnote, claimId: f.claimId, source: f.source, at: f.at, outcome: "pending" })
      break
    case "citation": {
      const note = footnotes.get(event.footnote)
      if (note !== undefined) {
        note.citation = event
        note.outcome = (event.method ?? "exact") === "exact" ? "verified" : "normalized"
      }
      break
    }
    case "retraction": {
      const note = footnotes.get(event.footnote)
      if (note !== undefined) {
        note.outcome = "retracted"
        note.reasons = event.reasons.map((r) => r._tag)
      }
      if (event.removeSentence) answer.removed.push(event.sentence)
      break
    }
    case "error":
      answer.failures.push(event.error._tag)
      break
    case "done":
      answer.state = event.state
      // Under `reject`, a retraction rejects the whole answer: its retracted citations read as rejected.
      if (answer.state === "rejected") for (const note of footnotes.values()) if (note.outcome === "retracted") note.outcome = "rejected"
      break
  }
}

/** Keyboard: n / p move between footnotes; Enter on one opens its source (a button). */
const footnoteKeys = (body: HTMLElement) =>
  body.addEventListener("keydown", (event) => {
    if (event.key !== "n" && event.key !== "p") return
    const all = Array.from(body.querySelectorAll<HTMLButtonElement>("button.fn"))
    if (all.length === 0) return
    const at = all.indexOf(document.activeElement as HTMLButtonElement)
    const next = event.key === "n" ? (at + 1) % all.length : (at - 1 + all.length) % all.length
    all[next]!.focus()
    event.preventDefault()
  })

export const answerPage = (view: View, runId: string, streamId: string): void => {
  view.title(`Answer ${streamId}`)
  const answer: AnswerState = { text: "", footnotes: new Map(), removed: [], state: undefined, failures: [] }
  const parts = layout(view, runId)

  // Redrawn at most once a frame, however many events arrive.
  let scheduled = false
  const schedule = () => {
    if (scheduled) return
    scheduled = true
    requestAnimationFrame(() => {
      scheduled = false
      render(parts, answer)
    })
  }

  const events = new EventSource(`/v1/stream/answer/${encodeURIComponent(streamId)}`)
  view.onLeave(() => events.close())
  events.addEventListener("message", (message: MessageEvent<string>) => {
    const event = JSON.parse(message.data) as StreamEvent
    apply(answer, event)
    schedule()
    if (event.type === "done") events.close()
  })
  events.addEventListener("error", () => {
    if (events.readyState === EventSource.CLOSED && answer.state === undefined) {
      parts.status.textContent = "The stream is not available (expired, or this session may not read it)."
    }
  })
  footnoteKeys(parts.body)
}
