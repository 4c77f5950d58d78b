/**
 * The review log of one run: recorded human review decisions, append-only. The contract every
 * store keeps (the filesystem's `reviews/` directory, a PostgreSQL table, memory):
 * - `append` adds one decision after every other and returns its place (`seq`); it never
 *   replaces, edits or removes anything, and a decision that is not stored leaves nothing behind;
 * - `list` returns every decision in append order, each decoded strictly.
 * The stores: `store/ReviewFilesystem.ts` (`layer`), `store/ReviewPostgres.ts` (`layer`, `layerUrl`).
 * A later decision about the same fact supersedes an earlier one by coming after it
 * (`ReviewRecords.withHistory`); the earlier one stays in the log.
 *
 * Only review recording (`review/Decisions.ts`, through the edge) appends; verification never
 * touches the log.
 *
 * @since 0.3.0
 */
import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"
import type { DecisionAppendError, DecisionReadError } from "../Errors.js"
import type { ReviewDecision } from "../review/Records.js"

/**
 * @since 0.3.0
 * @category models
 */
export interface LoggedDecision {
  /** Its place: increasing in append order (1, 2, … on the filesystem; the table's identity in PostgreSQL). */
  readonly seq: number
  readonly record: ReviewDecision
}

/**
 * @since 0.3.0
 * @category models
 */
export interface ReviewLogShape {
  /** The run this log belongs to (its name, or its directory). */
  readonly run: string
  /** Appends one decision after every other; its `seq`. */
  readonly append: (decision: ReviewDecision) => Effect.Effect<number, DecisionAppendError>
  /** Every decision, in append order. */
  readonly list: Effect.Effect<ReadonlyArray<LoggedDecision>, DecisionReadError>
}

/**
 * @since 0.3.0
 * @category tags
 */
export class ReviewLog extends Context.Tag("citegate/ReviewLog")<ReviewLog, ReviewLogShape>() {}
