/**
 * Extraction's errors: text from Markdown, HTML and PDF bodies, within the extraction caps.
 *
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"
import { TaggedError } from "./TaggedError.js"

/** The formats citegate extracts text from. */
export const ExtractionFormat = Schema.Literal("markdown", "html", "pdf")
export type ExtractionFormat = typeof ExtractionFormat.Type

/** The body could not be turned into text (a malformed, truncated or encrypted PDF, say); nothing was written. */
export class ExtractionFailed extends TaggedError<ExtractionFailed>()("ExtractionFailed", {
  source: Schema.String,
  format: ExtractionFormat,
  reason: Schema.Literal("malformed", "truncated", "encrypted", "worker-failed"),
  detail: Schema.String
}) {
  override get message() {
    return `Extracting text from the ${this.format} body of ${this.source} failed (${this.reason}): ${this.detail}`
  }
}

/** The body declares (in its Content-Type or a `<meta charset>`) an encoding other than UTF-8. */
export class UnsupportedEncoding extends TaggedError<UnsupportedEncoding>()("UnsupportedEncoding", {
  source: Schema.String,
  /** The charset as declared. */
  charset: Schema.String,
  /** Where it was declared. */
  declaredIn: Schema.Literal("content-type", "meta")
}) {
  override get message() {
    return `${this.source} declares the charset ${JSON.stringify(this.charset)} (in its ${this.declaredIn}); only UTF-8 is captured`
  }
}

/**
 * An extraction cap was passed; extraction stopped there. The configurable caps (pages, extracted
 * characters, HTML nesting depth) go by their pipeline.json names; two are derived from `maxBytes`:
 * `memory` (the extraction process's resident memory, in bytes) and `decodedBytes` (what a PDF's
 * streams decode to, in bytes, checked before pdf.js decodes them).
 */
export class ExtractionTooLarge extends TaggedError<ExtractionTooLarge>()("ExtractionTooLarge", {
  source: Schema.String,
  format: ExtractionFormat,
  /** The cap passed, by its pipeline.json name, or `memory` / `decodedBytes`. */
  cap: Schema.Literal("maxPages", "maxCharacters", "maxDepth", "memory", "decodedBytes"),
  limit: Schema.Int
}) {
  override get message() {
    switch (this.cap) {
      case "memory":
        return `Extracting the ${this.format} body of ${this.source} passed the extraction memory limit of ${this.limit} bytes; the extraction was stopped and nothing was written`
      case "decodedBytes":
        return `The ${this.format} body of ${this.source} decodes to more than ${this.limit} bytes of streams; nothing was decoded or written`
      default:
        return `The ${this.format} body of ${this.source} passes the ${this.cap} cap of ${this.limit}; nothing was written`
    }
  }
}
