/**
 * `capture`: the capture budgets, the media types that may be captured, the extraction caps and
 * signed captures.
 */
import * as Schema from "effect/Schema"
import { intBetween, strict, unique } from "./Common.js"

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

const configPath = Schema.String.pipe(
  Schema.filter((s) => (s.length >= 1 && s.length <= 4096) || "must be a path of 1 to 4096 characters")
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
