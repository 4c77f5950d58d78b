/**
 * Reading a checked response's body within the byte cap.
 */
import type * as HttpClientResponse from "@effect/platform/HttpClientResponse"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import type { SourceUrl } from "../Domain.js"
import { AmbiguousHeader, type CaptureError, TooLarge, TruncatedBody } from "../Errors.js"
import { transportError } from "./Transport.js"

/** Bodies with a Content-Length up to this size are read whole (cheapest); larger ones into one buffer as they arrive. */
const wholeReadBytes = 1024 * 1024

/** A transport failure while a framed body is read: the body was cut short, unless the address policy refused. */
const truncated = (source: SourceUrl, declared: number) => (error: Parameters<ReturnType<typeof transportError>>[0]) => {
  const refused = transportError(source)(error)
  return refused._tag === "ConnectionFailed"
    ? new TruncatedBody({ source, expectedBytes: declared, receivedBytes: null })
    : refused
}

/**
 * Reads the body within the cap. With a Content-Length (already checked
 * against the cap) the HTTP parser frames the body to exactly that length;
 * otherwise it is streamed and the request aborted as soon as the total passes
 * the cap. Memory holds the body once (plus one chunk): past 1 MiB, chunks are
 * copied into one buffer as they arrive rather than collected and concatenated
 * at the end, which would hold the body twice.
 */
export const readBody = (
  source: SourceUrl,
  response: HttpClientResponse.HttpClientResponse,
  declared: number | null,
  budgets: { readonly maxBytes: number }
): Effect.Effect<Buffer, CaptureError> => {
  if (declared !== null && declared > wholeReadBytes) {
    const body = Buffer.allocUnsafe(declared)
    let filled = 0
    return Stream.runForEachChunk(response.stream, (chunk) => {
      for (const piece of chunk) {
        // Never happens (the HTTP parser frames the body to its length); checked so a copy can never overrun.
        if (filled + piece.byteLength > declared) {
          return Effect.fail(new AmbiguousHeader({ source, header: "content-length", value: String(declared) }))
        }
        body.set(piece, filled)
        filled += piece.byteLength
      }
      return Effect.void
    }).pipe(
      Effect.catchTag("ResponseError", (error) => Effect.fail(truncated(source, declared)(error))),
      Effect.flatMap(() =>
        filled === declared
          ? Effect.succeed(body)
          : Effect.fail(new TruncatedBody({ source, expectedBytes: declared, receivedBytes: filled }))
      )
    )
  }
  if (declared !== null) {
    return response.arrayBuffer.pipe(
      Effect.mapError(truncated(source, declared)),
      Effect.flatMap((buffer) =>
        buffer.byteLength === declared
          ? Effect.succeed(Buffer.from(buffer))
          : Effect.fail(new TruncatedBody({ source, expectedBytes: declared, receivedBytes: buffer.byteLength }))
      )
    )
  }
  const chunks: Array<Uint8Array> = []
  let received = 0
  // Its pages become resident only as they are written, so the cap-sized buffer costs what arrived.
  let whole: Buffer | undefined
  return Stream.runForEachChunk(response.stream, (chunk) => {
    for (const piece of chunk) {
      if (received + piece.byteLength > budgets.maxBytes) {
        received += piece.byteLength
        return Effect.fail(
          new TooLarge({ source, maxBytes: budgets.maxBytes, declaredBytes: null, receivedBytes: received })
        )
      }
      if (whole === undefined && received + piece.byteLength > wholeReadBytes) {
        whole = Buffer.allocUnsafe(budgets.maxBytes)
        let at = 0
        for (const earlier of chunks) {
          whole.set(earlier, at)
          at += earlier.byteLength
        }
        chunks.length = 0
      }
      if (whole === undefined) chunks.push(piece)
      else whole.set(piece, received)
      received += piece.byteLength
    }
    return Effect.void
  }).pipe(
    Effect.catchTag("ResponseError", (error) => Effect.fail(transportError(source)(error))),
    Effect.map(() => (whole === undefined ? Buffer.concat(chunks, received) : whole.subarray(0, received)))
  )
}
