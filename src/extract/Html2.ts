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

const headingLevel = (name: string) => (/^h[1-6]$/.test(name) ? Number(name[1]) : 0)

const attribute = (element: Element, name: string) => element.attrs.find((a) => a.name === name)?.value

const metaCharset = (element: Element): string | undefined => {
  const charset = attribute(element, "charset")
  if (charset !== undefined) return charset.trim()
  if (attribute(element, "http-equiv")?.trim().toLowerCase() !== "content-type") return undefined
  const match = /charset\s*=\s*["']?([^"';\s]+)/i.exec(attribute(element, "content") ?? "")
  return match?.[1]
}

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

export const extract = (
  source: string,
  text: string,
  limits: ExtractionLimits,
  headerCharset: string | undefined
): Effect.Effect<Extracted, ExtractionTooLarge | UnsupportedEncoding> =>
  Effect.suspend((): Effect.Effect<Extracted, ExtractionTooLarge | UnsupportedEncoding> => {
    const document = parse(text)
    const out: Array<string> = []
    let length = 0
    let pendingBreak = false
    let pendingSpace = false
    let pendingCells = 0
    let preDepth = 0
    let cellDepth = 0
    let declared: string | undefined
    const rows: Array<number> = [] // cells seen in each open row
    // Open brackets of superscripts and subscripts: the mark is written with their first text.
    const brackets: Array<{ mark: string; open: boolean }> = []
    let firstUnopened = 0
    const found: Array<{ level: number; text: string; start: number }> = []
    let heading: { level: number; start: number | undefined; parts: Array<string> } | undefined

    const emit = (content: string) => {
      if (content === "") return
      let piece = content
      if (firstUnopened < brackets.length) {
        let marks = ""
        for (let i = firstUnopened; i < brackets.length; i++) {
          marks += brackets[i]!.mark
          brackets[i]!.open = true
        }
        firstUnopened = brackets.length
        piece = marks + piece
      }
      let separator = ""
      if (pendingBreak && length > 0) separator = "\n"
      if (pendingCells > 0) separator += cellSeparator.repeat(pendingCells)
      else if (pendingSpace && separator === "" && length > 0) separator = " "
      pendingBreak = false
      pendingSpace = false
      pendingCells = 0
      length += separator.length + piece.length
      if (length > limits.maxCharacters) throw new TooLong()
      out.push(separator, piece)
      if (heading !== undefined) {
        if (heading.start === undefined) heading.start = length - piece.length
        else heading.parts.push(separator)
        heading.parts.push(piece)
      }
    }

    const text_ = (value: string) => {
      if (preDepth > 0) return emit(value.replace(noBreak, " "))
      const collapsed = value.replace(space, " ")
      if (collapsed.startsWith(" ")) pendingSpace = true
      emit(collapsed.trim())
      if (collapsed.endsWith(" ")) pendingSpace = true
    }

    // Inside a table cell a block boundary is a space: a row stays one line.
    const boundary = () => {
      if (cellDepth > 0) pendingSpace = true
      else pendingBreak = true
    }

    /** A closing bracket, without taking the space or break that follows the script. */
    const close = () => {
      const saved = { pendingBreak, pendingSpace }
      pendingBreak = false
      pendingSpace = false
      emit(")")
      pendingBreak = saved.pendingBreak
      pendingSpace = saved.pendingSpace
    }

    /** Enters a `sup`/`sub`: true when its one word was written here (its children are then skipped). */
    const script = (element: Element, mark: string): boolean => {
      const single = singleText(element)
      if (single !== undefined) {
        const collapsed = single.replace(space, " ")
        const value = collapsed.trim()
        if (collapsed.startsWith(" ")) pendingSpace = true
        if (value !== "") emit(!meaningful.test(value) ? value : word.test(value) ? mark + value : `${mark}(${value})`)
        if (collapsed.endsWith(" ")) pendingSpace = true
        return true
      }
      brackets.push({ mark: `${mark}(`, open: false })
      return false
    }

    const stack: Array<{ node: Node; depth: number; exit: boolean }> = [{ node: document, depth: 0, exit: false }]
    try {
      while (stack.length > 0) {
        const { depth, exit, node } = stack.pop()!
        if (node.nodeName === "#text") {
          text_((node as DefaultTreeAdapterTypes.TextNode).value)
          continue
        }
        if (!("childNodes" in node)) continue
        const name = node.nodeName
        const element = "tagName" in node ? node as Element : undefined
        if (exit) {
          if (name === "pre") preDepth--
          if (name === "td" || name === "th") cellDepth--
          if (name === "tr") {
            rows.pop()
            pendingCells = 0 // empty cells at the end of a row add nothing
          }
          if (name === "sup" || name === "sub") {
            const bracket = brackets.pop()!
            if (bracket.open) close()
            firstUnopened = Math.min(firstUnopened, brackets.length)
          }
          const level = headingLevel(name)
          if (level > 0 && heading !== undefined) {
            if (heading.start !== undefined) found.push({ level, text: heading.parts.join(""), start: heading.start })
            heading = undefined
          }
          if (blocks.has(name)) boundary()
          continue
        }
        if (depth > limits.maxDepth) throw new TooDeep()
        if (element !== undefined) {
          if (name === "meta" && declared === undefined) declared = metaCharset(element)
          if (name === "head") {
            for (const child of element.childNodes) {
              if (child.nodeName === "meta" && declared === undefined) declared = metaCharset(child as Element)
            }
            continue
          }
          if (isHidden(element)) continue
          if (blocks.has(name)) boundary()
          if (name === "pre") preDepth++
          if (name === "tr") rows.push(0)
          if (name === "td" || name === "th") {
            if (rows.length > 0 && rows[rows.length - 1]! > 0) {
              pendingCells++
              pendingSpace = false
            }
            if (rows.length > 0) rows[rows.length - 1]!++
            cellDepth++
          }
          if ((name === "sup" || name === "sub") && script(element, scriptMarks[name])) continue
          const level = headingLevel(name)
          if (level > 0 && heading === undefined) heading = { level, start: undefined, parts: [] }
        }
        stack.push({ node, depth, exit: true })
        const children = node.childNodes
        for (let i = children.length - 1; i >= 0; i--) stack.push({ node: children[i]!, depth: depth + 1, exit: false })
      }
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
    if (headerCharset === undefined && declared !== undefined && !isUtf8Label(declared)) {
      return Effect.fail(new UnsupportedEncoding({ source, charset: declared, declaredIn: "meta" }))
    }
    const result = out.join("")
    return Effect.succeed({
      extraction: "html/2",
      text: result,
      headings: sections(found, result.length)
    } satisfies Extracted)
  })
