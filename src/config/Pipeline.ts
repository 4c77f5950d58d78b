/**
 * The whole `pipeline.json`: its sections together, the checks across sections, and strict decoding
 * with the lists measured before anything is parsed.
 */
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { Label, SourceUrl } from "../Domain.js"
import { InvalidConfig } from "../Errors.js"
import { decodeJson, decodeUnknown } from "../internal/decode.js"
import { AnswersOptions } from "./Answers.js"
import { AuditConfig } from "./Audit.js"
import { CaptureBudgets } from "./Capture.js"
import { configListLimits, listOf, strict } from "./Common.js"
import { ReviewOptions } from "./Review.js"
import { ServerOptions } from "./Server.js"
import { TelemetryOptions } from "./Telemetry.js"
import { VerifyOptions } from "./Verify.js"

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
