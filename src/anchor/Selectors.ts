/**
 * W3C Web Annotation selectors (https://www.w3.org/TR/annotation-model/#selectors)
 * for verified citations: a `TextQuoteSelector` (the capture's text at the
 * span, with up to 32 code points of context each side) and a
 * `TextPositionSelector` (code points). Any W3C anchoring library can re-find
 * the excerpt in the capture from them.
 *
 * @since 0.2.0
 */
import type { Evidence, Span, TextPositionSelector, TextQuoteSelector } from "../Domain.js"
import { ownedSlice } from "../internal/ownedSlice.js"

/** Code points of context on each side of a TextQuoteSelector's `exact`. */
export const contextCodePoints = 32

const isHigh = (c: number) => c >= 0xd800 && c <= 0xdbff
const isLow = (c: number) => c >= 0xdc00 && c <= 0xdfff

/** The UTF-16 position `count` code points before `from` (or 0), never inside a surrogate pair. */
const back = (text: string, from: number, count: number): number => {
  let i = from
  for (let k = 0; k < count && i > 0; k++) {
    i -= 1
    if (i > 0 && isLow(text.charCodeAt(i)) && isHigh(text.charCodeAt(i - 1))) i -= 1
  }
  return i
}

/** The UTF-16 position `count` code points after `from` (or the end), never inside a surrogate pair. */
const forward = (text: string, from: number, count: number): number => {
  let i = from
  const n = text.length
  for (let k = 0; k < count && i < n; k++) {
    i += isHigh(text.charCodeAt(i)) && i + 1 < n && isLow(text.charCodeAt(i + 1)) ? 2 : 1
  }
  return i
}

/**
 * The TextQuoteSelector of `span` (UTF-16 code units) in `text`: `exact` is
 * the text at the span, `prefix` and `suffix` at most `contextCodePoints` code
 * points before and after it (fewer at either end of the text).
 *
 * @since 0.2.0
 * @category constructors
 */
export const textQuote = (text: string, span: Span): TextQuoteSelector => ({
  type: "TextQuoteSelector",
  exact: ownedSlice(text, span.start, span.end),
  prefix: ownedSlice(text, back(text, span.start, contextCodePoints), span.start),
  suffix: ownedSlice(text, span.end, forward(text, span.end, contextCodePoints))
})

/**
 * The TextPositionSelector of a span given in code points.
 *
 * @since 0.2.0
 * @category constructors
 */
export const textPosition = (codePoints: Span): TextPositionSelector => ({
  type: "TextPositionSelector",
  start: codePoints.start,
  end: codePoints.end
})

/**
 * Both selectors of a span, in the order of `Evidence.selector`.
 *
 * @since 0.2.0
 * @category constructors
 */
export const selectors = (
  text: string,
  span: Span,
  codePoints: Span
): readonly [TextQuoteSelector, TextPositionSelector] => [textQuote(text, span), textPosition(codePoints)]

/**
 * A W3C SpecificResource targeting a verified citation: the exact source and
 * the selectors its evidence carries (`undefined` for evidence written before
 * selectors existed).
 *
 * @since 0.2.0
 * @category constructors
 */
export const target = (
  source: string,
  evidence: Evidence
): { readonly source: string; readonly selector: readonly [TextQuoteSelector, TextPositionSelector] } | undefined =>
  evidence.selector === undefined ? undefined : { source, selector: evidence.selector }
