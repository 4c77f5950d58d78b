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

/** A double-quoted terminal-safe string literal. */
export const quoted = (s: string): string => `"${terminal(s).replace(/"/g, '\\"')}"`

/**
 * For Markdown text: controls made visible, then every ASCII punctuation
 * character backslash-escaped and `&`, `<`, `>` written as entities, so no
 * link, image, emphasis, HTML or autolink can form.
 */
export const markdown = (s: string): string =>
  terminal(s)
    .replace(/[!"#$%'()*+,\-./:;=?@[\\\]^_`{|}~]/g, (c) => `\\${c}`)
    .replace(/&/g, "&amp;")
    .replace(/</g, "&lt;")
    .replace(/>/g, "&gt;")

/**
 * For HTML text and attribute values. Characters are kept (so that text in the
 * page equals the source text), except the markup characters, and CR, which
 * the HTML parser would otherwise fold into LF.
 */
export const html = (s: string): string =>
  s.replace(/[&<>"'\r]/g, (c) =>
    c === "&" ? "&amp;" : c === "<" ? "&lt;" : c === ">" ? "&gt;" : c === '"' ? "&quot;" : c === "'" ? "&#39;" : "&#13;"
  )
