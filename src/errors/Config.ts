/**
 * Configuration errors: the operator's pipeline.json and migration map.
 *
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"
import { formatIssues, Issue, Omitted } from "./Shared.js"
import { TaggedError } from "./TaggedError.js"

// ---------------------------------------------------------------------------
// Configuration
// ---------------------------------------------------------------------------

/** A configuration document (pipeline.json, Gate options) failed strict decoding. */
export class InvalidConfig extends TaggedError<InvalidConfig>()("InvalidConfig", {
  issues: Schema.NonEmptyArray(Issue),
  omitted: Omitted
}) {
  override get message() {
    return `The configuration is invalid: ${formatIssues(this.issues, this.omitted)}`
  }
}

/** The operator's migration map does not decode (see `Migrate.decodeMap`); nothing was migrated. */
export class InvalidMigrationMap extends TaggedError<InvalidMigrationMap>()("InvalidMigrationMap", {
  issues: Schema.NonEmptyArray(Issue),
  omitted: Omitted
}) {
  override get message() {
    return `The migration map is invalid: ${formatIssues(this.issues, this.omitted)}`
  }
}
