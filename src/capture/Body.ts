/**
 * Reading a checked response's body within the byte cap.
 */
import type * as HttpClientResponse from "@effect/platform/HttpClientResponse"
import { Effect, Stream } from "effect"
import type { SourceUrl } from "../Domain.js"
import { type CaptureError, TooLarge, TruncatedBody } from "../Errors.js"
import { transportError } from "./Transport.js"

/**
 * Reads the body within the cap. With a Content-Length (already checked
 * against the cap) the HTTP parser frames the body to exactly that length, so
 * it is read whole; otherwise it is streamed and the request aborted as soon
 * as the total passes the cap. Either way memory holds at most the cap plus
 * one chunk.
 */
export const readBody = (
  source: SourceUrl,
  response: HttpClientResponse.HttpClientResponse,
  declared: number | null,
  budgets: { readonly maxBytes: number }
): Effect.Effect<Buffer, CaptureError> => {
  if (declared !== null) {
    return response.arrayBuffer.pipe(
      Effect.mapError((error) => {
        const refused = transportError(source)(error)
        return refused._tag === "ConnectionFailed"
          ? new TruncatedBody({ source, expectedBytes: declared, receivedBytes: null })
          : refused
      }),
      Effect.flatMap((buffer) =>
        buffer.byteLength === declared
          ? Effect.succeed(Buffer.from(buffer))
          : Effect.fail(new TruncatedBody({ source, expectedBytes: declared, receivedBytes: buffer.byteLength }))
      )
    )
  }
  const chunks: Array<Uint8Array> = []
  let received = 0
  return Stream.runForEachChunk(response.stream, (chunk) => {
    for (const piece of chunk) {
      received += piece.byteLength
      if (received > budgets.maxBytes) {
        return Effect.fail(
          new TooLarge({ source, maxBytes: budgets.maxBytes, declaredBytes: null, receivedBytes: received })
        )
      }
      chunks.push(piece)
    }
    return Effect.void
  }).pipe(
    Effect.catchTag("ResponseError", (error) => Effect.fail(transportError(source)(error))),
    Effect.map(() => Buffer.concat(chunks, received))
  )
}
