/**
 * Errors of recorded human review (`run-pipeline review`, `POST /v1/runs/{id}/reviews`): a decision
 * that cannot be recorded, and a review log that cannot be read or written. Nothing here is about
 * provenance: a refused decision leaves the run's captures and its log as they were.
 *
 * @since 0.3.0
 */
import * as Schema from "effect/Schema"
import { formatIssues, Issue, Omitted } from "./Shared.js"
import { TaggedError } from "./TaggedError.js"

/** The decision does not decode (unknown decision, note too long, control characters, unknown key). */
export class DecisionInvalid extends TaggedError<DecisionInvalid>()("DecisionInvalid", {
  issues: Schema.Array(Issue),
  omitted: Omitted
}) {
  override get message() {
    return `The review decision is invalid: ${formatIssues(this.issues, this.omitted)}`
  }
}

/**
 * The decision names a fact that is not a verified citation of the report: out of range, unavailable,
 * retracted, or the report was rejected. Only a verified excerpt can be reviewed.
 */
export class DecisionFactNotVerified extends TaggedError<DecisionFactNotVerified>()("DecisionFactNotVerified", {
  fact: Schema.NonNegativeInt,
  reason: Schema.Literal("out-of-range", "unavailable", "retracted", "report-rejected"),
  detail: Schema.String
}) {
  override get message() {
    return `Fact ${this.fact + 1} cannot be reviewed (${this.reason}): ${this.detail}`
  }
}

/** The run's review log holds `limit` decisions: no more are taken (nothing was written). */
export class DecisionLogFull extends TaggedError<DecisionLogFull>()("DecisionLogFull", {
  run: Schema.String,
  limit: Schema.NonNegativeInt
}) {
  override get message() {
    return `The review log of run ${JSON.stringify(this.run)} holds ${this.limit} decisions, its limit; nothing was recorded`
  }
}

/** The decision could not be stored (disk, permissions, database). Nothing is left under a decision's name. */
export class DecisionWriteFailed extends TaggedError<DecisionWriteFailed>()("DecisionWriteFailed", {
  run: Schema.String,
  detail: Schema.String
}) {
  override get message() {
    return `Could not record the decision in run ${JSON.stringify(this.run)}: ${this.detail}; nothing was recorded`
  }
}

/**
 * A stored decision does not read back as one (not a regular file, too large, not UTF-8, fails the
 * strict Schema, or belongs to another run). Never removed or repaired: an operator decides.
 */
export class DecisionLogCorrupt extends TaggedError<DecisionLogCorrupt>()("DecisionLogCorrupt", {
  run: Schema.String,
  entry: Schema.String,
  detail: Schema.String
}) {
  override get message() {
    return `The review log of run ${JSON.stringify(this.run)} is corrupt at ${this.entry}: ${this.detail}`
  }
}

/** Why a decision was not recorded. */
export const DecisionError = Schema.Union(DecisionInvalid, DecisionFactNotVerified, DecisionLogFull, DecisionWriteFailed, DecisionLogCorrupt)
export type DecisionError = typeof DecisionError.Type

/** Why the review log could not be read. */
export type DecisionReadError = DecisionLogCorrupt
/** Why an append failed. */
export type DecisionAppendError = DecisionLogFull | DecisionWriteFailed | DecisionLogCorrupt
