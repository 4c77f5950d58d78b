/**
 * The plain-ASCII path of the normalisation (Normalize.ts `normalize`): a text whose units are all
 * below 0x80, whose only white space is single U+0020s and \ns, normalises to its lower-cased text
 * with each \n a U+0020, one unit per unit. Here: the test, and the long texts made through a byte
 * buffer.
 *
 * @since 0.6.0
 */

/**
 * Whether `normalize` can take its plain-ASCII path: every unit below 0x80 (its UTF-8 length is its
 * length: any other unit, a lone surrogate too, takes two or three bytes; a native count, far
 * quicker than a regular expression), no white space other than U+0020 and \n (tab, VT, FF and CR
 * are rare: native searches for one unit), and no two units of white space in a row.
 */
const spaceAfterSpace = /[\n ][\n ]/
export const isPlain = (text: string) =>
  Buffer.byteLength(text, "utf8") === text.length && !text.includes("\t") && !text.includes("\v") &&
  !text.includes("\f") && !text.includes("\r") && !spaceAfterSpace.test(text)

/** Each byte of a plain-ASCII text as normalised: A-Z lower-cased, \n a U+0020, any other the same. */
const plainUnit = Uint8Array.from({ length: 0x80 }, (_, c) => c >= 0x41 && c <= 0x5a ? c + 0x20 : c === 0x0a ? 0x20 : c)

/** From this length on, `plainLong` makes the text through a byte buffer instead of native string functions. */
export const flatFrom = 16 * 1024

/**
 * Each unit below 0x80 of a plain-ASCII text as normalised (A-Z lower-cased, \n a U+0020, any other
 * the same) in the low byte, and 1 in bit 8 for the white space of the plain rule (\n and U+0020).
 */
const plainCode = Uint16Array.from({ length: 0x80 }, (_, c) => plainUnit[c]! | (c === 0x0a || c === 0x20 ? 0x100 : 0))

/** How many bytes `plainLong` maps between its checks for two white-space units in a row. */
const pairCheck = 4096

/**
 * For a text of `flatFrom` units or more: when `isPlain(text)`, the text lower-cased with each \n a
 * U+0020, made through a byte buffer (one byte per unit, dropped after), else undefined. The "no two
 * white-space units in a row" test is done in the loop that maps the bytes (a text that fails it is
 * given up at most `pairCheck` bytes past the pair), not by a regular expression first. Why a
 * buffer: `replaceAll` builds its result by concatenation, a string of one piece per newline that
 * every later reader (the searches' `indexOf`, the trigram look-up's `charCodeAt`) pays for, while
 * the buffer decoded at once is one flat string; short texts (snippets) keep the native
 * functions, quicker at their size.
 */
export const plainLong = (text: string): string | undefined => {
  if (Buffer.byteLength(text, "utf8") !== text.length || text.includes("\t") || text.includes("\v") || text.includes("\f") || text.includes("\r")) {
    return undefined
  }
  // Every unit is below 0x80, so latin1 keeps each as one byte.
  const bytes = Buffer.from(text, "latin1")
  const n = bytes.length
  // before: 1 when the unit before is white space; pairs: 1 once two have met.
  let before = 0
  let pairs = 0
  for (let from = 0; from < n; from += pairCheck) {
    const to = Math.min(n, from + pairCheck)
    for (let i = from; i < to; i++) {
      const code = plainCode[bytes[i]!]!
      // A byte keeps the low eight bits: the normalised unit.
      bytes[i] = code
      const space = code >> 8
      pairs |= before & space
      before = space
    }
    if (pairs !== 0) return undefined
  }
  // Every byte is now below 0x80: decoded as ASCII at once, one flat string (past about 1 MB an
  // external one, its bytes outside the JavaScript heap), without copying it piece by piece.
  return bytes.toString("ascii")
}
