/**
 * The trusted capture stage. It fetches operator-approved exact URLs over a
 * bounded, SSRF-guarded HTTP client and writes one immutable CaptureRecord per
 * source into the run's CaptureStore. Nothing a model writes reaches it: the
 * approved set comes from the operator's configuration.
 *
 * What it enforces, in order:
 * 1. URL policy, before any DNS lookup or socket (`capture/UrlPolicy.ts`).
 * 2. Address policy, inside the connector on the addresses actually used
 *    (`capture/AddressPolicy.ts`, `capture/Dispatcher.ts`).
 * 3. Response policy: 200 only, no redirects, `text/plain` UTF-8, identity
 *    encoding, unambiguous framing headers, a byte cap enforced while
 *    streaming, fatal UTF-8 decoding.
 * 4. One deadline by interruption over connect, headers and the whole body;
 *    interruption aborts the socket.
 * 5. The record is written atomically and exclusively; a failed capture writes nothing.
 *
 * @since 0.1.0
 */
import * as HttpClient from "@effect/platform/HttpClient"
import type * as HttpClientError from "@effect/platform/HttpClientError"
import * as HttpClientResponse from "@effect/platform/HttpClientResponse"
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import { Clock, Context, Data, Duration, Effect, Either, Layer, Option, Stream } from "effect"
import { CaptureStore } from "./CaptureStore.js"
import { captureLimits } from "./Config.js"
import * as Dispatcher from "./capture/Dispatcher.js"
import * as UrlPolicy from "./capture/UrlPolicy.js"
import { type CaptureRecord, captureFormat, type CaptureRef, type Rfc3339Utc, sha256Of, type SourceUrl } from "./Domain.js"
import {
  AddressRejected,
  AmbiguousHeader,
  type CaptureError,
  ConnectionFailed,
  InvalidBudget,
  InvalidEncoding,
  RedirectRejected,
  Timeout,
  TooLarge,
  TruncatedBody,
  UnexpectedStatus,
  UnsupportedContentEncoding,
  UnsupportedContentType
} from "./Errors.js"
import { version } from "./version.js"

/**
 * @since 0.1.0
 * @category models
 */
export type CaptureEvent = Data.TaggedEnum<{
  Started: { readonly source: string }
  Captured: { readonly source: string; readonly ref: CaptureRef }
  Failed: { readonly source: string; readonly error: CaptureError }
}>
export const CaptureEvent = Data.taggedEnum<CaptureEvent>()

/**
 * One source's own result: a failure never loses the other sources' captures.
 *
 * @since 0.1.0
 * @category models
 */
export interface CaptureResult {
  readonly source: string
  readonly result: Either.Either<CaptureRef, CaptureError>
}

/**
 * @since 0.1.0
 * @category models
 */
export interface CaptureShape {
  /** Capture one approved source into the run's store. */
  readonly capture: (source: string) => Effect.Effect<CaptureRef, CaptureError>
  /** Capture a list with bounded concurrency, reporting progress; every source gets its own result, in input order. */
  readonly captureAll: (
    sources: Iterable<string>,
    options?: { readonly onEvent?: ((event: CaptureEvent) => Effect.Effect<void>) | undefined }
  ) => Effect.Effect<ReadonlyArray<CaptureResult>>
}

/**
 * @since 0.1.0
 * @category tags
 */
export class Capture extends Context.Tag("citegate/Capture")<Capture, CaptureShape>() {}

/**
 * @since 0.1.0
 * @category models
 */
export interface CaptureOptions {
  /** The operator's approved URLs; only exact members are fetched. */
  readonly approved: Iterable<string>
  /** One deadline for connect, headers and body, in milliseconds. */
  readonly timeoutMs?: number | undefined
  /** Largest body accepted, in bytes. */
  readonly maxBytes?: number | undefined
  /** Sources fetched at once by `captureAll`. */
  readonly concurrency?: number | undefined
  /** Test mode: plain http to the literal host 127.0.0.1 only. Off unless passed. */
  readonly allowLoopbackHttp?: boolean | undefined
  /** Host name resolution; defaults to the system resolver. */
  readonly resolver?: Dispatcher.Resolver | undefined
  /** Socket opening after the address check; replaceable only to inject network faults in tests. */
  readonly socketConnector?: Dispatcher.Connector | undefined
}

export interface Budgets {
  readonly timeoutMs: number
  readonly maxBytes: number
  readonly concurrency: number
}

/** Validate budgets: positive integers within sane upper bounds. */
export const validateBudgets = (options: Partial<Record<keyof Budgets, number | undefined>>) =>
  Effect.forEach(["timeoutMs", "maxBytes", "concurrency"] as const, (budget) => {
    const limits = captureLimits[budget]
    const value = options[budget] ?? limits.default
    return Number.isInteger(value) && value >= limits.min && value <= limits.max
      ? Effect.succeed([budget, value] as const)
      : Effect.fail(
        new InvalidBudget({ budget, value, detail: `must be an integer from ${limits.min} to ${limits.max}` })
      )
  }).pipe(Effect.map((entries) => Object.fromEntries(entries) as unknown as Budgets))

/** `text/plain`, with no parameter but an optional `charset=utf-8` (case-insensitive, quoted allowed). */
export const isPlainTextUtf8 = (contentType: string): boolean => {
  const [mediaType, ...parameters] = contentType.split(";").map((part) => part.trim())
  if (mediaType?.toLowerCase() !== "text/plain") return false
  const nonEmpty = parameters.filter((p) => p !== "")
  if (nonEmpty.length === 0) return true
  if (nonEmpty.length > 1) return false
  const match = /^charset\s*=\s*(?:"utf-8"|utf-8)$/i.exec(nonEmpty[0]!)
  return match !== null
}

const headerValue = (response: HttpClientResponse.HttpClientResponse, name: string): string | null =>
  Option.getOrNull(Option.fromNullable(response.headers[name]))

/** Finds an error of the given class anywhere in a cause chain. */
const findCause = <A>(error: unknown, isA: (u: unknown) => u is A): A | undefined => {
  for (let current: unknown = error, depth = 0; current !== undefined && depth < 10; depth++) {
    if (isA(current)) return current
    current = typeof current === "object" && current !== null && "cause" in current ? current.cause : undefined
  }
  return undefined
}

const describeCause = (error: unknown): string => {
  const messages: Array<string> = []
  for (let current: unknown = error, depth = 0; current !== undefined && depth < 10; depth++) {
    if (current instanceof Error) {
      const code = "code" in current ? ` (${String(current.code)})` : ""
      if (current.message !== "" && !messages.includes(current.message + code)) messages.push(current.message + code)
    }
    current = typeof current === "object" && current !== null && "cause" in current ? current.cause : undefined
  }
  return messages.join(": ") || "transport error"
}

/** Bodies with a Content-Length up to this size are read whole (cheapest); larger ones into one buffer as they arrive. */
const wholeReadBytes = 1024 * 1024

const isAddressRefused = (u: unknown): u is Dispatcher.AddressRefusedError =>
  u instanceof Dispatcher.AddressRefusedError

/**
 * @since 0.1.0
 * @category constructors
 */
export const make = Effect.fn("Capture.make")(function*(options: CaptureOptions) {
  const budgets = yield* validateBudgets(options)
  const store = yield* CaptureStore
  const allowLoopbackHttp = options.allowLoopbackHttp === true
  const approved = new Set(options.approved)
  const dispatcher = yield* Dispatcher.make({
    allowLoopbackHttp,
    resolver: options.resolver,
    socketConnector: options.socketConnector
  })
  const client = NodeHttpClient.makeUndici(dispatcher).pipe(
    HttpClient.withTracerPropagation(false),
    // Closing the request's scope aborts it, so a response rejected before its body is read frees the socket.
    HttpClient.withScope
  )
  const headers = {
    "user-agent": `citegate/${version}`,
    "accept": "text/plain",
    "accept-encoding": "identity"
  }

  const transportError = (source: SourceUrl) => (error: HttpClientError.HttpClientError | Error): CaptureError => {
    const refused = findCause(error, isAddressRefused)
    if (refused !== undefined) {
      return new AddressRejected({ source, host: refused.host, address: refused.address, reason: refused.reason })
    }
    return new ConnectionFailed({ source, detail: describeCause(error) })
  }

  /** Checks status and headers; yields the content type and the declared length, if any. */
  const checkResponse = (source: SourceUrl, response: HttpClientResponse.HttpClientResponse) =>
    Effect.gen(function*() {
      const status = response.status
      if (status >= 300 && status < 400) {
        return yield* new RedirectRejected({ source, status, location: headerValue(response, "location") })
      }
      if (status !== 200) return yield* new UnexpectedStatus({ source, status })
      // A repeated header arrives joined with ", "; none of these legitimately contains a comma.
      for (const name of ["content-type", "content-length", "content-encoding"]) {
        const value = headerValue(response, name)
        if (value !== null && value.includes(",")) return yield* new AmbiguousHeader({ source, header: name, value })
      }
      const encoding = headerValue(response, "content-encoding")
      if (encoding !== null && encoding.trim().toLowerCase() !== "identity") {
        return yield* new UnsupportedContentEncoding({ source, contentEncoding: encoding })
      }
      const contentType = headerValue(response, "content-type")
      if (contentType === null || !isPlainTextUtf8(contentType)) {
        return yield* new UnsupportedContentType({ source, contentType })
      }
      const contentLength = headerValue(response, "content-length")
      if (contentLength === null) return { contentType, declared: null }
      if (!/^\d+$/.test(contentLength.trim())) {
        return yield* new AmbiguousHeader({ source, header: "content-length", value: contentLength })
      }
      const declared = Number(contentLength.trim())
      if (declared > budgets.maxBytes) {
        return yield* new TooLarge({ source, maxBytes: budgets.maxBytes, declaredBytes: declared, receivedBytes: 0 })
      }
      return { contentType, declared }
    })

  /**
   * Reads the body within the cap. With a Content-Length (already checked
   * against the cap) the HTTP parser frames the body to exactly that length, so
   * it is read whole; otherwise it is streamed and the request aborted as soon
   * as the total passes the cap. Either way memory holds at most the cap plus
   * one chunk.
   */
  const readBody = (
    source: SourceUrl,
    response: HttpClientResponse.HttpClientResponse,
    declared: number | null
  ): Effect.Effect<Buffer, CaptureError> => {
    if (declared !== null && declared > wholeReadBytes) {
      // Copied into one buffer of the declared size as it arrives: `arrayBuffer` would hold every chunk and
      // their concatenation at once, twice the body.
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
        Effect.catchTag("ResponseError", (error) => {
          const refused = transportError(source)(error)
          return Effect.fail(
            refused._tag === "ConnectionFailed"
              ? new TruncatedBody({ source, expectedBytes: declared, receivedBytes: null })
              : refused
          )
        }),
        Effect.flatMap(() =>
          filled === declared
            ? Effect.succeed(body)
            : Effect.fail(new TruncatedBody({ source, expectedBytes: declared, receivedBytes: filled }))
        )
      )
    }
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
    // Past 1 MiB, chunks go into one buffer of the cap instead of a list concatenated at the end (which
    // holds the body twice). Its pages become resident only as they are written, so it costs what arrived.
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

  const fetchBody = (source: SourceUrl) =>
    Effect.gen(function*() {
      const response = yield* client.get(source, { headers }).pipe(Effect.mapError(transportError(source)))
      const { contentType, declared } = yield* checkResponse(source, response)
      const body = yield* readBody(source, response, declared)
      return { contentType, body }
    }).pipe(
      Effect.scoped,
      // One deadline for everything on the wire; interruption aborts the socket.
      Effect.timeoutFail({
        duration: Duration.millis(budgets.timeoutMs),
        onTimeout: () => new Timeout({ source, timeoutMs: budgets.timeoutMs })
      })
    )

  const utf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true })

  const capture = Effect.fn("Capture.capture")(function*(input: string) {
    const checked = UrlPolicy.check(input, { approved, allowLoopbackHttp })
    if (typeof checked !== "string") return yield* checked
    const source = checked
    const { body, contentType } = yield* fetchBody(source)
    let text: string
    try {
      text = utf8.decode(body)
    } catch {
      return yield* new InvalidEncoding({ source, byteLength: body.byteLength })
    }
    const accessedAt = new Date(yield* Clock.currentTimeMillis).toISOString() as Rfc3339Utc
    // Every field is valid by construction (policy-checked URL, computed digest and length, ISO time,
    // fatally decoded text), so a multi-megabyte text is not validated a second time.
    const record: CaptureRecord = {
      format: captureFormat,
      source,
      sha256: sha256Of(body),
      accessedAt,
      contentType,
      byteLength: body.byteLength,
      text
    }
    yield* store.write(record)
    const ref: CaptureRef = { source, sha256: record.sha256, accessedAt, byteLength: record.byteLength }
    return ref
  })

  const captureAll: CaptureShape["captureAll"] = (sources, captureOptions) => {
    const emit = captureOptions?.onEvent ?? (() => Effect.void)
    return Effect.forEach(
      sources,
      (source) =>
        emit(CaptureEvent.Started({ source })).pipe(
          Effect.zipRight(Effect.either(capture(source))),
          Effect.tap((result) =>
            Either.match(result, {
              onLeft: (error) => emit(CaptureEvent.Failed({ source, error })),
              onRight: (ref) => emit(CaptureEvent.Captured({ source, ref }))
            })
          ),
          Effect.map((result): CaptureResult => ({ source, result }))
        ),
      { concurrency: budgets.concurrency }
    ).pipe(Effect.withSpan("Capture.captureAll"))
  }

  return Capture.of({ capture, captureAll })
})

/**
 * The capture stage as a layer. The HTTP dispatcher lives in the layer's scope
 * and is closed with it.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (options: CaptureOptions): Layer.Layer<Capture, InvalidBudget, CaptureStore> =>
  Layer.scoped(Capture, make(options))
