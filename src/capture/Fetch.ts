/**
 * One GET of an approved source on the capture stage's own undici Agent
 * (`capture/Dispatcher.ts`, whose connector applies the address policy), its
 * status and headers checked (`capture/Response.ts`) and its body read within
 * the cap (`capture/Body.ts`).
 *
 * The request goes to the Agent directly rather than through a general HTTP
 * client: nothing is added to the request but the stage's own headers, and a
 * capture pays for no request object, tracing headers, per-request abort
 * controller or body stream adapter (docs/performance.md). Interruption (the
 * capture's one deadline) aborts the request at any point: while connecting,
 * waiting for headers, or reading the body.
 */
import type * as Undici from "@effect/platform-node/Undici"
import * as Effect from "effect/Effect"
import { EventEmitter } from "node:events"
import type { Readable } from "node:stream"
import { type CaptureError, InvalidEncoding } from "../Errors.js"
import { decodePlainText } from "../extract/Extraction.js"
import { readBody, readBodyInto } from "./Body.js"
import { checked, checkResponse } from "./Response.js"
import { transportError } from "./Transport.js"
import type { Target } from "./UrlPolicy.js"

/** What a fetch checks a response against. */
export interface FetchPolicy {
  readonly maxBytes: number
  readonly contentTypes: ReadonlyArray<string>
  /** The request's headers, the same for every source. */
  readonly headers: Readonly<Record<string, string>>
}

/** A body that has not been read to its end is destroyed, which aborts its request and closes the socket. */
const release = (body: Readable) =>
  Effect.sync(() => {
    if (!body.readableEnded) body.destroy()
  })

const ignore = () => undefined

/** The request's options: the capture's one deadline bounds everything; undici's own timers would only reset on every chunk. */
const requestOptions = (target: Target, headers: FetchPolicy["headers"], signal: EventEmitter) => ({
  origin: target.origin,
  path: target.path,
  method: "GET" as const,
  headers,
  signal,
  headersTimeout: 60 * 60 * 1000,
  bodyTimeout: 0
})

/**
 * Sends the request; succeeds with the status, headers and the unread body once the headers arrive.
 * Its abort signal is an EventEmitter (undici takes either that or an AbortSignal): an
 * AbortController per request, with its EventTarget, cost more than the rest of this step.
 */
const send = (dispatcher: Undici.Dispatcher, target: Target, headers: FetchPolicy["headers"]) =>
  Effect.async<Undici.Dispatcher.ResponseData, CaptureError>((resume) => {
    const signal = new EventEmitter()
    let aborted = false
    dispatcher.request(requestOptions(target, headers, signal), (error, data) => {
      if (error !== null) return resume(Effect.fail(transportError(target.source)(error)))
      // A body abandoned by interruption may still fail later: never an unhandled error.
      data.body.on("error", ignore)
      if (aborted) data.body.destroy()
      else resume(Effect.succeed(data))
    })
    // Interruption: undici aborts the request wherever it is (connecting, waiting for headers).
    return Effect.sync(() => {
      aborted = true
      signal.emit("abort")
    })
  })

/** The checked body of one source and the content type it was sent with. */
export const fetchBody = (
  dispatcher: Undici.Dispatcher,
  target: Target,
  policy: FetchPolicy
): Effect.Effect<{ readonly contentType: string; readonly body: Buffer }, CaptureError> =>
  Effect.uninterruptibleMask((restore) =>
    Effect.flatMap(restore(send(dispatcher, target, policy.headers)), (response) =>
      restore(
        Effect.flatMap(
          checkResponse(target.source, { status: response.statusCode, headers: response.headers }, policy),
          ({ contentType, declared }) =>
            Effect.map(readBody(target.source, response.body, declared, policy), (body) => ({ contentType, body }))
        )
      ).pipe(Effect.ensuring(release(response.body))))
  )

/** A `text/plain` source: its body, the content type it was sent with, and its text. */
export interface FetchedText {
  readonly contentType: string
  readonly body: Buffer
  readonly text: string
}

/**
 * `fetchBody` and the `text/plain` decode under the capture's one deadline, as plain callbacks:
 * `done` is called once with the fetched text or the typed refusal, unless the returned `stop` is
 * called first (then never). The same checks, in the same order, with the same typed errors: the
 * request's transport errors, the response policy (`checked`), the body within the cap
 * (`readBodyInto`), fatal UTF-8 decoding (`decodePlainText`, an invalid body `InvalidEncoding`).
 * When `milliseconds` pass first the request is aborted wherever it is (connecting, waiting for
 * headers, reading the body) and the result is `onTimeout()`; `stop` aborts it the same way.
 * A body not read to its end is destroyed (its socket closed); a complete one leaves its connection
 * for the next request.
 */
export const startPlainText = (
  dispatcher: Undici.Dispatcher,
  target: Target,
  policy: FetchPolicy,
  milliseconds: number,
  onTimeout: () => CaptureError,
  done: (result: FetchedText | CaptureError) => void
): () => void => {
  const source = target.source
  const signal = new EventEmitter()
  let settled = false
  // Before the headers: abort the request. After: stop reading and destroy the body.
  let stop: () => void = () => signal.emit("abort")
  const settle = (result: FetchedText | CaptureError) => {
    settled = true
    clearTimeout(timer)
    done(result)
  }
  const timer = setTimeout(() => {
    if (settled) return
    settled = true
    stop()
    done(onTimeout())
  }, milliseconds)
  dispatcher.request(requestOptions(target, policy.headers, signal), (error, data) => {
    if (error !== null) {
      if (!settled) settle(transportError(source)(error))
      return
    }
    const body = data.body
    // A body abandoned by interruption may still fail later: never an unhandled error.
    body.on("error", ignore)
    if (settled) return void body.destroy()
    const head = checked(source, { status: data.statusCode, headers: data.headers }, policy)
    if ("_tag" in head) {
      body.destroy()
      return settle(head)
    }
    stop = readBodyInto(source, body, head.declared, policy, (result) => {
      if (settled) return
      if (!(result instanceof Uint8Array)) {
        if (!body.readableEnded) body.destroy()
        return settle(result)
      }
      let text: string
      try {
        text = decodePlainText(result)
      } catch {
        return settle(new InvalidEncoding({ source, byteLength: result.byteLength }))
      }
      settle({ contentType: head.contentType, body: result, text })
    })
  })
  return () => {
    if (settled) return
    settled = true
    clearTimeout(timer)
    stop()
  }
}

/**
 * `startPlainText` as one asynchronous step, for a stage that accepts `text/plain` only (nothing to
 * extract). The general path (`Deadline.within` over `fetchBody` and the extraction runner) makes a
 * fiber for the deadline and an Effect step per stage of the request; for a small source they cost
 * more than the request (docs/performance.md). Interruption aborts the request wherever it is.
 */
export const fetchPlainTextWithin = (
  dispatcher: Undici.Dispatcher,
  target: Target,
  policy: FetchPolicy,
  milliseconds: number,
  onTimeout: () => CaptureError
): Effect.Effect<FetchedText, CaptureError> =>
  Effect.async<FetchedText, CaptureError>((resume) => {
    const stop = startPlainText(dispatcher, target, policy, milliseconds, onTimeout, (result) =>
      resume("_tag" in result ? Effect.fail(result) : Effect.succeed(result)))
    return Effect.sync(stop)
  })
