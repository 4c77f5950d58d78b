/**
 * `telemetry`: spans and metrics of the service over OTLP/HTTP and Prometheus text.
 */
import * as Schema from "effect/Schema"
import { intBetween, strict } from "./Common.js"

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
