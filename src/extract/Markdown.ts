/**
 * `markdown/1`: the text is the body decoded as UTF-8, as is (a BOM kept, like
 * `text/plain`); the anchors are its ATX and setext headings as a CommonMark
 * parser (micromark, via mdast-util-from-markdown) finds them, each with its
 * path and section.
 */
import * as Effect from "effect/Effect"
import type { HeadingAnchor } from "../Domain.js"
import { ExtractionFailed, ExtractionTooLarge } from "../Errors.js"
import type { Extracted, ExtractionLimits } from "./Records.js"
import { markdownHeadings } from "./Worker.js"

/**
 * Sections and paths from headings in document order: a heading's section runs
 * to the next heading of the same or a higher level (a smaller number), its
 * path is the texts of the headings still open above it, then its own. One pass
 * with a stack: linear in the number of headings.
 */
export const sections = (
  headings: ReadonlyArray<{ readonly level: number; readonly text: string; readonly start: number }>,
  textLength: number
): Array<HeadingAnchor> => {
  const anchors: Array<{ level: number; text: string; path: Array<string>; start: number; end: number }> = []
  const open: Array<number> = [] // indices into anchors, levels strictly increasing
  for (const heading of headings) {
    while (open.length > 0 && anchors[open[open.length - 1]!]!.level >= heading.level) {
      anchors[open.pop()!]!.end = heading.start
    }
    const parent = open.length > 0 ? anchors[open[open.length - 1]!]!.path : []
    anchors.push({ level: heading.level, text: heading.text, path: [...parent, heading.text], start: heading.start, end: textLength })
    open.push(anchors.length - 1)
  }
  return anchors
}

export const extract = (source: string, text: string, limits: ExtractionLimits): Effect.Effect<Extracted, ExtractionFailed | ExtractionTooLarge> =>
  Effect.gen(function*() {
    if (text.length > limits.maxCharacters) {
      return yield* new ExtractionTooLarge({ source, format: "markdown", cap: "maxCharacters", limit: limits.maxCharacters })
    }
    // micromark skips a leading BOM and counts offsets from after it; the text keeps it.
    const shift = text.charCodeAt(0) === 0xfeff ? 1 : 0
    const found = yield* markdownHeadings(text).pipe(
      Effect.mapError((failure) => new ExtractionFailed({ source, format: "markdown", reason: "worker-failed", detail: failure.detail }))
    )
    const headings = found.map((h) => ({ level: h.level, text: h.text, start: h.start + shift }))
    return { extraction: "markdown/1", text, headings: sections(headings, text.length) } satisfies Extracted
  })
