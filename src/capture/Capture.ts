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
 * 3. Response policy: 200 only, no redirects, a content type the operator
 *    allows (`capture.contentTypes`, default `text/plain` UTF-8), identity
 *    encoding, unambiguous framing headers, a byte cap enforced while
 *    streaming (`capture/Response.ts`, `capture/Body.ts`), fatal UTF-8 decoding.
 *    Markdown, HTML and PDF bodies are extracted (`extract/`) into v2 records
 *    that keep the body beside them.
 * 4. TLS: certificates always verified, against Node's bundled roots plus the
 *    operator's CA file, whatever the environment says (`capture/Trust.ts`).
 * 5. One deadline by interruption over connect, headers, the whole body and
 *    extraction (`capture/Deadline.ts`); interruption aborts the socket or kills the extraction process.
 *    Extraction runs in separate processes with a heap and a memory limit
 *    (`extract/Runner.ts`): a hostile body never stops or kills this one.
 * 6. The record is written atomically and exclusively; a failed capture writes nothing.
 *
 * @since 0.1.0
 */
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import { CaptureStore } from "../store/CaptureStore.js"
import * as Deadline from "./Deadline.js"
import * as Dispatcher from "./Dispatcher.js"
import { captureAllNow } from "./CaptureAllNow.js"
import { fetchBody, fetchPlainTextWithin, type FetchPolicy, startPlainText } from "./Fetch.js"
import { writeNowOf } from "../internal/writeNow.js"
import * as Trust from "./Trust.js"
import * as UrlPolicy from "./UrlPolicy.js"
import { type ContentType, captureLimits, defaultContentTypes, extractionLimits } from "../Config.js"
import {
  type CaptureRecord,
  type CaptureRecordV1,
  type CaptureRecordV2,
  captureFormat,
  captureFormatV2,
  type CaptureRef,
  type Rfc3339Utc,
  sha256Of,
  type SourceUrl
} from "../Domain.js"
import { type CaptureError, CaptureWriteFailed, InvalidBudget, type InvalidCaFile, NotApproved, Timeout } from "../Errors.js"
import * as CaptureAttestation from "../evidence/CaptureAttestation.js"
import type { SigningKey } from "../evidence/Signatures.js"
import type { Extracted, ExtractionLimits } from "../extract/Records.js"

/** The extraction caps `validateCaps` resolves. */
export type { ExtractionLimits } from "../extract/Records.js"
import * as Runner from "../extract/Runner.js"
import { version } from "../version.js"
import { exported, spanAttributes, tagFailure } from "../internal/Spans.js"

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
  /** Test mode: http (and https) to the literal host 127.0.0.1 only. Off unless passed. */
  readonly allowLoopbackHttp?: boolean | undefined
  /** Host name resolution; defaults to the system resolver. */
  readonly resolver?: Dispatcher.Resolver | undefined
  /** Socket opening after the address check; replaceable only to inject network faults in tests. */
  readonly socketConnector?: Dispatcher.Connector | undefined
  /** Extra CA certificates (PEM text) trusted besides Node's bundled roots, e.g. an operator's private CA. */
  readonly ca?: string | ReadonlyArray<string> | undefined
  /** A PEM file of extra CA certificates (`capture.caFile`), read when the stage starts. */
  readonly caFile?: string | undefined
  /** Media types that may be captured (`capture.contentTypes`); default `text/plain` only. */
  readonly contentTypes?: ReadonlyArray<ContentType> | undefined
  /** Extraction caps (`capture.maxPages`, `maxCharacters`, `maxDepth`); defaults in Config.extractionLimits. */
  readonly maxPages?: number | undefined
  readonly maxCharacters?: number | undefined
  readonly maxDepth?: number | undefined
  /**
   * The operator's Ed25519 key (`capture.signing.keyFile`, loaded with `Signatures.loadSigningKey`):
   * when given, every record written is followed by its signed attestation
   * (src/evidence/CaptureAttestation.ts), kept by the store beside it.
   */
  readonly signingKey?: SigningKey | undefined
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

/** Validate extraction caps: integers within their documented ranges. */
export const validateCaps = (options: Partial<Record<keyof ExtractionLimits, number | undefined>>) =>
  Effect.forEach(["maxPages", "maxCharacters", "maxDepth"] as const, (cap) => {
    const limits = extractionLimits[cap]
    const value = options[cap] ?? limits.default
    return Number.isInteger(value) && value >= limits.min && value <= limits.max
      ? Effect.succeed([cap, value] as const)
      : Effect.fail(new InvalidBudget({ budget: cap, value, detail: `must be an integer from ${limits.min} to ${limits.max}` }))
  }).pipe(Effect.map((entries) => Object.fromEntries(entries) as unknown as ExtractionLimits))

/** `text/plain`, with no parameter but an optional `charset=utf-8` (case-insensitive, quoted allowed). */
export { isPlainTextUtf8 } from "./Response.js"

/** The validated settings of a stage: budgets, extraction caps, and what every request sends and accepts. */
const settings = (options: CaptureOptions) =>
  Effect.gen(function*() {
    const budgets = yield* validateBudgets(options)
    const caps = yield* validateCaps(options)
    const contentTypes: ReadonlyArray<ContentType> = options.contentTypes ?? defaultContentTypes
    const fetchPolicy: FetchPolicy = {
      maxBytes: budgets.maxBytes,
      contentTypes,
      headers: { "user-agent": `citegate/${version}`, "accept": contentTypes.join(", "), "accept-encoding": "identity" }
    }
    return {
      budgets,
      caps,
      contentTypes,
      fetchPolicy,
      approved: new Set(options.approved),
      allowLoopbackHttp: options.allowLoopbackHttp === true
    }
  })

/**
 * The record's attestation, right after the record (a crash in between leaves it unsigned: refused
 * under `require`). Without a signing key, nothing.
 */
const attester = (store: CaptureStore["Type"], signingKey: SigningKey | undefined) =>
(record: CaptureRecord): Effect.Effect<void, CaptureError> => {
  if (signingKey === undefined) return Effect.void
  if (store.writeAttestation === undefined) {
    return Effect.fail(
      new CaptureWriteFailed({ source: record.source, detail: "this store keeps no attestations, and capture.signing is set" })
    )
  }
  return store.writeAttestation(record.source, CaptureAttestation.sign(record, signingKey))
}

/** What one fetch produced: the body as sent, its content type, and the text extracted from it. */
interface Fetched {
  readonly body: Buffer
  readonly contentType: string
  readonly extracted: Extracted
}

/** The v1 record of a `text/plain` source: the text is the body. */
const plainRecord = (
  source: SourceUrl,
  accessedAt: Rfc3339Utc,
  body: Buffer,
  contentType: string,
  text: string
): CaptureRecordV1 => ({
  format: captureFormat,
  source,
  sha256: sha256Of(body),
  accessedAt,
  contentType,
  byteLength: body.byteLength,
  text
})

/**
 * The record of a fetched source: v1 for `text/plain` (the text is the body), else v2 with the body
 * beside it. Every field is valid by construction (policy-checked URL, computed digest and length, ISO
 * time, fatally decoded text), so a multi-megabyte text is not validated a second time.
 */
const toRecord = (source: SourceUrl, accessedAt: Rfc3339Utc, { body, contentType, extracted }: Fetched): CaptureRecord => {
  if (extracted.extraction === "text/1") return plainRecord(source, accessedAt, body, contentType, extracted.text)
  const record: CaptureRecordV2 = {
    format: captureFormatV2,
    source,
    sha256: sha256Of(extracted.text),
    accessedAt,
    extraction: extracted.extraction,
    body: { sha256: sha256Of(body), byteLength: body.byteLength, contentType },
    ...(extracted.pages === undefined ? {} : { pages: extracted.pages }),
    ...(extracted.headings === undefined ? {} : { headings: extracted.headings }),
    ...(extracted.bodyMap === undefined ? {} : { bodyMap: extracted.bodyMap }),
    ...(extracted.hidden === undefined || extracted.hidden.length === 0 ? {} : { hidden: extracted.hidden }),
    text: extracted.text
  }
  return record
}

/**
 * `captureAll` over one `capture`: bounded concurrency, events around each source (when someone
 * listens: without `onEvent` no event is made), results in input order.
 */
const captureAllOf = (
  capture: CaptureShape["capture"],
  concurrency: number
): CaptureShape["captureAll"] =>
(sources, captureOptions) => {
  const emit = captureOptions?.onEvent
  const one = emit === undefined
    ? (source: string) => Effect.map(Effect.either(capture(source)), (result): CaptureResult => ({ source, result }))
    : (source: string) =>
      emit(CaptureEvent.Started({ source })).pipe(
        Effect.zipRight(Effect.either(capture(source))),
        Effect.tap((result) =>
          Either.match(result, {
            onLeft: (error) => emit(CaptureEvent.Failed({ source, error })),
            onRight: (ref) => emit(CaptureEvent.Captured({ source, ref }))
          })
        ),
        Effect.map((result): CaptureResult => ({ source, result }))
      )
  return Effect.forEach(sources, one, { concurrency }).pipe(Effect.withSpan("Capture.captureAll"))
}

/**
 * @since 0.1.0
 * @category constructors
 */
export const make = Effect.fn("Capture.make")(function*(options: CaptureOptions) {
  const { allowLoopbackHttp, approved, budgets, caps, contentTypes, fetchPolicy } = yield* settings(options)
  const store = yield* CaptureStore
  const ca = yield* Trust.loadExtraCa(options)
  const dispatcher = yield* Dispatcher.make({
    allowLoopbackHttp,
    resolver: options.resolver,
    socketConnector: options.socketConnector,
    ca
  })
  // Markdown, HTML and PDF are parsed in extraction processes that live as long as this layer; when those
  // types are accepted, the first capture starts one, so its start-up overlaps the fetch.
  const runner = yield* Runner.make({ maxBytes: budgets.maxBytes, size: budgets.concurrency })
  const warm = contentTypes.some((type) => type !== "text/plain") ? runner.warm : Effect.void
  const attest = attester(store, options.signingKey)

  /**
   * The body and, for the extracted types, its text, all under ONE deadline:
   * connect, headers, body and extraction. Interruption aborts the socket, or
   * kills the extraction process.
   */
  const extracting = (target: UrlPolicy.Target): Effect.Effect<Fetched, CaptureError> =>
    Deadline.within(
      Effect.flatMap(fetchBody(dispatcher, target, fetchPolicy), ({ body, contentType }) =>
        Effect.map(runner.extract(target.source, contentType, body, caps), (extracted) => ({ body, contentType, extracted }))),
      budgets.timeoutMs,
      () => new Timeout({ source: target.source, timeoutMs: budgets.timeoutMs })
    )

  /**
   * A stage that accepts `text/plain` only has nothing to extract: the same fetch, checks, decode and
   * deadline as one asynchronous step (`fetchPlainTextWithin`), without the deadline's fiber.
   */
  const plainText = (target: UrlPolicy.Target): Effect.Effect<Fetched, CaptureError> =>
    Effect.map(
      fetchPlainTextWithin(
        dispatcher,
        target,
        fetchPolicy,
        budgets.timeoutMs,
        () => new Timeout({ source: target.source, timeoutMs: budgets.timeoutMs })
      ),
      ({ body, contentType, text }): Fetched => ({ body, contentType, extracted: { extraction: "text/1", text } })
    )

  const plainOnly = contentTypes.every((type) => type === "text/plain")
  const fetchAndExtract = plainOnly ? plainText : (target: UrlPolicy.Target) => Effect.zipRight(warm, extracting(target))

  // Parsed and checked once per approved source for the stage's life.
  const checkUrl = UrlPolicy.checker({ approved, allowLoopbackHttp })

  /** One capture, as plain steps: policy, fetch (under the deadline), record, attestation. */
  const captureOne = (input: string): Effect.Effect<CaptureRef, CaptureError> => {
    const target = checkUrl(input)
    if (target instanceof NotApproved) return Effect.fail(target)
    const source = target.source
    return fetchAndExtract(target).pipe(
      Effect.flatMap((fetched) =>
        Effect.flatMap(Clock.currentTimeMillis, (now) => {
          const accessedAt = new Date(now).toISOString() as Rfc3339Utc
          const record = toRecord(source, accessedAt, fetched)
          const ref: CaptureRef = { source, sha256: record.sha256, accessedAt, byteLength: fetched.body.byteLength }
          return (record.format === captureFormat ? store.write(record) : store.write(record, fetched.body)).pipe(
            Effect.zipRight(attest(record)),
            Effect.as(ref)
          )
        })
      )
    )
  }

  /**
   * The `Capture.capture` span, with the source (only when it is an approved one: a span never carries
   * an arbitrary string) and a failure's tag, when spans leave the process (`Spans.exported`). Under
   * Effect's in-process tracer nobody reads it, and a span per capture of a small source was a
   * measurable part of its cost (docs/performance.md).
   */
  const capture = (input: string): Effect.Effect<CaptureRef, CaptureError> =>
    Effect.flatMap(exported, (on) =>
      on
        ? Effect.withSpan(tagFailure(captureOne(input)), "Capture.capture", {
          attributes: approved.has(input) ? { [spanAttributes.source]: input } : {},
          captureStackTrace: false
        })
        : captureOne(input))

  const captureAll = captureAllOf(capture, budgets.concurrency)
  // The whole list in one step (`CaptureAllNow.ts`) when nothing but the record is to be done per
  // source: `text/plain` only, a store that writes without an effect, no signing, no events, no
  // exported spans. Otherwise, or when any of those is on, one `capture` per source.
  const writeNow = plainOnly && options.signingKey === undefined ? writeNowOf(store.write) : undefined
  const allNow = writeNow === undefined ? undefined : (clock: Clock.Clock) =>
    captureAllNow({
      checkUrl,
      fetch: (target, done) =>
        startPlainText(
          dispatcher,
          target,
          fetchPolicy,
          budgets.timeoutMs,
          () => new Timeout({ source: target.source, timeoutMs: budgets.timeoutMs }),
          done
        ),
      record: (target, { body, contentType, text }, now) =>
        plainRecord(target.source, new Date(now).toISOString() as Rfc3339Utc, body, contentType, text),
      writeNow,
      concurrency: budgets.concurrency
    }, clock)

  return Capture.of({
    capture,
    captureAll: allNow === undefined ? captureAll : (sources, captureOptions) =>
      captureOptions?.onEvent !== undefined ? captureAll(sources, captureOptions) : Effect.flatMap(exported, (on) =>
        on ? captureAll(sources) : Effect.clockWith((clock) => allNow(clock)(sources)).pipe(Effect.withSpan("Capture.captureAll")))
  })
})

/**
 * The capture stage as a layer. The HTTP dispatcher lives in the layer's scope
 * and is closed with it.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (options: CaptureOptions): Layer.Layer<Capture, InvalidBudget | InvalidCaFile, CaptureStore> =>
  Layer.scoped(Capture, make(options))
