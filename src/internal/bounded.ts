/**
 * Bounds on what an error may echo back. Reports and sources are attacker
 * controlled: a 30 MB snippet or key must not come back in full inside every
 * message that mentions it.
 */

/** Longest value (in UTF-16 code units) quoted in full inside an issue message or path. */
export const maxQuotedLength = 200

/** Longest issue message, after quoted values were cut. */
export const maxMessageLength = 1000

const isHighSurrogate = (code: number) => code >= 0xd800 && code <= 0xdbff

/** The first `max` code units, one fewer if that would split a surrogate pair. */
const head = (s: string, max: number): string => {
  const end = isHighSurrogate(s.charCodeAt(max - 1)) ? max - 1 : max
  return s.slice(0, end)
}

/** `s` itself if short, else its head, an ellipsis and the total length. */
export const cut = (s: string, max: number = maxQuotedLength): string =>
  s.length <= max ? s : `${head(s, max)}… (${s.length} characters)`

/** `s` as a JSON string literal, cut to `maxQuotedLength` characters with the total length. */
export const quote = (s: string): string =>
  s.length <= maxQuotedLength ? JSON.stringify(s) : `${JSON.stringify(head(s, maxQuotedLength))}… (${s.length} characters)`

const BACKSLASH = 0x5c

/** Index of the quote that closes the JSON string literal opened at `open` (-1 if none). */
export const closingQuote = (text: string, open: number): number => {
  let from = open + 1
  for (;;) {
    const quote = text.indexOf('"', from)
    if (quote === -1) return -1
    // Each run of backslashes is counted once, by the one quote that follows it: linear overall.
    let backslashes = 0
    for (let i = quote - 1; i > open && text.charCodeAt(i) === BACKSLASH; i--) backslashes++
    if (backslashes % 2 === 0) return quote
    from = quote + 1
  }
}

/**
 * A message with every long JSON string literal in it cut (Schema's default
 * messages quote the actual value with `JSON.stringify`), then the whole
 * message cut to `maxMessageLength`. One linear pass; no regular expression, so
 * no backtracking on a long value.
 */
export const boundMessage = (message: string): string => {
  if (message.length <= maxQuotedLength) return message
  const parts: Array<string> = []
  let from = 0
  for (;;) {
    const open = message.indexOf('"', from)
    if (open === -1) break
    const close = closingQuote(message, open)
    if (close === -1) break
    // The literal's own length, escapes included: close - open - 1 code units between the quotes.
    if (close - open - 1 > maxQuotedLength) {
      let literal: string
      try {
        literal = JSON.parse(message.slice(open, close + 1)) as string
      } catch {
        literal = message.slice(open + 1, close)
      }
      parts.push(message.slice(from, open), quote(literal))
    } else {
      parts.push(message.slice(from, close + 1))
    }
    from = close + 1
  }
  parts.push(message.slice(from))
  return cut(parts.join(""), maxMessageLength)
}

/** A path segment as shown in an issue: long keys cut like quoted values. */
export const boundSegment = <P extends string | number>(segment: P): P =>
  (typeof segment === "string" ? cut(segment) : segment) as P
