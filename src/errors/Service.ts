/**
 * The HTTP service's errors (`run-pipeline serve`): authentication, request limits, runs (`ServiceError`).
 *
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"
import { TaggedError } from "./TaggedError.js"

// ---------------------------------------------------------------------------
// Service (`run-pipeline serve`): authentication, request limits, runs
// ---------------------------------------------------------------------------

/** Why a request carried no usable bearer token. */
export const UnauthorizedReason = Schema.Literal("missing", "malformed", "unknown-token", "unknown-session")
export type UnauthorizedReason = typeof UnauthorizedReason.Type

/** HTTP 401: no bearer token, a malformed Authorization header, or a token whose digest is not configured. */
export class Unauthorized extends TaggedError<Unauthorized>()("Unauthorized", {
  reason: UnauthorizedReason
}) {
  override get message() {
    return this.reason === "missing"
      ? "The request carries no bearer token"
      : this.reason === "malformed"
      ? "The Authorization header is not a single `Bearer <token>`"
      : this.reason === "unknown-session"
      ? "The session cookie names no live session (expired or signed out): sign in again with a token"
      : "The bearer token is not one of the configured tokens"
  }
}

/** What a token was refused. */
export const ForbiddenAction = Schema.Literal("capture", "read-run", "metrics")
export type ForbiddenAction = typeof ForbiddenAction.Type

/** HTTP 403: the token is valid but may not start captures, or may not read this run. */
export class Forbidden extends TaggedError<Forbidden>()("Forbidden", {
  action: ForbiddenAction,
  /** The run asked for (`read-run`), else null. */
  runId: Schema.NullOr(Schema.String)
}) {
  override get message() {
    return this.action === "capture"
      ? "This token may not start capture runs"
      : this.action === "metrics"
      ? "This token may not read metrics"
      : `This token may not read run ${this.runId ?? "(none)"}`
  }
}

/** HTTP 413: the request body is larger than `server.maxBodyBytes`; refused before (or while) reading it. */
export class PayloadTooLarge extends TaggedError<PayloadTooLarge>()("PayloadTooLarge", {
  maxBytes: Schema.Int,
  /** The Content-Length the client announced, or null when the body was chunked and counted while read. */
  declaredBytes: Schema.NullOr(Schema.Number)
}) {
  override get message() {
    return this.declaredBytes === null
      ? `The request body passes the ${this.maxBytes} byte limit`
      : `The request body announces ${this.declaredBytes} bytes, over the ${this.maxBytes} byte limit; it was not read`
  }
}

/** HTTP 411: a request body without Content-Length; the JSON endpoints measure a body before reading it. */
export class LengthRequired extends TaggedError<LengthRequired>()("LengthRequired", {
  maxBytes: Schema.Int
}) {
  override get message() {
    return `The request body has no Content-Length; send one (at most ${this.maxBytes} bytes)`
  }
}

/** HTTP 503: the request did not finish within `server.requestTimeoutMs`; its work was interrupted. */
export class RequestTimeout extends TaggedError<RequestTimeout>()("RequestTimeout", {
  timeoutMs: Schema.Int
}) {
  override get message() {
    return `The request did not finish within ${this.timeoutMs} ms; its work was stopped`
  }
}

/** HTTP 404: no run with this id exists under the run root (or the id is not a run id). */
export class RunNotFound extends TaggedError<RunNotFound>()("RunNotFound", {
  runId: Schema.String
}) {
  override get message() {
    return `No run ${JSON.stringify(this.runId)} exists`
  }
}

/** HTTP 503: the server is shutting down (`/readyz`, `POST /v1/runs`), or its run root cannot be used. */
export class NotReady extends TaggedError<NotReady>()("NotReady", {
  reason: Schema.Literal("draining", "run-root-unusable", "store-unavailable")
}) {
  override get message() {
    return this.reason === "draining"
      ? "The server is shutting down"
      : this.reason === "store-unavailable"
      ? "The PostgreSQL store cannot be reached"
      : "The run root cannot be used"
  }
}

/** Why the service refused a request before (or instead of) verifying anything. */
export const ServiceError = Schema.Union(Unauthorized, Forbidden, PayloadTooLarge, LengthRequired, RequestTimeout, RunNotFound, NotReady)
export type ServiceError = typeof ServiceError.Type
