/**
 * An answer verified live: the streamed text with its footnotes coloured by outcome as the events
 * arrive (verified; normalized, NOT verbatim; retracted, its sentence struck through when the claim
 * has no citation left; rejected), counts, and the source viewer beside it. Follows
 * `GET /v1/stream/answer/{id}` with an EventSource; the session cookie authenticates it.
 */
import { append, clear, el, textSpan } from "./dom.ts"
import { runHref } from "./Runs.ts"
import { type Citation, viewer } from "./Source.ts"
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

export const answerPage = (view: View, runId: string, streamId: string): void => {
  view.title(`Answer ${streamId}`)
  let text = ""
  const footnotes = new Map<number, Footnote>()
  const removed: Array<{ start: number; end: number }> = []
  let state: string | undefined
  const failures: Array<string> = []

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

  const buttons = () => Array.from(body.querySelectorAll<HTMLButtonElement>("button.fn"))

  const openFootnote = (note: Footnote, from: HTMLElement) => {
    if (note.citation !== undefined) void source.open(note.citation, labels[note.outcome], from)
  }

  const footnoteButton = (note: Footnote) => {
    const button = el(
      "button",
      { type: "button", class: `fn fn-${note.outcome}`, "data-footnote": String(note.footnote), "data-outcome": note.outcome, "aria-label": `Footnote ${note.footnote}: ${labels[note.outcome]}` },
      `[${note.footnote}]`
    )
    button.addEventListener("click", () => openFootnote(note, button))
    return button
  }

  /** Plain text of `start`..`end`, the parts inside a removed sentence struck through. */
  const appendPlain = (start: number, end: number) => {
    const points = new Set([start, end])
    for (const r of removed) for (const p of [r.start, r.end]) if (p > start && p < end) points.add(p)
    const sorted = [...points].sort((a, b) => a - b)
    for (let i = 0; i + 1 < sorted.length; i++) {
      const [from, to] = [sorted[i]!, sorted[i + 1]!]
      const struck = removed.some((r) => r.start <= from && to <= r.end)
      const part = text.slice(from, to)
      body.appendChild(struck ? el("del", { title: "retracted: no citation left" }, textSpan(part)) : textSpan(part))
    }
  }

  const render = () => {
    const focused = document.activeElement instanceof HTMLElement ? document.activeElement.getAttribute("data-footnote") : null
    clear(body)
    let at = 0
    for (const note of [...footnotes.values()].sort((a, b) => a.at - b.at)) {
      if (note.at < at) continue
      appendPlain(at, note.at)
      body.appendChild(footnoteButton(note))
      at = note.at + `[^${note.footnote}]`.length
    }
    appendPlain(at, text.length)
    if (focused !== null) body.querySelector<HTMLElement>(`button.fn[data-footnote="${Number(focused)}"]`)?.focus()
    clear(list)
    for (const note of [...footnotes.values()].sort((a, b) => a.footnote - b.footnote)) {
      const item = el("li", { "data-outcome": note.outcome }, el("span", { class: `fn fn-${note.outcome}` }, `[${note.footnote}] ${labels[note.outcome]}`), ` source [${note.source}] `)
      if (note.citation !== undefined) append(item, "“", textSpan(note.citation.quote), "”")
      if (note.reasons !== undefined) append(item, ` (${note.reasons.join(", ")})`)
      list.appendChild(item)
    }
    const all = [...footnotes.values()]
    const count = (o: Outcome) => all.filter((n) => n.outcome === o).length
    counts.textContent = `${all.length} citations: ${count("verified")} verified, ${count("normalized")} normalized (NOT verbatim), ` +
      `${count("retracted") + count("rejected")} retracted${state === "rejected" ? " (answer rejected)" : ""}, ${count("pending")} pending`
    status.textContent = state === undefined ? "Verifying…" : `Done: ${state}${failures.length > 0 ? ` (${failures.join(", ")})` : ""}`
  }

  let scheduled = false
  const schedule = () => {
    if (scheduled) return
    scheduled = true
    requestAnimationFrame(() => {
      scheduled = false
      render()
    })
  }

  const apply = (event: StreamEvent) => {
    switch (event.type) {
      case "delta":
        text += event.text
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
        if (event.removeSentence) removed.push(event.sentence)
        break
      }
      case "error":
        failures.push(event.error._tag)
        break
      case "done":
        state = event.state
        // Under `reject`, a retraction rejects the whole answer: its retracted citations read as rejected.
        if (state === "rejected") for (const note of footnotes.values()) if (note.outcome === "retracted") note.outcome = "rejected"
        break
    }
    schedule()
  }

  const events = new EventSource(`/v1/stream/answer/${encodeURIComponent(streamId)}`)
  view.onLeave(() => events.close())
  events.addEventListener("message", (message: MessageEvent<string>) => {
    const event = JSON.parse(message.data) as StreamEvent
    apply(event)
    if (event.type === "done") events.close()
  })
  events.addEventListener("error", () => {
    if (events.readyState === EventSource.CLOSED && state === undefined) {
      status.textContent = "The stream is not available (expired, or this session may not read it)."
    }
  })

  // Keyboard: n / p move between footnotes; Enter on one opens its source (a button).
  body.addEventListener("keydown", (event) => {
    if (event.key !== "n" && event.key !== "p") return
    const all = buttons()
    if (all.length === 0) return
    const at = all.indexOf(document.activeElement as HTMLButtonElement)
    const next = event.key === "n" ? (at + 1) % all.length : (at - 1 + all.length) % all.length
    all[next]!.focus()
    event.preventDefault()
  })
}
