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
import type { CaptureError } from "../Errors.js"
import { readBody } from "./Body.js"
import { checkResponse } from "./Response.js"
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

/**
 * Sends the request; succeeds with the status, headers and the unread body once the headers arrive.
 * Its abort signal is an EventEmitter (undici takes either that or an AbortSignal): an
 * AbortController per request, with its EventTarget, cost more than the rest of this step.
 */
const send = (dispatcher: Undici.Dispatcher, target: Target, headers: FetchPolicy["headers"]) =>
  Effect.async<Undici.Dispatcher.ResponseData, CaptureError>((resume) => {
    const signal = new EventEmitter()
    let aborted = false
    dispatcher.request({
      origin: target.origin,
      path: target.path,
      method: "GET",
      headers,
      signal,
      // The capture's one deadline bounds everything; these would only reset on every chunk.
      headersTimeout: 60 * 60 * 1000,
      bodyTimeout: 0
    }, (error, data) => {
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
