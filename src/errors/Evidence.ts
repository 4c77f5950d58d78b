/**
 * Errors of the evidence exports (`run-pipeline export`): WARC files and W3C Web Annotations.
 *
 * @since 0.3.0
 */
import * as Schema from "effect/Schema"
import { TaggedError } from "./TaggedError.js"

/** The export's output name exists: an export never replaces a file (evidence or not). */
export class ExportOutputExists extends TaggedError<ExportOutputExists>()("ExportOutputExists", {
  path: Schema.String
}) {
  override get message() {
    return `${this.path} exists; an export never replaces a file: choose a new name`
  }
}

/** The export could not be written (directory missing, disk full, I/O error). Nothing is left under the name. */
export class ExportWriteFailed extends TaggedError<ExportWriteFailed>()("ExportWriteFailed", {
  path: Schema.String,
  detail: Schema.String
}) {
  override get message() {
    return `Could not write ${this.path}: ${this.detail}; nothing was written under that name`
  }
}

/** The run holds more captures than one export takes (`maxCaptures`); checked before any capture is read. */
export class ExportTooLarge extends TaggedError<ExportTooLarge>()("ExportTooLarge", {
  captures: Schema.NonNegativeInt,
  limit: Schema.NonNegativeInt
}) {
  override get message() {
    return `The run holds ${this.captures} captures, more than the ${this.limit} one export takes`
  }
}

/**
 * A stored value cannot be a WARC header field (a control character such as CR or LF in it): written
 * as is it would forge header lines, so the export stops instead.
 */
export class WarcFieldInvalid extends TaggedError<WarcFieldInvalid>()("WarcFieldInvalid", {
  source: Schema.String,
  field: Schema.String,
  detail: Schema.String
}) {
  override get message() {
    return `The capture of ${this.source} cannot be written as WARC: its ${this.field} ${this.detail}`
  }
}

/**
 * A verified citation carries no W3C selectors (a result stored before selectors existed), so no
 * annotation can point into its capture. Verify the report or answer again to get them.
 */
export class AnnotationSelectorMissing extends TaggedError<AnnotationSelectorMissing>()(
  "AnnotationSelectorMissing",
  {
    source: Schema.String,
    citation: Schema.String
  }
) {
  override get message() {
    return `The verified citation ${this.citation} of ${this.source} carries no selectors; verify it again to export it as an annotation`
  }
}

/** Why an evidence export produced nothing. */
export const EvidenceError = Schema.Union(
  ExportOutputExists,
  ExportWriteFailed,
  ExportTooLarge,
  WarcFieldInvalid,
  AnnotationSelectorMissing
)
export type EvidenceError = typeof EvidenceError.Type
