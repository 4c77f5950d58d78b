/**
 * Escaping for every output format. Everything that comes from a source or a
 * report is untrusted data: it may hold instructions, markup or control
 * characters, and is never interpreted.
 */

// C0 and C1 controls, DEL, zero-width and bidirectional formatting characters, line/paragraph separators, BOM.
const invisible = /[\u0000-\u001f\u007f-\u009f\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff]/gu

const codePoint = (c: string) => `\\u{${c.codePointAt(0)!.toString(16).padStart(4, "0")}}`

/** For terminals and plain text: controls and invisible characters become visible `\u{…}` escapes. */
export const terminal = (s: string): string => s.replace(/\\/g, "\\\\").replace(invisible, codePoint)

/**
 * Fields whose values are already in the escape notation of `terminal` (every
 * backslash begins an escape, a literal one is doubled): a diagnostic's
 * `differences`. Shown with `notation`, so `\u{a0}` is not escaped twice.
 */
export const notationFields: ReadonlySet<string> = new Set(["differences"])

/** For a value already in escape notation: controls still made visible, backslashes kept as they are. */
export const notation = (s: string): string => s.replace(invisible, codePoint)

/** A description field for terminals and plain text: `notation` for the notation fields, else `terminal`. */
export const terminalField = (name: string, value: string): string =>
  notationFields.has(name) ? notation(value) : terminal(value)

// The same, less tab, line feed and carriage return: the layout of a quoted text, which a reader expects to see.
const invisibleInText = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff]/gu

/**
 * For quoted source text shown as text (an excerpt, a capture in HTML): the
 * characters that are invisible or reorder what is displayed (bidi overrides)
 * become visible `\u{…}` escapes, so a page cannot show other text than it
 * holds; line breaks and tabs stay. Returns pieces: `[text, escape, text, …]`
 * (odd indices are escapes), so a renderer can style the escapes apart.
 */
export const visiblePieces = (s: string): ReadonlyArray<string> => {
  const pieces: Array<string> = []
  let from = 0
  for (const match of s.matchAll(invisibleInText)) {
    pieces.push(s.slice(from, match.index), codePoint(match[0]))
    from = match.index + match[0].length
  }
  pieces.push(s.slice(from))
  return pieces
}

/** A double-quoted terminal-safe string literal. */
export const quoted = (s: string): string => `"${terminal(s).replace(/"/g, '\\"')}"`

const alnum = /[\p{L}\p{N}]/u

/**
 * For Markdown (CommonMark + GFM) inline text, never placed at the start of a
 * line. Controls and line breaks are made visible first (as in the text
 * rendering, a backslash shows doubled), then only what could start markup is
 * backslash-escaped: `\`, backticks, `*`, `_` (unless inside a word), `[`, `]`,
 * `<`, `>`, `&`, `|`, `~`, `#`, and the starts of GFM autolinks (`://`, `www.`,
 * `@`) wherever they occur (some parsers link `www.` inside a word). So no
 * link, image, emphasis, code, HTML, entity, table or autolink can form, and
 * ordinary text (`4,210`, `10:30`, `(approx.)`) reads as it is.
 */
export const markdown = (s: string): string => {
  const t = terminal(s)
  let out = ""
  for (let i = 0; i < t.length; i++) {
    const c = t[i]!
    if (c === "_") {
      const intraword = i > 0 && i + 1 < t.length && alnum.test(t[i - 1]!) && alnum.test(t[i + 1]!)
      out += intraword ? c : "\\_"
    } else if ("\\`*[]<>&|~#@".includes(c)) {
      out += `\\${c}`
    } else if (c === ":" && t.startsWith("//", i + 1)) {
      out += "\\:"
    } else if (c === "." && i >= 3 && t.slice(i - 3, i).toLowerCase() === "www") {
      out += "\\."
    } else {
      out += c
    }
  }
  return out
}

const longestRun = (s: string, c: string) => {
  let longest = 0
  let run = 0
  for (const ch of s) {
    run = ch === c ? run + 1 : 0
    if (run > longest) longest = run
  }
  return longest
}

/**
 * A Markdown code span: nothing inside it is markup, and its spaces are kept
 * as they are. Controls and line breaks are made visible as in `terminal`.
 */
export const markdownCode = (s: string): string => markdownCodeOf(terminal(s))

/** A Markdown code span of a description field (`terminalField`). */
export const markdownCodeField = (name: string, value: string): string => markdownCodeOf(terminalField(name, value))

const markdownCodeOf = (t: string): string => {
  if (t === "") return "` `"
  const fence = "`".repeat(longestRun(t, "`") + 1)
  // CommonMark strips one space from each end when both are there; pad when the content would lose or merge an edge.
  const pad = /^[ `]|[ `]$/.test(t) && !/^ +$/.test(t) ? " " : ""
  return `${fence}${pad}${t}${pad}${fence}`
}

/**
 * A fenced Markdown code block: rendered as preformatted text, so every space
 * (a double space, an indent) stays visible, and nothing inside is markup. Line
 * breaks (LF) stay line breaks; every other control (CR, tab, …) is made
 * visible as in `terminal`. The fence is longer than any backtick run inside,
 * so the content cannot close it.
 */
export const markdownBlock = (s: string): string => markdownBlockOf(s.split("\n").map(terminal).join("\n"))

/** A fenced Markdown code block of a value in escape notation (`notation`): a diagnostic's differences. */
export const markdownNotationBlock = (s: string): string => markdownBlockOf(s.split("\n").map(notation).join("\n"))

const markdownBlockOf = (t: string): string => {
  const fence = "`".repeat(Math.max(3, longestRun(t, "`") + 1))
  return `${fence}text\n${t}\n${fence}`
}

/**
 * A Markdown autolink for an absolute http(s) URL that is exactly its own
 * canonical form (what a verified citation's source is); anything else is a
 * code span, never a link.
 */
export const markdownUrl = (url: string): string => {
  const canonical = URL.canParse(url) && new URL(url).href === url && /^https?:\/\//.test(url) && !/[\s<>`]/.test(url)
  return canonical ? `<${url}>` : markdownCode(url)
}

/**
 * For HTML text and attribute values. Characters are kept (so that text in the
 * page equals the source text), except the markup characters, and CR, which
 * the HTML parser would otherwise fold into LF.
 */
export const html = (s: string): string =>
  s.replace(/[&<>"'\r]/g, (c) =>
    c === "&" ? "&amp;" : c === "<" ? "&lt;" : c === ">" ? "&gt;" : c === '"' ? "&quot;" : c === "'" ? "&#39;" : "&#13;"
  )
