/**
 * The judge over the Anthropic Messages API (`review.judge.provider: "anthropic"`):
 * `POST {endpoint}` with `x-api-key` and `anthropic-version: 2023-06-01`, temperature 0, the system
 * prompt as `system`; the verdicts are the reply's text blocks, joined.
 *
 * The envelope is decoded leniently (the API adds fields such as `usage`), the verdicts strictly.
 *
 * @since 0.3.0
 */
import * as Either from "effect/Either"
import * as Schema from "effect/Schema"
import { JudgeReplyInvalid } from "../errors/Judge.js"
import type { Protocol } from "./JudgeHttp.js"

export const anthropicVersion = "2023-06-01"

const Envelope = Schema.Struct({
  type: Schema.optional(Schema.String),
  content: Schema.Array(Schema.Struct({ type: Schema.String, text: Schema.optional(Schema.String) })),
  stop_reason: Schema.optional(Schema.NullOr(Schema.String))
})

const decodeEnvelope = Schema.decodeUnknownEither(Envelope, { errors: "all" })

const refused = (message: string) => new JudgeReplyInvalid({ issues: [{ path: "", message }] })

export const protocol: Protocol = {
  provider: "anthropic",
  authHeaders: (key) => ({ "x-api-key": key }),
  headers: { "content-type": "application/json", "anthropic-version": anthropicVersion },
  body: (settings, system, user) => ({
    model: settings.model,
    temperature: 0,
    max_tokens: settings.limits.maxTokens,
    system,
    messages: [{ role: "user", content: user }]
  }),
  replyText: (envelope) => {
    const decoded = decodeEnvelope(envelope)
    if (Either.isLeft(decoded)) return Either.left(refused("not a Messages API response (content[].text)"))
    if (decoded.right.stop_reason === "max_tokens") return Either.left(refused("the reply was cut at maxTokens (stop_reason: max_tokens)"))
    const text = decoded.right.content.filter((b) => b.type === "text").map((b) => b.text ?? "").join("")
    return text === "" ? Either.left(refused("the reply has no text block")) : Either.right(text)
  }
}
