/**
 * A provider stream read whole (a file or a request body: `anthropic-sse`,
 * `bedrock-stream`) reports a passed limit as the non-streamed route does:
 * one mapping for both formats.
 *
 * @since 0.4.0
 */
import { AnswerLimitExceeded, type AnswerError, InvalidAnswer } from "../Errors.js"

/** A limit a stream accumulator passed (`AnthropicSse.LimitPassed`). */
export interface PassedLimit {
  readonly limit: "event-size" | "answer-size" | "blocks" | "claims" | "citations"
  readonly max: number
  readonly received: number
}

/** A limit passed, as the non-streamed route reports it. */
export const answerLimitError = (passed: PassedLimit): AnswerError => {
  switch (passed.limit) {
    case "event-size":
    case "answer-size":
      return new InvalidAnswer({ issues: [{ path: [], message: `is longer than ${passed.max} characters` }] })
    case "blocks":
      return new InvalidAnswer({ issues: [{ path: ["content"], message: `must hold at most ${passed.max} content blocks` }] })
    case "claims":
    case "citations":
      return new AnswerLimitExceeded({ limit: passed.limit, max: passed.max, received: passed.received })
  }
}
