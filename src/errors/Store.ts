/**
 * The capture store's errors: reading and writing capture records, opening a run or a store.
 *
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"
import { TaggedError } from "./TaggedError.js"

// ---------------------------------------------------------------------------
// Capture store: reading
// ---------------------------------------------------------------------------

/** The run holds no capture of this exact source. No other capture is consulted. */
export class MissingCapture extends TaggedError<MissingCapture>()("MissingCapture", {
  source: Schema.String
}) {
  override get message() {
    return `No capture of ${this.source} exists in this run`
  }
}

export const CorruptReason = Schema.Literal(
  "unreadable",
  "symlink",
  // No longer produced (hard-linked records are read); kept so that older JSON results still decode.
  "hard-linked",
  "not-a-regular-file",
  "too-large",
  "invalid-utf8",
  "invalid-json",
  "not-a-v1-record",
  "source-mismatch",
  "byte-length-mismatch",
  // v2 records: the body file beside the record is absent, or is not the body the record describes.
  "body-missing",
  "body-mismatch",
  // v2 records: a page or heading anchor outside the text, or pages out of order.
  "invalid-anchor",
  // A database row whose record bytes no longer hash to the digest stored beside them.
  "record-digest-mismatch"
)
export type CorruptReason = typeof CorruptReason.Type

/** The stored capture cannot be trusted as a v1 record of this source. */
export class CorruptCapture extends TaggedError<CorruptCapture>()("CorruptCapture", {
  source: Schema.String,
  reason: CorruptReason,
  detail: Schema.String
}) {
  override get message() {
    return `The capture of ${this.source} is corrupt (${this.reason}): ${this.detail}`
  }
}

/** The stored record is in an older format. Migrate it explicitly; it is never accepted as is. */
export class LegacyCapture extends TaggedError<LegacyCapture>()("LegacyCapture", {
  source: Schema.String,
  detail: Schema.String
}) {
  override get message() {
    return `The capture of ${this.source} is a legacy record (${this.detail}); migrate it explicitly with run-pipeline migrate`
  }
}

export const CaptureReadError = Schema.Union(MissingCapture, CorruptCapture, LegacyCapture)
export type CaptureReadError = typeof CaptureReadError.Type

// ---------------------------------------------------------------------------
// Capture store: writing
// ---------------------------------------------------------------------------

/** One run holds one capture per source; the first one is left byte-for-byte untouched. */
export class CaptureExists extends TaggedError<CaptureExists>()("CaptureExists", {
  source: Schema.String
}) {
  override get message() {
    return `A capture of ${this.source} already exists in this run; the existing record was left untouched`
  }
}

/** The store could not persist a record (disk full, I/O error, …). Nothing is left under a final name. */
export class CaptureWriteFailed extends TaggedError<CaptureWriteFailed>()("CaptureWriteFailed", {
  source: Schema.String,
  detail: Schema.String
}) {
  override get message() {
    return `Writing the capture of ${this.source} failed: ${this.detail}`
  }
}

export const CaptureWriteError = Schema.Union(CaptureExists, CaptureWriteFailed)
export type CaptureWriteError = typeof CaptureWriteError.Type

/** The run directory a store was asked to use is not a usable directory. */
export class InvalidRunDirectory extends TaggedError<InvalidRunDirectory>()("InvalidRunDirectory", {
  path: Schema.String,
  detail: Schema.String
}) {
  override get message() {
    return `Run directory ${this.path} cannot be used: ${this.detail}`
  }
}

/**
 * A database-backed store cannot be opened for this run: the database is
 * unreachable, its schema is not migrated, or the run is missing. `run` names
 * the run; `detail` never holds credentials. (A new run whose name is taken is `RunExists`.)
 */
export class StoreUnavailable extends TaggedError<StoreUnavailable>()("StoreUnavailable", {
  run: Schema.String,
  detail: Schema.String
}) {
  override get message() {
    const run = this.run === "" ? "" : ` for run ${JSON.stringify(this.run)}`
    return `The capture store cannot be used${run}: ${this.detail}`
  }
}

/**
 * The PostgreSQL store's optional peer dependencies are not installed: `missing` is the package
 * Node could not find, `install` the packages to add (`npm install …`). Raised when the store is
 * first used, never as a module-loading crash of `citegate/PostgresStore`.
 */
export class StorePackageMissing extends TaggedError<StorePackageMissing>()("StorePackageMissing", {
  missing: Schema.String,
  install: Schema.Array(Schema.String)
}) {
  override get message() {
    return `The PostgreSQL store needs the optional peer dependencies ${this.install.join(" and ")}, ` +
      `and ${this.missing} is not installed: npm install ${this.install.join(" ")}`
  }
}

/**
 * A NEW run was asked for (capture) under a name the store already holds: captures never join
 * another run's, so evidence is never mixed. The database's counterpart of the CLI's `RunDirectoryExists`.
 */
export class RunExists extends TaggedError<RunExists>()("RunExists", {
  run: Schema.String
}) {
  override get message() {
    return `Run ${JSON.stringify(this.run)} already exists in the capture store; captures go into a new run so evidence is never mixed`
  }
}
