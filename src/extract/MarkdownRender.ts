/**
 * The rendering rule of `markdown/2`: from a CommonMark syntax tree (as a flat
 * list of enter/exit events with source offsets) to the text a reader sees,
 * with an exact map back to the body. A pure, linear function: one pass over
 * the events, and over each node's source once.
 *
 * The rule:
 * - Blocks (paragraphs, headings, block quotes, list items, code blocks,
 *   thematic breaks, HTML blocks, GFM table rows) begin a new line;
 *   consecutive breaks are one line feed; the text neither starts nor ends
 *   with one. List markers, block-quote markers and heading marks are not
 *   text. A table row is one line, one tab between two cells (an empty cell
 *   included, empty cells at the end of a row adding nothing), as in `html/2`;
 *   the delimiter row and the pipes are not text.
 * - Inline markup is not text: emphasis, strong, link and code-span
 *   delimiters, link destinations and titles, backslash escapes; character
 *   references are decoded. Images and link reference definitions are not text
 *   (an image's alternative text is not what a reader sees).
 * - Outside code blocks every run of white space (space, tab, line endings, so
 *   soft line breaks too, and U+00A0 as in `html/2`) is one space; a hard line
 *   break is a line feed.
 *   Code blocks keep their lines as the parser gives them.
 * - Raw HTML: tags and comments are dropped, the text between them is kept as
 *   written; `<sup>`/`<sub>` write `^`/`_` before their content, bracketed
 *   unless the content is one word (as in `html/2`: `10<sup>6</sup>` is
 *   `10^6`). An HTML block that starts with `<script`, `<style` or `<!--`,
 *   or whose first tag hides its element (a `hidden` attribute, or a style
 *   `display: none`, `visibility: hidden`, `font-size: 0`, as in `html/2`),
 *   is dropped whole; inline, the text from such a tag to its closing tag
 *   (or the end of the paragraph) is dropped.
 * - Headings are anchors: level, the heading's rendered text, its section.
 *
 * The map (`bodyMap`): runs `[textStart, bodyStart, length]`, in text order,
 * each a stretch of the text equal, code unit for code unit, to the body at
 * `bodyStart` (offsets in UTF-16 code units of the body decoded as UTF-8, a
 * BOM counted). Text outside every run (line breaks, spaces standing for line
 * endings, decoded references, the marks of superscripts) was written by the
 * rule: it stands for the body between the runs around it.
 */
import type { HeadingAnchor } from "../Domain.js"
import { hidingStyle } from "./Html2.js"
import { sections } from "./Markdown.js"

/** One event of the tree walk: a node entered (with its type, offsets, value) or left. */
export type MarkdownEvent =
  | readonly [kind: 1, type: string, start: number, end: number, value: string | null, level: number]
  | readonly [kind: 0]

/** A run of the body map: `length` code units of text at `textStart` equal the body at `bodyStart`. */
export type BodyRun = readonly [textStart: number, bodyStart: number, length: number]

export interface Rendered {
  readonly text: string
  readonly headings: ReadonlyArray<HeadingAnchor>
  readonly bodyMap: ReadonlyArray<BodyRun>
}

const blockTypes = new Set([
  "paragraph", "heading", "blockquote", "list", "listItem", "code", "thematicBreak", "root", "table", "tableRow"
])
/** Nodes whose content is not text a reader sees. */
const skippedTypes = new Set(["image", "imageReference", "definition", "footnoteDefinition", "yaml"])

/** Characters a parser removes from inside a text node's source: container prefixes, escapes, indentation. */
const skippable = (c: string) => c === " " || c === "\t" || c === "\n" || c === "\r" || c === ">" || c === "\\"
/** White space collapsed outside code blocks: ASCII white space and the no-break space U+00A0 (as in `html/2`). */
const isSpace = (c: string) => c === " " || c === "\t" || c === "\n" || c === "\r" || c === "\u00a0"
const reference = /&(?:#[0-9]{1,7}|#[xX][0-9a-fA-F]{1,6}|[A-Za-z][A-Za-z0-9]{1,31});/y
const word = /^[+\-\u2212\u00b1]?[\p{L}\p{N}]+$/u
const scriptTag = /^<(\/?)(sup|sub)(?:\s[^>]*)?>$/i
const dropBlock = /^\s*<(?:script|style|!--)/i
const openTag = /^<([A-Za-z][A-Za-z0-9-]*)(\s[^>]*)?\/?>$/
const closeTag = /^<\/([A-Za-z][A-Za-z0-9-]*)\s*>$/

/** A raw HTML opening tag that hides its element: a `hidden` attribute, or a hiding inline style (as in `html/2`). */
const hides = (attributes: string): boolean => {
  if (/\shidden(?:[\s=/]|$)/i.test(attributes)) return true
  const style = /\sstyle\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s"'=<>`]+))/i.exec(attributes)
  return style !== null && hidingStyle.test(style[1] ?? style[2] ?? style[3] ?? "")
}

const utf16 = new TextDecoder("utf-16le")
const decode = (units: Uint16Array, from: number, to: number) => utf16.decode(units.subarray(from, to))

/** Thrown past `maxCharacters`; the caller turns it into ExtractionTooLarge. */
export class RenderTooLong {}

/** The text being rendered from one body's events: its code units, its body map, what is owed before the next unit. */
class Renderer {
  // The text as UTF-16 code units, grown by doubling: one typed array, not a string per unit.
  units: Uint16Array
  readonly runs: Array<[number, number, number]> = []
  length = 0
  pendingBreak = false
  pendingSpace = false
  spaceAt = -1 // where the pending space is in the body, if it is a copy
  pendingCells = 0 // tabs owed between table cells
  readonly rows: Array<number> = [] // cells seen in each open table row
  readonly found: Array<{ level: number; text: string; start: number }> = []
  heading: { level: number; start: number } | undefined
  readonly open: Array<string> = [] // node types entered and not yet left
  readonly scripts: Array<boolean> = [] // raw-HTML superscripts open: whether a bracket was written
  skipDepth = 0
  readonly hiddenInline: Array<string> = [] // raw inline tags that hide what follows, innermost last

  constructor(
    readonly body: string,
    readonly events: ReadonlyArray<MarkdownEvent>,
    readonly shift: number,
    readonly maxCharacters: number
  ) {
    this.units = new Uint16Array(Math.min(Math.max(body.length, 16), maxCharacters + 1))
  }

  /** One output code unit, copied from the body at `at` (or written by the rule: `at` is -1). */
  put(c: string, at: number): void {
    if (this.length === this.units.length) {
      const grown = new Uint16Array(this.units.length * 2)
      grown.set(this.units)
      this.units = grown
    }
    this.units[this.length] = c.charCodeAt(0)
    if (at >= 0) {
      const runs = this.runs
      const last = runs[runs.length - 1]
      if (last !== undefined && last[0] + last[2] === this.length && last[1] + last[2] === at) last[2]++
      else runs.push([this.length, at, 1])
    }
    this.length++
    if (this.length > this.maxCharacters) throw new RenderTooLong()
  }

  /** Separators owed before the next code unit; `at` is where that unit is in the body. */
  separate(at: number): void {
    if (this.length > 0 && this.pendingBreak) this.put("\n", -1)
    if (this.pendingCells > 0) for (let k = 0; k < this.pendingCells; k++) this.put("\t", -1)
    else if (this.length > 0 && this.pendingSpace && !this.pendingBreak) {
      this.put(" ", this.spaceAt >= 0 ? this.spaceAt : at > 0 && this.body[at - 1] === " " ? at - 1 : -1)
    }
    this.pendingBreak = false
    this.pendingSpace = false
    this.pendingCells = 0
    this.spaceAt = -1
  }

  /** Write a string the rule makes (a mark): no place in the body. */
  write(s: string): void {
    for (let k = 0; k < s.length; k++) {
      if (k === 0) this.separate(-1)
      this.put(s[k]!, -1)
    }
  }

  /**
   * Write a node's value aligned with its source `[from, to)` in the body: each code unit of the
   * value is found at the next equal body unit, skipping what the parser removed (container
   * prefixes, escapes, indentation) and taking a character reference whole. `collapse`: white space
   * runs become one space.
   */
  aligned(value: string, from: number, to: number, collapse: boolean): void {
    const body = this.body
    let j = from
    let i = 0
    while (i < value.length) {
      const c = value[i]!
      // Find c in the body: skip removed characters; a reference is decoded text, not a copy.
      let at = -1
      while (j < to) {
        if (body[j] === "&") {
          reference.lastIndex = j
          const match = reference.exec(body)
          if (match !== null && !value.startsWith(match[0], i)) {
            // The decoded reference is one or two code units of the value: the ones before the next body unit.
            const after = body[j + match[0].length]
            const count = i + 1 < value.length && value[i + 1] !== after && value[i + 2] === after ? 2 : 1
            for (let k = 0; k < count && i < value.length; k++) {
              const u = value[i++]!
              if (collapse && isSpace(u)) this.pendingSpace = true
              else {
                this.separate(-1)
                this.put(u, -1)
              }
            }
            j += match[0].length
            at = -2
            break
          }
        }
        if (body[j] === c) {
          at = j++
          break
        }
        if (!skippable(body[j]!)) break
        j++
      }
      if (at === -2) continue
      i++
      if (collapse && isSpace(c)) {
        // The first white space of a run stands for the run: a copy when it is a space in the body.
        if (!this.pendingSpace) this.spaceAt = c === " " ? at : -1
        this.pendingSpace = true
        continue
      }
      this.separate(at)
      this.put(c, at)
    }
  }

  /** Leaves the innermost node. */
  leave(): void {
    const type = this.open.pop()!
    if (this.skipDepth > 0) {
      this.skipDepth--
      return
    }
    if (type === "heading" && this.heading !== undefined) {
      const start = this.heading.start
      if (this.length > start) this.found.push({ level: this.heading.level, text: decode(this.units, start, this.length), start })
      this.heading = undefined
    }
    if (type === "paragraph" || type === "heading" || type === "tableCell") this.hiddenInline.length = 0
    if (type === "tableRow") {
      this.rows.pop()
      this.pendingCells = 0 // empty cells at the end of a row add nothing
    }
    if (blockTypes.has(type)) this.pendingBreak = true
  }

  /** Enters the node of event `e`. Returns the last event used. */
  enter(e: number): number {
    const [, type, start, end, value, level] = this.events[e] as Extract<MarkdownEvent, { 0: 1 }>
    this.open.push(type)
    if (this.skipDepth > 0 || skippedTypes.has(type)) {
      this.skipDepth++
      return e
    }
    const from = start + this.shift
    const to = end + this.shift
    if (blockTypes.has(type)) this.pendingBreak = true
    if (type === "heading") this.heading = { level, start: this.length + (this.length > 0 ? 1 : 0) }
    const rows = this.rows
    if (type === "tableRow") rows.push(0)
    if (type === "tableCell" && rows.length > 0) {
      if (rows[rows.length - 1]! > 0) this.pendingCells++
      rows[rows.length - 1]!++
    }
    if (this.hiddenInline.length > 0 && type !== "html") return e
    if (type === "text" || type === "inlineCode") this.aligned(value ?? "", from, to, true)
    else if (type === "code") this.aligned(value ?? "", from, to, false)
    else if (type === "break") this.pendingBreak = true
    else if (type === "html") return this.html(value ?? "", from, e)
    return e
  }

  /** An HTML block: its text between tags and comments, unless it is dropped or hidden whole. */
  htmlBlock(value: string, from: number): void {
    this.pendingBreak = true
    const first = /<[^>]*>/.exec(value)?.[0] ?? ""
    const hiddenBlock = hides(openTag.exec(first)?.[2] ?? "")
    if (!dropBlock.test(value) && !hiddenBlock) {
      // Text between tags and comments, white space collapsed; character references kept as written.
      const tags = /<!--[\s\S]*?-->|<[^>]*>/g
      let last = 0
      for (const match of value.matchAll(tags)) {
        if (match.index > last) this.aligned(value.slice(last, match.index), from + last, from + match.index, true)
        last = match.index + match[0].length
      }
      if (last < value.length) this.aligned(value.slice(last), from + last, from + value.length, true)
    }
    this.pendingBreak = true
  }

  /** Raw HTML at event `e`: a block's text between tags, or an inline tag. Returns the last event used. */
  html(value: string, from: number, e: number): number {
    const parent = this.open[this.open.length - 2]
    if (parent === "root" || parent === "blockquote" || parent === "listItem") {
      this.htmlBlock(value, from)
      return e
    }
    const raw = value.trim()
    const opening = openTag.exec(raw)
    const closing = closeTag.exec(raw)
    const hiddenInline = this.hiddenInline
    if (hiddenInline.length > 0) {
      // Inside hidden raw HTML: only the tags that open or close the hiding element count.
      const top = hiddenInline[hiddenInline.length - 1]!
      if (opening !== null && opening[1]!.toLowerCase() === top) hiddenInline.push(top)
      else if (closing !== null && closing[1]!.toLowerCase() === top) hiddenInline.pop()
      return e
    }
    if (opening !== null && hides(opening[2] ?? "") && !raw.endsWith("/>")) {
      hiddenInline.push(opening[1]!.toLowerCase())
      return e
    }
    const tag = scriptTag.exec(raw)
    if (tag === null) return e
    const mark = tag[2]!.toLowerCase() === "sup" ? "^" : "_"
    if (tag[1] === "/") {
      if (this.scripts.pop() === true) {
        const saved = this.pendingSpace
        this.pendingSpace = false
        this.write(")")
        this.pendingSpace = saved
      }
      return e
    }
    return this.script(mark, e)
  }

  /** An opening `<sup>`/`<sub>` at event `e`: `<sup>word</sup>` is the mark and the word; anything else the mark and a bracket. */
  script(mark: string, e: number): number {
    const events = this.events
    const text = events[e + 2]
    const next = events[e + 3]
    const close = events[e + 4]
    if (
      text !== undefined && text[0] === 1 && text[1] === "text" && next?.[0] === 0 && close?.[0] === 1 &&
      close[1] === "html" && scriptTag.exec((close[4] ?? "").trim())?.[1] === "/" && word.test((text[4] ?? "").trim())
    ) {
      this.write(mark)
      this.aligned(text[4]!.trim(), text[2] + this.shift, text[3] + this.shift, true)
      // Leave the html node, skip the text node's events and the closing tag's enter and exit.
      this.open.pop()
      return e + 5
    }
    this.scripts.push(true)
    this.write(`${mark}(`)
    return e
  }
}

/**
 * Render the events of `body` (offsets in the events count from `shift`: the
 * parser skips a BOM). Throws `RenderTooLong` past `maxCharacters`.
 */
export const render = (body: string, events: ReadonlyArray<MarkdownEvent>, shift: number, maxCharacters: number): Rendered => {
  const renderer = new Renderer(body, events, shift, maxCharacters)
  for (let e = 0; e < events.length; e++) {
    if (events[e]![0] === 0) renderer.leave()
    else e = renderer.enter(e)
  }
  const text = decode(renderer.units, 0, renderer.length)
  // Headings: the section rule of markdown/1; a heading's text is what was written for it.
  return { text, headings: sections(renderer.found, text.length), bodyMap: renderer.runs }
}
