/**
 * What differs between a snippet and the passage nearest to it, for a reader:
 * a word-level diff where `[-…-]` is text the snippet has and the capture does
 * not, and `{+…+}` is text the capture has and the snippet does not. Inside
 * changed parts white space and invisible characters are made visible (`␠` for
 * a space, `\t`, `\n`, `\r`, `\u{a0}` for others), so a non-breaking space, a
 * soft hyphen or a doubled space shows. The result is in that escape notation
 * throughout: a backslash from either text is written `\\`, so every single
 * backslash begins an escape, and renderers show it as it is
 * (`Escape.terminalField`) instead of escaping it a second time.
 *
 * Bounded: each side is cut to `maxDiffUnits` tokens (the rest summarised), the
 * diff is tokens × tokens cells, and the result is at most `maxDifferencesLength`
 * code units.
 *
 * @since 0.2.0
 */
import { cut } from "../internal/bounded.js"

/** Tokens (words, or single other characters) compared per side. */
export const maxDiffUnits = 600

/** Longest `differences` text. */
export const maxDifferencesLength = 2_000

const token = /[\p{L}\p{N}\p{M}]+|[\s\S]/gu

const tokens = (s: string): Array<string> => s.match(token) ?? []

const invisible = /[\s\p{Cf}\p{Cc}]/u

/** A changed part, with white space and invisible characters shown. */
export const visible = (s: string): string => {
  let out = ""
  for (const c of s) {
    if (c === " ") out += "\u2420"
    else if (c === "\\") out += "\\\\"
    else if (c === "\t") out += "\\t"
    else if (c === "\n") out += "\\n"
    else if (c === "\r") out += "\\r"
    else if (invisible.test(c)) out += `\\u{${c.codePointAt(0)!.toString(16)}}`
    else out += c
  }
  return out
}

/** The word-level differences of `snippet` against `passage` (the capture's text). */
export const differences = (snippet: string, passage: string): string => {
  const allA = tokens(snippet)
  const allB = tokens(passage)
  const a = allA.slice(0, maxDiffUnits)
  const b = allB.slice(0, maxDiffUnits)
  const n = a.length
  const m = b.length
  // Longest common subsequence table, from the end, one row per snippet token.
  const width = m + 1
  const table = new Uint16Array((n + 1) * width)
  for (let i = n - 1; i >= 0; i--) {
    for (let j = m - 1; j >= 0; j--) {
      table[i * width + j] = a[i] === b[j]
        ? table[(i + 1) * width + j + 1]! + 1
        : Math.max(table[(i + 1) * width + j]!, table[i * width + j + 1]!)
    }
  }
  let out = ""
  let removed = ""
  let added = ""
  const flush = () => {
    if (removed !== "") out += `[-${visible(removed)}-]`
    if (added !== "") out += `{+${visible(added)}+}`
    removed = ""
    added = ""
  }
  let i = 0
  let j = 0
  while (i < n || j < m) {
    // Past either end the token is undefined, which equals no token of the other side.
    if (a[i] === b[j]) {
      flush()
      out += a[i] === "\\" ? "\\\\" : a[i]
      i++
      j++
    } else if (j < m && (i === n || table[i * width + j + 1]! >= table[(i + 1) * width + j]!)) {
      added += b[j++]
    } else {
      removed += a[i++]
    }
    if (out.length > maxDifferencesLength) break
  }
  flush()
  const rest = Math.max(allA.length - n, allB.length - m)
  if (rest > 0) out += ` … (${rest} more tokens not compared)`
  return cut(out, maxDifferencesLength)
}
