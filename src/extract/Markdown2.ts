/**
 * `markdown/2`: the rendered text of a Markdown body, what a reader sees
 * (rule in MarkdownRender.ts), with its heading anchors and an exact map back
 * to the body. The CommonMark parser (micromark, via mdast-util-from-markdown,
 * the version pinned as for `markdown/1`) with GFM tables (the pinned
 * micromark-extension-gfm-table and mdast-util-gfm-table) runs in an extraction worker, which
 * walks the tree iteratively and sends it as a flat list of events; the
 * rendering is a pure function on this side.
 */
import * as Effect from "effect/Effect"
import { createRequire } from "node:module"
import { pathToFileURL } from "node:url"
import { ExtractionFailed, ExtractionTooLarge } from "../Errors.js"
import type { Extracted, ExtractionLimits } from "./Records.js"
import { type MarkdownEvent, render, RenderTooLong } from "./MarkdownRender.js"
import { runJob, WorkerFailed } from "./Worker.js"

type Outcome =
  | { readonly _tag: "events"; readonly events: ReadonlyArray<MarkdownEvent> }
  | { readonly _tag: "malformed"; readonly detail: string }

/**
 * The worker script: parse, then walk the tree with an explicit stack, one
 * enter event per node (type, offsets, value, heading level) and one exit.
 */
export const eventsScript = `
const { parentPort, workerData } = require("node:worker_threads")
const run = async () => {
  const { fromMarkdown } = await import(workerData.modules.markdown)
  const { gfmTable } = await import(workerData.tables.syntax)
  const { gfmTableFromMarkdown } = await import(workerData.tables.tree)
  const tree = fromMarkdown(workerData.text, { extensions: [gfmTable()], mdastExtensions: [gfmTableFromMarkdown()] })
  const events = []
  const stack = [[tree, false]]
  while (stack.length > 0) {
    const [node, exit] = stack.pop()
    if (exit) {
      events.push([0])
      continue
    }
    const value = typeof node.value === "string" ? node.value : null
    events.push([1, node.type, node.position.start.offset, node.position.end.offset, value, node.depth || 0])
    stack.push([node, true])
    if (Array.isArray(node.children)) for (let i = node.children.length - 1; i >= 0; i--) stack.push([node.children[i], false])
  }
  return { _tag: "events", events }
}
run().then((outcome) => parentPort.postMessage(outcome), (error) => parentPort.postMessage({ _tag: "malformed", detail: String(error && error.stack || error) }))
`

const require = createRequire(import.meta.url)

/** The GFM table extension's entry points (syntax and tree), as file URLs for the worker. */
const tables = () => ({
  syntax: pathToFileURL(require.resolve("micromark-extension-gfm-table")).href,
  tree: pathToFileURL(require.resolve("mdast-util-gfm-table")).href
})

/** The events of a Markdown text, in a worker. */
export const markdownEvents = (text: string) =>
  Effect.flatMap(
    runJob<Outcome>({ kind: "markdown-events", text, tables: tables() }, [], eventsScript),
    (outcome) => outcome._tag === "events" ? Effect.succeed(outcome.events) : Effect.fail(new WorkerFailed(outcome.detail))
  )

export const extract = (
  source: string,
  text: string,
  limits: ExtractionLimits
): Effect.Effect<Extracted, ExtractionFailed | ExtractionTooLarge> =>
  Effect.gen(function*() {
    const tooLarge = new ExtractionTooLarge({ source, format: "markdown", cap: "maxCharacters", limit: limits.maxCharacters })
    if (text.length > limits.maxCharacters) return yield* tooLarge
    const events = yield* markdownEvents(text).pipe(
      Effect.mapError((failure) => new ExtractionFailed({ source, format: "markdown", reason: "worker-failed", detail: failure.detail }))
    )
    // micromark skips a leading BOM and counts offsets from after it; the map counts it.
    const shift = text.charCodeAt(0) === 0xfeff ? 1 : 0
    try {
      const rendered = render(text, events, shift, limits.maxCharacters)
      return { extraction: "markdown/2", text: rendered.text, headings: rendered.headings, bodyMap: rendered.bodyMap } satisfies Extracted
    } catch (error) {
      if (error instanceof RenderTooLong) return yield* tooLarge
      throw error
    }
  })
