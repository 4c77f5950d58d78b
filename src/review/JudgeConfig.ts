/**
 * `review.judge` in pipeline.json: whether verified citations are sent to an entailment judge, which
 * endpoint speaks which protocol, and the judge's limits. Strict (unknown keys are errors) and
 * bounded. The API key is never part of it: only where to read it (`apiKeyEnv` or `apiKeyFile`).
 *
 * @since 0.3.0
 */
import * as Schema from "effect/Schema"

const strict = { parseOptions: { onExcessProperty: "error" } } as const

const intBetween = (min: number, max: number) =>
  Schema.Int.pipe(Schema.between(min, max, { message: () => `must be an integer from ${min} to ${max}` }))

/** Limits and defaults of `review.judge` (docs/review.md). */
export const judgeLimits = {
  /** Citations per request. */
  batchSize: { min: 1, max: 50, default: 8 },
  /** Requests in flight at once. */
  concurrency: { min: 1, max: 16, default: 2 },
  /** Retries of one request after a 429, a 5xx or a broken connection. */
  maxRetries: { min: 0, max: 5, default: 2 },
  /** First backoff; doubled per retry (when the answer names no `retry-after`). */
  retryBaseMs: { min: 1, max: 60_000, default: 500 },
  /** Longest `retry-after` waited for; a longer one fails the request at once (`JudgeHttpStatus`). */
  maxRetryAfterMs: { min: 0, max: 120_000, default: 30_000 },
  /** One deadline for judging all of a verification's citations. */
  timeoutMs: { min: 1, max: 600_000, default: 60_000 },
  /** Code points of a claim sent to the judge; longer claims are cut (and marked cut). */
  maxClaimChars: { min: 16, max: 20_000, default: 2_000 },
  /** Code points of a quote sent to the judge; longer quotes are cut (and marked cut). */
  maxQuoteChars: { min: 16, max: 50_000, default: 4_000 },
  /** Output tokens the judge may use per request. */
  maxTokens: { min: 16, max: 32_768, default: 1_024 },
  /** Bytes of one reply read; past it the request is refused (`JudgeReplyInvalid`). */
  maxReplyBytes: { min: 1_024, max: 16 * 1024 * 1024, default: 1024 * 1024 }
} as const

export type JudgeLimit = keyof typeof judgeLimits

/** `off` (default): no judge. `report`: every rendering shows the judge's outcome. `require`: also fails the run when a grounded claim is not supported. */
export const JudgeMode = Schema.Literal("off", "report", "require")
export type JudgeMode = typeof JudgeMode.Type

export const JudgeProvider = Schema.Literal("openai", "anthropic")
export type JudgeProvider = typeof JudgeProvider.Type

/** An http(s) URL without credentials or fragment: where requests are POSTed, as given. */
export const JudgeEndpoint = Schema.String.pipe(
  Schema.filter((s) => {
    if (s.length > 2048) return "must be a URL of at most 2048 characters"
    let url: URL
    try {
      url = new URL(s)
    } catch {
      return "must be an absolute http(s) URL"
    }
    if (url.protocol !== "https:" && url.protocol !== "http:") return "must be an http(s) URL"
    if (url.username !== "" || url.password !== "") return "must not carry credentials (the key is read from apiKeyEnv or apiKeyFile)"
    if (url.hash !== "") return "must not have a fragment"
    return true
  })
)

const limitField = (limit: JudgeLimit) => Schema.optional(intBetween(judgeLimits[limit].min, judgeLimits[limit].max))

export const JudgeConfig = Schema.Struct({
  mode: Schema.optional(JudgeMode),
  provider: Schema.optional(JudgeProvider),
  endpoint: Schema.optional(JudgeEndpoint),
  model: Schema.optional(Schema.String.pipe(Schema.pattern(/^[\x21-\x7e]{1,200}$/, { message: () => "must be 1 to 200 printable ASCII characters without spaces" }))),
  /** The environment variable holding the API key (its name; never the key). */
  apiKeyEnv: Schema.optional(Schema.String.pipe(Schema.pattern(/^[A-Za-z_][A-Za-z0-9_]{0,127}$/, { message: () => "must be an environment variable name" }))),
  /** A file holding the API key (resolved against pipeline.json's directory); read once at start. */
  apiKeyFile: Schema.optional(Schema.String.pipe(Schema.filter((s) => (s.length >= 1 && s.length <= 4096) || "must be a path of 1 to 4096 characters"))),
  batchSize: limitField("batchSize"),
  concurrency: limitField("concurrency"),
  maxRetries: limitField("maxRetries"),
  retryBaseMs: limitField("retryBaseMs"),
  maxRetryAfterMs: limitField("maxRetryAfterMs"),
  timeoutMs: limitField("timeoutMs"),
  maxClaimChars: limitField("maxClaimChars"),
  maxQuoteChars: limitField("maxQuoteChars"),
  maxTokens: limitField("maxTokens"),
  maxReplyBytes: limitField("maxReplyBytes")
}).annotations({ ...strict, identifier: "JudgeConfig" }).pipe(
  Schema.filter((c) => !(c.apiKeyEnv !== undefined && c.apiKeyFile !== undefined) || "name apiKeyEnv or apiKeyFile, not both")
)
export type JudgeConfig = typeof JudgeConfig.Type

/** A configured judge with every limit resolved. */
export interface JudgeSettings {
  readonly mode: "report" | "require"
  readonly provider: JudgeProvider
  readonly endpoint: string
  readonly model: string
  readonly limits: { readonly [K in JudgeLimit]: number }
}

/** `review.judge`'s limits with defaults filled in. */
export const resolvedLimits = (config: JudgeConfig | undefined): JudgeSettings["limits"] =>
  Object.fromEntries(
    (Object.keys(judgeLimits) as Array<JudgeLimit>).map((k) => [k, config?.[k] ?? judgeLimits[k].default])
  ) as unknown as JudgeSettings["limits"]
