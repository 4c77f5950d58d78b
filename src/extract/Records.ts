/**
 * The records of extraction, shared by the dispatcher (`Extraction.ts`), the
 * extractors (HTML, Markdown, PDF) and the worker protocol: what an extraction
 * produces, its limits and its failures. Types only: the extractors import
 * these, never the dispatcher.
 *
 * @since 0.3.0
 */
import type { BodyRun, ExtractionId, HeadingAnchor, PageAnchor } from "../Domain.js"
import type { ExtractionFailed, ExtractionTooLarge, InvalidEncoding, UnsupportedEncoding } from "../Errors.js"

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
}

export type ExtractionError = ExtractionFailed | ExtractionTooLarge | UnsupportedEncoding | InvalidEncoding

