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
import { causeResponse } from "@effect/platform/HttpServerError"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import * as Cause from "effect/Cause"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { randomUUID } from "node:crypto"
import * as fs from "node:fs/promises"
import * as Http from "node:http"
import type { PipelineConfig, ResolvedServer } from "../Config.js"
import { resolvedServer } from "../Config.js"
import { LengthRequired, PayloadTooLarge, RequestTimeout, ServiceError } from "../Errors.js"
import { NotReady } from "../Errors.js"
import { CitegateApi } from "./Api.js"
import { Auth } from "./Auth.js"
import { Lifecycle, ServerContext } from "./Context.js"
import * as Documents from "./Documents.js"
import * as Handlers from "./Handlers.js"
import * as OpenApiDocument from "./OpenApi.js"
import * as Runs from "./Runs.js"
import * as StreamRoute from "./StreamRoute.js"

export { Lifecycle, ServerContext } from "./Context.js"

/** The services a route (typed or raw) may require. */
export type ServerServices = Auth | ServerContext | Lifecycle | Runs.Runs

/** A raw route: `HttpApiBuilder.Router.use(...)` needing at most `ServerServices`. */
export type RouteLayer = Layer.Layer<never, never, ServerServices>

const encodeServiceError = Schema.encodeSync(ServiceError)

/** A refusal the middleware itself decides (413, 503): the same JSON shape as the API's typed errors. */
export const errorResponse = (error: ServiceError, status: number) =>
  HttpServerResponse.unsafeJson(encodeServiceError(error), { status })

/** Paths whose handlers read the body as a stream themselves (and bound it themselves). */
export const streamingPrefix = "/v1/stream/"

/**
 * Request id (`x-request-id` on every response and in every log line), body limit (Content-Length
 * checked before reading: 413; a body without one is refused with 411, except on streaming routes),
 * deadline (503) and one structured log line per request.
 */
export const middleware = (limits: ResolvedServer) => (app: HttpApp.Default): HttpApp.Default<never, never> =>
  Effect.suspend(() => {
    const requestId = randomUUID()
    return handle(limits, app, requestId).pipe(Effect.annotateLogs("requestId", requestId), Effect.withLogSpan("request"))
  })

const handle = (limits: ResolvedServer, app: HttpApp.Default, requestId: string) =>
  Effect.gen(function*() {
    const request = yield* HttpServerRequest.HttpServerRequest
    const started = performance.now()
    const path = request.url.split("?")[0] ?? ""
    const tagged = (response: HttpServerResponse.HttpServerResponse) =>
      HttpServerResponse.setHeader(response, "x-request-id", requestId)
    const declared = request.headers["content-length"]
    const declaredBytes = declared === undefined ? undefined : Number(declared)
    const streaming = path.startsWith(streamingPrefix)
    const hasBody = declaredBytes !== undefined && declaredBytes > 0
    const refused = (error: PayloadTooLarge | LengthRequired, status: number) =>
      // The unread body is not drained: the connection closes after the answer.
      HttpServerResponse.setHeader(errorResponse(error, status), "connection", "close")
    const response = declaredBytes !== undefined && !(declaredBytes <= limits.maxBodyBytes)
      ? refused(new PayloadTooLarge({ maxBytes: limits.maxBodyBytes, declaredBytes }), 413)
      : declaredBytes === undefined && request.headers["transfer-encoding"] !== undefined && !streaming
      ? refused(new LengthRequired({ maxBytes: limits.maxBodyBytes }), 411)
      : yield* HttpApp.appendPreResponseHandler((_request, response) => Effect.succeed(tagged(response))).pipe(
        // The body is read here, within the deadline, and kept (platform-node caches a request's text) for
        // the handler. In its own fiber: a read cut off by the deadline is not interrupted (that would
        // destroy the socket before the 503 is written); it ends with the connection.
        Effect.zipRight(hasBody && !streaming ? Effect.flatMap(Effect.forkDaemon(Effect.ignore(request.text)), Fiber.await) : Effect.void),
        Effect.zipRight(app),
        // The platform runs each request uninterruptibly; the deadline must be able to stop the work.
        Effect.interruptible,
        // Streaming routes read more than one body's worth over time; they bound their own input.
        streaming ? (effect) => effect : HttpIncomingMessage.withMaxBodySize(Option.some(limits.maxBodyBytes)),
        Effect.timeoutFail({
          duration: limits.requestTimeoutMs,
          onTimeout: () => new RequestTimeout({ timeoutMs: limits.requestTimeoutMs })
        }),
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
    yield* Effect.logInfo("request").pipe(Effect.annotateLogs({
      method: request.method,
      path,
      status: response.status,
      ms: Math.round(performance.now() - started)
    }))
    return tagged(response)
  })

// Raw routes mounted beside the typed API (e.g. the streaming answer route).
const rawRoutes: ReadonlyArray<RouteLayer> = [StreamRoute.layer]

export const HealthLive = HttpApiBuilder.group(CitegateApi, "health", (handlers) =>
  handlers
    .handle("healthz", () => Effect.succeed({ status: "ok" as const }))
    .handle("readyz", () =>
      Effect.gen(function*() {
        const lifecycle = yield* Lifecycle
        if (yield* lifecycle.isDraining) return yield* new NotReady({ reason: "draining" })
        const { runRoot } = yield* ServerContext
        // Ready only when new runs can be created under the run root.
        const usable = yield* Effect.promise(() =>
          fs.mkdir(runRoot, { recursive: true, mode: 0o700 }).then(() => fs.access(runRoot, fs.constants.W_OK)).then(() => true, () => false)
        )
        if (!usable) return yield* new NotReady({ reason: "run-root-unusable" })
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
      server.on("request", (_request, response: Http.ServerResponse) => {
        open++
        response.once("close", () => {
          open--
          if (open === 0) idle?.()
        })
      })
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
 * The whole service as a layer: building it listens, releasing it drains and closes. Provides
 * the `HttpServer` (its `address` tells the bound port).
 */
export const layer = (options: ServeOptions) => {
  const limits = resolvedServer(options.config)
  const server = Http.createServer()
  const context = Layer.succeed(ServerContext, {
    config: options.config,
    configFile: options.configFile,
    runRoot: options.runRoot,
    limits,
    allowLoopbackHttp: options.allowLoopbackHttp ?? false
  })
  // Runs depends on Lifecycle, so it is released first: on shutdown it stops accepting, lets
  // running captures finish within the grace period, and only then Lifecycle waits for open responses.
  const base = Layer.mergeAll(context, lifecycleLayer(server, limits.shutdownGraceMs))
  const services = Layer.mergeAll(Auth.layer(limits.tokens), Runs.layer).pipe(Layer.provideMerge(base))
  const api = HttpApiBuilder.api(CitegateApi).pipe(
    Layer.provide([HealthLive, Handlers.RunsLive, Documents.DocumentsLive, Handlers.VerifyLive])
  )
  const routes = Layer.mergeAll(OpenApiDocument.layer, ...rawRoutes)
  return HttpApiBuilder.serve(middleware(limits)).pipe(
    Layer.provide(routes),
    Layer.provide(api),
    Layer.provide(services),
    Layer.provideMerge(NodeHttpServer.layer(() => server, { host: options.host, port: options.port }))
  )
}
