/**
 * Extraction: the pure function from a fetched body to the text that is
 * captured, by content type. Same bytes, same text, on every machine and run:
 * each extraction id names one algorithm (and the exact parser version it
 * runs), and golden fixtures in `fixtures/extraction/` pin each id.
 *
 * Imported by Capture at capture time only; verification never extracts.
 *
 * @since 0.2.0
 */
import * as Effect from "effect/Effect"
import { InvalidEncoding, UnsupportedEncoding } from "../Errors.js"
import { isUtf8Label, parseContentType } from "./ContentType.js"
import * as Html2 from "./Html2.js"
import * as Markdown2 from "./Markdown2.js"
import * as Pdf from "./Pdf.js"
import type { Extracted, ExtractionError, ExtractionLimits } from "./Records.js"

export { type Extracted, type ExtractionError, type ExtractionLimits, type MediaType, mediaTypes } from "./Records.js"
export { isUtf8Label, parseContentType } from "./ContentType.js"

const utf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true })
const utf8WithoutBom = new TextDecoder("utf-8", { fatal: true, ignoreBOM: false })

/**
 * The text of a `text/plain` body, exactly as `extract` decodes it (fatal UTF-8, a BOM kept); throws on
 * invalid UTF-8. The capture stage's plain-text path calls it directly.
 */
export const decodePlainText = (body: Uint8Array): string => utf8.decode(body)

/**
 * Extract the text of a body whose content type was accepted. Markdown and
 * PDF parsing run in a worker that interrupting this effect terminates (the
 * capture's deadline); HTML parsing is linear and runs here.
 *
 * @since 0.2.0
 */
export const extract = (
  source: string,
  contentType: string,
  body: Uint8Array,
  limits: ExtractionLimits
): Effect.Effect<Extracted, ExtractionError> =>
  Effect.suspend((): Effect.Effect<Extracted, ExtractionError> => {
    const { charset, mediaType } = parseContentType(contentType)
    if (charset !== undefined && !isUtf8Label(charset) && mediaType !== "application/pdf") {
      return Effect.fail(new UnsupportedEncoding({ source, charset, declaredIn: "content-type" }))
    }
    const decode = (decoder: typeof utf8) =>
      Effect.try({ try: () => decoder.decode(body), catch: () => new InvalidEncoding({ source, byteLength: body.byteLength }) })
    switch (mediaType) {
      case "application/pdf":
        return Pdf.extract(source, body, limits)
      case "text/markdown":
        return Effect.flatMap(decode(utf8), (text) => Markdown2.extract(source, text, limits))
      case "text/html":
      case "application/xhtml+xml":
        // The BOM is not text a reader sees: dropped, as a browser does.
        return Effect.flatMap(decode(utf8WithoutBom), (text) => Html2.extract(source, text, limits, charset))
      default:
        // text/plain (and anything else) is never extracted: the v1 text is the body itself.
        return Effect.map(
          Effect.try({ try: () => decodePlainText(body), catch: () => new InvalidEncoding({ source, byteLength: body.byteLength }) }),
          (text): Extracted => ({ extraction: "text/1", text })
        )
    }
  })
