/**
 * The review page's errors (`/ui/` of `run-pipeline serve`): cross-site request refusals and the
 * review decision the service does not record yet (`UiError`).
 *
 * @since 0.3.0
 */
import * as Schema from "effect/Schema"

/** Why a state-changing request authenticated by the session cookie was refused. */
export const CsrfReason = Schema.Literal("missing", "mismatch", "cross-origin")
export type CsrfReason = typeof CsrfReason.Type

/**
 * HTTP 403: a state-changing request (POST, PUT, PATCH, DELETE) authenticated by the session cookie
 * without the session's CSRF token in `x-citegate-csrf`, with another token, or from another origin.
 */
export class CsrfRejected extends Schema.TaggedError<CsrfRejected>()("CsrfRejected", {
  reason: CsrfReason
}) {
  override get message() {
    return this.reason === "missing"
      ? "A request authenticated by the session cookie must carry the session's CSRF token in x-citegate-csrf"
      : this.reason === "mismatch"
      ? "The x-citegate-csrf header is not this session's CSRF token"
      : "The request's Origin is not this service: cross-site requests are refused"
  }
}

/**
 * HTTP 501: recording a reviewer's decision on a citation is not available in this version; the
 * review page shows where the decision will sit, and the service records nothing.
 */
export class ReviewRecordingUnavailable extends Schema.TaggedError<ReviewRecordingUnavailable>()("ReviewRecordingUnavailable", {
  runId: Schema.String
}) {
  override get message() {
    return `Review decisions on an answer's citations cannot be recorded yet (run ${this.runId}): nothing was stored; ` +
      "decisions on a verified report's facts are recorded with POST /v1/runs/{id}/reviews or run-pipeline review record"
  }
}

/** Why the review page's routes refused a request (beside `ServiceError`). */
export const UiError = Schema.Union(CsrfRejected, ReviewRecordingUnavailable)
export type UiError = typeof UiError.Type
