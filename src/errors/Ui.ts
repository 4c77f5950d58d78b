/**
 * The review page's errors (`/ui/` of `run-pipeline serve`): cross-site request refusals, a capture
 * body the page may not have, and the former review placeholder's refusal (`UiError`).
 *
 * @since 0.3.0
 */
import * as Schema from "effect/Schema"
import { TaggedError } from "./TaggedError.js"

/** Why a state-changing request authenticated by the session cookie was refused. */
export const CsrfReason = Schema.Literal("missing", "mismatch", "cross-origin")
export type CsrfReason = typeof CsrfReason.Type

/**
 * HTTP 403: a state-changing request (POST, PUT, PATCH, DELETE) authenticated by the session cookie
 * without the session's CSRF token in `x-citegate-csrf`, with another token, or from another origin.
 */
export class CsrfRejected extends TaggedError<CsrfRejected>()("CsrfRejected", {
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
 * HTTP 501, no longer returned: the review page's former placeholder route for decisions
 * (`POST /v1/runs/{id}/review-decisions`) is gone; the page records decisions on a verified
 * report's facts with `POST /v1/runs/{id}/reviews`. Kept exported for API compatibility.
 */
export class ReviewRecordingUnavailable extends TaggedError<ReviewRecordingUnavailable>()("ReviewRecordingUnavailable", {
  runId: Schema.String
}) {
  override get message() {
    return `Review decisions on an answer's citations cannot be recorded yet (run ${this.runId}): nothing was stored; ` +
      "decisions on a verified report's facts are recorded with POST /v1/runs/{id}/reviews or run-pipeline review record"
  }
}

/** Why `GET /v1/runs/{id}/captures/{captureSha256}/body` has no body to give. */
export const CaptureBodyReason = Schema.Literal("not-in-run", "not-pdf")
export type CaptureBodyReason = typeof CaptureBodyReason.Type

/**
 * HTTP 404: the run holds no capture with this digest (`not-in-run`), or its stored body is not a PDF
 * (`not-pdf`: only PDF bodies are served, for the review page's page view; every other capture is
 * shown as its extracted text).
 */
export class CaptureBodyUnavailable extends TaggedError<CaptureBodyUnavailable>()("CaptureBodyUnavailable", {
  runId: Schema.String,
  captureSha256: Schema.String,
  reason: CaptureBodyReason
}) {
  override get message() {
    return this.reason === "not-in-run"
      ? `Run ${this.runId} holds no capture with digest ${this.captureSha256}`
      : `The capture ${this.captureSha256} of run ${this.runId} is not a PDF: only PDF bodies are served (the page shows other captures as their extracted text)`
  }
}

/** Why the review page's routes refused a request (beside `ServiceError`). */
export const UiError = Schema.Union(CsrfRejected, ReviewRecordingUnavailable, CaptureBodyUnavailable)
export type UiError = typeof UiError.Type
