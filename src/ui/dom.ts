/**
 * The only way the page builds its DOM: elements by tag name, text through text nodes
 * (`textContent`), attributes from a fixed set. No string is ever parsed as HTML (the page's
 * Content-Security-Policy requires Trusted Types with no policy, so an HTML sink would throw), and
 * no URL taken from data becomes a link: source URLs are shown as text.
 */

type Child = Node | string | null | undefined | false

/** Attributes the page sets; `href` only ever receives the page's own `#/…` routes. */
type Attribute =
  | "id" | "class" | "role" | "tabindex" | "title" | "type" | "name" | "value" | "for" | "rows" | "cols"
  | "hidden" | "disabled" | "autocomplete" | "spellcheck" | "placeholder" | "lang" | "dir"
  | "aria-label" | "aria-labelledby" | "aria-describedby" | "aria-live" | "aria-current" | "aria-pressed"
  | "aria-controls" | "aria-expanded" | "aria-busy" | "aria-atomic" | "data-footnote" | "data-outcome" | "data-occurrence"
  | "aria-hidden" | "accept" | "data-fact" | "data-status" | "data-kind" | "data-side" | "data-page" | "data-seq"

export type Attributes = Partial<Record<Attribute, string>> & { readonly href?: `#/${string}` }

export const el = <K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attributes: Attributes = {},
  ...children: ReadonlyArray<Child>
): HTMLElementTagNameMap[K] => {
  const node = document.createElement(tag)
  for (const [name, value] of Object.entries(attributes)) {
    if (value !== undefined) node.setAttribute(name, value)
  }
  append(node, ...children)
  return node
}

export const append = (parent: Node, ...children: ReadonlyArray<Child>): void => {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue
    parent.appendChild(typeof child === "string" ? document.createTextNode(child) : child)
  }
}

export const clear = (node: Node): void => {
  while (node.firstChild !== null) node.removeChild(node.firstChild)
}

/**
 * Characters that change how text around them is displayed without being seen: bidirectional
 * overrides, embeddings and isolates (a source could reorder what the reviewer reads), marks and
 * zero-width characters. Shown as a visible token instead, so the text reads in stored order.
 */
const invisible = /[\u061c\u200b-\u200f\u202a-\u202e\u2060-\u2069\ufeff]/g

const codePoint = (char: string) => `U+${char.codePointAt(0)!.toString(16).toUpperCase().padStart(4, "0")}`

/** Appends `text` as text, every invisible control character shown as a marked `⟨U+XXXX⟩` token. */
export const appendText = (parent: Node, text: string): void => {
  let last = 0
  for (const match of text.matchAll(invisible)) {
    if (match.index > last) parent.appendChild(document.createTextNode(text.slice(last, match.index)))
    parent.appendChild(el("span", { class: "control", title: `invisible control character ${codePoint(match[0])}` }, `⟨${codePoint(match[0])}⟩`))
    last = match.index + match[0].length
  }
  if (last < text.length) parent.appendChild(document.createTextNode(text.slice(last)))
}

/** A span holding `text` shown safely (see `appendText`). */
export const textSpan = (text: string, attributes: Attributes = {}): HTMLSpanElement => {
  const span = el("span", attributes)
  appendText(span, text)
  return span
}
