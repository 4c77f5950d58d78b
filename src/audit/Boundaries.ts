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

const isDigit = (c: string | undefined) => c !== undefined && c >= "0" && c <= "9"
const isWordChar = (c: string | undefined) => c !== undefined && /[\p{L}\p{N}\p{M}]/u.test(c)
/** Separators inside one number, as the material flags read them (4,210 · 4.5 · 4 210 with a thin or no-break space). */
const isNumberSeparator = (c: string | undefined) => c === "," || c === "." || c === "\u202f" || c === "\u00a0"
const isCurrency = (c: string | undefined) => c !== undefined && "$€£¥₹".includes(c)
const isMinus = (c: string | undefined) => c === "-" || c === "\u2212"

/** Whether the position `i` of `text` (between `text[i - 1]` and `text[i]`) lies inside one token. */
export const insideToken = (text: string, i: number): boolean => {
  if (i <= 0 || i >= text.length) return false
  const before = text[i - 1]
  const after = text[i]
  if (isWordChar(before) && isWordChar(after)) return true
  // A number continued by a group or decimal separator and more digits: 4,210|,000 · 4,210|.5
  if (isDigit(before) && isNumberSeparator(after) && isDigit(text[i + 1])) return true
  if (isNumberSeparator(before) && isDigit(after) && isDigit(text[i - 2])) return true
  // A sign, currency or percent that changes what the number says: 30|% · $|30 · −|5 (not a range 3-5).
  if (isDigit(before) && after === "%") return true
  if (isCurrency(before) && isDigit(after)) return true
  if (isMinus(before) && isDigit(after) && !isWordChar(text[i - 2])) return true
  return false
}

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

/** How far `widened` goes each side: a number or word longer than this is cut there (a hostile "word" of megabytes). */
export const maxWiden = 64

/** The span widened to the whole tokens its ends cut (`4,210` inside `4,210,000` becomes `4,210,000`). */
export const widened = (text: string, start: number, end: number): { readonly start: number; readonly end: number } => {
  let s = start
  let e = end
  for (let k = 0; k < maxWiden && insideToken(text, s); k++) s--
  for (let k = 0; k < maxWiden && insideToken(text, e); k++) e++
  // Never split a surrogate pair.
  if (s > 0 && /[\udc00-\udfff]/.test(text[s]!)) s--
  if (e < text.length && /[\udc00-\udfff]/.test(text[e]!)) e++
  return { start: s, end: e }
}
