/**
 * One judge request over HTTP, whatever the protocol: POST to the configured endpoint, read at most
 * `maxReplyBytes`, retry 429, 5xx and broken connections with doubling backoff, waiting exactly what
 * `retry-after` asks when it names a wait within `maxRetryAfterMs` (a longer wait fails at once).
 *
 * The API key goes into one header and nowhere else: every detail taken from the endpoint's answer or
 * a transport error has the key replaced by `[redacted]` before it becomes an error.
 *
 * @since 0.3.0
 */
import type * as HttpClient from "@effect/platform/HttpClient"
import * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import type * as HttpClientResponse from "@effect/platform/HttpClientResponse"
import * as Arr from "effect/Array"
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Redacted from "effect/Redacted"
import * as Stream from "effect/Stream"
import { type JudgeFailure, JudgeHttpStatus, JudgeReplyInvalid, JudgeTransport } from "../errors/Judge.js"
import type { JudgeSettings } from "./JudgeConfig.js"

/** What one protocol (OpenAI-compatible chat completions, Anthropic Messages) contributes. */
export interface Protocol {
  readonly provider: JudgeSettings["provider"]
  /** The headers carrying the key (only these see it). */
  readonly authHeaders: (key: string) => Record<string, string>
  /** Other headers the protocol needs (version, content type). */
  readonly headers: Record<string, string>
  /** The request body for one batch: model, temperature 0, the prompts, the output budget. */
  readonly body: (settings: JudgeSettings, system: string, user: string) => unknown
  /** The model's text out of the protocol's envelope (already JSON-parsed). */
  readonly replyText: (envelope: unknown) => Either.Either<string, JudgeReplyInvalid>
}

const decoder = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true })

/** Replaces every occurrence of the key in a detail, and cuts the detail to a readable length. */
export const redact = (detail: string, key: string): string =>
  (key.length === 0 ? detail : detail.split(key).join("[redacted]")).slice(0, 500)

/** `retry-after` in ms: delta-seconds or an HTTP date; `null` when absent or unreadable. */
export const retryAfterMs = (value: string | undefined, now: number): number | null => {
  if (value === undefined) return null
  const v = value.trim()
  if (/^\d{1,9}$/.test(v)) return Number(v) * 1000
  const at = Date.parse(v)
  return Number.isNaN(at) ? null : Math.max(0, at - now)
}

class ReadCap {
  constructor(readonly bytes: number) {}
}

/** The body, at most `cap` bytes; past it, the read stops (the request is aborted with its scope). */
const readCapped = (response: HttpClientResponse.HttpClientResponse, cap: number) =>
  Stream.runFoldEffect(response.stream, { chunks: [] as Array<Uint8Array>, total: 0 }, (read, chunk) => {
    read.chunks.push(chunk)
    read.total += chunk.byteLength
    return read.total > cap ? Effect.fail(new ReadCap(read.total)) : Effect.succeed(read)
  }).pipe(Effect.map((read) => Buffer.concat(read.chunks, read.total)))

type Attempt =
  | { readonly _tag: "ok"; readonly text: string }
  | { readonly _tag: "status"; readonly status: number; readonly retryAfter: number | null; readonly detail: string }
  | { readonly _tag: "transport"; readonly detail: string }

const describe = (error: unknown): string => {
  const parts: Array<string> = []
  for (let e: unknown = error, depth = 0; e !== undefined && depth < 6; depth++) {
    if (e instanceof Error && e.message !== "" && !parts.includes(e.message)) parts.push(e.message)
    e = typeof e === "object" && e !== null && "cause" in e ? e.cause : undefined
  }
  return parts.join(": ") || "transport error"
}

/** One POST: its outcome as data (retry decisions are the caller's), the reply's model text on 200. */
const attemptOnce = (
  client: HttpClient.HttpClient,
  settings: JudgeSettings,
  protocol: Protocol,
  key: Redacted.Redacted<string>,
  body: unknown
): Effect.Effect<Attempt, JudgeReplyInvalid> =>
  Effect.gen(function*() {
    const request = HttpClientRequest.post(settings.endpoint).pipe(
      HttpClientRequest.setHeaders({ ...protocol.headers, ...protocol.authHeaders(Redacted.value(key)), accept: "application/json" }),
      HttpClientRequest.bodyUnsafeJson(body)
    )
    const sent = yield* Effect.either(client.execute(request))
    if (Either.isLeft(sent)) return { _tag: "transport", detail: describe(sent.left) } as const
    const response = sent.right
    if (response.status !== 200) {
      const now = yield* Clock.currentTimeMillis
      const detail = yield* readCapped(response, 2048).pipe(
        Effect.map((bytes) => Buffer.from(bytes).toString("utf8")),
        Effect.orElseSucceed(() => "(body unreadable)")
      )
      return { _tag: "status", status: response.status, retryAfter: retryAfterMs(response.headers["retry-after"], now), detail } as const
    }
    const bytes = yield* Effect.either(readCapped(response, settings.limits.maxReplyBytes))
    if (Either.isLeft(bytes)) {
      return bytes.left instanceof ReadCap
        ? yield* new JudgeReplyInvalid({ issues: [{ path: "", message: `the reply is longer than maxReplyBytes (${settings.limits.maxReplyBytes} bytes)` }] })
        : { _tag: "transport", detail: describe(bytes.left) } as const
    }
    let envelope: unknown
    try {
      envelope = JSON.parse(decoder.decode(bytes.right))
    } catch (e) {
      return yield* new JudgeReplyInvalid({ issues: [{ path: "", message: `the reply is not JSON text: ${describe(e).slice(0, 200)}` }] })
    }
    const text = protocol.replyText(envelope)
    return Either.isLeft(text) ? yield* text.left : { _tag: "ok", text: text.right } as const
  }).pipe(Effect.scoped)

/** The model's text for one batch, with retries; every failure typed and free of the key. */
export const send = (
  client: HttpClient.HttpClient,
  settings: JudgeSettings,
  protocol: Protocol,
  key: Redacted.Redacted<string>,
  prompts: { readonly system: string; readonly user: string }
): Effect.Effect<string, JudgeFailure> =>
  Effect.gen(function*() {
    const body = protocol.body(settings, prompts.system, prompts.user)
    const secret = Redacted.value(key)
    const attempts = settings.limits.maxRetries + 1
    for (let n = 1; ; n++) {
      const result = yield* attemptOnce(client, settings, protocol, key, body).pipe(
        Effect.mapError((e) => new JudgeReplyInvalid({ issues: Arr.map(e.issues, (i) => ({ path: i.path, message: redact(i.message, secret) })) }))
      )
      if (result._tag === "ok") return result.text
      const retryable = result._tag === "transport" || result.status === 429 || result.status >= 500
      const failure = result._tag === "transport"
        ? new JudgeTransport({ attempts: n, detail: redact(result.detail, secret) })
        : new JudgeHttpStatus({ status: result.status, attempts: n, retryAfterMs: null, detail: redact(result.detail, secret) })
      if (!retryable || n >= attempts) return yield* failure
      const asked = result._tag === "status" ? result.retryAfter : null
      if (asked !== null && asked > settings.limits.maxRetryAfterMs) {
        return yield* new JudgeHttpStatus({ status: (result as { status: number }).status, attempts: n, retryAfterMs: asked, detail: redact(result.detail, secret) })
      }
      const wait = asked ?? settings.limits.retryBaseMs * 2 ** (n - 1)
      yield* Effect.annotateCurrentSpan("judge.retry", n)
      yield* Effect.sleep(Duration.millis(wait))
    }
  })
