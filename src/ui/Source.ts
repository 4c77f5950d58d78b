/**
 * The source viewer: the capture's extracted text (the text the verifier searched) with the cited
 * span highlighted and scrolled into view; every occurrence of an exact quote marked, with previous /
 * next; the review decision's place (refused by the service until decisions are recorded).
 */
import { ApiError, getJson, postJson } from "./api.ts"
import { append, appendText, clear, el, textSpan } from "./dom.ts"

export interface Citation {
  readonly footnote: number
  readonly claimId: string
  readonly sourceNumber: number
  readonly source: string
  readonly captureSha256: string
  readonly quote: string
  readonly span: { readonly start: number; readonly end: number }
  readonly occurrences: number
  readonly page?: number
  readonly method?: string
  readonly captureText?: string
}

type Document =
  | {
    readonly number: number
    readonly source: string
    readonly status: "captured"
    readonly captureSha256: string
    readonly contentType: string
    readonly text: string
    readonly pages: ReadonlyArray<{ readonly number: number; readonly start: number; readonly end: number }>
  }
  | { readonly number: number; readonly source: string; readonly status: "missing"; readonly reason: string }

const documentsOf = new Map<string, Promise<ReadonlyArray<Document>>>()

/** The run's capture texts, read once per run (`GET /v1/runs/{id}/documents`). */
const documents = (runId: string) => {
  let found = documentsOf.get(runId)
  if (found === undefined) {
    found = getJson<{ readonly documents: ReadonlyArray<Document> }>(`/v1/runs/${encodeURIComponent(runId)}/documents`).then((d) => d.documents)
    found.catch(() => documentsOf.delete(runId))
    documentsOf.set(runId, found)
  }
  return found
}

/** Most occurrences marked in one text (the count the verifier gives is shown regardless). */
const maxOccurrences = 1_000

/** Where the quote occurs in `text`: every place for an exact quote, else the cited span alone. */
export const occurrencesOf = (text: string, citation: Citation): ReadonlyArray<{ start: number; end: number }> => {
  if ((citation.method ?? "exact") !== "exact" || citation.quote.length === 0) return [citation.span]
  const found: Array<{ start: number; end: number }> = []
  for (let at = text.indexOf(citation.quote); at !== -1 && found.length < maxOccurrences; at = text.indexOf(citation.quote, at + 1)) {
    found.push({ start: at, end: at + citation.quote.length })
  }
  return found.some((o) => o.start === citation.span.start) ? found : [citation.span]
}

export interface Viewer {
  readonly element: HTMLElement
  readonly open: (citation: Citation, outcome: string, back: HTMLElement) => Promise<void>
}

export const viewer = (runId: string): Viewer => {
  const heading = el("h2", { id: "source-heading" }, "Source")
  const meta = el("div", { class: "source-meta" })
  const position = el("span", { id: "occurrence-position", "aria-live": "polite" })
  const previous = el("button", { type: "button", id: "occurrence-previous", "aria-controls": "source-text" }, "Previous occurrence")
  const next = el("button", { type: "button", id: "occurrence-next", "aria-controls": "source-text" }, "Next occurrence")
  const backButton = el("button", { type: "button", id: "source-back" }, "Back to footnote")
  const text = el("pre", { id: "source-text", class: "source-text", tabindex: "0", "aria-label": "Capture text" })
  const review = el("div", { class: "review" })
  const element = el(
    "aside",
    { id: "source", class: "source", role: "region", "aria-labelledby": "source-heading", hidden: "" },
    heading,
    meta,
    el("div", { class: "occurrences", role: "toolbar", "aria-label": "Occurrences" }, previous, position, next, backButton),
    text,
    review
  )
  let marks: Array<HTMLElement> = []
  let current = 0
  let back: HTMLElement | undefined

  const select = (index: number) => {
    marks[current]?.classList.remove("current")
    marks[current]?.removeAttribute("aria-current")
    current = (index + marks.length) % marks.length
    const mark = marks[current]!
    mark.classList.add("current")
    mark.setAttribute("aria-current", "true")
    position.textContent = `Occurrence ${current + 1} of ${marks.length}`
    previous.disabled = marks.length < 2
    next.disabled = marks.length < 2
    mark.scrollIntoView({ block: "center" })
    mark.focus({ preventScroll: true })
  }
  previous.addEventListener("click", () => select(current - 1))
  next.addEventListener("click", () => select(current + 1))
  const goBack = () => back?.focus()
  backButton.addEventListener("click", goBack)
  element.addEventListener("keydown", (event) => {
    if (event.target instanceof HTMLTextAreaElement || event.target instanceof HTMLInputElement) return
    if (event.key === "]" && marks.length > 0) select(current + 1)
    else if (event.key === "[" && marks.length > 0) select(current - 1)
    else if (event.key === "Escape") goBack()
    else return
    event.preventDefault()
  })

  const renderText = (body: string, spans: ReadonlyArray<{ start: number; end: number }>) => {
    clear(text)
    marks = []
    let at = 0
    spans.forEach((span, index) => {
      if (span.start < at) return
      appendText(text, body.slice(at, span.start))
      const mark = el("mark", { class: "occurrence", tabindex: "-1", "data-occurrence": String(index + 1) })
      appendText(mark, body.slice(span.start, span.end))
      text.appendChild(mark)
      marks.push(mark)
      at = span.end
    })
    appendText(text, body.slice(at))
  }

  const reviewForm = (citation: Citation) => {
    clear(review)
    const result = el("p", { role: "alert", class: "review-result" })
    const note = el("textarea", { id: "review-note", rows: "2", cols: "40" })
    const form = el(
      "form",
      { "aria-label": "Review decision" },
      el(
        "fieldset",
        {},
        el("legend", {}, `Review of footnote ${citation.footnote}`),
        el("label", {}, el("input", { type: "radio", name: "decision", value: "accept" }), " Supports the claim"),
        el("label", {}, el("input", { type: "radio", name: "decision", value: "reject" }), " Does not support it"),
        el("label", { for: "review-note" }, "Note"),
        note,
        el("button", { type: "submit", id: "review-submit" }, "Record decision")
      ),
      result
    )
    form.addEventListener("submit", (event) => {
      event.preventDefault()
      const decision = (form.querySelector("input[name=decision]:checked") as HTMLInputElement | null)?.value ?? "none"
      const body = JSON.stringify({ footnote: citation.footnote, claimId: citation.claimId, captureSha256: citation.captureSha256, decision, note: note.value })
      postJson(`/v1/runs/${encodeURIComponent(runId)}/review-decisions`, body).then(
        () => (result.textContent = "Recorded."),
        (error: unknown) => {
          result.textContent = error instanceof ApiError && error.body._tag === "ReviewRecordingUnavailable"
            ? "Not recorded: this service does not record review decisions yet (ReviewRecordingUnavailable)."
            : `Not recorded: ${error instanceof ApiError ? `${error.status} ${String(error.body._tag)}` : String(error)}`
        }
      )
    })
    review.appendChild(form)
  }

  const open = async (citation: Citation, outcome: string, from: HTMLElement) => {
    back = from
    element.hidden = false
    heading.textContent = `Source [${citation.sourceNumber}] for footnote ${citation.footnote}`
    clear(meta)
    const all = await documents(runId).catch((error: unknown) => {
      clear(text)
      marks = []
      position.textContent = ""
      append(meta, el("p", { role: "alert" }, `The capture texts are not available: ${error instanceof ApiError ? `${error.status} ${String(error.body._tag)}` : String(error)}`))
      return undefined
    })
    if (all === undefined) return
    const found = all.find((d) => d.number === citation.sourceNumber)
    append(meta, el("p", { class: "url" }, textSpan(citation.source)), el("p", {}, `Outcome: ${outcome}`))
    if (found === undefined || found.status !== "captured" || found.captureSha256 !== citation.captureSha256) {
      clear(text)
      marks = []
      position.textContent = ""
      append(meta, el("p", { role: "alert" }, "This run holds no capture with the cited digest."))
      return
    }
    const page = found.pages.find((p) => p.start <= citation.span.start && citation.span.start < p.end)
    append(
      meta,
      el("p", {}, el("code", { title: found.captureSha256 }, `${found.captureSha256.slice(0, 12)}…`), " ", textSpan(found.contentType), page === undefined ? "" : `, page ${page.number}`),
      el("p", {}, `${citation.occurrences} occurrence${citation.occurrences === 1 ? "" : "s"} of the quote in the capture; method ${citation.method ?? "exact"}`),
      (citation.method ?? "exact") === "exact" ? null : el("p", { class: "warning" }, "Normalized match: the capture's text differs from the quote (NOT verbatim).")
    )
    const spans = occurrencesOf(found.text, citation)
    renderText(found.text, spans)
    reviewForm(citation)
    select(Math.max(0, spans.findIndex((s) => s.start === citation.span.start)))
  }
  return { element, open }
}
