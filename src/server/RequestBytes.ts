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

/**
 * Whether the request at `url` reads its body as bytes: the answer route with a binary `format`, and
 * either verify route with `sign=1` (a signed result names the exact bytes received, which a text
 * decoding does not keep when they are not valid UTF-8).
 */
export const readsBytes = (url: string): boolean => {
  const at = url.indexOf("?")
  const route = at === -1 ? url : url.slice(0, at)
  if ((route !== "/v1/verify/answer" && route !== "/v1/verify/report") || at === -1) return false
  const params = new URLSearchParams(url.slice(at + 1))
  if (params.get("sign") === "1") return true
  const format = params.get("format")
  return route === "/v1/verify/answer" && format !== null && (answerFormats as ReadonlyArray<string>).includes(format) &&
    isBinary(format as AnswerFormat)
}

/** The body as text, decoded as the platform decodes a text body (invalid UTF-8 replaced, a BOM kept). */
export const textOf = (bytes: Uint8Array): string => Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("utf8")
