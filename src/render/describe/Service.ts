/**
 * Descriptions of the service's failures: streamed answers (`StreamError`) and requests (`ServiceError`).
 */
import * as Match from "effect/Match"
import type { ServiceError, StreamError } from "../../Errors.js"
import { type Description, shown } from "./Shared.js"

/** Why a streamed answer ended early (the `error` event before its `done`). */
export const streamError = (error: StreamError): Description => shown(streamErrorUnbounded(error))

const streamErrorUnbounded = (error: StreamError): Description =>
  Match.valueTags(error, {
    StreamLineInvalid: (e): Description => ({
      title: "Malformed stream line",
      fields: [["line", String(e.line)], ["detail", e.detail]],
      fix: 'Send one JSON object per line: {"type":"delta","text":"…"}.'
    }),
    StreamLimitExceeded: (e): Description => ({
      title: "Stream limit exceeded",
      fields: [["limit", e.limit], ["max", String(e.max)], ["received", String(e.received)]],
      fix: "Streamed answers are bounded; shorten the answer (or its lines), or cite fewer claims."
    }),
    StreamDeadline: (e): Description => ({
      title: "Stream deadline passed",
      fields: [["deadline ms", String(e.timeoutMs)]],
      fix: "Nothing of this answer is accepted; send the answer faster or in a shorter stream."
    }),
    StreamGone: (e): Description => ({
      title: e.reason === "unknown-stream" ? "Unknown stream" : "Events no longer retained",
      fields: [["stream", e.streamId], ["oldest retained id", e.oldestRetained === null ? "(none)" : String(e.oldestRetained)]],
      fix: "Resume promptly, or send the answer again."
    }),
    StreamRequestInvalid: (e): Description => ({
      title: "Invalid streaming request",
      fields: [["parameter", e.parameter], ["detail", e.detail]],
      fix: "Name one run (`run`), at most one manifest digest and mode, and a numeric Last-Event-ID."
    }),
    StreamRetentionFull: (e): Description => ({
      title: "Stream retention full",
      fields: [["retained bytes", String(e.retainedBytes)], ["max bytes", String(e.maxBytes)]],
      fix: "Retry after a short wait; an operator may raise server.streamRetainedBytes or lower server.streamRetainMs."
    })
  })

/** The service's refusals (`run-pipeline serve`): authentication, limits, unknown runs, undecodable requests. */
export const serviceError = (error: ServiceError): Description => shown(serviceErrorUnbounded(error))

const serviceErrorUnbounded = (error: ServiceError): Description =>
  Match.valueTags(error, {
    Unauthorized: (e): Description => ({
      title: "Unauthorized",
      fields: [["reason", e.reason]],
      fix: "Send `Authorization: Bearer <token>` with a token whose SHA-256 digest is listed in server.tokens."
    }),
    Forbidden: (e): Description => ({
      title: "Forbidden",
      fields: [["action", e.action], ["run", e.runId ?? "(none)"]],
      fix: e.action === "capture"
        ? "Use a token with `capture: true` to start runs."
        : e.action === "metrics"
        ? "Use a token with `metrics: true` to scrape /metrics."
        : "Use a token whose `runs` lists this run (or \"*\"), or the token that started it."
    }),
    PayloadTooLarge: (e): Description => ({
      title: "Request body too large",
      fields: [["max bytes", String(e.maxBytes)], ["announced", e.declaredBytes === null ? "(chunked)" : String(e.declaredBytes)]],
      fix: "Send a smaller body, or raise server.maxBodyBytes."
    }),
    LengthRequired: (e): Description => ({
      title: "Content-Length required",
      fields: [["max bytes", String(e.maxBytes)]],
      fix: "Send the body with a Content-Length header (curl --data-binary @file does)."
    }),
    RequestTimeout: (e): Description => ({
      title: "Request timed out",
      fields: [["deadline ms", String(e.timeoutMs)]],
      fix: "Nothing of this request is accepted. Send less, or raise server.requestTimeoutMs."
    }),
    RunNotFound: (e): Description => ({
      title: "Run not found",
      fields: [["run", e.runId]],
      fix: "Use a run id returned by POST /v1/runs (or a run directory's name under the run root)."
    }),
    NotReady: (e): Description => ({
      title: "Not ready",
      fields: [["reason", e.reason]],
      fix: e.reason === "draining"
        ? "The server is shutting down; retry against another instance."
        : e.reason === "store-unavailable"
        ? "Check that PostgreSQL is up and reachable from this replica (serve --store)."
        : "Check that the run root exists and is writable."
    })
  })
