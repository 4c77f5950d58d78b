/**
 * Token boundaries: whether a position of a text lies inside one number or word. `4,210` occurs as a
 * substring of `4,210,000`, `37` of `370`, `30` of `$30`: the occurrence cuts a token. Audits count an
 * exact match only where it keeps the old occurrence's boundaries (audit/Boundaries.ts); the Verifier
 * does so under `verify.boundaries: "tokens"` (verify/Boundaries.ts).
 *
 * Constant work per position checked: each test looks at most two code units either side.
 *
 * @since 0.4.0
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
