/**
 * Token boundaries for the audit's exact matches. An old excerpt `4,210` occurs verbatim in a new
 * text that says `4,210,000` (or `37` in `370`, `1,180` in `11,180`): a plain substring match would
 * call it unchanged. A match in the new text counts only where it cuts no token the old occurrence
 * did not cut: it may start (end) inside a number or word only if the old occurrence did too.
 *
 * Constant work per position checked: each test looks at most two code units either side.
 *
 * @since 0.1.0
 */

import { insideToken } from "../anchor/Tokens.js"

export { insideToken, maxWiden, widened } from "../anchor/Tokens.js"

/**
 * Whether `newText[start, start + length)` is an occurrence that keeps the old occurrence's token
 * boundaries (`oldText[oldStart, oldStart + length)`): neither end cuts a token the old one kept whole.
 */
export const keepsBoundaries = (
  oldText: string,
  oldSpan: { readonly start: number; readonly end: number },
  newText: string,
  newSpan: { readonly start: number; readonly end: number }
): boolean =>
  (!insideToken(newText, newSpan.start) || insideToken(oldText, oldSpan.start)) &&
  (!insideToken(newText, newSpan.end) || insideToken(oldText, oldSpan.end))

/**
 * The first occurrence of `snippet` in `text` at or after `from` that keeps the old boundaries, or
 * undefined. `indexOf` from each rejected occurrence onwards: every occurrence is looked at once.
 */
export const occurrenceKeepingBoundaries = (
  oldText: string,
  oldSpan: { readonly start: number; readonly end: number },
  text: string,
  snippet: string
): number | undefined => {
  if (snippet.length === 0) return undefined
  for (let at = text.indexOf(snippet); at >= 0; at = text.indexOf(snippet, at + 1)) {
    if (keepsBoundaries(oldText, oldSpan, text, { start: at, end: at + snippet.length })) return at
  }
  return undefined
}
