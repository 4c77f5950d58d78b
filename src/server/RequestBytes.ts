/**
 * The body of a request whose answer format is bytes (`POST /v1/verify/answer?format=bedrock-stream`),
 * read once by the server within the request deadline and handed to the handler as it arrived. The
 * platform caches a request's text, not its bytes: a body read as text first could not be read
 * again as bytes (the read would wait for data already consumed), and text decoding would replace
 * invalid UTF-8 in binary messages.
 *
 * @since 0.4.0
 */
import * as Context from "effect/Context"
import { type AnswerFormat, answerFormats, isBinary } from "../answer/Formats.js"

/** The request body's bytes, where the route reads bytes. */
export class RequestBytes extends Context.Tag("citegate/server/RequestBytes")<RequestBytes, Uint8Array>() {}

/** Whether the request at `url` reads its body as bytes: the answer route with a binary `format`. */
export const readsBytes = (url: string): boolean => {
  const at = url.indexOf("?")
  if ((at === -1 ? url : url.slice(0, at)) !== "/v1/verify/answer" || at === -1) return false
  const format = new URLSearchParams(url.slice(at + 1)).get("format")
  return format !== null && (answerFormats as ReadonlyArray<string>).includes(format) && isBinary(format as AnswerFormat)
}
