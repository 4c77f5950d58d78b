/**
 * `html/1`: the text a reader sees, from a real HTML5 parser (parse5, the
 * exact version pinned), by one rule:
 *
 * - Dropped with everything inside: `head`, `script`, `style`, `template`,
 *   `noscript`, `iframe`, `noembed`, `noframes`, comments, and every element
 *   with a `hidden` attribute. (CSS is not evaluated: text hidden by a style
 *   sheet or a `style` attribute stays; see docs/design.md.)
 * - Character references are decoded by the parser (`&amp;` is `&`).
 * - Outside `pre`, every run of ASCII whitespace (space, tab, LF, FF, CR) is
 *   one space; spaces at the start and end of a line are removed. Other
 *   spaces (U+00A0 and the like) are kept as they are.
 * - Inside `pre`, text is kept as it is (the parser already drops the first
 *   line feed after `<pre>` and turns CR LF into LF).
 * - Block elements and `br` begin a new line: consecutive breaks are one line
 *   feed; the text neither starts nor ends with one.
 * - `h1`–`h6` with any text are heading anchors (section: up to the next
 *   heading of the same or a higher level).
 *
 * Bounded: the tree is walked with an explicit stack (no recursion), nesting
 * deeper than `maxDepth` elements fails, and so does text past `maxCharacters`.
 * Only UTF-8: the Content-Type charset, or else a `<meta charset>` /
 * `<meta http-equiv=content-type>`, must name UTF-8.
 */
import * as Effect from "effect/Effect"
import { type DefaultTreeAdapterTypes, parse } from "parse5"
import { ExtractionTooLarge, UnsupportedEncoding } from "../Errors.js"
import { isUtf8Label } from "./ContentType.js"
import type { Extracted, ExtractionLimits } from "./Records.js"
import { sections } from "./Markdown.js"

type Node = DefaultTreeAdapterTypes.ChildNode | DefaultTreeAdapterTypes.Document
type Element = DefaultTreeAdapterTypes.Element

// `head` is dropped too, where the walk reads its meta elements.
const dropped = new Set(["script", "style", "template", "noscript", "iframe", "noembed", "noframes"])

const blocks = new Set([
  "address", "article", "aside", "blockquote", "body", "br", "caption", "dd", "details", "dialog", "div", "dl",
  "dt", "fieldset", "figcaption", "figure", "footer", "form", "h1", "h2", "h3", "h4", "h5", "h6", "header",
  "hgroup", "hr", "html", "legend", "li", "main", "menu", "nav", "ol", "option", "p", "pre", "section", "summary",
  "table", "tbody", "td", "tfoot", "th", "thead", "tr", "ul"
])

// Shared with `html/2` (Html2.ts), whose headings and charset rule are these.
/** A heading element's level (1-6), or 0. */
export const headingLevel = (name: string) => (/^h[1-6]$/.test(name) ? Number(name[1]) : 0)

/** An attribute's value as written, if the element has it. */
export const attribute = (element: Element, name: string) => element.attrs.find((a) => a.name === name)?.value

/** The charset a `meta` element declares, if any. */
export const metaCharset = (element: Element): string | undefined => {
  const charset = attribute(element, "charset")
  if (charset !== undefined) return charset.trim()
  if (attribute(element, "http-equiv")?.trim().toLowerCase() !== "content-type") return undefined
  const match = /charset\s*=\s*["']?([^"';\s]+)/i.exec(attribute(element, "content") ?? "")
  return match?.[1]
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
    let preDepth = 0
    let declared: string | undefined
    const found: Array<{ level: number; text: string; start: number }> = []
    let heading: { level: number; start: number | undefined; parts: Array<string> } | undefined

    const emit = (piece: string) => {
      if (piece === "") return
      let separator = ""
      // No separator before the first piece. A line starts only after a break (which wins over a pending
      // space) or with the text: `pre` is a block, so a break, not a space, follows preformatted text.
      if (pendingBreak && length > 0) separator = "\n"
      else if (pendingSpace && length > 0) separator = " "
      pendingBreak = false
      pendingSpace = false
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
      if (preDepth > 0) return emit(value)
      const collapsed = value.replace(/[\t\n\f\r ]+/g, " ")
      if (collapsed.startsWith(" ")) pendingSpace = true
      emit(collapsed.trim()) // whitespace only: nothing to emit, a pending space
      if (collapsed.endsWith(" ")) pendingSpace = true
    }

    // A pending space needs no reset here: a pending break wins over it.
    const boundary = () => {
      pendingBreak = true
    }

    // Enter/exit walk with an explicit stack: depth counts the elements open above a node.
    const stack: Array<{ node: Node; depth: number; exit: boolean }> = [{ node: document, depth: 0, exit: false }]
    try {
      while (stack.length > 0) {
        const { depth, exit, node } = stack.pop()!
        if (node.nodeName === "#text") {
          text_((node as DefaultTreeAdapterTypes.TextNode).value)
          continue
        }
        if (!("childNodes" in node)) continue // comments, doctype
        const name = node.nodeName
        const element = "tagName" in node ? node as Element : undefined
        if (exit) {
          if (name === "pre") preDepth--
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
            // Not text, but where a charset is declared: look at its meta elements only.
            for (const child of element.childNodes) {
              if (child.nodeName === "meta" && declared === undefined) declared = metaCharset(child as Element)
            }
            continue
          }
          if (dropped.has(name) || attribute(element, "hidden") !== undefined) continue
          if (blocks.has(name)) boundary()
          if (name === "pre") preDepth++
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
    // A trailing space or line break never ends the text (emit adds separators only before content).
    const result = out.join("")
    return Effect.succeed({
      extraction: "html/1",
      text: result,
      headings: sections(found, result.length)
    } satisfies Extracted)
  })
