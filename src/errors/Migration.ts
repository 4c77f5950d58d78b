/**
 * Explicit migration of legacy records: why a legacy record was not migrated.
 *
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"
import { TaggedError } from "./TaggedError.js"

// ---------------------------------------------------------------------------
// Explicit migration of legacy records
// ---------------------------------------------------------------------------

export const MigrationRejectionReason = Schema.Literal(
  "missing",
  "unreadable",
  "not-a-legacy-record",
  "digest-mismatch",
  "source-conflict",
  "write-failed"
)

/** One legacy entry the operator's map approved could not be migrated; nothing was written for it. */
export class MigrationRejected extends TaggedError<MigrationRejected>()("MigrationRejected", {
  file: Schema.String,
  source: Schema.String,
  reason: MigrationRejectionReason,
  detail: Schema.String
}) {
  override get message() {
    return `Legacy record ${this.file} was not migrated (${this.reason}): ${this.detail}`
  }
}
