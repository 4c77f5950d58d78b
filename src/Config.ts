/**
 * The operator's configuration (`pipeline.json`): which exact sources may be
 * captured and cited, which labels a report may use, and the budgets and
 * verification policy. Authored by an operator, never by a model; decoded
 * strictly, with every issue reported at its path.
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { type CitationRule, CitationsPolicy, defaultCitationRule, Exemption } from "./answer/Records.js"
import { defaultMaxFacts, Label, Mode, SourceUrl } from "./Domain.js"
import { InvalidConfig } from "./Errors.js"
import { createPublicKey } from "node:crypto"
import { keyIdOf } from "./evidence/Signatures.js"
import { ResultSigning } from "./evidence/ResultSigningConfig.js"
import { decodeJson, decodeUnknown } from "./internal/decode.js"
import { JudgeConfig } from "./review/JudgeConfig.js"
import { parseExpected } from "./review/Period.js"
import { catalogueLimits, LabelSpec, NumbersPolicy } from "./review/Records.js"

const strict = { parseOptions: { onExcessProperty: "error" } } as const

const unique = <A>(what: string) => (items: ReadonlyArray<A>) => {
  const seen = new Set<A>()
  for (const item of items) {
    if (seen.has(item)) return `${what} must be unique: ${JSON.stringify(item)} appears more than once`
    seen.add(item)
  }
  return true
}

const intBetween = (min: number, max: number) =>
  Schema.Int.pipe(Schema.between(min, max, { message: () => `must be an integer from ${min} to ${max}` }))

/** Limits and defaults for capture budgets. */
export const captureLimits = {
  timeoutMs: { min: 1, max: 600_000, default: 15_000 },
  maxBytes: { min: 1, max: 64 * 1024 * 1024, default: 8 * 1024 * 1024 },
  concurrency: { min: 1, max: 64, default: 4 }
} as const

/** Limits and defaults for extraction caps (v2 captures: Markdown, HTML, PDF). */
export const extractionLimits = {
  maxPages: { min: 1, max: 100_000, default: 2_000 },
  maxCharacters: { min: 1, max: 64 * 1024 * 1024, default: 16 * 1024 * 1024 },
  maxDepth: { min: 16, max: 10_000, default: 512 }
} as const

/** What `capture.contentTypes` may list; the default is `text/plain` only, so nothing widens silently. */
export const ContentType = Schema.Literal("text/plain", "text/markdown", "text/html", "application/xhtml+xml", "application/pdf")
export type ContentType = typeof ContentType.Type
export const defaultContentTypes: ReadonlyArray<ContentType> = ["text/plain"]

export const maxFactsLimit = 10_000

/** Longest `sources` and `labels` lists (and so any array in a configuration), checked before parsing. */
export const configListLimits = { sources: 1_000, labels: 10_000 } as const

const listOf = <A, I>(item: Schema.Schema<A, I, never>, what: keyof typeof configListLimits) =>
  Schema.NonEmptyArray(item).pipe(
    Schema.filter((items) =>
      items.length <= configListLimits[what] || `must hold at most ${configListLimits[what]} ${what}, got ${items.length}`
    ),
    Schema.filter(unique(what))
  )
/** The overall deadline of one verification (reading captures and searching them). */
export const verifyLimits = {
  timeoutMs: { min: 1, max: 600_000, default: 30_000 }
} as const

/** The overall deadline of one drift audit (baseline re-verification and candidate search). */
export const auditLimits = {
  timeoutMs: { min: 1, max: 600_000, default: 60_000 }
} as const

/** The drift audit (`run-pipeline audit`, `Audit`): its deadline. */
export const AuditConfig = Schema.Struct({
  timeoutMs: Schema.optional(intBetween(auditLimits.timeoutMs.min, auditLimits.timeoutMs.max))
}).annotations({ ...strict, identifier: "AuditConfig" })
export type AuditConfig = typeof AuditConfig.Type

const configPath = Schema.String.pipe(
  Schema.filter((s) => (s.length >= 1 && s.length <= 4096) || "must be a path of 1 to 4096 characters")
)

/** Most keys `verify.trustedKeys` holds (each may cost one Ed25519 check per capture). */
export const maxTrustedKeys = 16

const pemPublicKeyHeader = "-----BEGIN PUBLIC KEY-----"

/** Whether a `verify.trustedKeys` value is the key itself (SPKI PEM) rather than a file naming it. */
export const isPemKey = (value: string): boolean => value.trimStart().startsWith(pemPublicKeyHeader)

/** Why an inline PEM key cannot be the key `keyid` names, or `undefined`. */
const inlineKeyProblem = (keyid: string, pem: string): string | undefined => {
  try {
    const key = createPublicKey({ key: pem, format: "pem" })
    if (key.asymmetricKeyType !== "ed25519") return `is a ${key.asymmetricKeyType ?? "non-asymmetric"} key, not Ed25519`
    const actual = keyIdOf(key)
    return actual === keyid ? undefined : `is the key with id ${actual}, not ${keyid}`
  } catch {
    return "is not a PEM public key (SPKI)"
  }
}

/**
 * `verify.trustedKeys`: key id (SHA-256 hex of the key's DER SubjectPublicKeyInfo, as envelopes name
 * it) → the Ed25519 public key, either SPKI PEM text or a file holding it (resolved against
 * pipeline.json's directory when the configuration is loaded). Several keys: a rotation.
 */
export const TrustedKeys = Schema.Record({
  key: Schema.String.pipe(Schema.pattern(/^[0-9a-f]{64}$/, { message: () => "a key id is the 64 hex digits of the key's SHA-256" })),
  value: Schema.String.pipe(Schema.maxLength(8192), Schema.minLength(1))
}).pipe(
  Schema.filter((keys) => {
    const entries = Object.entries(keys)
    if (entries.length > maxTrustedKeys) return `must hold at most ${maxTrustedKeys} keys, got ${entries.length}`
    for (const [keyid, value] of entries) {
      if (!isPemKey(value)) continue
      const problem = inlineKeyProblem(keyid, value)
      if (problem !== undefined) return { path: [keyid], message: `the key ${problem}` }
    }
    return true
  })
)

export const CaptureBudgets = Schema.Struct({
  timeoutMs: Schema.optional(intBetween(captureLimits.timeoutMs.min, captureLimits.timeoutMs.max)),
  maxBytes: Schema.optional(intBetween(captureLimits.maxBytes.min, captureLimits.maxBytes.max)),
  concurrency: Schema.optional(intBetween(captureLimits.concurrency.min, captureLimits.concurrency.max)),
  /** The media types that may be captured; anything else is `UnsupportedContentType`. */
  contentTypes: Schema.optional(Schema.NonEmptyArray(ContentType).pipe(Schema.filter(unique("contentTypes")))),
  maxPages: Schema.optional(intBetween(extractionLimits.maxPages.min, extractionLimits.maxPages.max)),
  maxCharacters: Schema.optional(intBetween(extractionLimits.maxCharacters.min, extractionLimits.maxCharacters.max)),
  maxDepth: Schema.optional(intBetween(extractionLimits.maxDepth.min, extractionLimits.maxDepth.max)),
  /**
   * Signed captures: `keyFile` names the operator's Ed25519 private key (PKCS#8 PEM; the key itself is
   * never in the configuration), resolved against pipeline.json's directory. Every record captured is
   * then followed by its signed attestation (docs/signatures.md).
   */
  signing: Schema.optional(Schema.Struct({ keyFile: configPath }).annotations({ ...strict, identifier: "CaptureSigning" })),
  /** A PEM file of extra CA certificates to trust (a private CA); the CLI resolves it against pipeline.json's directory. */
  caFile: Schema.optional(
    Schema.String.pipe(Schema.filter((s) => (s.length >= 1 && s.length <= 4096) || "must be a path of 1 to 4096 characters"))
  )
}).annotations({ ...strict, identifier: "CaptureBudgets" })
export type CaptureBudgets = typeof CaptureBudgets.Type

export const VerifyOptions = Schema.Struct({
  maxFacts: Schema.optional(intBetween(1, maxFactsLimit)),
  mode: Schema.optional(Mode),
  timeoutMs: Schema.optional(intBetween(verifyLimits.timeoutMs.min, verifyLimits.timeoutMs.max)),
  /**
   * `exact` (default): code-unit equality only. `normalized/2`: also accept a match after normalisation that
   * keeps every number, sign and unit, labelled so. `normalized/1`: deprecated, read as `normalized/2`.
   */
  matching: Schema.optional(Schema.Literal("exact", "normalized/1", "normalized/2")),
  /** A snippet found more than once: `accept` (default, flagged `ambiguous`) or `reject` unless a prefix/suffix picks one. */
  ambiguous: Schema.optional(Schema.Literal("accept", "reject")),
  /**
   * An excerpt from text no reader sees (invisible, background-coloured, tiny or off-page PDF text):
   * `mark` (default, accepted with `visibility: "hidden"` on its evidence) or `reject` (`HiddenEvidence`).
   */
  hidden: Schema.optional(Schema.Literal("mark", "reject")),
  /**
   * `substring` (default): an excerpt verifies wherever it occurs verbatim, `4,210` inside `4,210,000`
   * included. `tokens`: only an occurrence that starts and ends at number and word boundaries counts
   * (`SnippetCutsToken` otherwise).
   */
  boundaries: Schema.optional(Schema.Literal("substring", "tokens")),
  /**
   * Capture attestations (docs/signatures.md): `off` (default) reads none; `check` verifies each
   * capture's and reports the problems beside the result; `require` also refuses every fact whose
   * capture is unsigned or wrongly signed (`UnsignedCapture`, `SignatureInvalid`, `UnknownSigningKey`).
   */
  signatures: Schema.optional(Schema.Literal("off", "check", "require")),
  trustedKeys: Schema.optional(TrustedKeys),
  /** Signed results (docs/signatures.md): the key the service signs with when asked (`?sign=1`). */
  resultSigning: Schema.optional(ResultSigning)
}).annotations({ ...strict, identifier: "VerifyOptions" })
export type VerifyOptions = typeof VerifyOptions.Type

/**
 * Answers (prose with inline citations). `uncited`: whether a sentence that
 * needs a citation and has none rejects the answer ("reject") or is listed as a
 * finding ("report", the default); `needsCitation` shapes which sentences need one.
 */
/**
 * Which uncited sentences of an answer need a citation (docs/answers.md, "Uncited sentences"). A
 * sentence stating a quantity always does; `minLength` (code points, default 20) and `exempt` (the
 * kinds of quantity-free sentence that never need one; default all five) shape the rest.
 */
export const NeedsCitation = Schema.Struct({
  minLength: Schema.optional(intBetween(1, 10_000)),
  exempt: Schema.optional(
    Schema.Array(Exemption).pipe(Schema.maxItems(Exemption.literals.length), Schema.filter(unique("exemptions")))
  )
}).annotations({ ...strict, identifier: "NeedsCitation" })
export type NeedsCitation = typeof NeedsCitation.Type

/**
 * A document id a provider may name for an approved source (an OpenAI file id, a Cohere document
 * id, a Gemini retrieved document): 1 to 256 printable ASCII characters, no spaces.
 */
export const DocumentId = Schema.String.pipe(
  Schema.pattern(/^[\x21-\x7e]{1,256}$/, { message: () => "must be 1 to 256 printable ASCII characters without spaces" })
)

/** `answers.documentIds[]`: the id under which a provider names one approved source (recorded in the manifest). */
export const DocumentIdEntry = Schema.Struct({
  source: SourceUrl,
  id: DocumentId
}).annotations({ ...strict, identifier: "DocumentIdEntry" })
export type DocumentIdEntry = typeof DocumentIdEntry.Type

export const AnswersOptions = Schema.Struct({
  uncited: Schema.optional(Schema.Literal("reject", "report")),
  needsCitation: Schema.optional(NeedsCitation),
  /** Provider formats: a document-level citation is a `CoarseCitation` (`quote`, default) or accepted, labelled (`document`). */
  citations: Schema.optional(CitationsPolicy),
  /** Provider formats: declared document ids, each for one source of `sources`; ids and sources unique. */
  documentIds: Schema.optional(
    Schema.Array(DocumentIdEntry).pipe(
      Schema.filter((entries) =>
        entries.length <= configListLimits.sources || `must hold at most ${configListLimits.sources} entries, got ${entries.length}`
      ),
      Schema.filter((entries) => unique("document id sources")(entries.map((e) => e.source))),
      Schema.filter((entries) => unique("document ids")(entries.map((e) => e.id)))
    )
  )
}).annotations({ ...strict, identifier: "AnswersOptions" })
export type AnswersOptions = typeof AnswersOptions.Type

/** Limits and defaults of the service (`run-pipeline serve`). */
export const serverLimits = {
  /** Largest request body; checked on Content-Length before reading, and counted while reading a chunked body. */
  maxBodyBytes: { min: 1, max: 256 * 1024 * 1024, default: 8 * 1024 * 1024 },
  /** Deadline of one request (for a streamed response: until its headers; the stream has its own limits). */
  requestTimeoutMs: { min: 1, max: 600_000, default: 30_000 },
  /** How long shutdown waits for open requests and streams to finish before closing them. */
  shutdownGraceMs: { min: 0, max: 600_000, default: 10_000 },
  /** How many capture runs one server keeps open at once. */
  maxActiveRuns: { min: 1, max: 64, default: 4 },
  /** Most tokens in a configuration. */
  tokens: 1_000,
  /** Milliseconds from a streamed answer's start to its `done` (`POST /v1/stream/answer`). */
  streamDeadlineMs: { min: 1, max: 600_000, default: 120_000 },
  /** How long an ended stream's events stay for resuming; a timer drops them then. */
  streamRetainMs: { min: 0, max: 3_600_000, default: 60_000 },
  /** Bytes (UTF-8) of retained stream events, all streams together; past it new streams are refused (503). */
  streamRetainedBytes: { min: 64 * 1024, max: 4 * 1024 * 1024 * 1024, default: 64 * 1024 * 1024 },
  /**
   * Bytes of verified captures (and finished runs' manifests) kept in memory between requests
   * (verify/CaptureCache.ts; text counted as 2 bytes per UTF-16 code unit); 0 turns the cache off.
   */
  cacheBytes: { min: 0, max: 64 * 1024 * 1024 * 1024, default: 256 * 1024 * 1024 },
  /**
   * Replicas over PostgreSQL (`serve --store`): how long a capture job or a streamed answer stays with a
   * replica that stopped renewing it (heartbeats every third of it) before another replica takes it over.
   */
  leaseMs: { min: 300, max: 600_000, default: 10_000 }
} as const

/** A run id: generated by the service, or a run directory's name under the run root. Never a path. */
export const RunId = Schema.String.pipe(
  Schema.pattern(/^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/, {
    message: () => "must be 1 to 64 letters, digits, `-` or `_`, starting with a letter or digit"
  })
)

/**
 * One bearer token, stored as the SHA-256 digest of the token (lowercase hex), never the token.
 * `runs`: the run ids it may read ("*" for all; a token that starts a run may always read it).
 * `capture`: whether it may start capture runs.
 */
export const ServerToken = Schema.Struct({
  sha256: Schema.String.pipe(Schema.pattern(/^[0-9a-f]{64}$/, { message: () => "must be 64 lowercase hex digits (SHA-256)" })),
  runs: Schema.Union(Schema.Literal("*"), Schema.Array(RunId).pipe(Schema.filter((runs) =>
    runs.length <= configListLimits.labels || `must hold at most ${configListLimits.labels} runs, got ${runs.length}`
  ))),
  capture: Schema.Boolean,
  /** Whether it may scrape `GET /metrics` (telemetry.prometheus); default false. */
  metrics: Schema.optional(Schema.Boolean),
  /** A name for logs (never the token). */
  name: Schema.optional(Schema.String.pipe(Schema.pattern(/^[\x20-\x7e]{1,64}$/, { message: () => "must be 1 to 64 printable ASCII characters" })))
}).annotations({ ...strict, identifier: "ServerToken" })
export type ServerToken = typeof ServerToken.Type

/** A file path in the configuration (resolved against its directory). */
const ConfigPath = Schema.String.pipe(
  Schema.filter((s) => (s.length >= 1 && s.length <= 4096) || "must be a path of 1 to 4096 characters")
)

/** HTTPS for `serve`: a PEM certificate chain and its private key, read at start-up. */
export const ServerTls = Schema.Struct({
  certFile: ConfigPath,
  keyFile: ConfigPath
}).annotations({ ...strict, identifier: "ServerTls" })
export type ServerTls = typeof ServerTls.Type

export const ServerOptions = Schema.Struct({
  tokens: Schema.Array(ServerToken).pipe(
    Schema.filter((tokens) => tokens.length <= serverLimits.tokens || `must hold at most ${serverLimits.tokens} tokens, got ${tokens.length}`),
    Schema.filter((tokens) => unique("token digests")(tokens.map((t) => t.sha256)))
  ),
  maxBodyBytes: Schema.optional(intBetween(serverLimits.maxBodyBytes.min, serverLimits.maxBodyBytes.max)),
  requestTimeoutMs: Schema.optional(intBetween(serverLimits.requestTimeoutMs.min, serverLimits.requestTimeoutMs.max)),
  shutdownGraceMs: Schema.optional(intBetween(serverLimits.shutdownGraceMs.min, serverLimits.shutdownGraceMs.max)),
  maxActiveRuns: Schema.optional(intBetween(serverLimits.maxActiveRuns.min, serverLimits.maxActiveRuns.max)),
  streamDeadlineMs: Schema.optional(intBetween(serverLimits.streamDeadlineMs.min, serverLimits.streamDeadlineMs.max)),
  streamRetainMs: Schema.optional(intBetween(serverLimits.streamRetainMs.min, serverLimits.streamRetainMs.max)),
  streamRetainedBytes: Schema.optional(intBetween(serverLimits.streamRetainedBytes.min, serverLimits.streamRetainedBytes.max)),
  cacheBytes: Schema.optional(intBetween(serverLimits.cacheBytes.min, serverLimits.cacheBytes.max)),
  leaseMs: Schema.optional(intBetween(serverLimits.leaseMs.min, serverLimits.leaseMs.max)),
  /** Serve HTTPS with this certificate and key (required to listen on a non-loopback address without a TLS proxy). */
  tls: Schema.optional(ServerTls)
}).annotations({ ...strict, identifier: "ServerOptions" })
export type ServerOptions = typeof ServerOptions.Type

/** Limits and defaults of telemetry (docs/observability.md). */
export const telemetryLimits = {
  /** How often metrics are pushed to the OTLP collector. */
  exportIntervalMs: { min: 100, max: 3_600_000, default: 60_000 },
  /** Most extra headers sent to the collector. */
  headers: 32
} as const

/** The collector's base URL (`/v1/traces` and `/v1/metrics` are appended): http(s), no credentials, query or fragment. */
export const OtlpUrl = Schema.String.pipe(
  Schema.filter((text) => {
    if (text.length > 2048) return "must be at most 2048 characters"
    let url: URL
    try {
      url = new URL(text)
    } catch {
      return "must be an absolute http(s) URL"
    }
    if (url.protocol !== "http:" && url.protocol !== "https:") return "must be an http: or https: URL"
    if (url.username !== "" || url.password !== "") return "must not carry credentials (use headers)"
    if (url.search !== "" || url.hash !== "" || text.includes("?") || text.includes("#")) return "must have no query or fragment"
    return true
  })
)

const HeaderName = Schema.String.pipe(
  Schema.pattern(/^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,128}$/, { message: () => "must be an HTTP header name (1 to 128 token characters)" })
)
const HeaderValue = Schema.String.pipe(
  Schema.pattern(/^[\x20-\x7e]{0,4096}$/, { message: () => "must be at most 4096 printable ASCII characters" })
)

/** OTLP/HTTP (JSON) export of spans and metrics. */
export const OtlpOptions = Schema.Struct({
  url: OtlpUrl,
  /** Sent with every export (an API key, say); never logged. */
  headers: Schema.optional(
    Schema.Record({ key: HeaderName, value: HeaderValue }).pipe(
      Schema.filter((headers) =>
        Object.keys(headers).length <= telemetryLimits.headers || `must hold at most ${telemetryLimits.headers} headers`
      )
    )
  ),
  exportIntervalMs: Schema.optional(intBetween(telemetryLimits.exportIntervalMs.min, telemetryLimits.exportIntervalMs.max))
}).annotations({ ...strict, identifier: "OtlpOptions" })
export type OtlpOptions = typeof OtlpOptions.Type

/**
 * Telemetry of the service (off when absent): spans and metrics over OTLP/HTTP, and/or metrics as
 * Prometheus text on `GET /metrics` for tokens with `metrics: true`. At least one of the two.
 */
export const TelemetryOptions = Schema.Struct({
  serviceName: Schema.optional(
    Schema.String.pipe(Schema.pattern(/^[\x21-\x7e]{1,128}$/, { message: () => "must be 1 to 128 printable ASCII characters without spaces" }))
  ),
  otlp: Schema.optional(OtlpOptions),
  prometheus: Schema.optional(Schema.Boolean)
}).annotations(strict).pipe(
  Schema.filter((telemetry) =>
    telemetry.otlp !== undefined || telemetry.prometheus === true ||
    "must enable an exporter: `otlp`, or `prometheus: true` (leave `telemetry` out to turn it off)"
  ),
  Schema.annotations({ identifier: "TelemetryOptions" })
)
export type TelemetryOptions = typeof TelemetryOptions.Type

/** One catalogue entry, with the checks that need more than one field: a readable period, a currency only for amounts. */
const CatalogueEntry = LabelSpec.pipe(
  Schema.filter((spec) =>
    spec.period !== undefined && parseExpected(spec.period) === undefined
      ? {
        path: ["period"],
        message: "must be a period such as `Q3 2026`, `H1 2026`, `2026`, `FY2026`, `September 2026`, " +
          "`30 September 2026`, `2026-09-30`, or a pattern `Q3 *` (any year) / `Q* 2026` (any quarter)"
      }
      : spec.valueKind === "currency-amount" && spec.currency === undefined
      ? { path: ["currency"], message: "a currency-amount label must name its currency" }
      : spec.valueKind !== "currency-amount" && spec.currency !== undefined
      ? { path: ["currency"], message: "only a currency-amount label has a currency" }
      : true
  )
)

/**
 * Semantic review (docs/review.md), kept apart from provenance. `numbers`: the structured-number
 * adapter, `off` (default: reports are exactly as without review), `report` (its outcome is shown
 * with every rendering) or `require` (a mismatch fails the fact: `SemanticMismatch`).
 */
export const ReviewOptions = Schema.Struct({
  numbers: Schema.optional(NumbersPolicy),
  /** The entailment judge (review/JudgeConfig.ts). */
  judge: Schema.optional(JudgeConfig),
  catalogue: Schema.optional(
    Schema.Array(CatalogueEntry).pipe(
      Schema.filter((c) =>
        c.length <= catalogueLimits.labels || `must hold at most ${catalogueLimits.labels} labels, got ${c.length}`
      ),
      Schema.filter((c) => unique("catalogue labels")(c.map((spec) => spec.label)))
    )
  )
}).annotations({ ...strict, identifier: "ReviewOptions" })
export type ReviewOptions = typeof ReviewOptions.Type

const PipelineConfigFields = Schema.Struct({
  sources: listOf(SourceUrl, "sources"),
  labels: listOf(Label, "labels"),
  capture: Schema.optional(CaptureBudgets),
  verify: Schema.optional(VerifyOptions),
  answers: Schema.optional(AnswersOptions),
  audit: Schema.optional(AuditConfig),
  server: Schema.optional(ServerOptions),
  /** Semantic review (src/review/), reported beside provenance, never merged with it. */
  review: Schema.optional(ReviewOptions),
  /** Spans and metrics of the service (docs/observability.md); off when absent. */
  telemetry: Schema.optional(TelemetryOptions)
}).annotations({ ...strict, identifier: "PipelineConfig" })

/**
 * Every catalogued label is one of `labels`, and `review.numbers` other than off needs a catalogue;
 * a declared document id names one configured source, and can never be mistaken for another source's URL.
 */
export const PipelineConfig = PipelineConfigFields.pipe(
  Schema.filter((config) => {
    const catalogue = config.review?.catalogue ?? []
    const labels = new Set<string>(config.labels)
    const unknown = catalogue.findIndex((spec) => !labels.has(spec.label))
    if (unknown >= 0) {
      return { path: ["review", "catalogue", unknown, "label"], message: "must be one of `labels`" }
    }
    const numbers = config.review?.numbers ?? "off"
    return numbers === "off" || catalogue.length > 0 ||
      { path: ["review", "catalogue"], message: `review.numbers "${numbers}" needs a catalogue of at least one label` }
  }),
  Schema.filter((config) => {
    const sources = new Set<string>(config.sources)
    for (const [i, entry] of (config.answers?.documentIds ?? []).entries()) {
      if (!sources.has(entry.source)) {
        return { path: ["answers", "documentIds", i, "source"], message: "must be one of the configured sources (exactly)" }
      }
      if (sources.has(entry.id)) {
        return { path: ["answers", "documentIds", i, "id"], message: "must not be the URL of a configured source" }
      }
    }
    return true
  }),
  Schema.annotations({ identifier: "PipelineConfig" })
)
export type PipelineConfig = typeof PipelineConfig.Type

/** A configuration value's lists are measured before any element is decoded. */
const listPrecheck = (input: unknown) => {
  if (typeof input !== "object" || input === null) return undefined
  for (const what of ["sources", "labels"] as const) {
    const list = Object.getOwnPropertyDescriptor(input, what)?.value
    if (Array.isArray(list) && list.length > configListLimits[what]) {
      return { path: [what], message: `must hold at most ${configListLimits[what]} ${what}, got ${list.length}` }
    }
  }
  return undefined
}

// No array in a configuration is longer than the longest list: refused before `JSON.parse` builds it
// (text), or before any element is looked at (value).
const configLimits = {
  maxArrayLength: Math.max(configListLimits.sources, configListLimits.labels),
  arrayTooLong: (path: ReadonlyArray<string | number>, length: number) =>
    path.length === 1 && (path[0] === "sources" || path[0] === "labels")
      ? `must hold at most ${configListLimits[path[0]]} ${path[0]}, got ${length}`
      : `must hold at most ${Math.max(configListLimits.sources, configListLimits.labels)} elements, got ${length}`,
  precheck: listPrecheck
}
const decodeConfig = decodeUnknown(PipelineConfig, configLimits)
const decodeConfigJson = decodeJson(PipelineConfig, configLimits)

/**
 * Decode an already-parsed configuration value.
 *
 * @since 0.1.0
 */
export const decode = (input: unknown): Effect.Effect<PipelineConfig, InvalidConfig> =>
  Effect.mapError(decodeConfig(input), (invalid) => new InvalidConfig(invalid))

/**
 * Decode configuration JSON text (repeated and prototype keys rejected).
 *
 * @since 0.1.0
 */
export const decodeText = (text: string): Effect.Effect<PipelineConfig, InvalidConfig> =>
  Effect.mapError(decodeConfigJson(text), (invalid) => new InvalidConfig(invalid))

export const resolvedMaxFacts = (config: PipelineConfig): number => config.verify?.maxFacts ?? defaultMaxFacts
export const resolvedMode = (config: PipelineConfig): Mode => config.verify?.mode ?? "reject"
export const resolvedVerifyTimeoutMs = (config: PipelineConfig): number =>
  config.verify?.timeoutMs ?? verifyLimits.timeoutMs.default
export const resolvedAuditTimeoutMs = (config: PipelineConfig): number =>
  config.audit?.timeoutMs ?? auditLimits.timeoutMs.default
export const resolvedUncited = (config: PipelineConfig): "reject" | "report" => config.answers?.uncited ?? "report"
/** `answers.citations`, default "quote": a document-level citation is never accepted unless the operator says so. */
export const resolvedCitations = (config: PipelineConfig): CitationsPolicy => config.answers?.citations ?? "quote"
export const resolvedCitationRule = (config: PipelineConfig): CitationRule => ({
  minLength: config.answers?.needsCitation?.minLength ?? defaultCitationRule.minLength,
  exempt: config.answers?.needsCitation?.exempt ?? defaultCitationRule.exempt
})

/** The service's limits with defaults filled in. */
export const resolvedServer = (config: PipelineConfig) => ({
  tokens: config.server?.tokens ?? [],
  maxBodyBytes: config.server?.maxBodyBytes ?? serverLimits.maxBodyBytes.default,
  requestTimeoutMs: config.server?.requestTimeoutMs ?? serverLimits.requestTimeoutMs.default,
  shutdownGraceMs: config.server?.shutdownGraceMs ?? serverLimits.shutdownGraceMs.default,
  maxActiveRuns: config.server?.maxActiveRuns ?? serverLimits.maxActiveRuns.default,
  streamDeadlineMs: config.server?.streamDeadlineMs ?? serverLimits.streamDeadlineMs.default,
  streamRetainMs: config.server?.streamRetainMs ?? serverLimits.streamRetainMs.default,
  streamRetainedBytes: config.server?.streamRetainedBytes ?? serverLimits.streamRetainedBytes.default,
  cacheBytes: config.server?.cacheBytes ?? serverLimits.cacheBytes.default,
  leaseMs: config.server?.leaseMs ?? serverLimits.leaseMs.default
})
export type ResolvedServer = ReturnType<typeof resolvedServer>
/** The matching policy in force: the deprecated `normalized/1` is verified as `normalized/2` (never the looser rules). */
export const resolvedMatching = (config: PipelineConfig): MatchingPolicy =>
  config.verify?.matching === undefined ? "exact" : config.verify.matching === "exact" ? "exact" : "normalized/2"
/** The matching policies a verification applies. */
export type MatchingPolicy = "exact" | "normalized/2"
export const resolvedNumbers = (config: PipelineConfig) => config.review?.numbers ?? "off"
export const resolvedAmbiguous = (config: PipelineConfig): "accept" | "reject" => config.verify?.ambiguous ?? "accept"
export const resolvedHidden = (config: PipelineConfig): "mark" | "reject" => config.verify?.hidden ?? "mark"
export const resolvedSignatures = (config: PipelineConfig): "off" | "check" | "require" => config.verify?.signatures ?? "off"
export const resolvedBoundaries = (config: PipelineConfig): "substring" | "tokens" => config.verify?.boundaries ?? "substring"
/** Telemetry with its defaults filled in, or undefined when off. */
export const resolvedTelemetry = (config: PipelineConfig) =>
  config.telemetry === undefined ? undefined : {
    serviceName: config.telemetry.serviceName ?? "citegate",
    otlp: config.telemetry.otlp === undefined ? undefined : {
      url: config.telemetry.otlp.url.replace(/\/+$/, ""),
      headers: config.telemetry.otlp.headers ?? {},
      exportIntervalMs: config.telemetry.otlp.exportIntervalMs ?? telemetryLimits.exportIntervalMs.default
    },
    prometheus: config.telemetry.prometheus === true
  }
export type ResolvedTelemetry = NonNullable<ReturnType<typeof resolvedTelemetry>>
