/**
 * The source viewer: the capture's extracted text (the text the verifier searched) with the cited
 * span highlighted and scrolled into view; a PDF capture drawn as the page that holds the span (its
 * stored body, pdf.js in the browser) with the sentence marked on it; every occurrence of an exact
 * quote marked, with previous / next (across pages); below it, the caller's review section.
 */
import { ApiError, getBytes, getJson } from "./api.ts"
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

interface PageRange {
  readonly number: number
  readonly start: number
  readonly end: number
}

type Document =
  | {
    readonly number: number
    readonly source: string
    readonly status: "captured"
    readonly captureSha256: string
    readonly contentType: string
    readonly text: string
    readonly pages: ReadonlyArray<PageRange>
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

type PdfModule = typeof import("./Pdf.ts")
type PdfDocument = Awaited<ReturnType<PdfModule["open"]>>

/** The capture's pages drawn by pdf.js: one stored body read and parsed once per capture. */
const pdfs = new Map<string, Promise<{ readonly module: PdfModule; readonly document: PdfDocument }>>()

const pdfOf = (runId: string, captureSha256: string) => {
  const key = `${runId}/${captureSha256}`
  let found = pdfs.get(key)
  if (found === undefined) {
    found = Promise.all([import("./Pdf.ts"), getBytes(`/v1/runs/${encodeURIComponent(runId)}/captures/${captureSha256}/body`)]).then(
      async ([module, bytes]) => ({ module, document: await module.open(bytes) })
    )
    found.catch(() => pdfs.delete(key))
    pdfs.set(key, found)
  }
  return found
}

/** What the viewer shows under the source: the review section for the opened citation. */
export type ReviewSection = (citation: Citation, container: HTMLElement) => void

/** The viewer's parts: heading, meta, the occurrence toolbar, the text, the PDF page, the review section. */
const layout = () => {
  const heading = el("h2", { id: "source-heading" }, "Source")
  const meta = el("div", { class: "source-meta" })
  const position = el("span", { id: "occurrence-position", "aria-live": "polite" })
  const previous = el("button", { type: "button", id: "occurrence-previous", "aria-controls": "source-text" }, "Previous occurrence")
  const next = el("button", { type: "button", id: "occurrence-next", "aria-controls": "source-text" }, "Next occurrence")
  const backButton = el("button", { type: "button", id: "source-back" }, "Back to footnote")
  const text = el("pre", { id: "source-text", class: "source-text", tabindex: "0", "aria-label": "Capture text" })
  const canvas = el("canvas", { "aria-hidden": "true" })
  const pageSheet = el("div", { class: "pdf-page" }, canvas)
  const pdfView = el("div", { id: "pdf-view", class: "pdf-view", role: "region", "aria-label": "Rendered PDF page", hidden: "" }, pageSheet)
  const review = el("div", { class: "review" })
  const element = el(
    "aside",
    { id: "source", class: "source", role: "region", "aria-labelledby": "source-heading", hidden: "" },
    heading,
    meta,
    el("div", { class: "occurrences", role: "toolbar", "aria-label": "Occurrences" }, previous, position, next, backButton),
    text,
    pdfView,
    review
  )
  return { heading, meta, position, previous, next, backButton, text, canvas, pageSheet, pdfView, review, element }
}

/** Marks the cited text on the drawn page: one box per rectangle, the first focusable. */
const highlightBoxes = (pageSheet: HTMLElement, rects: ReadonlyArray<{ left: number; top: number; width: number; height: number }>, pageNumber: number) => {
  for (const old of Array.from(pageSheet.querySelectorAll(".pdf-highlight"))) old.remove()
  return rects.map((r, i) => {
    const box = el("div", { class: "pdf-highlight", ...(i === 0 ? { tabindex: "-1", id: "pdf-highlight", "aria-label": `Cited text on page ${pageNumber}` } : {}) })
    box.style.left = `${r.left - 1}px`
    box.style.top = `${r.top - 1}px`
    box.style.width = `${r.width + 2}px`
    box.style.height = `${r.height + 2}px`
    pageSheet.appendChild(box)
    return box
  })
}

/** Writes `body` into `text` with each span (in order, not overlapping) marked; returns the marks. */
const markedText = (text: HTMLElement, body: string, spans: ReadonlyArray<{ start: number; end: number }>): Array<HTMLElement> => {
  clear(text)
  const marks: Array<HTMLElement> = []
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
  return marks
}

/** The capture a citation names, when the run holds it. A report's fact names its source by URL (sourceNumber 0), an answer's citation by number. */
const captured = (all: ReadonlyArray<Document>, citation: Citation) => {
  const found = all.find((d) => (citation.sourceNumber === 0 ? d.source === citation.source && d.status === "captured" && d.captureSha256 === citation.captureSha256 : d.number === citation.sourceNumber))
  return found === undefined || found.status !== "captured" || found.captureSha256 !== citation.captureSha256 ? undefined : found
}

/** The capture's digest, type and page, the quote's occurrences and method. */
const describe = (meta: HTMLElement, found: Extract<Document, { status: "captured" }>, citation: Citation) => {
  const page = found.pages.find((p) => p.start <= citation.span.start && citation.span.start < p.end)
  append(
    meta,
    el("p", {}, el("code", { title: found.captureSha256 }, `${found.captureSha256.slice(0, 12)}…`), " ", textSpan(found.contentType), page === undefined ? "" : `, page ${page.number}`),
    el("p", {}, `${citation.occurrences} occurrence${citation.occurrences === 1 ? "" : "s"} of the quote in the capture; method ${citation.method ?? "exact"}`),
    (citation.method ?? "exact") === "exact" ? null : el("p", { class: "warning" }, "Normalized match: the capture's text differs from the quote (NOT verbatim).")
  )
}

export const viewer = (runId: string, reviewSection: ReviewSection): Viewer => {
  const { backButton, canvas, element, heading, meta, next, pageSheet, pdfView, position, previous, review, text } = layout()
  let marks: Array<HTMLElement> = []
  let current = 0
  let back: HTMLElement | undefined
  // Set while a PDF capture is shown: its pages are drawn, the text stays hidden.
  let pdf: { readonly spans: ReadonlyArray<{ start: number; end: number }>; readonly pages: ReadonlyArray<PageRange>; readonly load: ReturnType<typeof pdfOf> } | undefined
  let drawing = 0

  /** Draws the page holding occurrence `index` and marks the span on it, in view and focused. */
  const showOnPage = async (index: number) => {
    if (pdf === undefined) return
    const mine = ++drawing
    const span = pdf.spans[index]!
    const page = pdf.pages.find((p) => p.start <= span.start && span.start < p.end) ?? pdf.pages[0]
    if (page === undefined) return
    pdfView.setAttribute("aria-busy", "true")
    const { document: doc, module } = await pdf.load
    const width = Math.max(320, pdfView.clientWidth - 24)
    const rects = await module.drawPage(doc, page.number, canvas, width, span.start - page.start, span.end - page.start)
    if (mine !== drawing) return
    const boxes = highlightBoxes(pageSheet, rects, page.number)
    pdfView.setAttribute("data-page", String(page.number))
    pdfView.removeAttribute("aria-busy")
    position.textContent = `Occurrence ${current + 1} of ${marks.length}, page ${page.number} of ${doc.numPages}`
    boxes[0]?.scrollIntoView({ block: "center" })
    boxes[0]?.focus({ preventScroll: true })
  }

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
    if (pdf !== undefined) {
      void showOnPage(current).catch((error: unknown) => showText(`The page could not be drawn (${String(error)}): the extracted text is shown.`))
      return
    }
    mark.scrollIntoView({ block: "center" })
    mark.focus({ preventScroll: true })
  }

  /** Falls back to the extracted text (the PDF body could not be read or drawn). */
  const showText = (why: string) => {
    pdf = undefined
    pdfView.hidden = true
    text.hidden = false
    append(meta, el("p", { role: "alert" }, why))
    select(current)
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

  const open = async (citation: Citation, outcome: string, from: HTMLElement) => {
    back = from
    element.hidden = false
    heading.textContent = citation.sourceNumber === 0 ? `Source of fact ${citation.footnote}` : `Source [${citation.sourceNumber}] for footnote ${citation.footnote}`
    clear(meta)
    const all = await documents(runId).catch((error: unknown) => {
      clear(text)
      marks = []
      position.textContent = ""
      append(meta, el("p", { role: "alert" }, `The capture texts are not available: ${error instanceof ApiError ? `${error.status} ${String(error.body._tag)}` : String(error)}`))
      return undefined
    })
    if (all === undefined) return
    const found = captured(all, citation)
    append(meta, el("p", { class: "url" }, textSpan(citation.source)), el("p", {}, `Outcome: ${outcome}`))
    if (found === undefined) {
      clear(text)
      marks = []
      position.textContent = ""
      append(meta, el("p", { role: "alert" }, "This run holds no capture with the cited digest."))
      return
    }
    describe(meta, found, citation)
    const spans = occurrencesOf(found.text, citation)
    marks = markedText(text, found.text, spans)
    clear(review)
    reviewSection(citation, review)
    const isPdf = /^application\/pdf\b/i.test(found.contentType)
    pdf = isPdf ? { spans, pages: found.pages, load: pdfOf(runId, found.captureSha256) } : undefined
    text.hidden = isPdf
    pdfView.hidden = !isPdf
    if (isPdf) for (const old of Array.from(pageSheet.querySelectorAll(".pdf-highlight"))) old.remove()
    select(Math.max(0, spans.findIndex((s) => s.start === citation.span.start)))
  }
  return { element, open }
}
