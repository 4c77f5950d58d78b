/**
 * The parsers that can be made slow by hostile input (pdf.js on a PDF,
 * micromark on deeply nested Markdown containers) run off the main thread, in
 * a `worker_threads` worker with resource limits, under the capture's single
 * deadline: interrupting the effect terminates the worker. In a capture this
 * worker runs inside an extraction process (`Runner.ts`), whose limits are the
 * isolation boundary: a worker's heap limit is not (an out-of-memory worker
 * can abort its whole process, and ArrayBuffers are not counted).
 *
 * The worker's code is a small script evaluated in the worker (`eval: true`),
 * not a file next to this module: the same code then runs from the sources,
 * from `dist/` and from the bundled CLI. It loads the parsers by the file URLs
 * resolved here, from this package's dependencies.
 */
import * as Effect from "effect/Effect"
import { createRequire } from "node:module"
import * as path from "node:path"
import { pathToFileURL } from "node:url"
import { Worker } from "node:worker_threads"
import { type Segment, walkScript } from "./PdfVisibility.js"

/** Heap limits of one extraction worker: a hostile file fails there, not in the capturing process. */
export const workerResourceLimits = {
  maxOldGenerationSizeMb: 512,
  maxYoungGenerationSizeMb: 64,
  stackSizeMb: 4
} as const

const require = createRequire(import.meta.url)

/**
 * Largest image pdf.js decodes for the operator list (`pdf/2`), in pixels: 40 Mi (a page scanned
 * at 600 dpi is about 35 Mi). A larger one is left out (pdf.js warns), so invisible text over it
 * counts as `invisible`, not `ocr`: marked more, never less.
 */
export const maxImagePixels = 40 * 1024 * 1024

/** The parsers' entry points as file URLs, resolved once. */
const modules = () => {
  const pdfjsRoot = path.dirname(require.resolve("pdfjs-dist/package.json"))
  return {
    pdfjs: pathToFileURL(path.join(pdfjsRoot, "legacy", "build", "pdf.mjs")).href,
    // pdf.js reads the standard 14 fonts' metrics from here (no font is ever loaded into a renderer).
    standardFonts: path.join(pdfjsRoot, "standard_fonts") + path.sep,
    markdown: pathToFileURL(require.resolve("mdast-util-from-markdown")).href
  }
}

/** What a PDF job returns: each page's text, in page order, or why there is none. */
export type PdfOutcome =
  | {
    readonly _tag: "pages"
    readonly pages: ReadonlyArray<string>
    /** Per page, its text-showing operators with their kinds (`pdf/2` jobs only: PdfVisibility.ts). */
    readonly segments?: ReadonlyArray<ReadonlyArray<Segment>>
  }
  | { readonly _tag: "encrypted"; readonly detail: string }
  | { readonly _tag: "malformed"; readonly detail: string }
  | { readonly _tag: "tooManyPages"; readonly pages: number }
  | { readonly _tag: "tooManyCharacters" }

/** A heading as micromark found it: level, text, and its offsets in the parsed string. */
export interface MarkdownHeading {
  readonly level: number
  readonly text: string
  readonly start: number
  readonly end: number
}

export type MarkdownOutcome =
  | { readonly _tag: "headings"; readonly headings: ReadonlyArray<MarkdownHeading> }
  // The script's catch-all: the parser threw (no known input does; the outcome is typed all the same).
  | { readonly _tag: "malformed"; readonly detail: string }

/**
 * The worker script. PDF: pdf.js with `isEvalSupported: false` (no code from
 * the file is ever compiled), no font faces, no scripting; text items joined
 * in the order pdf.js returns them (content-stream order), a line feed after
 * each item pdf.js marks as ending a line. Markdown: mdast-util-from-markdown
 * (CommonMark), walked iteratively, the heading nodes with the concatenated
 * values of their descendants.
 */
const script = `
const { parentPort, workerData } = require("node:worker_threads")
${walkScript}
const run = async () => {
  const job = workerData
  if (job.kind === "markdown") {
    const { fromMarkdown } = await import(job.modules.markdown)
    const tree = fromMarkdown(job.text)
    const headings = []
    const stack = [tree]
    while (stack.length > 0) {
      const node = stack.pop()
      if (node.type === "heading") {
        const parts = []
        const inner = [node]
        while (inner.length > 0) {
          const n = inner.pop()
          if (typeof n.value === "string" && n.type !== "html") parts.push(n.value)
          else if (n.type === "image" && typeof n.alt === "string") parts.push(n.alt)
          if (Array.isArray(n.children)) for (let i = n.children.length - 1; i >= 0; i--) inner.push(n.children[i])
        }
        headings.push({ level: node.depth, text: parts.join(""), start: node.position.start.offset, end: node.position.end.offset })
        continue
      }
      if (Array.isArray(node.children)) for (let i = node.children.length - 1; i >= 0; i--) stack.push(node.children[i])
    }
    return { _tag: "headings", headings }
  }
  const pdfjs = await import(job.modules.pdfjs)
  let document
  try {
    document = await pdfjs.getDocument({
      data: job.bytes,
      isEvalSupported: false,
      disableFontFace: true,
      useSystemFonts: false,
      enableXfa: false,
      // Read by the operator list (pdf/2): a larger image is left out of it, so text over it is not taken for OCR.
      maxImageSize: ${maxImagePixels},
      standardFontDataUrl: job.modules.standardFonts,
      verbosity: 0
    }).promise
  } catch (error) {
    const name = error && error.name
    if (name === "PasswordException") return { _tag: "encrypted", detail: String(error.message) }
    return { _tag: "malformed", detail: String(name) + ": " + String(error && error.message) }
  }
  try {
    const { info } = await document.getMetadata()
    if (info && info.EncryptFilterName !== null && info.EncryptFilterName !== undefined) {
      return { _tag: "encrypted", detail: "the file is encrypted (" + String(info.EncryptFilterName) + ")" }
    }
    if (document.numPages > job.maxPages) return { _tag: "tooManyPages", pages: document.numPages }
    const pages = []
    const segments = job.visibility ? [] : undefined
    let characters = 0
    for (let number = 1; number <= document.numPages; number++) {
      const page = await document.getPage(number)
      const content = await page.getTextContent()
      let text = ""
      for (const item of content.items) {
        if (typeof item.str !== "string") continue
        text += item.str
        if (item.hasEOL) text += "\\n"
      }
      if (segments !== undefined) segments.push(await pageSegments(pdfjs, page))
      page.cleanup()
      // The text is the pages joined by one form feed: a break before every page but the first.
      characters += text.length + (number > 1 ? 1 : 0)
      if (characters > job.maxCharacters) return { _tag: "tooManyCharacters" }
      pages.push(text)
    }
    return segments === undefined ? { _tag: "pages", pages } : { _tag: "pages", pages, segments }
  } catch (error) {
    return { _tag: "malformed", detail: String(error && error.name) + ": " + String(error && error.message) }
  } finally {
    await document.destroy()
  }
}
run().then((outcome) => parentPort.postMessage(outcome), (error) => parentPort.postMessage({ _tag: "malformed", detail: String(error && error.stack || error) }))
`

/** Why the worker gave no answer: it crashed, or passed its heap limit. */
export class WorkerFailed {
  readonly _tag = "WorkerFailed"
  constructor(readonly detail: string) {}
}

/**
 * Runs one job in a new worker. `code` replaces the worker script: `markdown/2` passes its own
 * (Markdown2.eventsScript); tests pass one to make a worker crash, exit or report its own limits.
 */
export const runJob = <A>(job: Record<string, unknown>, transfer: ReadonlyArray<ArrayBuffer> = [], code = script) =>
  Effect.async<A, WorkerFailed>((resume) => {
    let worker: Worker
    try {
      worker = new Worker(code, {
        eval: true,
        workerData: { ...job, modules: modules() },
        transferList: [...transfer],
        resourceLimits: workerResourceLimits,
        stdout: true,
        stderr: true
      })
    } catch (error) {
      resume(Effect.fail(new WorkerFailed(String(error))))
      return
    }
    // pdf.js may print warnings; they are not part of citegate's output.
    worker.stdout.resume()
    worker.stderr.resume()
    // The first of these events decides: Effect.async takes the first resume and ignores the others
    // (the exit that follows a message, or an error).
    worker.once("message", (outcome: A) => {
      resume(Effect.succeed(outcome))
      void worker.terminate()
    })
    worker.once("error", (error) => {
      resume(Effect.fail(new WorkerFailed(`${(error as NodeJS.ErrnoException).code ?? error.name}: ${error.message}`)))
    })
    worker.once("exit", (code) => {
      resume(Effect.fail(new WorkerFailed(`the worker exited with code ${code}`)))
    })
    // Interruption (the capture's deadline) ends the worker wherever it is.
    return Effect.promise(() => worker.terminate())
  })

/**
 * Text per page of a PDF, in a worker. The bytes are copied: the caller's body stays intact. With
 * `visibility` (`pdf/2`) each page's operators and their kinds come too.
 */
export const pdfPages = (
  bytes: Uint8Array,
  limits: { readonly maxPages: number; readonly maxCharacters: number },
  visibility = false
) => {
  const copy = new Uint8Array(bytes)
  return runJob<PdfOutcome>(
    { kind: "pdf", bytes: copy, maxPages: limits.maxPages, maxCharacters: limits.maxCharacters, visibility },
    [copy.buffer]
  )
}

/**
 * The headings of a Markdown text, in a worker. The script's catch-all answer (the parser threw: no
 * known text does) is a WorkerFailed with the error, like a crash.
 */
export const markdownHeadings = (text: string) =>
  Effect.flatMap(
    runJob<MarkdownOutcome>({ kind: "markdown", text }),
    (outcome) => outcome._tag === "headings" ? Effect.succeed(outcome.headings) : Effect.fail(new WorkerFailed(outcome.detail))
  )
