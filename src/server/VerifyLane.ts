/**
 * A lighter path for the service's busiest request, `POST /v1/verify/report`, in front of the
 * platform's router: a plain request (one well-formed bearer token of a configured token that lists
 * the run, a declared body within the limit, known query parameters, no `sign=1`) is answered here
 * with one fiber, without the router, the HttpApi decoding, the middleware chain and their fibers,
 * which cost about as much CPU as the verification itself (docs/performance.md, 2026-12-02).
 *
 * Everything else is handed to the platform's app untouched, before a byte of the body is read: any
 * other route or method, a missing, repeated, malformed or unknown token, a session cookie, a token
 * that does not list the run, an unknown run, a chunked or oversized body, an unknown or repeated
 * query parameter, `sign=1`, and every request while telemetry is on (its spans and metrics are the
 * platform's). What it answers is what the general path answers for the same request, byte for byte
 * (test/server.verifyLane.test.ts): the report route's responder (`Handlers.ReportResponder`, the
 * same kept Gates and review logs), the same response headers (`x-request-id`), the request
 * deadline (503 `RequestTimeout`, the connection closed), the same log line, and a client that goes
 * away interrupting the work.
 *
 * @since 0.4.0
 */
import type * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import { causeResponse } from "@effect/platform/HttpServerError"
import * as HttpServerResponseModule from "@effect/platform/HttpServerResponse"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as DefaultServices from "effect/DefaultServices"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as FiberId from "effect/FiberId"
import * as FiberRef from "effect/FiberRef"
import * as FiberRefs from "effect/FiberRefs"
import * as HashMap from "effect/HashMap"
import * as List from "effect/List"
import * as LogSpan from "effect/LogSpan"
import * as Runtime from "effect/Runtime"
import * as Schema from "effect/Schema"
import { randomUUID } from "node:crypto"
import type * as Http from "node:http"
import type { PipelineConfig, ResolvedServer } from "../Config.js"
import * as Config from "../Config.js"
import { RequestTimeout, RunNotFound } from "../Errors.js"
import { ReportParams } from "./Api.js"
import type { Principal } from "./Auth.js"
import { ReportResponder } from "./Handlers.js"
import { Runs } from "./Runs.js"

/** The event the server emits (besides `request`) for a request this lane took: open requests are counted on both. */
export const laneEvent = "citegate:lane-request"

/**
 * Puts the lane in front of the server's `request` listeners (the platform's handler): a request
 * `take` accepts is emitted as `laneEvent` instead; `handOver` gives one back to them, unread.
 */
export const inFrontOf = (server: Http.Server) => {
  let take: ((request: Http.IncomingMessage, response: Http.ServerResponse) => boolean) | undefined
  const emit = server.emit as (this: Http.Server, event: string | symbol, ...args: Array<any>) => boolean
  server.emit = function(this: Http.Server, event: string | symbol, ...args: Array<any>) {
    if (event === "request" && take !== undefined && take(args[0], args[1])) return emit.call(this, laneEvent, ...args)
    return emit.call(this, event, ...args)
  } as typeof server.emit
  return {
    take: (lane: typeof take): void => {
      take = lane
    },
    handOver: (request: Http.IncomingMessage, response: Http.ServerResponse): void => {
      emit.call(server, "request", request, response)
    }
  }
}

/** Requests this process's lanes took, and of those the ones handed back to the general path (unknown runs). */
export const counts = { taken: 0, handedOver: 0 }

/** The route this lane answers. */
export const lanePath = "/v1/verify/report"

const knownParams = new Set(["run", "mode", "sign"])
const decodeParams = Schema.decodeUnknownEither(ReportParams)

export interface LaneOptions {
  readonly limits: ResolvedServer
  readonly config: PipelineConfig
  /** The principal of an Authorization header (`Auth.bearerPrincipal`). */
  readonly principalOf: (authorization: string | undefined) => Principal | undefined
  /** The services the verification runs with (the same as the route's). */
  readonly runtime: Runtime.Runtime<Runs | ReportResponder>
  /** The platform's handling of a request (the body not read). */
  readonly handOver: (request: Http.IncomingMessage, response: Http.ServerResponse) => void
  /** A refusal as the middleware renders it (`Server.errorResponse`). */
  readonly errorResponse: (error: RequestTimeout | RunNotFound, status: number) => HttpServerResponse.HttpServerResponse
}

/** How many Authorization headers a request has (`headersDistinct` would build every header's list to say). */
const authorizationHeaders = (raw: ReadonlyArray<string>): number => {
  let count = 0
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i]!
    if (name.length === 13 && name.toLowerCase() === "authorization") count++
  }
  return count
}

/** The run and mode of a plain request, or `undefined` (not this lane's). */
const plain = (request: Http.IncomingMessage, options: LaneOptions) => {
  if (request.method !== "POST") return undefined
  const url = request.url ?? ""
  const at = url.indexOf("?")
  if (at === -1 || url.slice(0, at) !== lanePath) return undefined
  const headers = request.headers
  if (headers["transfer-encoding"] !== undefined) return undefined
  const declared = headers["content-length"]
  if (declared === undefined) return undefined
  const declaredBytes = Number(declared)
  if (!(declaredBytes > 0 && declaredBytes <= options.limits.maxBodyBytes)) return undefined
  // A repeated Authorization header (Node keeps the first) is the general path's 401.
  if (authorizationHeaders(request.rawHeaders) !== 1) return undefined
  const principal = options.principalOf(headers["authorization"])
  if (principal === undefined) return undefined
  const params: Record<string, string> = {}
  for (const [key, value] of new URLSearchParams(url.slice(at + 1))) {
    if (!knownParams.has(key) || key in params) return undefined
    params[key] = value
  }
  const decoded = decodeParams(params)
  if (Either.isLeft(decoded) || decoded.right.sign === "1") return undefined
  const runId = decoded.right.run
  // A run the token does not list may still be its own (the general path looks at the owner).
  if (principal.runs !== "*" && !principal.runs.has(runId)) return undefined
  return { runId, mode: decoded.right.mode ?? Config.resolvedMode(options.config), path: url.slice(0, at) }
}

/** Writes a response whose body is bytes or empty (every response this lane makes but the verified result's). */
const write = (response: Http.ServerResponse, answer: HttpServerResponse.HttpServerResponse) => {
  if (response.writableEnded) return
  response.writeHead(answer.status, answer.headers)
  const body = answer.body
  if (body._tag === "Uint8Array") response.end(body.body)
  else response.end()
}

/**
 * Writes the route's JSON text as `HttpServerResponse.text(json, { contentType: "application/json" })`
 * with its `x-request-id` would be written (the same status, headers in the same order, the same
 * bytes), without encoding the text to a separate array first: Node writes the head and the text in
 * one `write`. JSON text has no lone surrogates, so its UTF-8 length is `Buffer.byteLength`.
 */
const writeJson = (response: Http.ServerResponse, json: string, requestId: string) => {
  if (response.writableEnded) return
  response.writeHead(200, {
    "content-type": "application/json",
    "content-length": String(Buffer.byteLength(json, "utf8")),
    "x-request-id": requestId
  })
  response.end(json, "utf8")
}

/** The fiber's log annotation (`requestId`) and log span (`request`), as `Effect.annotateLogs` and `Effect.withLogSpan` around it would set them. */
const requestRefs = (requestId: string) => (refs: FiberRefs.FiberRefs, fiberId: FiberId.Runtime): FiberRefs.FiberRefs => {
  const clock = Context.get(FiberRefs.getOrDefault(refs, DefaultServices.currentServices), Clock.Clock)
  return FiberRefs.updateManyAs(refs, {
    forkAs: fiberId,
    entries: [
      [FiberRef.currentLogAnnotations, [[fiberId, HashMap.set(FiberRefs.getOrDefault(refs, FiberRef.currentLogAnnotations), "requestId", requestId)]]],
      [FiberRef.currentLogSpan, [[fiberId, List.prepend(FiberRefs.getOrDefault(refs, FiberRef.currentLogSpan), LogSpan.make("request", clock.unsafeCurrentTimeMillis()))]]]
    ]
  })
}

/**
 * The lane: `true` when it took the request (it answers it, or hands it over itself before reading
 * its body), `false` when the platform should handle it.
 */
export const make = (options: LaneOptions) => {
  const runFork = Runtime.runFork(options.runtime)
  const timeoutMs = options.limits.requestTimeoutMs
  return (request: Http.IncomingMessage, response: Http.ServerResponse): boolean => {
    const lane = plain(request, options)
    if (lane === undefined) return false
    counts.taken++
    const requestId = randomUUID()
    const started = performance.now()
    const tagged = (answer: HttpServerResponse.HttpServerResponse) => HttpServerResponseModule.setHeader(answer, "x-request-id", requestId)
    // The access-log line, as the middleware writes it (its annotations, its span). It is the fiber's
    // last step, so the annotations are set, not set and restored around the line.
    const logged = (status: number) =>
      Effect.zipRight(
        FiberRef.update(FiberRef.currentLogAnnotations, (annotations) =>
          HashMap.set(HashMap.set(HashMap.set(HashMap.set(annotations, "method", "POST"), "path", lane.path), "status", status), "ms", Math.round(performance.now() - started))),
        Effect.logInfo("request")
      )
    let responding = false
    let handedOver = false
    let reading = false
    const respond = (answer: HttpServerResponse.HttpServerResponse | string) =>
      Effect.suspend(() => {
        if (responding) return Effect.void
        responding = true
        clearTimeout(timer)
        if (typeof answer === "string") return Effect.zipRight(logged(200), Effect.sync(() => writeJson(response, answer, requestId)))
        return Effect.zipRight(logged(answer.status), Effect.sync(() => write(response, tagged(answer))))
      })
    const body = Effect.async<Buffer | undefined>((resume) => {
      const chunks: Array<Buffer> = []
      const onData = (chunk: Buffer) => chunks.push(chunk)
      const onEnd = () => {
        reading = false
        resume(Effect.succeed(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks)))
      }
      // The client went away mid-body: nothing to answer (the general path's work is interrupted then too).
      const onAborted = () => {
        reading = false
        resume(Effect.succeed(undefined))
      }
      reading = true
      request.on("data", onData).once("end", onEnd).once("aborted", onAborted).once("error", onAborted)
      return Effect.sync(() => {
        request.off("data", onData).off("end", onEnd).off("aborted", onAborted).off("error", onAborted)
      })
    })
    const program = Effect.gen(function*() {
      const run = yield* Effect.exit((yield* Runs).get(lane.runId))
      if (Exit.isFailure(run)) {
        // Not found (or not readable): the general path decides, with the body still unread. A
        // look-up that died is handed over too, so that the general path answers it (a 500 at once).
        handedOver = true
        counts.handedOver++
        clearTimeout(timer)
        return options.handOver(request, response)
      }
      const bytes = yield* body
      if (bytes === undefined) return
      // Decoded as the platform decodes a text body (invalid UTF-8 replaced, a BOM kept).
      const text = bytes.toString("utf8")
      // The JSON text is the route's 200 (`HttpServerResponse.text`, written by `writeJson`).
      const answer: HttpServerResponse.HttpServerResponse | string = yield* (yield* ReportResponder).respond(run.value, lane.mode, text).pipe(
        // The run went away after it was looked up: the route's 404.
        Effect.catchTag("RunNotFound", (error) => Effect.succeed(options.errorResponse(error, 404))),
        Effect.catchAllCause((cause) =>
          Effect.flatMap(causeResponse(cause), ([answer]) =>
            answer.status >= 500 ? Effect.as(Effect.logError("request failed", cause), answer) : Effect.succeed(answer)
          )
        )
      )
      yield* respond(answer)
    })
    // The request deadline: as the middleware's, from the request's arrival until the response starts.
    const timer = setTimeout(() => {
      if (responding || handedOver) return
      const timedOut = HttpServerResponseModule.setHeader(options.errorResponse(new RequestTimeout({ timeoutMs }), 503), "connection", "close")
      // A body still arriving is not waited for: the 503 closes the connection.
      if (reading) fiber.unsafeInterruptAsFork(FiberId.none)
      runFork(
        Effect.zipRight(reading ? Effect.void : Fiber.interrupt(fiber), respond(timedOut)).pipe(
          Effect.annotateLogs("requestId", requestId),
          Effect.withLogSpan("request")
        )
      )
    }, timeoutMs)
    // After the timer: the fiber runs synchronously as far as it can, and may clear it.
    const fiber = runFork(program, { updateRefs: requestRefs(requestId) })
    response.once("close", () => {
      clearTimeout(timer)
      if (!response.writableEnded && !handedOver) fiber.unsafeInterruptAsFork(FiberId.none)
    })
    return true
  }
}
