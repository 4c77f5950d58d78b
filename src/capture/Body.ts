/**
 * Reading a checked response's body within the byte cap, straight from the
 * HTTP client's body stream: one listener per chunk, no stream library in between.
 */
import * as Effect from "effect/Effect"
import type { Readable } from "node:stream"
import type { SourceUrl } from "../Domain.js"
import { AmbiguousHeader, type CaptureError, TooLarge, TruncatedBody } from "../Errors.js"
import { transportError } from "./Transport.js"

/** Bodies with a Content-Length up to this size are read whole; larger ones must fill the announced length exactly. */
const wholeReadBytes = 1024 * 1024

/** A transport failure while a framed body is read: the body was cut short, unless the address policy refused. */
const truncated = (source: SourceUrl, declared: number) => (error: Error) => {
  const refused = transportError(source)(error)
  return refused._tag === "ConnectionFailed"
    ? new TruncatedBody({ source, expectedBytes: declared, receivedBytes: null })
    : refused
}

/** What one chunk does to the body being read: nothing (kept), or the typed refusal that ends the read. */
interface Sink {
  readonly push: (piece: Uint8Array) => CaptureError | undefined
  readonly end: () => Buffer | CaptureError
  readonly failed: (error: Error) => CaptureError
}

/**
 * An announced length. The HTTP parser frames the body to exactly that length,
 * so the bytes go straight into one buffer of that size. Up to 1 MiB a body of
 * another length is `TruncatedBody` with the count received; past it a piece
 * that would overrun the buffer is refused as `AmbiguousHeader` (never happens
 * over HTTP; checked so a copy can never overrun).
 */
const declaredSink = (source: SourceUrl, declared: number): Sink => {
  const body = Buffer.allocUnsafe(declared)
  let received = 0
  return {
    push: (piece) => {
      if (received + piece.byteLength > declared) {
        if (declared > wholeReadBytes) return new AmbiguousHeader({ source, header: "content-length", value: String(declared) })
      } else body.set(piece, received)
      received += piece.byteLength
      return undefined
    },
    end: () =>
      received === declared ? body : new TruncatedBody({ source, expectedBytes: declared, receivedBytes: received }),
    failed: truncated(source, declared)
  }
}

/**
 * No announced length: streamed against the cap, which ends the read as soon as
 * the total passes it. Memory holds the body once (plus one chunk): past 1 MiB,
 * chunks are copied into one buffer as they arrive rather than collected and
 * concatenated at the end, which would hold the body twice.
 */
const cappedSink = (source: SourceUrl, maxBytes: number): Sink => {
  const chunks: Array<Uint8Array> = []
  let received = 0
  // Its pages become resident only as they are written, so the cap-sized buffer costs what arrived.
  let whole: Buffer | undefined
  return {
    push: (piece) => {
      if (received + piece.byteLength > maxBytes) {
        received += piece.byteLength
        return new TooLarge({ source, maxBytes, declaredBytes: null, receivedBytes: received })
      }
      if (whole === undefined && received + piece.byteLength > wholeReadBytes) {
        whole = Buffer.allocUnsafe(maxBytes)
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
      return undefined
    },
    end: () => (whole === undefined ? Buffer.concat(chunks, received) : whole.subarray(0, received)),
    failed: transportError(source)
  }
}

const ignore = () => undefined

/**
 * Reads the body within the cap (see the two sinks above) and calls `done` once
 * with the body or the typed refusal. A refusal destroys the stream, which
 * aborts the request and closes its socket. The returned function stops the
 * read (detaches and destroys the stream); it is what interruption calls.
 */
export const readBodyInto = (
  source: SourceUrl,
  body: Readable,
  declared: number | null,
  budgets: { readonly maxBytes: number },
  done: (result: Buffer | CaptureError) => void
): () => void => {
  const sink = declared !== null ? declaredSink(source, declared) : cappedSink(source, budgets.maxBytes)
  const detach = () => {
    body.off("data", onData)
    body.off("end", onEnd)
    body.off("error", onError)
  }
  const finish = (result: Buffer | CaptureError) => {
    detach()
    done(result)
  }
  const onData = (piece: Uint8Array) => {
    const refused = sink.push(piece)
    if (refused === undefined) return
    finish(refused)
    body.destroy()
  }
  const onEnd = () => finish(sink.end())
  const onError = (error: Error) => finish(sink.failed(error))
  // Destroying the stream emits an error after this read has let go of it: never an unhandled one.
  body.on("error", ignore)
  body.on("data", onData)
  body.once("end", onEnd)
  body.once("error", onError)
  return () => {
    detach()
    body.destroy()
  }
}

/** `readBodyInto` as an effect: interruption (the capture's deadline) stops the read and destroys the stream. */
export const readBody = (
  source: SourceUrl,
  body: Readable,
  declared: number | null,
  budgets: { readonly maxBytes: number }
): Effect.Effect<Buffer, CaptureError> =>
  Effect.async<Buffer, CaptureError>((resume) => {
    const stop = readBodyInto(source, body, declared, budgets, (result) =>
      resume(result instanceof Uint8Array ? Effect.succeed(result) : Effect.fail(result)))
    return Effect.sync(stop)
  })
