/**
 * Streaming answers' errors (POST /v1/stream/answer): `StreamError`.
 *
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"
import { TaggedError } from "./TaggedError.js"

// ---------------------------------------------------------------------------
// Streaming answers (POST /v1/stream/answer)
// ---------------------------------------------------------------------------

/** An input line of a streamed answer is not `{"type":"delta","text":"…"}` (strict JSON, no other keys). */
export class StreamLineInvalid extends TaggedError<StreamLineInvalid>()("StreamLineInvalid", {
  /** 1-based NDJSON line of the request body. */
  line: Schema.Int,
  detail: Schema.String
}) {
  override get message() {
    return `Input line ${this.line} is not a delta: ${this.detail}`
  }
}

export const StreamLimit = Schema.Literal("line-length", "input-size", "answer-size", "claims", "citations")
export type StreamLimit = typeof StreamLimit.Type

/** A streamed answer passed one of its documented limits; nothing past it was parsed. */
export class StreamLimitExceeded extends TaggedError<StreamLimitExceeded>()("StreamLimitExceeded", {
  limit: StreamLimit,
  max: Schema.Int,
  /** How much had arrived when the limit was passed (at least max + 1). */
  received: Schema.Int
}) {
  override get message() {
    return `The stream passed its ${this.limit} limit of ${this.max} (received at least ${this.received})`
  }
}

/** The stream did not finish within its deadline (input, parsing and verification together). */
export class StreamDeadline extends TaggedError<StreamDeadline>()("StreamDeadline", {
  timeoutMs: Schema.Int
}) {
  override get message() {
    return `The stream did not finish within ${this.timeoutMs} ms`
  }
}

export const StreamGoneReason = Schema.Literal("unknown-stream", "not-retained")
export type StreamGoneReason = typeof StreamGoneReason.Type

/** A resumed stream is unknown (or expired), or the events after the client's Last-Event-ID are no longer retained. */
export class StreamGone extends TaggedError<StreamGone>()("StreamGone", {
  streamId: Schema.String,
  reason: StreamGoneReason,
  /** The oldest event id still retained, when the stream is known. */
  oldestRetained: Schema.NullOr(Schema.Int)
}) {
  override get message() {
    return this.reason === "unknown-stream"
      ? `No stream ${JSON.stringify(this.streamId.slice(0, 80))} is retained (unknown or expired)`
      : `Stream ${JSON.stringify(this.streamId.slice(0, 80))} retains events from id ${this.oldestRetained} only; resume from the start`
  }
}

/** HTTP 400: a query parameter or header of a streaming request is malformed (the run id, the manifest digest, the mode, Last-Event-ID). */
export class StreamRequestInvalid extends TaggedError<StreamRequestInvalid>()("StreamRequestInvalid", {
  parameter: Schema.String,
  detail: Schema.String
}) {
  override get message() {
    return `The streaming request's ${this.parameter} is invalid: ${this.detail}`
  }
}

/**
 * HTTP 503: the events retained for resuming, all streams together, reached `server.streamRetainedBytes` and
 * no ended stream was left to drop: a new stream is refused until live ones end or retained ones expire.
 */
export class StreamRetentionFull extends TaggedError<StreamRetentionFull>()("StreamRetentionFull", {
  retainedBytes: Schema.Number,
  maxBytes: Schema.Number
}) {
  override get message() {
    return `Streams being answered retain ${this.retainedBytes} bytes of events, at the ${this.maxBytes} byte limit; try again shortly`
  }
}

/** Why a streamed answer ended early: its input, its limits, its deadline, or resuming it; or why the request was refused. */
export const StreamError = Schema.Union(StreamLineInvalid, StreamLimitExceeded, StreamDeadline, StreamGone, StreamRequestInvalid, StreamRetentionFull)
export type StreamError = typeof StreamError.Type
