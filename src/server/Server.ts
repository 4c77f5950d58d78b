/**
 * The citegate service: the typed HttpApi (Api.ts) plus raw routes (streaming) on one router,
 * behind one middleware that gives every request an id, a body limit and a deadline, and a
 * lifecycle that drains open requests and streams on shutdown.
 *
 * Mounting a raw route (one that writes its own NDJSON / SSE body): build a layer with
 * `HttpApiBuilder.Router.use((router) => router.post("/v1/...", handler))` whose requirements
 * are at most `ServerServices`, and add it to `rawRoutes` below. The handler reads the request
 * through `HttpServerRequest.HttpServerRequest`; it authenticates with
 * `(yield* Auth).authenticate(request.headers, Access.any)` and `Handlers.readableRun(principal, runId)`
 * (403 / 404, gives the run's directory), and ends its stream when `(yield* Lifecycle).draining`
 * completes. The platform runs each request uninterruptibly: wrap waits that a deadline or a
 * client disconnect must cut short in `Effect.interruptible`.
 *
 * @since 0.2.0
 */
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as HttpApp from "@effect/platform/HttpApp"
import * as HttpIncomingMessage from "@effect/platform/HttpIncomingMessage"
import * as HttpMiddleware from "@effect/platform/HttpMiddleware"
import { causeResponse } from "@effect/platform/HttpServerError"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import * as NodeHttpServerRequest from "@effect/platform-node/NodeHttpServerRequest"
import * as Cause from "effect/Cause"
import type * as Context from "effect/Context"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as FiberId from "effect/FiberId"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import type * as Redacted from "effect/Redacted"
import { randomBytes, randomUUID } from "node:crypto"
import * as os from "node:os"
import * as Http from "node:http"
import * as Https from "node:https"
import * as path from "node:path"
import type { PipelineConfig, ResolvedServer } from "../Config.js"
import { resolvedServer } from "../Config.js"
import { LengthRequired, PayloadTooLarge, RequestTimeout, ServiceError, Unauthorized } from "../Errors.js"
import { NotReady, UiError } from "../Errors.js"
import * as JudgeSetup from "../review/JudgeSetup.js"
import * as CaptureCache from "../verify/CaptureCache.js"
import * as Deadline from "../internal/Deadline.js"
import * as Spans from "../internal/Spans.js"
import { CitegateApi } from "./Api.js"
import { Auth, bearerPrincipal } from "./Auth.js"
import { Lifecycle, ServerContext, Telemetry } from "./Context.js"
import * as Documents from "./Documents.js"
import * as Handlers from "./Handlers.js"
import * as Metrics from "./Metrics.js"
import * as MetricsRoute from "./MetricsRoute.js"
import * as OpenApiDocument from "./OpenApi.js"
import * as QueryGuard from "./QueryGuard.js"
import * as RequestBytes from "./RequestBytes.js"
import * as Reviews from "./Reviews.js"
import * as Runs from "./Runs.js"
import * as Session from "./Session.js"
import * as StreamRoute from "./StreamRoute.js"
import * as TelemetryLayer from "./Telemetry.js"
import * as PostgresStore from "../store/Postgres.js"
import { peers } from "../store/PostgresPeers.js"
import * as PostgresRuns from "./PostgresRuns.js"
import * as PostgresStreams from "./PostgresStreams.js"
import { defaultRetention } from "./stream/Retention.js"
import * as Ui from "./Ui.js"
import * as UiData from "./UiData.js"
import * as VerifyLane from "./VerifyLane.js"
import * as VerifyThreads from "./VerifyThreads.js"

export { Lifecycle, ServerContext, Telemetry } from "./Context.js"

/** The services a route (typed or raw) may require. */
export type ServerServices = Auth | ServerContext | Lifecycle | Runs.Runs | Telemetry

/** A raw route: `HttpApiBuilder.Router.use(...)` needing at most `ServerServices`. */
export type RouteLayer = Layer.Layer<never, never, ServerServices>

const encodeServiceError = Schema.encodeSync(ServiceError)

/** A refusal the middleware itself decides (413, 503): the same JSON shape as the API's typed errors. */
export const errorResponse = (error: ServiceError, status: number) =>
  HttpServerResponse.unsafeJson(encodeServiceError(error), { status })

/** Paths whose handlers read the body as a stream themselves (and bound it themselves). */
export const streamingPrefix = "/v1/stream/"

/** What the deadline needs to know of the request it bounds. */
interface DeadlineState {
  /** The response has started: the deadline no longer applies. */
  responding: boolean
  /** The body is being read (in `preRead`): a read cut off must not be interrupted (see there). */
  reading: boolean
}

/**
 * The body read before the handler, within the deadline: as text (platform-node caches it for the
 * handler), or as bytes for a binary answer format, handed to the handler as `RequestBytes`.
 * Uninterruptible: interrupting the read would destroy the socket before the 503 is written; the
 * deadline answers without waiting for it, and a read cut off ends with the connection (the 503
 * closes it), after which nothing else of the request runs.
 */
const preRead = <A, E, R>(request: HttpServerRequest.HttpServerRequest, state: DeadlineState, app: Effect.Effect<A, E, R>) => {
  const reading = <X>(read: Effect.Effect<X>) =>
    Effect.uninterruptible(Effect.suspend(() => {
      state.reading = true
      return Effect.ensuring(read, Effect.sync(() => state.reading = false))
    }))
  return RequestBytes.readsBytes(request.url)
    ? Effect.flatMap(reading(Effect.option(request.arrayBuffer)), (bytes) =>
      Option.isSome(bytes) ? Effect.provideService(app, RequestBytes.RequestBytes, new Uint8Array(bytes.value)) : app)
    : Effect.zipRight(reading(Effect.ignore(request.text)), app)
}

/**
 * `work` in a fiber of its own, bounded by the request deadline: a Node timer, not a race of two
 * forked fibers and a sleeping one (a race costs about three times as much per request, and every
 * request pays it). When the timer fires before the response has started, the work is interrupted
 * (and waited for, unless it is still reading the body: see `preRead`) and the request fails with
 * `RequestTimeout`; once the response has started, the deadline no longer applies. The caller runs
 * uninterruptibly (the platform's choice), as the race did.
 */
const underDeadline = <A, E, R>(
  work: Effect.Effect<A, E, R>,
  timeoutMs: number,
  state: DeadlineState
): Effect.Effect<A, E | RequestTimeout, R> =>
  Effect.flatMap(Effect.forkDaemon(work), (fiber) =>
    Deadline.awaitWithTimer(fiber, timeoutMs, () => {
      if (state.responding) return undefined
      const timedOut = Effect.fail(new RequestTimeout({ timeoutMs }))
      if (!state.reading) return Effect.zipRight(Fiber.interrupt(fiber), timedOut)
      fiber.unsafeInterruptAsFork(FiberId.none)
      return timedOut
    }))

/**
 * Request id (`x-request-id` on every response and in every log line), body limit (Content-Length
 * checked before reading: 413; a body without one is refused with 411, except on streaming routes),
 * authentication before a body is read (401, see `bodyGate`), deadline (503, until the response
 * starts) and one structured log line per request.
 */
export const middleware = (
  limits: ResolvedServer,
  auth: Context.Tag.Service<Auth> = Auth.make(limits.tokens),
  telemetry: boolean = false,
  sessions?: Session.SessionStore
) =>
(app: HttpApp.Default): HttpApp.Default<never, never> =>
  Effect.suspend(() => {
    const requestId = randomUUID()
    return handle(limits, auth, app, requestId, telemetry, sessions).pipe(Effect.annotateLogs("requestId", requestId), Effect.withLogSpan("request"))
  })

/** Every value of a header as the client sent it (Node keeps only the first of a repeated Authorization). */
const headerValues = (request: HttpServerRequest.HttpServerRequest, name: string): number => {
  const incoming = NodeHttpServerRequest.toIncomingMessage(request) as unknown
  return incoming instanceof Http.IncomingMessage ? (incoming.headersDistinct[name]?.length ?? 0) : 0
}

/**
 * What is refused before a byte of the body is read: a body over the limit (413), a chunked body on a
 * JSON endpoint (411), a repeated Authorization header (401 on any request: ambiguous), and a body
 * from a client without a configured token (401). None of these bodies is buffered. A refused body of
 * declared length (at most `maxBodyBytes`) is discarded as it arrives, within the deadline, before the
 * answer: closing while the client still sends would reset the connection under the answer. Any other
 * refused body is not drained: the connection closes after the answer.
 */
const bodyGate = (
  limits: ResolvedServer,
  auth: Context.Tag.Service<Auth>,
  request: HttpServerRequest.HttpServerRequest,
  streaming: boolean
): Effect.Effect<Option.Option<HttpServerResponse.HttpServerResponse>> => {
  const refused = (error: ServiceError, status: number, close = true) => {
    const response = errorResponse(error, status)
    return Effect.succeed(Option.some(close ? HttpServerResponse.setHeader(response, "connection", "close") : response))
  }
  // The platform builds a new headers object on each access: taken once.
  const headers = request.headers
  const declared = headers["content-length"]
  const declaredBytes = declared === undefined ? undefined : Number(declared)
  const chunked = headers["transfer-encoding"] !== undefined
  if (declaredBytes !== undefined && !(declaredBytes <= limits.maxBodyBytes)) {
    return refused(new PayloadTooLarge({ maxBytes: limits.maxBodyBytes, declaredBytes }), 413)
  }
  if (declaredBytes === undefined && chunked && !streaming) return refused(new LengthRequired({ maxBytes: limits.maxBodyBytes }), 411)
  if (headerValues(request, "authorization") > 1) return refused(new Unauthorized({ reason: "malformed" }), 401)
  const hasBody = (declaredBytes !== undefined && declaredBytes > 0) || chunked
  if (!hasBody) return Effect.succeed(Option.none())
  // The token alone (what a route may do with it is the route's decision, after this).
  return auth.authenticate(headers).pipe(
    Effect.as(Option.none()),
    Effect.catchTag("Forbidden", () => Effect.succeed(Option.none())),
    Effect.catchTag("Unauthorized", (error) =>
      declaredBytes === undefined
        ? refused(error, 401)
        : Effect.flatMap(discardBody(request, limits.requestTimeoutMs), (drained) => refused(error, 401, !drained)))
  )
}

/** Reads the rest of a body and drops every chunk (nothing is kept); false when `timeoutMs` passed first. */
const discardBody = (request: HttpServerRequest.HttpServerRequest, timeoutMs: number): Effect.Effect<boolean> => {
  const incoming = NodeHttpServerRequest.toIncomingMessage(request) as unknown
  if (!(incoming instanceof Http.IncomingMessage) || incoming.complete) return Effect.succeed(true)
  return Effect.async<boolean>((resume) => {
    const done = () => resume(Effect.succeed(incoming.complete))
    incoming.once("end", done).once("close", done).once("error", done)
    // Flowing with no `data` listener: each chunk is dropped as it arrives.
    incoming.resume()
    return Effect.sync(() => incoming.off("end", done).off("close", done).off("error", done))
  }).pipe(
    Effect.interruptible,
    Effect.timeoutTo({ duration: timeoutMs, onTimeout: () => false, onSuccess: (drained) => drained })
  )
}

/**
 * The CSRF rule (Session.ts): a state-changing request that authenticates with the session cookie
 * (no Authorization header) must come from this origin and carry the session's token. Refused with
 * 403 `CsrfRejected` before its body is read or a route runs.
 */
const csrfGate = (sessions: Session.SessionStore | undefined, request: HttpServerRequest.HttpServerRequest) => {
  if (sessions === undefined || !Session.unsafeMethods.has(request.method)) return Option.none()
  const headers = request.headers
  if (headers["authorization"] !== undefined || !sessions.hasCookie(headers)) return Option.none()
  const refusal = sessions.csrfRefusal(headers)
  return refusal === undefined
    ? Option.none()
    : Option.some(HttpServerResponse.setHeader(HttpServerResponse.unsafeJson(encodeUiError(refusal), { status: 403 }), "connection", "close"))
}

const encodeUiError = Schema.encodeSync(UiError)

const handle = (limits: ResolvedServer, auth: Context.Tag.Service<Auth>, app: HttpApp.Default, requestId: string, telemetry: boolean, sessions?: Session.SessionStore) =>
  Effect.gen(function*() {
    const request = yield* HttpServerRequest.HttpServerRequest
    const started = performance.now()
    const path = request.url.split("?")[0] ?? ""
    const tagged = (response: HttpServerResponse.HttpServerResponse) =>
      HttpServerResponse.setHeader(response, "x-request-id", requestId)
    const declared = request.headers["content-length"]
    const hasBody = declared !== undefined && Number(declared) > 0
    const streaming = path.startsWith(streamingPrefix)
    // `responding` is set when the response starts: from then on the deadline no longer applies. A
    // streamed body is bounded by its own route (stream deadline, run end, shutdown); cutting it off
    // would leave the client with a 200, no terminal event and an open socket.
    const state: DeadlineState = { responding: false, reading: false }
    const csrf = csrfGate(sessions, request)
    const refusal = Option.isSome(csrf) ? csrf : yield* bodyGate(limits, auth, request, streaming)
    const response = Option.isSome(refusal)
      ? refusal.value
      : yield* HttpApp.appendPreResponseHandler((_request, response) =>
        Effect.sync(() => {
          state.responding = true
          return tagged(response)
        })
      ).pipe(
        // The body is read here, within the deadline, and kept (platform-node caches a request's text) for
        // the handler; a read cut off by the deadline is not interrupted (`preRead`).
        Effect.zipRight(hasBody && !streaming ? preRead(request, state, app) : app),
        // The platform runs each request uninterruptibly; the deadline must be able to stop the work.
        Effect.interruptible,
        // Streaming routes read more than one body's worth over time; they bound their own input.
        streaming ? (effect) => effect : HttpIncomingMessage.withMaxBodySize(Option.some(limits.maxBodyBytes)),
        (work) => underDeadline(work, limits.requestTimeoutMs, state),
        Effect.catchAllCause((cause) => {
          const failure = Cause.failureOption(cause)
          if (Option.isSome(failure) && failure.value instanceof RequestTimeout) {
            return Effect.succeed(HttpServerResponse.setHeader(errorResponse(failure.value, 503), "connection", "close"))
          }
          // What the platform answered for this cause (404 for an unknown route, 500 for a defect).
          return Effect.flatMap(causeResponse(cause), ([response]) =>
            response.status >= 500 ? Effect.as(Effect.logError("request failed", cause), response) : Effect.succeed(response)
          )
        })
      )
    const ms = Math.round(performance.now() - started)
    yield* Effect.logInfo("request").pipe(Effect.annotateLogs({ method: request.method, path, status: response.status, ms }))
    if (telemetry) {
      // The platform's span of this request (`http.server <method>`): the request id and the route template.
      yield* Effect.annotateCurrentSpan({ [Metrics.attributes.requestId]: requestId, [Metrics.attributes.route]: Metrics.routeOf(path) })
      yield* Metrics.request(request.method, path, response.status, ms)
    }
    return tagged(response)
  })

// Raw routes mounted beside the typed API (e.g. the streaming answer route; the review page's are added in `layer`).
const rawRoutes: ReadonlyArray<RouteLayer> = [StreamRoute.layer]

export const HealthLive = HttpApiBuilder.group(CitegateApi, "health", (handlers) =>
  handlers
    .handle("healthz", () => Effect.succeed({ status: "ok" as const }))
    .handle("readyz", () =>
      Effect.gen(function*() {
        const lifecycle = yield* Lifecycle
        if (yield* lifecycle.isDraining) return yield* new NotReady({ reason: "draining" })
        yield* (yield* Runs.Runs).ready
        return { status: "ok" as const }
      }))
)

export interface ServeOptions {
  readonly config: PipelineConfig
  readonly configFile: string
  readonly runRoot: string
  /** Test mode: capture http (and https) from the literal host 127.0.0.1 only. */
  readonly allowLoopbackHttp?: boolean | undefined
  /** Loopback or another local address; port 0 picks a free port. */
  readonly host: string
  readonly port: number
  /** Serve HTTPS with this PEM certificate chain and key (`server.tls`), else plain HTTP. */
  readonly tls?: { readonly cert: string | Buffer; readonly key: string | Buffer } | undefined
  /** Mark the review page's session cookie `Secure` (default: when `tls` is given; also behind a TLS proxy). */
  readonly secureCookies?: boolean | undefined
  /** The review page's built assets (default: the package's `dist/ui/`). */
  readonly uiDirectory?: string | undefined
  /**
   * Answer plain `POST /v1/verify/report` requests in front of the router (VerifyLane.ts; default
   * true). Off, every request takes the general path; the answers are the same.
   */
  readonly verifyLane?: boolean | undefined
  /**
   * Run as one of several replicas over this PostgreSQL database (`serve --store`): runs, their
   * captures and events, capture jobs and streamed answers' events are kept there, so any replica
   * answers for any run and stream. Absent: runs under `runRoot`, events in this process's memory.
   */
  readonly store?: {
    readonly url: Redacted.Redacted
    /** This replica's name in the job table (default: host name, process id and a random suffix). */
    readonly replica?: string | undefined
  } | undefined
}

/** A replica's default name: unique per process, readable in the job table and in `taken-over` events. */
const replicaName = () => `${os.hostname()}-${process.pid}-${randomBytes(3).toString("hex")}`

/**
 * ServerContext and Runs over PostgreSQL: the store's client (checked at start: the tables of
 * migration 3 must exist, `store-init` makes them), the replicated runs and the stream log.
 */
const replicated = (store: NonNullable<ServeOptions["store"]>, base: Context.Tag.Service<ServerContext>) => {
  const replica = store.replica ?? replicaName()
  const context = Layer.effect(
    ServerContext,
    Effect.gen(function*() {
      const { SqlClient } = yield* peers
      const sql = yield* SqlClient.SqlClient
      yield* sql`SELECT 1 FROM citegate_jobs, citegate_streams LIMIT 0`.pipe(
        Effect.mapError((error) => PostgresStore.storeUnavailable("", error))
      )
      const streamLog = PostgresStreams.make(sql, {
        replica,
        leaseMs: base.limits.leaseMs,
        retention: { ...defaultRetention, retainMs: base.limits.streamRetainMs, maxTotalBytes: base.limits.streamRetainedBytes }
      })
      return { ...base, streamLog }
    })
  )
  const client = PostgresStore.layerClient({ url: store.url, maxConnections: 20 })
  return { context: Layer.provide(context, client), runs: Layer.provide(PostgresRuns.layer({ replica }), client) }
}

/**
 * The lifecycle of one node server: counts open responses and, when its scope closes, stops
 * accepting, signals `draining`, waits up to `shutdownGraceMs` for open responses to end, then
 * closes what is left.
 */
const lifecycleLayer = (server: Http.Server, graceMs: number) =>
  Layer.scoped(
    Lifecycle,
    Effect.gen(function*() {
      let open = 0
      let idle: (() => void) | undefined
      const draining = yield* Deferred.make<void>()
      const track = (_request: Http.IncomingMessage, response: Http.ServerResponse) => {
        open++
        response.once("close", () => {
          open--
          if (open === 0) idle?.()
        })
      }
      // A request the verify lane takes is not emitted as `request` (unless handed back: counted twice, released twice).
      server.on("request", track)
      server.on(VerifyLane.laneEvent, track)
      const shutdown = Effect.suspend(() =>
        Effect.flatMap(Deferred.succeed(draining, undefined), (first) =>
          Effect.sync(() => {
            if (!first) return
            // No new connections; idle keep-alive connections close now.
            server.close()
            server.closeIdleConnections()
          }))
      )
      yield* Effect.addFinalizer(() =>
        Effect.gen(function*() {
          yield* shutdown
          const drained = yield* Effect.async<void>((resume) => {
            if (open === 0) return resume(Effect.void)
            idle = () => resume(Effect.void)
          }).pipe(Effect.interruptible, Effect.timeoutOption(graceMs))
          if (Option.isNone(drained)) yield* Effect.logWarning("shutdown grace elapsed; closing open connections")
          server.closeAllConnections()
        })
      )
      return {
        draining: Deferred.await(draining),
        isDraining: Deferred.isDone(draining),
        openRequests: Effect.sync(() => open),
        shutdown
      }
    })
  )

/**
 * `HttpApiBuilder.serve`, with the platform's span per request (`http.server <method>`) only when
 * spans are exported (telemetry on, or an embedding program's own tracer): under Effect's in-process
 * tracer nothing reads it, and making it (the URL parsed again, headers redacted, a span and its
 * attributes) is part of the fixed cost of every request.
 */
const served = (middleware: (app: HttpApp.Default) => HttpApp.Default<never, never>) => {
  const serve = HttpApiBuilder.serve(middleware)
  return Layer.unwrapEffect(Effect.map(Spans.exported, (on) => on ? serve : HttpMiddleware.withTracerDisabledWhen(serve, () => true)))
}

/**
 * The whole service as a layer: building it listens, releasing it drains and closes. Provides
 * the `HttpServer` (its `address` tells the bound port).
 */
export const layer = (options: ServeOptions) => {
  const limits = resolvedServer(options.config)
  // An https server is an http server with TLS below it: same requests, responses and connection handling.
  const server = options.tls === undefined
    ? Http.createServer()
    : Https.createServer({ cert: options.tls.cert, key: options.tls.key }) as unknown as Http.Server
  const baseContext = {
    config: options.config,
    configFile: options.configFile,
    runRoot: options.runRoot,
    limits,
    allowLoopbackHttp: options.allowLoopbackHttp ?? false
  }
  const shared = options.store === undefined ? undefined : replicated(options.store, baseContext)
  const context = shared?.context ?? Layer.succeed(ServerContext, baseContext)
  const runs = shared?.runs ?? Runs.layer
  // Runs depends on Lifecycle, so it is released first: on shutdown it stops accepting, lets
  // running captures finish within the grace period, and only then Lifecycle waits for open responses.
  // One verified-capture cache for the whole service (`server.cacheBytes`): verifications and manifests of every run.
  const base = Layer.mergeAll(context, lifecycleLayer(server, limits.shutdownGraceMs), CaptureCache.layer({ maxBytes: limits.cacheBytes }))
  // The review page's sessions: the cookie stands in for the bearer token on the page's requests.
  const sessions = new Session.SessionStore({ secure: options.secureCookies ?? options.tls !== undefined })
  // One authenticator for the routes and for the middleware, which checks the token before a body is read.
  const auth = Auth.make(limits.tokens, sessions)
  // --- semantic review hook: the judge `review.judge` asks for (resolved, and gated, when the layer is built) ---
  const judge = Layer.unwrapEffect(
    Effect.map(JudgeSetup.resolve(options.config, { configDirectory: path.dirname(path.resolve(options.configFile)) }), JudgeSetup.layerOf)
  )
  // Telemetry first: its tracer (when on) is installed for every layer built after it, requests included.
  const telemetry = TelemetryLayer.layer(options.config)
  const telemetryOn = options.config.telemetry !== undefined
  const services = Handlers.ReportResponderLive.pipe(
    Layer.provideMerge(Layer.mergeAll(Layer.succeed(Auth, auth), runs, judge)),
    Layer.provideMerge(base)
  )
  // The verify lane: in front of the platform's request handler, which gets every request the lane does not take.
  const front = VerifyLane.inFrontOf(server)
  const laneLayer = Layer.scopedDiscard(Effect.gen(function*() {
    // Off with telemetry or an exported tracer: the platform's request span and the metrics are the general path's.
    if (options.verifyLane === false || telemetryOn || (yield* Spans.exported)) return
    const runtime = yield* Effect.runtime<Runs.Runs | Handlers.ReportResponder>()
    // Verification threads (`server.verifyThreads`): over a run root only (not `--store`).
    const threads = options.store === undefined ? yield* VerifyThreads.forService(options, limits) : undefined
    front.take(VerifyLane.make({
      threads,
      limits,
      config: options.config,
      principalOf: bearerPrincipal(limits.tokens),
      runtime,
      handOver: front.handOver,
      errorResponse
    }))
    yield* Effect.addFinalizer(() => Effect.sync(() => front.take(undefined)))
  })).pipe(Layer.provide(services))
  const api = HttpApiBuilder.api(CitegateApi).pipe(
    Layer.provide([HealthLive, Handlers.RunsLive, Documents.DocumentsLive, Handlers.VerifyLive, Reviews.ReviewsLive])
  )
  const routes = Layer.mergeAll(QueryGuard.layer, OpenApiDocument.layer, MetricsRoute.layer, ...rawRoutes, Ui.layer({ sessions, directory: options.uiDirectory }), UiData.layer)
  return served(middleware(limits, auth, telemetryOn, sessions)).pipe(
    Layer.provide(routes),
    Layer.provide(api),
    Layer.provide(services),
    // With telemetry on, the verified-capture cache sampled into the metrics (docs/observability.md).
    (served) => Layer.mergeAll(served, laneLayer, Metrics.cacheSampler.pipe(Layer.provide(base))),
    Layer.provideMerge(NodeHttpServer.layer(() => server, { host: options.host, port: options.port })),
    Layer.provide(telemetry)
  )
}
