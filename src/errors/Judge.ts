/**
 * The entailment judge's errors. Two kinds:
 *
 * - at start (`JudgeStartError`): the configuration asks for judging but no judge is configured
 *   (`CapabilityError`), or its API key cannot be read (`JudgeKeyUnavailable`). Nothing is verified.
 * - per judged citation (`JudgeFailure`): the endpoint failed, timed out, or replied with something
 *   the strict reply Schema refuses. The citation's verdict is then `error` (no score), never support.
 *
 * No message or field ever holds the API key: details from the endpoint are redacted before they
 * become an error (src/review/JudgeHttp.ts).
 *
 * @since 0.3.0
 */
import * as Schema from "effect/Schema"
import { TaggedError } from "./TaggedError.js"

/** One refused part of a judge's reply, e.g. `verdicts[2].class: unknown class "maybe"`. */
export const JudgeReplyIssue = Schema.Struct({ path: Schema.String, message: Schema.String })
export type JudgeReplyIssue = typeof JudgeReplyIssue.Type

/**
 * The configuration needs a capability the process was not given: `review.judge.mode` is `report`
 * or `require` but `review.judge` names no provider, endpoint and model. Judging is never skipped
 * silently: nothing is verified (exit 2 in the CLI, no start for the service).
 */
export class CapabilityError extends TaggedError<CapabilityError>()("CapabilityError", {
  capability: Schema.Literal("judge"),
  required: Schema.Literal("report", "require"),
  missing: Schema.Array(Schema.String)
}) {
  override get message() {
    return `review.judge.mode is "${this.required}" but no ${this.capability} is configured ` +
      `(missing: ${this.missing.join(", ")}); configure review.judge's provider, endpoint and model, or set review.judge.mode to "off"`
  }
}

/** The judge's API key cannot be read from where the configuration says (`apiKeyEnv` or `apiKeyFile`). */
export class JudgeKeyUnavailable extends TaggedError<JudgeKeyUnavailable>()("JudgeKeyUnavailable", {
  from: Schema.Literal("env", "file", "none"),
  /** The environment variable's name or the file's path (never the key). */
  name: Schema.String,
  detail: Schema.String
}) {
  override get message() {
    const where = this.from === "env"
      ? `the environment variable ${this.name}`
      : this.from === "file"
      ? `the file ${this.name}`
      : "anywhere (set review.judge.apiKeyEnv or review.judge.apiKeyFile)"
    return `The judge's API key cannot be read from ${where}: ${this.detail}`
  }
}

/** Why judging could not start. */
export const JudgeStartError = Schema.Union(CapabilityError, JudgeKeyUnavailable)
export type JudgeStartError = typeof JudgeStartError.Type

/** The endpoint answered with a status other than 200, after the retries allowed (429 and 5xx are retried). */
export class JudgeHttpStatus extends TaggedError<JudgeHttpStatus>()("JudgeHttpStatus", {
  status: Schema.Int,
  attempts: Schema.Int,
  /** The `retry-after` the last answer asked for, in ms, when it was past `maxRetryAfterMs` (not waited for). */
  retryAfterMs: Schema.NullOr(Schema.Int),
  detail: Schema.String
}) {
  override get message() {
    const wait = this.retryAfterMs === null ? "" : `; it asked to wait ${this.retryAfterMs} ms, past the configured maximum`
    return `The judge endpoint answered HTTP ${this.status} after ${this.attempts} attempt${this.attempts === 1 ? "" : "s"}${wait}: ${this.detail}`
  }
}

/** The endpoint could not be reached, or the connection broke, after the retries allowed. */
export class JudgeTransport extends TaggedError<JudgeTransport>()("JudgeTransport", {
  attempts: Schema.Int,
  detail: Schema.String
}) {
  override get message() {
    return `The judge endpoint could not be reached after ${this.attempts} attempt${this.attempts === 1 ? "" : "s"}: ${this.detail}`
  }
}

/**
 * The judge's reply was refused: not JSON, not the protocol's envelope, or verdicts the strict Schema
 * refuses (an unknown class, a confidence outside its class's band, an id that was not asked, an id
 * missing or repeated, a reply past `maxReplyBytes`). The whole batch's verdicts are refused.
 */
export class JudgeReplyInvalid extends TaggedError<JudgeReplyInvalid>()("JudgeReplyInvalid", {
  issues: Schema.NonEmptyArray(JudgeReplyIssue)
}) {
  override get message() {
    return `The judge's reply was refused: ${this.issues.map((i) => `${i.path === "" ? "(reply)" : i.path}: ${i.message}`).join("; ")}`
  }
}

/** Judging did not finish within `review.judge.timeoutMs` (one deadline for all of a verification's citations). */
export class JudgeTimeout extends TaggedError<JudgeTimeout>()("JudgeTimeout", {
  timeoutMs: Schema.Int
}) {
  override get message() {
    return `The judge did not answer within ${this.timeoutMs} ms (review.judge.timeoutMs); this citation was not judged`
  }
}

/** Why one citation has no verdict (its verdict is `error`). */
export const JudgeFailure = Schema.Union(JudgeHttpStatus, JudgeTransport, JudgeReplyInvalid, JudgeTimeout)
export type JudgeFailure = typeof JudgeFailure.Type
