/**
 * The Layer services embed in front of rendering or publishing: capture store,
 * verifier and the operator's policy composed into one service.
 *
 * - `reject` mode (default): any failing fact rejects the whole report with
 *   `ReportRejected`, listing every failure.
 * - `drop` mode: failing facts are removed and returned as typed retractions.
 *   The outcome is `grounded` when at least one cited fact survives, else
 *   `no_evidence`. An unavailable fact never counts as evidence.
 *
 * An undecodable report (`InvalidReport`) is rejected in both modes, and so is a
 * report whose verification overruns the policy's deadline (`VerificationTimeout`).
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Spans from "../internal/Spans.js"
import * as Layer from "effect/Layer"
import * as CaptureStore from "../store/CaptureStore.js"
import * as Config from "../Config.js"
import type {
  CaptureSignatureError,
  InvalidConfig,
  InvalidReport,
  InvalidRunDirectory,
  VerificationTimeout
} from "../Errors.js"
import { ReportRejected } from "../Errors.js"
import * as Arr from "effect/Array"
import * as Policy from "./Policy.js"
import { reviewVerification } from "../review/Step.js"
import { VerifiedReport as VerifiedReportClass } from "./VerifiedReport.js"
import type { CaptureRecord } from "../Domain.js"
import type { VerifiedReport } from "./VerifiedReport.js"
import * as Verifier from "./Verifier.js"

/**
 * Every way a Gate check can fail (the members of `VerifyError`).
 *
 * @since 0.1.0
 * @category models
 */
export type GateError = InvalidReport | ReportRejected | VerificationTimeout

/**
 * @since 0.1.0
 * @category models
 */
export interface GateShape {
  readonly policy: Policy.PolicyShape
  /** Verify a parsed report under the policy's mode. */
  readonly check: (report: unknown) => Effect.Effect<VerifiedReport, GateError>
  /** Verify report JSON text (repeated and prototype keys rejected) under the policy's mode. */
  readonly checkJson: (text: string) => Effect.Effect<VerifiedReport, GateError>
  /**
   * `checkJson`, also returning the capture records the accepted citations were
   * verified against (what the HTML renderer shows), without reading them again.
   */
  readonly checkJsonWithCaptures: (text: string) => Effect.Effect<Checked, GateError>
  /**
   * `checkJsonWithCaptures` answered at once, without an effect, when its Verifier answers the
   * report at once (`VerifierShape.checkJsonWarm`: well-formed, every capture warm); `undefined`
   * otherwise (the caller takes `checkJsonWithCaptures`). For callers that export no spans.
   *
   * @since 0.5.0
   */
  readonly checkJsonWarm?: ((text: string) => Either.Either<Checked, ReportRejected> | undefined) | undefined
}

/**
 * @since 0.1.0
 * @category models
 */
export interface Checked {
  readonly report: VerifiedReport
  readonly captures: ReadonlyMap<string, CaptureRecord>
  /** Captures whose signed attestation does not hold (`verify.signatures: "check"`); empty when off. */
  readonly signatureNotes?: ReadonlyArray<CaptureSignatureError> | undefined
}

/**
 * @since 0.1.0
 * @category tags
 */
export class Gate extends Context.Tag("citegate/Gate")<Gate, GateShape>() {}

/**
 * @since 0.1.0
 * @category constructors
 */
export const make: Effect.Effect<GateShape, never, Verifier.Verifier | Policy.Policy> = Effect.gen(function*() {
  const verifier = yield* Verifier.Verifier
  const policy = yield* Policy.Policy

  const decide = (verified: Verifier.Verification): Either.Either<Checked, ReportRejected> => {
    // Semantic review: a separate step on the verification's result (off by default: nothing changes).
    const { numberReview, verification } = reviewVerification(policy.review, verified)
    const checked = (report: VerifiedReport) =>
      Either.right({
        report: numberReview === undefined
          ? report
          : new VerifiedReportClass({ ...report, semanticReview: "performed", numberReview }, { disableValidation: true }),
        captures: verification.captures,
        signatureNotes: verified.signatureNotes ?? []
      })
    if (policy.mode === "drop") {
      return checked(
        Verifier.toVerifiedReport(verification.entries, { mode: "drop", retractions: verification.rejections })
      )
    }
    // As `Verifier.accept`, without an effect.
    return Arr.isNonEmptyReadonlyArray(verification.rejections)
      ? Either.left(new ReportRejected({ failures: verification.rejections }))
      : checked(Verifier.toVerifiedReport(verification.entries, { mode: "reject", retractions: [] }))
  }
  const checkJsonNow = verifier.checkJsonWarm
  const checkJsonWarm = checkJsonNow === undefined ? undefined : (text: string) => {
    const verified = checkJsonNow(text)
    return verified === undefined ? undefined : decide(verified)
  }

  const checkJsonWithCaptures = Spans.fn("Gate.checkJsonWithCaptures")(function*(text: string) {
    return yield* decide(yield* verifier.checkJson(text))
  })

  return Gate.of({
    policy,
    check: Spans.fn("Gate.check")(function*(report: unknown) {
      return (yield* decide(yield* verifier.check(report))).report
    }),
    checkJson: Spans.fn("Gate.checkJson")(function*(text: string) {
      return (yield* checkJsonWithCaptures(text)).report
    }),
    checkJsonWithCaptures,
    checkJsonWarm
  })
})

/**
 * The operator's configuration as given to a Gate layer: `pipeline.json` as
 * JSON text (decoded with the strict JSON path, so a repeated or `__proto__`
 * key is an `InvalidConfig`), or an already-parsed value (decoded strictly;
 * `JSON.parse` has already let a repeated key's last value win).
 *
 * @since 0.1.0
 * @category models
 */
export type ConfigInput = string | unknown

const policyLayer = (config: ConfigInput): Layer.Layer<Policy.Policy, InvalidConfig> =>
  typeof config === "string"
    ? Layer.effect(Policy.Policy, Effect.map(Config.decodeText(config), Policy.fromConfig))
    : Policy.layerConfig(config)

/**
 * The Gate over any CaptureStore you provide (in memory, database-backed, …),
 * under the operator's configuration (JSON text or a parsed value), decoded
 * strictly.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerWithStore = (config: ConfigInput): Layer.Layer<Gate, InvalidConfig, CaptureStore.CaptureStore> =>
  Layer.effect(Gate, make).pipe(
    Layer.provide(Verifier.layer),
    Layer.provide(policyLayer(config))
  )

/**
 * @deprecated Renamed `layerWithStore` (it is the Gate over any CaptureStore,
 * not a layer built from Effect's `Config`).
 * @since 0.1.0
 * @category layers
 */
export const layerConfig = layerWithStore

/**
 * The embedded default: the Gate over one run directory on the local filesystem.
 * `config` is `pipeline.json` as text (preferred: repeated keys are rejected)
 * or as a parsed value.
 *
 * @example
 * ```ts
 * const GateLive = Gate.layer({ runDirectory: "runs/2026-11-30", config: pipelineJsonText })
 * const program = Effect.flatMap(Gate.Gate, (gate) => gate.checkJson(draft))
 * Effect.runPromise(Effect.provide(program, GateLive))
 * ```
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (options: {
  readonly runDirectory: string
  readonly config: ConfigInput
  /** Many small records read ahead on a second thread (`CaptureStore.FileSystemOptions.readAhead`, default true). */
  readonly readAhead?: boolean
}): Layer.Layer<Gate, InvalidConfig | InvalidRunDirectory> =>
  layerWithStore(options.config).pipe(
    Layer.provide(CaptureStore.layerFileSystem({
      directory: options.runDirectory,
      ...(options.readAhead === undefined ? {} : { readAhead: options.readAhead })
    }))
  )
