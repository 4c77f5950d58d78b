/**
 * A PDF capture drawn as its pages (pdf.js, the version the extractor pins, bundled into this package):
 * one page at a time on a canvas, the cited span marked by rectangles computed from pdf.js's text items.
 * The page's text is the items' strings joined as the extractor joins them (`str`, then a line feed
 * after an item with `hasEOL`), so an offset into the capture's page text lands on the same item here.
 *
 * Loaded only when a PDF capture is opened (a chunk of its own). The worker is this origin's
 * `/ui/pdf.worker.js`, created here through the page's one Trusted Types policy, which accepts that
 * URL and nothing else; pdf.js never evaluates code (`isEvalSupported: false`).
 */
import { getDocument, GlobalWorkerOptions, type PDFDocumentProxy, Util } from "pdfjs-dist"

const workerUrl = "/ui/pdf.worker.js"

interface TrustedTypesLike {
  readonly createPolicy: (name: string, rules: { createScriptURL: (input: string) => string }) => { createScriptURL: (input: string) => unknown }
}

let started = false
const startWorker = () => {
  if (started) return
  started = true
  const trustedTypes = (globalThis as unknown as { trustedTypes?: TrustedTypesLike }).trustedTypes
  const policy = trustedTypes?.createPolicy("citegate-pdf-worker", {
    createScriptURL: (input) => {
      if (input !== workerUrl) throw new TypeError(`not the PDF worker: ${input.slice(0, 100)}`)
      return input
    }
  })
  const url = (policy === undefined ? workerUrl : policy.createScriptURL(workerUrl)) as string
  GlobalWorkerOptions.workerPort = new Worker(url, { type: "module", name: "pdf.js" })
}

export const open = (bytes: Uint8Array): Promise<PDFDocumentProxy> => {
  startWorker()
  return getDocument({
    data: bytes,
    isEvalSupported: false,
    enableXfa: false,
    disableAutoFetch: true,
    verbosity: 0
  }).promise
}

export interface Rect {
  readonly left: number
  readonly top: number
  readonly width: number
  readonly height: number
}

/**
 * Draws page `number` of `document` into `canvas` at `width` CSS pixels and returns the rectangles (in
 * CSS pixels of the canvas) covering page-text offsets `start`..`end`.
 */
export const drawPage = async (
  document: PDFDocumentProxy,
  number: number,
  canvas: HTMLCanvasElement,
  width: number,
  start: number,
  end: number
): Promise<ReadonlyArray<Rect>> => {
  const page = await document.getPage(number)
  const unit = page.getViewport({ scale: 1 })
  const viewport = page.getViewport({ scale: width / unit.width })
  const ratio = Math.min(2, globalThis.devicePixelRatio || 1)
  canvas.width = Math.floor(viewport.width * ratio)
  canvas.height = Math.floor(viewport.height * ratio)
  canvas.style.width = `${Math.floor(viewport.width)}px`
  canvas.style.height = `${Math.floor(viewport.height)}px`
  await page.render({ canvas, viewport, transform: ratio === 1 ? undefined : [ratio, 0, 0, ratio, 0, 0] } as Parameters<typeof page.render>[0]).promise
  const content = await page.getTextContent()
  const rects: Array<Rect> = []
  let at = 0
  for (const item of content.items) {
    if (!("str" in item) || typeof item.str !== "string") continue
    const length = item.str.length
    const from = Math.max(start, at)
    const to = Math.min(end, at + length)
    if (from < to && length > 0) {
      const m = Util.transform(viewport.transform, item.transform)
      const size = Math.hypot(m[2]!, m[3]!)
      const itemWidth = item.width * viewport.scale
      rects.push({
        left: m[4]! + (itemWidth * (from - at)) / length,
        top: m[5]! - size,
        width: (itemWidth * (to - from)) / length,
        height: size * 1.2
      })
    }
    at += length + (item.hasEOL ? 1 : 0)
  }
  page.cleanup()
  return rects
}
