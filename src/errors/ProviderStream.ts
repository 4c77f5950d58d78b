/**
 * Streamed provider answers (`anthropic-sse`): the provider's event stream
 * itself failed, before any of its content could be judged. Citation
 * mapping issues (an unsupported citation type, a document index outside the
 * manifest) stay `InvalidAnswer`, as for the provider's whole response.
 *
 * Provider text echoed here (an error message, an event type) is untrusted
 * and bounded: renderers escape it.
 *
 * @since 0.2.0
 */
import * as Schema from "effect/Schema"
import { TaggedError } from "./TaggedError.js"

/** The provider event-stream formats citegate reads. */
export const ProviderStreamFormat = Schema.Literal("anthropic-sse", "bedrock-converse-stream")
export type ProviderStreamFormat = typeof ProviderStreamFormat.Type

/**
 * One event of the stream is not what the format allows: its data is not one
 * strict JSON object of a known shape, its `event:` name differs from its
 * `type`, or it comes out of order (a delta for a block that was not started,
 * a second `message_start`, text in a tool-use block, anything after
 * `message_stop`). Nothing after it is read.
 */
export class ProviderEventInvalid extends TaggedError<ProviderEventInvalid>()("ProviderEventInvalid", {
  format: ProviderStreamFormat,
  /** 1-based number of the event in the stream. */
  event: Schema.Int,
  /** 1-based line of the input where the event's first field is. */
  line: Schema.Int,
  detail: Schema.String
}) {
  override get message() {
    return `Event ${this.event} (line ${this.line}) of the ${this.format} stream is invalid: ${this.detail}`
  }
}

/**
 * The provider reported an error inside the stream (an `error` event, e.g.
 * `overloaded_error`): the answer is incomplete, and nothing of it is grounded.
 */
export class ProviderStreamError extends TaggedError<ProviderStreamError>()("ProviderStreamError", {
  format: ProviderStreamFormat,
  /** The provider's error type (bounded). */
  errorType: Schema.String,
  /** The provider's error message (bounded). */
  detail: Schema.String
}) {
  override get message() {
    return `The ${this.format} stream reported an error (${this.errorType}): ${this.detail}`
  }
}

/** Where an event stream stopped when it ended without its final event. */
export const IncompleteAt = Schema.Literal("before-message", "inside-block", "before-message-stop", "inside-event")
export type IncompleteAt = typeof IncompleteAt.Type

/**
 * The input ended before the stream's final event (`message_stop`): the
 * connection was cut, or the file is truncated. A cut answer is never grounded,
 * however much of it verified.
 */
export class ProviderStreamIncomplete extends TaggedError<ProviderStreamIncomplete>()("ProviderStreamIncomplete", {
  format: ProviderStreamFormat,
  at: IncompleteAt,
  /** Events read before the input ended. */
  events: Schema.Int
}) {
  override get message() {
    const where = {
      "before-message": "before message_start",
      "inside-block": "inside a content block",
      "before-message-stop": "before message_stop",
      "inside-event": "inside an event (no blank line ended it)"
    }[this.at]
    return `The ${this.format} stream ended ${where}, after ${this.events} event(s): the answer is incomplete`
  }
}

/** Why a provider's event stream could not be read to its end. */
export const ProviderStreamFailure = Schema.Union(ProviderEventInvalid, ProviderStreamError, ProviderStreamIncomplete)
export type ProviderStreamFailure = typeof ProviderStreamFailure.Type
