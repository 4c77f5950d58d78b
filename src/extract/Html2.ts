/**
 * `html/2`: the text a reader sees, from the same HTML5 parser as `html/1`
 * (parse5, the exact version pinned), by the `html/1` rule with four changes:
 * the first three chosen so that a quote copied from the page as a browser
 * shows it, or from the capture text, verifies, and no quote can verify with
 * a number the page does not show; the fourth so that nothing a reader
 * cannot see is citable:
 *
 * 1. The no-break space U+00A0 is white space like ASCII white space: outside
 *    `pre` a run of them collapses to one U+0020 (trimmed at line ends); inside
 *    `pre` each becomes one U+0020. (`48.2&nbsp;million` is `48.2 million`.)
 *    This is what a browser's copy gives (Chromium's clipboard text has U+0020
 *    for U+00A0, measured); other spaces (U+202F narrow no-break, U+2007
 *    figure space) are kept, as the copy keeps them.
 * 2. Tables: a row (`tr`) is one line; a tab (U+0009) goes between two cells
 *    (`td`, `th`) of a row, also after an empty cell, as in a browser's
 *    `innerText`; empty cells at the end of a row add nothing. Inside a cell,
 *    block elements and `br` are a space, so a row never spans lines.
 * 3. Superscripts and subscripts keep their meaning: `sup` is written `^`,
 *    `sub` `_`, before the content: `10<sup>6</sup>` is `10^6`,
 *    `H<sub>2</sub>O` is `H_2O`, `x<sup>-3</sup>` is `x^-3`. Content that is
 *    not one word of letters and digits (an optional leading sign allowed)
 *    is bracketed: `2<sup>n+1</sup>` is `2^(n+1)`, `<sup><a>[1]</a></sup>` is
 *    `^([1])`. A superscript or subscript whose text holds no letter or digit
 *    (`®`, `*`, `†`) is written as it is, without a mark. So `10⁶` on the
 *    page can never be quoted as `106`.
 * 4. Content no reader sees is not text, besides what `html/1` drops: an
 *    element whose `style` attribute says `display: none`,
 *    `visibility: hidden` or `font-size: 0` (any zero length), SVG `title`
 *    and `desc` (never drawn), MathML `annotation` and `annotation-xml` (the
 *    source of a formula, not the formula). Kept: the content of a closed
 *    `details` (one click shows it) and `aria-hidden` content (hidden from
 *    screen readers, shown on screen). Style sheets are still not evaluated.
 * 5. Everything else as in `html/1` (docs/design.md).
 *
 * Bounded like `html/1`: an explicit stack (no recursion), `maxDepth` and
 * `maxCharacters` checked as the walk goes; the look into a `sup`/`sub` for
 * its one word goes at most 4 elements down.
 */
import * as Effect from "effect/Effect"
import { type DefaultTreeAdapterTypes, parse } from "parse5"
import { ExtractionTooLarge, UnsupportedEncoding } from "../Errors.js"
import { isUtf8Label } from "./ContentType.js"
import { attribute, headingLevel, metaCharset } from "./Html.js"
import type { Extracted, ExtractionLimits } from "./Records.js"
import { sections } from "./Markdown.js"

type Node = DefaultTreeAdapterTypes.ChildNode | DefaultTreeAdapterTypes.Document
type Element = DefaultTreeAdapterTypes.Element

const dropped = new Set(["script", "style", "template", "noscript", "iframe", "noembed", "noframes"])

const blocks = new Set([
  "address", "article", "aside", "blockquote", "body", "br", "caption", "dd", "details", "dialog", "div", "dl",
  "dt", "fieldset", "figcaption", "figure", "footer", "form", "h1", "h2", "h3", "h4", "h5", "h6", "header",
  "hgroup", "hr", "html", "legend", "li", "main", "menu", "nav", "ol", "option", "p", "pre", "section", "summary",
  "table", "tbody", "tfoot", "thead", "tr", "ul"
])

/** White space outside `pre`: ASCII white space and the no-break spaces. */
const space = /[\t\n\f\r \u00a0]+/g
const noBreak = /\u00a0/g

/** The cell separator of a table row. */
export const cellSeparator = "\t"

/** The marks of superscript and subscript. */
export const scriptMarks = { sup: "^", sub: "_" } as const

/** One word: letters and digits, an optional leading sign. Written after the mark without brackets. */
const word = /^[+\-\u2212\u00b1]?[\p{L}\p{N}]+$/u
const meaningful = /[\p{L}\p{N}]/u

/** Elements never drawn: SVG's title and description, MathML's annotations. */
const undrawn = new Set(["title", "desc", "annotation", "annotation-xml"])

/** An inline style that hides its element: `display: none`, `visibility: hidden`, a zero font size. */
export const hidingStyle = /(?:^|;)\s*(?:display\s*:\s*none|visibility\s*:\s*hidden|font-size\s*:\s*0(?:\.0*)?(?:[a-z%]+)?)\s*(?:!important\s*)?(?:;|$)/i

const isHidden = (element: Element) =>
  dropped.has(element.nodeName) || attribute(element, "hidden") !== undefined ||
  // In the body, `title` is only ever SVG's (the document's title sits in head, which is not walked).
  (undrawn.has(element.nodeName) && element.namespaceURI !== "http://www.w3.org/1999/xhtml") ||
  hidingStyle.test(attribute(element, "style") ?? "")

/**
 * The text of a `sup`/`sub` when it is one text node, reached through at most 4 single-child
 * elements (`<sup><a>1</a></sup>`); otherwise undefined (the content is walked and bracketed).
 */
const singleText = (element: Element): string | undefined => {
  let node: Node = element
  for (let depth = 0; depth < 5; depth++) {
    if (!("childNodes" in node)) return undefined
    const children: Array<DefaultTreeAdapterTypes.ChildNode> = node.childNodes.filter((c) => c.nodeName !== "#comment")
    if (children.length !== 1) return undefined
    const child: DefaultTreeAdapterTypes.ChildNode = children[0]!
    if (child.nodeName === "#text") return (child as DefaultTreeAdapterTypes.TextNode).value
    if (!("tagName" in child) || isHidden(child as Element) || blocks.has(child.nodeName)) return undefined
    node = child
  }
  return undefined
}

class TooDeep {}
class TooLong {}

/** The text being written by the walk of one document, with what is owed before the next piece. */
class Writer {
  readonly out: Array<string> = []
  length = 0
  pendingBreak = false
  pendingSpace = false
  pendingCells = 0
  preDepth = 0
  cellDepth = 0
  declared: string | undefined
  readonly rows: Array<number> = [] // cells seen in each open row
  // Open brackets of superscripts and subscripts: the mark is written with their first text.
  readonly brackets: Array<{ mark: string; open: boolean }> = []
  firstUnopened = 0
  readonly found: Array<{ level: number; text: string; start: number }> = []
  heading: { level: number; start: number | undefined; parts: Array<string> } | undefined

  constructor(readonly maxCharacters: number) {}

  emit(content: string): void {
    if (content === "") return
    let piece = content
    if (this.firstUnopened < this.brackets.length) {
      let marks = ""
      for (let i = this.firstUnopened; i < this.brackets.length; i++) {
        marks += this.brackets[i]!.mark
        this.brackets[i]!.open = true
      }
      this.firstUnopened = this.brackets.length
      piece = marks + piece
    }
    let separator = ""
    if (this.pendingBreak && this.length > 0) separator = "\n"
    if (this.pendingCells > 0) separator += cellSeparator.repeat(this.pendingCells)
    else if (this.pendingSpace && separator === "" && this.length > 0) separator = " "
    this.pendingBreak = false
    this.pendingSpace = false
    this.pendingCells = 0
    this.length += separator.length + piece.length
    if (this.length > this.maxCharacters) throw new TooLong()
    this.out.push(separator, piece)
    const heading = this.heading
    if (heading !== undefined) {
      if (heading.start === undefined) heading.start = this.length - piece.length
      else heading.parts.push(separator)
      heading.parts.push(piece)
    }
  }

  text(value: string): void {
    if (this.preDepth > 0) return this.emit(value.replace(noBreak, " "))
    const collapsed = value.replace(space, " ")
    if (collapsed.startsWith(" ")) this.pendingSpace = true
    this.emit(collapsed.trim())
    if (collapsed.endsWith(" ")) this.pendingSpace = true
  }

  // Inside a table cell a block boundary is a space: a row stays one line.
  boundary(): void {
    if (this.cellDepth > 0) this.pendingSpace = true
    else this.pendingBreak = true
  }

  /** A closing bracket, without taking the space or break that follows the script. */
  close(): void {
    const saved = { pendingBreak: this.pendingBreak, pendingSpace: this.pendingSpace }
    this.pendingBreak = false
    this.pendingSpace = false
    this.emit(")")
    this.pendingBreak = saved.pendingBreak
    this.pendingSpace = saved.pendingSpace
  }

  /** Enters a `sup`/`sub`: true when its one word was written here (its children are then skipped). */
  script(element: Element, mark: string): boolean {
    const single = singleText(element)
    if (single !== undefined) {
      const collapsed = single.replace(space, " ")
      const value = collapsed.trim()
      if (collapsed.startsWith(" ")) this.pendingSpace = true
      if (value !== "") this.emit(!meaningful.test(value) ? value : word.test(value) ? mark + value : `${mark}(${value})`)
      if (collapsed.endsWith(" ")) this.pendingSpace = true
      return true
    }
    this.brackets.push({ mark: `${mark}(`, open: false })
    return false
  }

  /** Enters an element: false when its content is not walked (the head, hidden, a one-word script). */
  enter(element: Element, name: string): boolean {
    if (name === "meta" && this.declared === undefined) this.declared = metaCharset(element)
    if (name === "head") {
      for (const child of element.childNodes) {
        if (child.nodeName === "meta" && this.declared === undefined) this.declared = metaCharset(child as Element)
      }
      return false
    }
    if (isHidden(element)) return false
    if (blocks.has(name)) this.boundary()
    if (name === "pre") this.preDepth++
    if (name === "tr") this.rows.push(0)
    if (name === "td" || name === "th") {
      const rows = this.rows
      if (rows.length > 0 && rows[rows.length - 1]! > 0) {
        this.pendingCells++
        this.pendingSpace = false
      }
      if (rows.length > 0) rows[rows.length - 1]!++
      this.cellDepth++
    }
    if ((name === "sup" || name === "sub") && this.script(element, scriptMarks[name])) return false
    const level = headingLevel(name)
    if (level > 0 && this.heading === undefined) this.heading = { level, start: undefined, parts: [] }
    return true
  }

  /** Leaves a node whose content was walked. */
  exit(name: string): void {
    if (name === "pre") this.preDepth--
    if (name === "td" || name === "th") this.cellDepth--
    if (name === "tr") {
      this.rows.pop()
      this.pendingCells = 0 // empty cells at the end of a row add nothing
    }
    if (name === "sup" || name === "sub") {
      const bracket = this.brackets.pop()!
      if (bracket.open) this.close()
      this.firstUnopened = Math.min(this.firstUnopened, this.brackets.length)
    }
    const level = headingLevel(name)
    if (level > 0 && this.heading !== undefined) {
      if (this.heading.start !== undefined) this.found.push({ level, text: this.heading.parts.join(""), start: this.heading.start })
      this.heading = undefined
    }
    if (blocks.has(name)) this.boundary()
  }
}

/** Walks the document with an explicit stack (no recursion), writing into `writer`; throws TooDeep past `maxDepth`. */
const walk = (document: Node, writer: Writer, maxDepth: number): void => {
  const stack: Array<{ node: Node; depth: number; exit: boolean }> = [{ node: document, depth: 0, exit: false }]
  while (stack.length > 0) {
    const { depth, exit, node } = stack.pop()!
    if (node.nodeName === "#text") {
      writer.text((node as DefaultTreeAdapterTypes.TextNode).value)
      continue
    }
    if (!("childNodes" in node)) continue
    const name = node.nodeName
    if (exit) {
      writer.exit(name)
      continue
    }
    if (depth > maxDepth) throw new TooDeep()
    if ("tagName" in node && !writer.enter(node as Element, name)) continue
    stack.push({ node, depth, exit: true })
    const children = node.childNodes
    for (let i = children.length - 1; i >= 0; i--) stack.push({ node: children[i]!, depth: depth + 1, exit: false })
  }
}

export const extract = (
  source: string,
  text: string,
  limits: ExtractionLimits,
  headerCharset: string | undefined
): Effect.Effect<Extracted, ExtractionTooLarge | UnsupportedEncoding> =>
  Effect.suspend((): Effect.Effect<Extracted, ExtractionTooLarge | UnsupportedEncoding> => {
    const document = parse(text)
    const writer = new Writer(limits.maxCharacters)
    try {
      walk(document, writer, limits.maxDepth)
    } catch (error) {
      if (error instanceof TooDeep) {
        return Effect.fail(new ExtractionTooLarge({ source, format: "html", cap: "maxDepth", limit: limits.maxDepth }))
      }
      if (error instanceof TooLong) {
        return Effect.fail(
          new ExtractionTooLarge({ source, format: "html", cap: "maxCharacters", limit: limits.maxCharacters })
        )
      }
      throw error
    }
    const declared = writer.declared
    if (headerCharset === undefined && declared !== undefined && !isUtf8Label(declared)) {
      return Effect.fail(new UnsupportedEncoding({ source, charset: declared, declaredIn: "meta" }))
    }
    const result = writer.out.join("")
    return Effect.succeed({
      extraction: "html/2",
      text: result,
      headings: sections(writer.found, result.length)
    } satisfies Extracted)
  })
