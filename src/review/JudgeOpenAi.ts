/**
 * The judge over an OpenAI-compatible chat-completions endpoint (`review.judge.provider: "openai"`):
 * `POST {endpoint}` with `Authorization: Bearer <key>`, temperature 0 and a JSON-object response
 * format; the verdicts are the first choice's message content.
 *
 * The envelope is decoded leniently (providers add fields such as `usage` and `id`), the verdicts in
 * its content strictly (JudgePrompt.decodeVerdicts).
 *
 * @since 0.3.0
 */
import * as Either from "effect/Either"
import * as Schema from "effect/Schema"
import { JudgeReplyInvalid } from "../errors/Judge.js"
import type { Protocol } from "./JudgeHttp.js"

const Envelope = Schema.Struct({
  choices: Schema.NonEmptyArray(Schema.Struct({
    message: Schema.Struct({ content: Schema.NullOr(Schema.String) }),
    finish_reason: Schema.optional(Schema.NullOr(Schema.String))
  }))
})

const decodeEnvelope = Schema.decodeUnknownEither(Envelope, { errors: "all" })

const refused = (message: string) => new JudgeReplyInvalid({ issues: [{ path: "", message }] })

export const protocol: Protocol = {
  provider: "openai",
  authHeaders: (key) => ({ authorization: `Bearer ${key}` }),
  headers: { "content-type": "application/json" },
  body: (settings, system, user) => ({
    model: settings.model,
    temperature: 0,
    max_tokens: settings.limits.maxTokens,
    response_format: { type: "json_object" },
    messages: [{ role: "system", content: system }, { role: "user", content: user }]
  }),
  replyText: (envelope) => {
    const decoded = decodeEnvelope(envelope)
    if (Either.isLeft(decoded)) return Either.left(refused("not a chat-completions response (choices[0].message.content)"))
    const choice = decoded.right.choices[0]
    if (choice.finish_reason === "length") return Either.left(refused("the reply was cut at maxTokens (finish_reason: length)"))
    return choice.message.content === null ? Either.left(refused("the reply has no content")) : Either.right(choice.message.content)
  }
}
