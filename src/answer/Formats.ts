/**
 * Every answer format citegate reads, by its `--format-in` / `?format=` name, bound to the run's
 * manifest: one dispatcher for the CLI, the service and the audit.
 *
 * @since 0.4.0
 */
import * as Either from "effect/Either"
import { type AnswerError, InvalidAnswer } from "../Errors.js"
import type { Manifest } from "../Manifest.js"
import * as Answer from "./Answer.js"
import * as Anthropic from "./Anthropic.js"
import * as AnthropicSse from "./AnthropicSse.js"
import * as Bedrock from "./Bedrock.js"
import * as BedrockStream from "./BedrockStream.js"
import * as Cohere from "./Cohere.js"
import * as Evi1 from "./Evi1.js"
import * as Gemini from "./Gemini.js"
import * as OpenAI from "./OpenAI.js"
import type { BoundAnswer } from "./Records.js"

export const answerFormats = [
  "json",
  "evi1",
  "anthropic",
  "anthropic-sse",
  "bedrock",
  "bedrock-stream",
  "gemini",
  "openai",
  "openai-chat",
  "cohere"
] as const
export type AnswerFormat = (typeof answerFormats)[number]

/** The formats whose input is bytes, not UTF-8 text (read a file or request body as bytes for them). */
export const binaryFormats: ReadonlyArray<AnswerFormat> = ["bedrock-stream"]

/** Whether `format` reads bytes (`binaryFormats`). */
export const isBinary = (format: AnswerFormat): boolean => binaryFormats.includes(format)

const utf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true })

/** One line per format, for `--format-in` help. */
export const answerFormatHelp =
  "json (citegate.answer/1), evi1 (VeriQuote's plain text), anthropic (a Messages API response with citations), " +
  "anthropic-sse (a Messages API event stream, as streamed), " +
  "bedrock (a Converse response with citationsContent), bedrock-stream (a ConverseStream body: AWS event stream messages, as streamed), gemini (a generateContent response with groundingMetadata), " +
  "openai (a Responses API response with annotations), openai-chat (a Chat Completions response with annotations), " +
  "cohere (a v2 Chat response with citations); openai, openai-chat and cohere cite whole documents only (answers.citations)"

/**
 * Decode `input` in `format` and bind it to the manifest. Text formats take a string (bytes are
 * decoded as strict UTF-8); `bedrock-stream` takes bytes (a string is taken as its UTF-8 bytes).
 */
export const bind = (
  format: AnswerFormat,
  input: string | Uint8Array,
  manifest: Manifest,
  options: { readonly manifestDigest?: string | undefined }
): Either.Either<BoundAnswer, AnswerError> => {
  if (format === "bedrock-stream") {
    return BedrockStream.fromEventStream(typeof input === "string" ? new TextEncoder().encode(input) : input, manifest, options)
  }
  let text: string
  if (typeof input === "string") text = input
  else {
    try {
      text = utf8.decode(input)
    } catch {
      return Either.left(new InvalidAnswer({ issues: [{ path: [], message: "is not valid UTF-8" }] }))
    }
  }
  switch (format) {
    case "json":
      return Answer.fromJson(text, manifest, options)
    case "evi1":
      return Evi1.decode(text, manifest, options)
    case "anthropic":
      return Anthropic.fromJson(text, manifest, options)
    case "anthropic-sse":
      return AnthropicSse.fromSse(text, manifest, options)
    case "bedrock":
      return Bedrock.fromJson(text, manifest, options)
    case "gemini":
      return Gemini.fromJson(text, manifest, options)
    case "openai":
      return OpenAI.fromJson(text, manifest, options)
    case "openai-chat":
      return OpenAI.chatFromJson(text, manifest, options)
    case "cohere":
      return Cohere.fromJson(text, manifest, options)
  }
}
