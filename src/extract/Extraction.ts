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
import type { BodyRun, ExtractionId, HeadingAnchor, HiddenRun, PageAnchor } from "../Domain.js"
import { type ExtractionFailed, type ExtractionTooLarge, InvalidEncoding, UnsupportedEncoding } from "../Errors.js"
import * as Html2 from "./Html2.js"
import * as Markdown2 from "./Markdown2.js"
import * as Pdf from "./Pdf.js"

/**
 * The content types capture can accept, by media type. `text/plain` keeps the
 * v1 record (its text is the body, extraction `text/1`); the others are
 * extracted into v2 records.
 *
 * @since 0.2.0
 */
export const mediaTypes = ["text/plain", "text/markdown", "text/html", "application/xhtml+xml", "application/pdf"] as const
export type MediaType = typeof mediaTypes[number]

/** @since 0.2.0 */
export interface ExtractionLimits {
  /** Most pages of a PDF. */
  readonly maxPages: number
  /** Most UTF-16 code units of extracted text. */
  readonly maxCharacters: number
  /** Deepest element nesting in HTML. */
  readonly maxDepth: number
}

/** What an extraction produces: the text and its anchors. */
export interface Extracted {
  readonly extraction: ExtractionId
  readonly text: string
  readonly pages?: ReadonlyArray<PageAnchor>
  readonly headings?: ReadonlyArray<HeadingAnchor>
  readonly bodyMap?: ReadonlyArray<BodyRun>
  /** The stretches of the text no reader sees as text (`pdf/2`). */
  readonly hidden?: ReadonlyArray<HiddenRun>
}

export type ExtractionError = ExtractionFailed | ExtractionTooLarge | UnsupportedEncoding | InvalidEncoding

/** The WHATWG labels of UTF-8. */
export const isUtf8Label = (label: string): boolean =>
  ["utf-8", "utf8", "unicode-1-1-utf-8", "unicode11utf8", "unicode20utf8", "x-unicode20utf8"].includes(
    label.trim().toLowerCase()
  )

/** A Content-Type split into its media type (lower case) and charset parameter (unquoted), if any. */
export const parseContentType = (contentType: string): { readonly mediaType: string; readonly charset: string | undefined } => {
  const [mediaType = "", ...parameters] = contentType.split(";")
  let charset: string | undefined
  for (const parameter of parameters) {
    const match = /^\s*charset\s*=\s*(?:"([^"]*)"|([^\s;]*))\s*$/i.exec(parameter)
    if (match !== null) charset = match[1] ?? match[2]
  }
  return { mediaType: mediaType.trim().toLowerCase(), charset }
}

const utf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true })
const utf8WithoutBom = new TextDecoder("utf-8", { fatal: true, ignoreBOM: false })

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
        return Effect.map(decode(utf8), (text): Extracted => ({ extraction: "text/1", text }))
    }
  })
