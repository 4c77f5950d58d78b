/**
 * The entailment judge: asks a configured model endpoint whether each verified quote supports its
 * claim, in batches with bounded concurrency and one deadline for all of a verification's items.
 *
 * `judge` never fails: an item the endpoint failed on, or whose reply was refused, or that the
 * deadline cut off, comes back as `error` with its typed `JudgeFailure`, and `error` never counts as
 * support. The judge reads only what it is given (verified quotes); it talks to its configured
 * endpoint, never to a report's sources.
 *
 * @since 0.3.0
 */
import * as HttpClient from "@effect/platform/HttpClient"
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import * as Arr from "effect/Array"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import type * as Redacted from "effect/Redacted"
import { type JudgeFailure, JudgeTimeout } from "../errors/Judge.js"
import * as JudgeAnthropic from "./JudgeAnthropic.js"
import type { JudgeSettings } from "./JudgeConfig.js"
import { type Protocol, send } from "./JudgeHttp.js"

/** The settings and wire protocol a judge runs with, named by its public signatures. */
export type { JudgeSettings } from "./JudgeConfig.js"
export type { Protocol } from "./JudgeHttp.js"
import * as JudgeOpenAi from "./JudgeOpenAi.js"
import { decodeVerdicts, sanitize, systemPrompt, userPrompt } from "./JudgePrompt.js"
import type { JudgeItem, JudgeResult } from "./Records.js"

/** A judged item, with whether its claim or quote was cut to the limits before it was sent. */
export type Judged = JudgeResult & { readonly cut: boolean }

/**
 * @since 0.3.0
 * @category models
 */
export interface JudgeShape {
  /** Provider, endpoint, model, mode and limits (never the key). */
  readonly settings: JudgeSettings
  /** One verdict per item, in the items' order; failures are `error` results, never a failed effect. */
  readonly judge: (items: ReadonlyArray<JudgeItem>) => Effect.Effect<ReadonlyArray<Judged>>
}

/**
 * @since 0.3.0
 * @category tags
 */
export class Judge extends Context.Tag("citegate/Judge")<Judge, JudgeShape>() {}

/** The protocol of a configured provider. */
export const protocolOf = (provider: JudgeSettings["provider"]): Protocol =>
  provider === "openai" ? JudgeOpenAi.protocol : JudgeAnthropic.protocol

/**
 * @since 0.3.0
 * @category constructors
 */
export const make = (options: {
  readonly settings: JudgeSettings
  readonly apiKey: Redacted.Redacted<string>
  readonly protocol?: Protocol | undefined
}): Effect.Effect<JudgeShape, never, HttpClient.HttpClient> =>
  Effect.gen(function*() {
    const client = (yield* HttpClient.HttpClient).pipe(HttpClient.withTracerPropagation(false))
    const { settings } = options
    const protocol = options.protocol ?? protocolOf(settings.provider)
    const { limits } = settings

    const judgeBatch = (batch: ReadonlyArray<JudgeItem>) =>
      send(client, settings, protocol, options.apiKey, { system: systemPrompt, user: userPrompt(batch) }).pipe(
        Effect.flatMap((text) => decodeVerdicts(text, batch.map((item) => item.id))),
        Effect.either,
        Effect.withSpan("Judge.batch", { attributes: { items: batch.length } })
      )

    const judge = Effect.fn("Judge.judge")(function*(items: ReadonlyArray<JudgeItem>) {
      const prepared = items.map((item) => {
        const claim = sanitize(item.claim, limits.maxClaimChars)
        const quote = sanitize(item.quote, limits.maxQuoteChars)
        return { item: { id: item.id, claim: claim.text, quote: quote.text }, cut: claim.cut || quote.cut }
      })
      // Results land here as batches finish, so the deadline keeps what was judged before it.
      const done = new Map<string, JudgeResult>()
      const fail = (batch: ReadonlyArray<JudgeItem>, error: JudgeFailure) => {
        for (const item of batch) done.set(item.id, { id: item.id, verdict: "error", error })
      }
      const batches = Arr.chunksOf(prepared.map((p) => p.item), limits.batchSize)
      yield* Effect.forEach(batches, (batch) =>
        Effect.map(judgeBatch(batch), (result) => {
          if (Either.isLeft(result)) return fail(batch, result.left)
          for (const verdict of result.right) done.set(verdict.id, verdict)
        }), { concurrency: limits.concurrency, discard: true }).pipe(
          Effect.timeoutOption(Duration.millis(limits.timeoutMs))
        )
      const late = new JudgeTimeout({ timeoutMs: limits.timeoutMs })
      return prepared.map(({ cut, item }): Judged => ({ ...(done.get(item.id) ?? { id: item.id, verdict: "error", error: late }), cut }))
    })

    return Judge.of({ settings, judge })
  })

/**
 * The judge over its own HTTP client (an undici dispatcher that lives as long as the layer). The key
 * is held as `Redacted`: it prints as `<redacted>` wherever the settings or the service are logged.
 *
 * @since 0.3.0
 * @category layers
 */
export const layer = (options: {
  readonly settings: JudgeSettings
  readonly apiKey: Redacted.Redacted<string>
}): Layer.Layer<Judge> =>
  Layer.scoped(
    Judge,
    Effect.gen(function*() {
      const dispatcher = yield* NodeHttpClient.makeDispatcher
      return yield* make(options).pipe(Effect.provideService(HttpClient.HttpClient, NodeHttpClient.makeUndici(dispatcher)))
    })
  )
