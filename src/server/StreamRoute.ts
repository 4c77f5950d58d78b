/**
 * `POST /v1/stream/answer`: streaming verification over HTTP.
 *
 * The request body is NDJSON (`{"type":"delta","text":"…"}` lines), or with
 * `format=anthropic-sse` an Anthropic Messages event stream (SSE), or with
 * `format=bedrock-stream` a Bedrock ConverseStream body (AWS event stream
 * messages), read as it arrives, never buffered whole; the response is NDJSON, or Server-Sent
 * Events when the client sends `Accept: text/event-stream`. The events are
 * `AnswerStream`'s (ids 1, 2, 3, …; one `done` last).
 *
 * Query: `run` (required, the run whose captures and manifest are cited),
 * `manifest` (the digest the answer was drafted against, unless the appendix
 * names it; `manifestDigest` is its alias), `mode` (`drop`, default, or `reject`),
 * `format` (`evi1-ndjson`, default, `anthropic-sse` or `bedrock-stream`). Any other parameter is
 * refused (400 `StreamRequestInvalid`, as a malformed one), on both routes.
 *
 * Resuming: every response carries `citegate-stream-id`. The events of a
 * stream are retained (bounded: the newest `maxEvents` events and `maxBytes`
 * bytes, for `retainMs` after it ends (a timer drops them), at most
 * `maxStreams` streams and `maxTotalBytes` in all: past it a new stream is
 * 503 `StreamRetentionFull`) and
 * `GET /v1/stream/answer/{id}` replays them after `Last-Event-ID` (header, or
 * `lastEventId` in the query for a first EventSource request), then follows
 * the stream live until its `done`. An EventSource cannot POST: a backend
 * POSTs the model's output and a browser follows with GET. Both need a token
 * that may read the run. Events no longer retained: 410 `StreamGone`.
 *
 * A client that disconnects ends its request: the body stops being read, the
 * verification is interrupted, and the stream's resources are released (its
 * retained events stay until they expire).
 *
 * @since 0.2.0
 */
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as HttpRouter from "@effect/platform/HttpRouter"
import * as NodeHttpServerRequest from "@effect/platform-node/NodeHttpServerRequest"
import * as NodeStream from "@effect/platform-node/NodeStream"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import * as Http from "node:http"
import type { CitationRule, CitationsPolicy } from "../answer/Records.js"
import * as Config from "../Config.js"
import { RunId } from "../Config.js"
import { cut } from "../internal/bounded.js"
import {
  type Forbidden,
  RunNotFound,
  ServiceError,
  StreamError,
  StreamGone,
  StreamRequestInvalid,
  StreamRetentionFull,
  type Unauthorized
} from "../Errors.js"
import * as Manifest from "../Manifest.js"
import * as Policy from "../verify/Policy.js"
import * as Verifier from "../verify/Verifier.js"
import * as CaptureCache from "../verify/CaptureCache.js"
import * as AnswerStream from "./AnswerStream.js"
import { Auth } from "./Auth.js"
import { ServerContext } from "./Context.js"
import { readableRun } from "./Handlers.js"
import { Runs } from "./Runs.js"
import * as Log from "./stream/Log.js"
import type { StreamLog } from "./stream/Log.js"
import { defaultRetention, type Retention } from "./stream/Retention.js"

/** Headers as Node and @effect/platform hand them over (lowercase names). */
export type RequestHeaders = Readonly<Record<string, string | ReadonlyArray<string> | undefined>>

export { defaultRetention, type Retention } from "./stream/Retention.js"

/** @since 0.2.0 */
export interface StreamRouteOptions {
  /** Authenticate the request and authorise reading `runId` (401 / 403; 404 when a token that may read it finds no such run). */
  readonly authenticate: (headers: RequestHeaders, runId: string) => Effect.Effect<unknown, Unauthorized | Forbidden | RunNotFound>
  /** The run's Verifier (its store and policy) and manifest, read-only (404 when there is no such run). */
  /** The token alone (401), checked before a stream id is looked up: unknown and known ids answer alike without a token. */
  readonly authenticateToken?: ((headers: RequestHeaders) => Effect.Effect<unknown, Unauthorized | Forbidden>) | undefined
  readonly run: (runId: string) => Effect.Effect<{ readonly verifier: Verifier.VerifierShape; readonly manifest: Manifest.Manifest }, RunNotFound>
  /** Mode when the query names none (default `drop`). */
  readonly mode?: "drop" | "reject" | undefined
  readonly uncited?: "report" | "reject" | undefined
  /** Which uncited sentences need a citation (`answers.needsCitation`; the documented default when absent). */
  readonly needsCitation?: CitationRule | undefined
  /** `answers.citations` for provider streams with document-level citations (default `quote`). */
  readonly citations?: CitationsPolicy | undefined
  readonly limits?: Partial<AnswerStream.StreamLimits> | undefined
  readonly retention?: Partial<Retention> | undefined
  /** Where events are retained for resuming (default: this process's memory, bounded by `retention`). */
  readonly log?: StreamLog | undefined
}

export const streamIdHeader = "citegate-stream-id"

const encodeError = Schema.encodeSync(Schema.Union(ServiceError, StreamError))

const errorResponse = (error: ServiceError | StreamError, status: number) =>
  HttpServerResponse.unsafeJson(encodeError(error), { status })

/** What the routes refuse with (the server's body limit and deadline answer before a route runs). */
type Refusal = Unauthorized | Forbidden | RunNotFound | StreamGone | StreamRequestInvalid | StreamRetentionFull

const statusOf = (error: Refusal): number => {
  switch (error._tag) {
    case "Unauthorized":
      return 401
    case "Forbidden":
      return 403
    case "RunNotFound":
      return 404
    case "StreamGone":
      return error.reason === "unknown-stream" ? 404 : 410
    case "StreamRequestInvalid":
      return 400
    case "StreamRetentionFull":
      return 503
  }
}

// ---------------------------------------------------------------------------
// Wire formats
// ---------------------------------------------------------------------------

const encoder = new TextEncoder()

const ndjson = (json: string) => encoder.encode(`${json}\n`)
// JSON text has no line breaks: one `data:` line per event. No `event:` field: every event is a
// `message` (its `type` is in the JSON), so the `error` event never collides with EventSource's own.
const sse = (event: { readonly id: number; readonly json: string }) => encoder.encode(`id: ${event.id}\ndata: ${event.json}\n\n`)

const wantsSse = (headers: RequestHeaders): boolean => {
  const accept = headers["accept"]
  return typeof accept === "string" && accept.split(",").some((part) => part.trim().split(";")[0]!.trim() === "text/event-stream")
}

const responseHeaders = (id: string, isSse: boolean) => ({
  [streamIdHeader]: id,
  "cache-control": "no-store",
  // Proxies must not hold events back.
  "x-accel-buffering": "no",
  ...(isSse ? {} : { "x-content-type-options": "nosniff" })
})

/** An EventSource reconnects after this many milliseconds (sent first on every SSE response). */
export const sseRetryMs = 500
const sseStart = encoder.encode(`retry: ${sseRetryMs}\n\n`)

const contentType = (isSse: boolean) => (isSse ? "text/event-stream; charset=utf-8" : "application/x-ndjson; charset=utf-8")

const isRunId = Schema.is(RunId)
const digestPattern = /^[0-9a-f]{64}$/
const eventIdPattern = /^(0|[1-9][0-9]{0,9})$/

const invalid = (parameter: string, detail: string) => new StreamRequestInvalid({ parameter, detail })

/**
 * The request body's format: `evi1-ndjson` (default: `{"type":"delta","text":"…"}` lines of an EVI1
 * answer), `anthropic-sse` (an Anthropic Messages event stream as the API sends it) or
 * `bedrock-stream` (a Bedrock ConverseStream body: AWS event stream messages, as the API sends them).
 *
 * @since 0.2.0
 */
export const inputFormats = ["evi1-ndjson", "anthropic-sse", "bedrock-stream"] as const
export type InputFormat = typeof inputFormats[number]

interface PostQuery {
  readonly run: string
  readonly manifest: string | undefined
  readonly mode: "drop" | "reject" | undefined
  readonly format: InputFormat
}

/** The query parameters each route takes: `lastEventId` is what an EventSource polyfill adds on reconnecting. */
const postParameters: ReadonlySet<string> = new Set(["run", "manifest", "manifestDigest", "mode", "format"])
const resumeParameters: ReadonlySet<string> = new Set(["lastEventId"])

/**
 * A parameter the route does not take (`__proto__` as any other name: the names are only compared)
 * is refused, as the typed routes refuse theirs, rather than silently ignored; its name, cut, is the
 * refusal's `parameter`.
 */
const unknownParameter = (url: URL, known: ReadonlySet<string>): StreamRequestInvalid | undefined => {
  for (const name of url.searchParams.keys()) {
    if (!known.has(name)) return invalid(cut(name, 100), `is not a parameter of this route, which takes ${[...known].join(", ")}`)
  }
  return undefined
}

const postQuery = (url: URL): Effect.Effect<PostQuery, StreamRequestInvalid> => {
  const unknown = unknownParameter(url, postParameters)
  if (unknown !== undefined) return Effect.fail(unknown)
  const run = url.searchParams.getAll("run")
  if (run.length !== 1 || !isRunId(run[0]!)) return Effect.fail(invalid("run", "must be one run id (1 to 64 letters, digits, `-` or `_`)"))
  // `manifestDigest` is the documented alias of `manifest` (the name /v1/verify/answer used first).
  const manifest = [...url.searchParams.getAll("manifest"), ...url.searchParams.getAll("manifestDigest")]
  if (manifest.length > 1 || (manifest.length === 1 && !digestPattern.test(manifest[0]!))) {
    return Effect.fail(invalid("manifest", "must be one manifest digest (64 lowercase hex characters), as manifest or its alias manifestDigest"))
  }
  const mode = url.searchParams.getAll("mode")
  if (mode.length > 1 || (mode.length === 1 && mode[0] !== "drop" && mode[0] !== "reject")) {
    return Effect.fail(invalid("mode", "must be drop or reject"))
  }
  const format = url.searchParams.getAll("format")
  if (format.length > 1 || (format.length === 1 && !inputFormats.includes(format[0] as InputFormat))) {
    return Effect.fail(invalid("format", `must be one of ${inputFormats.join(", ")}`))
  }
  return Effect.succeed({
    run: run[0]!,
    manifest: manifest[0],
    mode: mode[0] as "drop" | "reject" | undefined,
    format: (format[0] ?? "evi1-ndjson") as InputFormat
  })
}

/** `Last-Event-ID` (header first, then `lastEventId` in the query): 0 when absent. */
const lastEventId = (headers: RequestHeaders, url: URL): Effect.Effect<number, StreamRequestInvalid> => {
  const unknown = unknownParameter(url, resumeParameters)
  if (unknown !== undefined) return Effect.fail(unknown)
  const header = headers["last-event-id"]
  const values = header !== undefined ? [header].flat() : url.searchParams.getAll("lastEventId")
  if (values.length === 0) return Effect.succeed(0)
  const value = values[0]!.trim()
  return values.length === 1 && eventIdPattern.test(value)
    ? Effect.succeed(Number(value))
    : Effect.fail(invalid("Last-Event-ID", "must be one event id (a non-negative integer)"))
}

/**
 * The request body as it arrives. Read from the node request without destroying it when reading
 * stops early (a limit, a malformed line): destroying it would close the socket before the error
 * event and `done` reach the client. Node discards what is left of the body once the response ends.
 */
const requestBody = (request: HttpServerRequest.HttpServerRequest): Stream.Stream<Uint8Array, unknown> => {
  const incoming = NodeHttpServerRequest.toIncomingMessage(request) as unknown
  return incoming instanceof Http.IncomingMessage
    ? NodeStream.fromReadable<unknown, Uint8Array>(() => incoming, (error) => error, { closeOnDone: false })
    : request.stream
}

const requestUrl = (request: HttpServerRequest.HttpServerRequest) => new URL(request.url, "http://citegate.invalid")

// ---------------------------------------------------------------------------
// The routes
// ---------------------------------------------------------------------------

/**
 * The streaming routes as a router (mountable on any server, testable alone), and the registry's
 * size for tests and metrics.
 *
 * @since 0.2.0
 */
export const make = (options: StreamRouteOptions) => {
  const retention = { ...defaultRetention, ...options.retention }
  const { registry, log: memoryLog } = Log.memory(retention)
  const log = options.log ?? memoryLog

  const post = Effect.gen(function*() {
    const request = yield* HttpServerRequest.HttpServerRequest
    const url = requestUrl(request)
    const query = yield* postQuery(url)
    yield* options.authenticate(request.headers, query.run)
    const { manifest, verifier } = yield* options.run(query.run)
    const service = yield* AnswerStream.make(options.limits).pipe(Effect.provideService(Verifier.Verifier, verifier))
    const isSse = wantsSse(request.headers)
    const retained = yield* log.open(query.run)
    // The client's body failing means the client is gone: nothing is judged on a truncated answer.
    const body = requestBody(request).pipe(Stream.catchAll(() => Stream.fromEffect(Effect.interrupt)))
    const streamOptions: AnswerStream.StreamOptions = {
      manifest,
      manifestDigest: query.manifest,
      mode: query.mode ?? options.mode ?? "drop",
      uncited: options.uncited ?? "report",
      needsCitation: options.needsCitation,
      citations: options.citations
    }
    const lines = () => AnswerStream.ndjsonLines(body, service.limits.maxLineBytes, service.limits.maxInputBytes)
    const events = (
      query.format === "bedrock-stream"
        ? service.streamBedrock(body, streamOptions)
        : (query.format === "anthropic-sse" ? service.streamAnthropicSse : service.stream)(lines(), streamOptions)
    ).pipe(
      Stream.mapEffect((event) => {
        const json = AnswerStream.encodeEvent(event)
        return Effect.as(log.append(retained, event, json), isSse ? sse({ id: event.id, json }) : ndjson(json))
      }),
      Stream.ensuring(log.end(retained))
    )
    return HttpServerResponse.stream(isSse ? Stream.concat(Stream.make(sseStart), events) : events, { contentType: contentType(isSse), headers: responseHeaders(retained.id, isSse) })
  })

  const resume = Effect.gen(function*() {
    const request = yield* HttpServerRequest.HttpServerRequest
    const params = yield* HttpRouter.params
    const url = requestUrl(request)
    const id = params["id"] ?? ""
    if (options.authenticateToken !== undefined) yield* options.authenticateToken(request.headers)
    const after = yield* lastEventId(request.headers, url)
    const retained = yield* log.lookup(id)
    if (retained === undefined) return yield* new StreamGone({ streamId: id, reason: "unknown-stream", oldestRetained: null })
    yield* options.authenticate(request.headers, retained.runId)
    if (after + 1 < retained.firstId) {
      return yield* new StreamGone({ streamId: id, reason: "not-retained", oldestRetained: retained.firstId })
    }
    const isSse = wantsSse(request.headers)
    const followed = log.follow(retained, after).pipe(
      Stream.map((event) => (isSse ? sse(event) : ndjson(event.json))),
      // Dropped while following (a slow reader fell behind the retention): the stream just ends.
      Stream.catchAll(() => Stream.empty)
    )
    const body = isSse ? Stream.concat(Stream.make(sseStart), followed) : followed
    return HttpServerResponse.stream(body, { contentType: contentType(isSse), headers: responseHeaders(retained.id, isSse) })
  })

  const refusals = <A, R>(effect: Effect.Effect<A, Refusal, R>) =>
    Effect.catchAll(effect, (error) => Effect.succeed(errorResponse(error, statusOf(error))))

  const router = HttpRouter.empty.pipe(
    HttpRouter.post("/v1/stream/answer", refusals(post)),
    HttpRouter.get("/v1/stream/answer/:id", refusals(resume))
  )
  return { router, retainedStreams: () => registry.size, liveStreams: () => registry.live, retainedBytes: () => registry.bytes }
}

// ---------------------------------------------------------------------------
// Mounted in the service (Server.ts `rawRoutes`)
// ---------------------------------------------------------------------------

/**
 * The streaming routes inside `run-pipeline serve`: tokens through `Auth` (a run the token may
 * not read is 403 whether or not it exists), runs through `Runs`, each run's captures through its
 * own file-system store, mode and uncited policy from the configuration (`drop` when
 * `verify.mode` is not set: retractions are what a stream is for).
 *
 * @since 0.2.0
 */
export const layer = HttpApiBuilder.Router.use((router) =>
  Effect.gen(function*() {
    const auth = yield* Auth
    const runs = yield* Runs
    const { config, limits, streamLog } = yield* ServerContext
    const cache = yield* Effect.serviceOption(CaptureCache.CaptureCache)
    const route = make({
      log: streamLog,
      limits: { deadlineMs: limits.streamDeadlineMs },
      retention: { retainMs: limits.streamRetainMs, maxTotalBytes: limits.streamRetainedBytes },
      authenticateToken: (headers) => auth.authenticate(headers),
      authenticate: (headers, runId) =>
        auth.authenticate(headers).pipe(
          Effect.flatMap((principal) => readableRun(principal, runId)),
          Effect.provideService(Runs, runs)
        ),
      run: (runId) =>
        Effect.gen(function*() {
          const run = yield* runs.get(runId)
          const store = runs.store(run)
          // The verifier reads through the service's verified-capture cache; the manifest is kept once the run is finished.
          return yield* Effect.all({
            verifier: Verifier.make.pipe(CaptureCache.provideOption(cache)),
            manifest: runs.manifest(run)
          }).pipe(
            Effect.provide(Layer.merge(store, Policy.layer(config)))
          )
        }),
      mode: config.verify?.mode ?? "drop",
      uncited: Config.resolvedUncited(config),
      needsCitation: Config.resolvedCitationRule(config),
      citations: Config.resolvedCitations(config)
    })
    yield* router.concat(route.router)
  })
)
