/**
 * What the operator approved for verification: the exact sources, the labels,
 * the fact limit, the Gate's mode and the verification deadline.
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Config from "../Config.js"
import type { Label, Mode, SourceUrl } from "../Domain.js"
import type { InvalidConfig } from "../Errors.js"
import { type Catalogue, compile } from "../review/Catalogue.js"

/** The compiled label catalogue a policy carries (`review.catalogue`). */
export type { Catalogue, CompiledLabel } from "../review/Catalogue.js"
export type { Period } from "../review/Period.js"
import type { NumbersPolicy } from "../review/Records.js"
import type { PublicKey } from "../evidence/Signatures.js"
import * as TrustedKeys from "../evidence/TrustedKeys.js"

/**
 * @since 0.1.0
 * @category models
 */
export interface PolicyShape {
  readonly sources: ReadonlySet<SourceUrl>
  readonly labels: ReadonlySet<Label>
  readonly maxFacts: number
  readonly mode: Mode
  /** The overall deadline of one verification, in milliseconds. */
  readonly timeoutMs: number
  /**
   * `exact`: code-unit equality only; `normalized/2`: a normalised match that keeps every number, sign
   * and unit is also accepted, labelled so. `normalized/1` is a deprecated alias, verified as `normalized/2`.
   */
  readonly matching: "exact" | "normalized/1" | "normalized/2"
  /** Whether a snippet occurring more than once, with nothing picking one occurrence, is accepted (flagged) or rejected. */
  readonly ambiguous: "accept" | "reject"
  /**
   * An excerpt overlapping text no reader sees (a capture's `hidden` runs, OCR aside): `mark` (absent
   * means mark) accepts it with `visibility: "hidden"` on its evidence; `reject` refuses it (`HiddenEvidence`).
   */
  readonly hidden?: "mark" | "reject"
  /**
   * `substring` (absent means substring): an excerpt verifies wherever it occurs verbatim; `tokens`:
   * only at an occurrence that cuts no number or word (`SnippetCutsToken` otherwise).
   */
  readonly boundaries?: "substring" | "tokens"
  /** Semantic review by the number adapter (`review.numbers`, default off) and its compiled catalogue. */
  readonly review?: { readonly numbers: NumbersPolicy; readonly catalogue: Catalogue } | undefined
  /**
   * Capture attestations (`verify.signatures`, absent means off): `check` verifies each capture's
   * signed attestation against `trusted` and reports problems; `require` also refuses the facts.
   */
  readonly signatures?: { readonly mode: "off" | "check" | "require"; readonly trusted: ReadonlyArray<PublicKey> } | undefined
}

/**
 * @since 0.1.0
 * @category tags
 */
export class Policy extends Context.Tag("citegate/Policy")<Policy, PolicyShape>() {}

/** The policy a decoded configuration describes. */
export const fromConfig = (config: Config.PipelineConfig): PolicyShape =>
  Policy.of({
    sources: new Set(config.sources),
    labels: new Set(config.labels),
    maxFacts: Config.resolvedMaxFacts(config),
    mode: Config.resolvedMode(config),
    timeoutMs: Config.resolvedVerifyTimeoutMs(config),
    matching: Config.resolvedMatching(config),
    ambiguous: Config.resolvedAmbiguous(config),
    hidden: Config.resolvedHidden(config),
    boundaries: Config.resolvedBoundaries(config),
    review: { numbers: Config.resolvedNumbers(config), catalogue: compile(config.review?.catalogue ?? []) },
    signatures: { mode: Config.resolvedSignatures(config), trusted: TrustedKeys.publicKeys(config) }
  })

/** A policy layer from an already-decoded configuration. */
export const layer = (config: Config.PipelineConfig): Layer.Layer<Policy> =>
  Layer.succeed(Policy, fromConfig(config))

/** A policy layer from an untrusted configuration value, decoded strictly. */
export const layerConfig = (input: unknown): Layer.Layer<Policy, InvalidConfig> =>
  Layer.effect(Policy, Effect.map(Config.decode(input), fromConfig))
