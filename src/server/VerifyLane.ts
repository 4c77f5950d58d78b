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
 * away interrupting the work. With verification threads (`server.verifyThreads`, VerifyThreads.ts)
 * a request whose run is found at once is verified on a thread instead; its answer is written here
 * as the warm path's, and anything but a 200 from the thread is answered here from the start. A
 * thread's verification is not interrupted when its client leaves: its answer is dropped.
 *
 * @since 0.4.0
 */
import type * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import { causeResponse } from "@effect/platform/HttpServerError"
import * as HttpServerResponseModule from "@effect/platform/HttpServerResponse"
import * as Cause from "effect/Cause"
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
import * as HashSet from "effect/HashSet"
import * as Inspectable from "effect/Inspectable"
import * as List from "effect/List"
import * as LogLevel from "effect/LogLevel"
import * as LogSpan from "effect/LogSpan"
import * as Runtime from "effect/Runtime"
import * as Schema from "effect/Schema"
import { randomUUID } from "node:crypto"
import type * as Http from "node:http"
import type { PipelineConfig, ResolvedServer } from "../Config.js"
import type { Mode } from "../Domain.js"
import * as Config from "../Config.js"
import { RequestTimeout, RunNotFound } from "../Errors.js"
import { ReportParams } from "./Api.js"
import type { Principal } from "./Auth.js"
import * as PostgresStamps from "../store/PostgresStamps.js"
import { ReportResponder, type ReportResponderShape } from "./Handlers.js"
import { type RunFound, type RunView, Runs } from "./Runs.js"
import type * as VerifyThreads from "./VerifyThreads.js"

/** A request's run and body when the lane's fiber starts with them, and the stamps its look-up took. */
interface Known {
  readonly run: RunView
  readonly bytes: Buffer
  readonly taken?: PostgresStamps.Taken | undefined
}

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
  /** Verification threads (`server.verifyThreads`, VerifyThreads.ts): a warm-path request is verified there when one takes it. */
  readonly threads?: VerifyThreads.Pool | undefined
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

/** Reads a request's body; `onBytes` gets it, or `undefined` when the client goes away first. Returns what stops the reading. */
const readBody = (request: Http.IncomingMessage, onBytes: (bytes: Buffer | undefined) => void) => {
  const chunks: Array<Buffer> = []
  const onData = (chunk: Buffer) => chunks.push(chunk)
  const onEnd = () => onBytes(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks))
  // The client went away mid-body: nothing to answer (the general path's work is interrupted then too).
  const onAborted = () => onBytes(undefined)
  request.on("data", onData).once("end", onEnd).once("aborted", onAborted).once("error", onAborted)
  return () => {
    request.off("data", onData).off("end", onEnd).off("aborted", onAborted).off("error", onAborted)
  }
}

/** The route's answer to a body: its JSON text (the route's 200, written by `writeJson`) or a refusal. */
const answerOf = (options: LaneOptions, run: RunView, mode: Mode, bytes: Buffer, tryWarm: boolean) =>
  Effect.flatMap(ReportResponder, (responder) => {
    // Decoded as the platform decodes a text body (invalid UTF-8 replaced, a BOM kept).
    const text = bytes.toString("utf8")
    if (!tryWarm) return responder.respond(run, mode, text)
    // After an effectful look-up (PostgreSQL): a warm verification at once, with the stamps the
    // look-up took ahead (no second statement); anything else as before.
    return Effect.flatMap(FiberRef.get(PostgresStamps.taken), (got) => {
      const warm = warmHere(responder, run, mode, text, got)
      if (warm === undefined) return responder.respond(run, mode, text)
      synchronous.afterLookUp++
      return Effect.succeed(warm)
    })
  }).pipe(
      Effect.map((json): HttpServerResponse.HttpServerResponse | string => json),
      // The run went away after it was looked up: the route's 404.
      Effect.catchTag("RunNotFound", (error) => Effect.succeed(options.errorResponse(error, 404))),
      Effect.catchAllCause((cause) =>
        Effect.flatMap(causeResponse(cause), ([answer]) =>
          answer.status >= 500 ? Effect.as(Effect.logError("request failed", cause), answer) : Effect.succeed(answer)
        )
      )
    )

/** `annotations` with `entries` set, in order. */
const annotate = (annotations: HashMap.HashMap<string, unknown>, entries: ReadonlyArray<readonly [string, unknown]>) => {
  for (const [key, value] of entries) annotations = HashMap.set(annotations, key, value)
  return annotations
}

/**
 * The access-log line of a request answered without a fiber (`answerNow`), as `Effect.logInfo`
 * would write it at the end of the lane's fiber: its refs (the runtime's, with the request's
 * annotation and span as `requestRefs` sets them, then the middleware's annotations), its loggers
 * and level, and a fiber id of its own.
 */
const logNow = (refs: FiberRefs.FiberRefs, requestId: string, spanStart: number, annotations: ReadonlyArray<readonly [string, unknown]>) => {
  if (LogLevel.greaterThan(FiberRefs.getOrDefault(refs, FiberRef.currentMinimumLogLevel), LogLevel.Info)) return
  const loggers = FiberRefs.getOrDefault(refs, FiberRef.currentLoggers)
  if (HashSet.size(loggers) === 0) return
  const annotated = annotate(HashMap.set(FiberRefs.getOrDefault(refs, FiberRef.currentLogAnnotations), "requestId", requestId as unknown), annotations)
  const spans = List.prepend(FiberRefs.getOrDefault(refs, FiberRef.currentLogSpan), LogSpan.make("request", spanStart))
  const clock = Context.get(FiberRefs.getOrDefault(refs, DefaultServices.currentServices), Clock.Clock)
  const fiberId = FiberId.unsafeMake()
  const date = new Date(clock.unsafeCurrentTimeMillis())
  Inspectable.withRedactableContext(refs, () => {
    for (const logger of loggers) {
      logger.log({ fiberId, logLevel: LogLevel.Info, message: ["request"], cause: Cause.empty, context: refs, spans, annotations: annotated, date })
    }
  })
}

/** `logNow`, or `false` when a logger threw: inside the fiber that is a defect the general path answers (500). */
const loggedNow = (...args: Parameters<typeof logNow>): boolean => {
  try {
    logNow(...args)
    return true
  } catch {
    return false
  }
}

/**
 * Requests answered by `ReportResponderShape.respondWarm`: without a fiber (`answered`), and
 * right after a run look-up that took a query (PostgreSQL), with the stamps it took, without a
 * fiber or in the lane's (`afterLookUp`); of those without a fiber, by a verification thread (`threads`). The equivalence tests read it.
 */
export const synchronous = { answered: 0, afterLookUp: 0, threads: 0 }

/** `effect` with the stamps a run's look-up took (PostgreSQL) for the store's next stamping, as `Runs.get` sets them. */
const withTaken = <A, E, R>(taken: PostgresStamps.Taken | undefined, effect: Effect.Effect<A, E, R>) =>
  taken === undefined ? effect : Effect.zipRight(FiberRef.set(PostgresStamps.taken, taken), effect)

/** `f`'s answer, or `undefined` when it threw. */
const warmNow = (f: () => string | undefined): string | undefined => {
  try {
    return f()
  } catch {
    return undefined
  }
}

/**
 * `respondWarm`'s answer on this thread, with the stamps a run's look-up took. Out here, so that the
 * closure holding the body's text is not in the scope of a request handed to a verification thread
 * (which would then keep the text, beside its bytes, until its answer).
 */
const warmHere = (responder: ReportResponderShape, run: RunView, mode: Mode, text: string, taken: PostgresStamps.Taken | undefined) =>
  warmNow(() => PostgresStamps.lending(taken, () => responder.respondWarm(run, mode, text)))

/** Writes a warm answer (this thread's or a verification thread's, `byThread`), counted. */
const writeWarm = (response: Http.ServerResponse, json: string, requestId: string, byThread: boolean) => {
  synchronous.answered++
  if (byThread) synchronous.threads++
  writeJson(response, json, requestId)
}

/** The request's body as an effect, read by `onBody` (interrupting it removes the listeners). */
const bodyOf = (onBody: (onBytes: (bytes: Buffer | undefined) => void) => () => void) =>
  Effect.async<Buffer | undefined>((resume) => Effect.sync(onBody((bytes) => resume(Effect.succeed(bytes)))))

/**
 * The lane: `true` when it took the request (it answers it, or hands it over itself before reading
 * its body), `false` when the platform should handle it.
 *
 * A run found at once (`Runs.getNow`) has its body read without a fiber, and a warm verification
 * (`respondWarm`) is answered right there: stamps, verification, encoding, the log line and the
 * write as plain calls. Anything else (a miss, a changed stamp, an unknown run, a defect) starts
 * the lane's fiber, with the run and the body when they are known, as it would have started.
 */
export const make = (options: LaneOptions) => {
  const runFork = Runtime.runFork(options.runtime)
  const timeoutMs = options.limits.requestTimeoutMs
  const runs = Context.get(options.runtime.context, Runs)
  const responder = Context.get(options.runtime.context, ReportResponder)
  const refs = options.runtime.fiberRefs
  const threads = options.threads
  const clock = Context.get(FiberRefs.getOrDefault(refs, DefaultServices.currentServices), Clock.Clock)
  return (request: Http.IncomingMessage, response: Http.ServerResponse): boolean => {
    const lane = plain(request, options)
    if (lane === undefined) return false
    counts.taken++
    const requestId = randomUUID()
    const started = performance.now()
    const spanStart = clock.unsafeCurrentTimeMillis()
    const annotationsOf = (status: number) => [["method", "POST"], ["path", lane.path], ["status", status], ["ms", Math.round(performance.now() - started)]] as const
    // The access-log line, as the middleware writes it (its annotations, its span). It is the fiber's
    // last step, so the annotations are set, not set and restored around the line.
    const logged = (status: number) =>
      Effect.zipRight(FiberRef.update(FiberRef.currentLogAnnotations, (annotations) => annotate(annotations, annotationsOf(status))), Effect.logInfo("request"))
    let responding = false
    let closed = false
    let handedOver = false
    let reading = false
    // The lane's fiber, once started; `detach` ends a body read without one, or a wait for `Runs.getThen`.
    let fiber: Fiber.RuntimeFiber<void> | undefined
    let detach: (() => void) | undefined
    const respond = (answer: HttpServerResponse.HttpServerResponse | string) =>
      Effect.suspend(() => {
        if (responding) return Effect.void
        responding = true
        clearTimeout(timer)
        if (typeof answer === "string") return Effect.zipRight(logged(200), Effect.sync(() => writeJson(response, answer, requestId)))
        return Effect.zipRight(logged(answer.status), Effect.sync(() => write(response, HttpServerResponseModule.setHeader(answer, "x-request-id", requestId))))
      })
    const handOver = () => {
      handedOver = true
      counts.handedOver++
      clearTimeout(timer)
      options.handOver(request, response)
    }
    const onBody = (onBytes: (bytes: Buffer | undefined) => void) => {
      reading = true
      return readBody(request, (bytes) => {
        reading = false
        onBytes(bytes)
      })
    }
    const body = bodyOf(onBody)
    const program = (known?: Known) =>
      Effect.gen(function*() {
        let run: RunView
        let bytes: Buffer
        if (known !== undefined) ({ bytes, run } = known)
        else {
          const found = yield* Effect.exit((yield* Runs).get(lane.runId))
          // Not found (or not readable): the general path decides, with the body still unread. A
          // look-up that died is handed over too, so that the general path answers it (a 500 at once).
          if (Exit.isFailure(found)) return handOver()
          run = found.value
          const read = yield* body
          if (read === undefined) return
          bytes = read
        }
        yield* respond(yield* answerOf(options, run, lane.mode, bytes, known === undefined))
      })
    const start = (known?: Known) => {
      fiber = runFork(withTaken(known?.taken, program(known)), { updateRefs: requestRefs(requestId) })
    }
    // A warm answer (this thread's, or a verification thread's: `byThread`): its log line and the
    // write; without one (a miss, a defect, a logger that threw), the fiber's to decide.
    const answerWarm = (run: RunView, bytes: Buffer, json: string | undefined, taken?: PostgresStamps.Taken, byThread = false) => {
      if (json === undefined || !loggedNow(refs, requestId, spanStart, annotationsOf(200))) return start({ run, bytes, taken })
      responding = true
      clearTimeout(timer)
      if (taken !== undefined) synchronous.afterLookUp++
      writeWarm(response, json, requestId, byThread)
    }
    const answerNow = (run: RunView, taken?: PostgresStamps.Taken) => (bytes: Buffer | undefined) => {
      detach = undefined
      if (bytes === undefined || responding) return
      const text = bytes.toString("utf8")
      // A thread answers later (the deadline or the client may be gone by then), and over a run root only.
      if (taken === undefined && threads?.verify(run, lane.mode, text, (json) => responding || closed || answerWarm(run, bytes, json, undefined, true))) return
      // A defect (a throw) is the general path's to answer: its 500 and its log line.
      answerWarm(run, bytes, warmHere(responder, run, lane.mode, text, taken), taken)
    }
    // A run found by a query (PostgreSQL), without a fiber: as `program`'s look-up, then as `answerNow`.
    const foundThen = (found: RunFound | undefined) =>
      responding || closed ? undefined : found === undefined ? handOver() : void (detach = onBody(answerNow(found.run, found.taken)))
    // The request deadline: as the middleware's, from the request's arrival until the response starts.
    // A warm verification needs none of its own: it runs in one synchronous step within Warm.check's bounds.
    const timer = setTimeout(() => {
      if (responding || handedOver) return
      const timedOut = HttpServerResponseModule.setHeader(options.errorResponse(new RequestTimeout({ timeoutMs }), 503), "connection", "close")
      const current = fiber
      // A body still arriving is not waited for: the 503 closes the connection.
      if (current === undefined) detach?.()
      else if (reading) current.unsafeInterruptAsFork(FiberId.none)
      runFork(
        Effect.zipRight(reading || current === undefined ? Effect.void : Fiber.interrupt(current), respond(timedOut)).pipe(
          Effect.annotateLogs("requestId", requestId),
          Effect.withLogSpan("request")
        )
      )
    }, timeoutMs)
    // After the timer: the fiber runs synchronously as far as it can, and may clear it.
    const found = runs.getNow?.(lane.runId)
    if (found !== undefined) detach = onBody(answerNow(found))
    else if (runs.getThen !== undefined) detach = runs.getThen(lane.runId, foundThen)
    else start()
    response.once("close", () => {
      closed = true
      clearTimeout(timer)
      if (fiber === undefined) detach?.()
      else if (!response.writableEnded && !handedOver) fiber.unsafeInterruptAsFork(FiberId.none)
    })
    return true
  }
}
