/**
 * `run-pipeline audit`: verifies a report or an answer against the OLD run (the baseline, read-only),
 * audits every verified citation against the NEW run with the Audit service, renders the result.
 *
 * The baseline is verified as `verify` / `verify-answer` would (`--mode`, else the configuration's mode): a report or
 * answer that does not verify against the old run has nothing to audit, and that is reported on stderr
 * as a usage error (exit 2), never as drift. In drop mode, retracted facts or citations were never
 * evidence and are not audited.
 */
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Answer from "../answer/Answer.js"
import * as AnswerFormats from "../answer/Formats.js"
import type { BoundAnswer } from "../answer/Records.js"
import * as AnswerRender from "../answer/Render.js"
import * as Audit from "../audit/Audit.js"
import type { AuditResult } from "../audit/Records.js"
import * as CaptureStore from "../store/CaptureStore.js"
import * as Config from "../Config.js"
import type { AnswerError, AuditError } from "../Errors.js"
import * as Gate from "../verify/Gate.js"
import * as Manifest from "../Manifest.js"
import * as Policy from "../verify/Policy.js"
import * as Describe from "../render/Describe.js"
import * as Render from "../render/Render.js"
import * as Text from "../render/Text.js"
import * as Verifier from "../verify/Verifier.js"

export type AuditInput =
  | { readonly kind: "report"; readonly text: string }
  | {
    readonly kind: "answer"
    /** The answer as read: bytes for a binary format (`AnswerFormats.isBinary`), else text. */
    readonly text: string | Uint8Array
    /** Any answer format the dispatcher reads (`AnswerFormats.answerFormats`). */
    readonly formatIn: AnswerFormats.AnswerFormat
    readonly manifestDigest: string | undefined
  }

/** An audit result, or why there was nothing to audit (already rendered as text for stderr). */
export type AuditOutcome =
  | { readonly _tag: "Audited"; readonly result: AuditResult }
  | { readonly _tag: "NoBaseline"; readonly reason: string }
  | { readonly _tag: "TimedOut"; readonly reason: string }

/** The one-line summary for stderr. */
export const summary = (result: AuditResult): string => {
  const s = result.summary
  const drift = [
    s.changed > 0 ? `${s.changed} changed (${s.material} material)` : "",
    s.deleted > 0 ? `${s.deleted} deleted` : "",
    s.source_missing > 0 ? `${s.source_missing} source missing` : ""
  ].filter((part) => part !== "")
  return result.outcome === "drifted"
    ? `audit: DRIFTED (${result.of}): ${drift.join(", ")} of ${s.citations} citation(s)`
    : `audit: STABLE (${result.of}): all ${s.citations} citation(s) still verbatim in the new run (${s.relocated} relocated)`
}

export const audit = (options: {
  readonly config: Config.PipelineConfig
  readonly input: AuditInput
  readonly oldRun: string
  readonly newRun: string
  /** The baseline's verification mode, as `verify --mode`; default the configuration's. */
  readonly mode?: "reject" | "drop" | undefined
}) =>
  Effect.gen(function*() {
    const { config, input } = options
    const oldStore = CaptureStore.layerFileSystem({ directory: options.oldRun })
    const newStore = CaptureStore.layerFileSystem({ directory: options.newRun })
    const mode = options.mode ?? Config.resolvedMode(config)
    const modeConfig = { ...config, verify: { ...config.verify, mode } }
    const auditLayer = Audit.layer.pipe(
      Layer.provide(Verifier.layer),
      Layer.provide(Audit.fromStore(newStore)),
      Layer.provide(oldStore),
      Layer.provide(Policy.layer(config))
    )
    // Both runs must be usable before any verification starts.
    yield* Layer.build(Layer.merge(oldStore, Audit.fromStore(newStore))).pipe(Effect.scoped)

    const auditOptions = { timeoutMs: Config.resolvedAuditTimeoutMs(config) }
    const audited = (run: (audit: Audit.AuditShape) => Effect.Effect<AuditResult, AuditError>) =>
      Effect.flatMap(Audit.Audit, (audit) => Effect.either(run(audit))).pipe(
        Effect.provide(auditLayer),
        Effect.map(Either.match({
          onLeft: (error): AuditOutcome => ({
            _tag: error._tag === "AuditTimeout" ? "TimedOut" : "NoBaseline",
            reason: Text.describe(error._tag, Describe.auditError(error))
          }),
          onRight: (result): AuditOutcome => ({ _tag: "Audited", result })
        }))
      )

    if (input.kind === "report") {
      const checked = yield* Effect.flatMap(Gate.Gate, (gate) => Effect.either(gate.checkJson(input.text))).pipe(
        Effect.provide(Gate.layerWithStore(modeConfig).pipe(Layer.provide(oldStore)))
      )
      if (Either.isLeft(checked)) {
        const reason = Render.render("text", Render.Rendering.Rejected({ error: checked.left }))
        return { _tag: "NoBaseline", reason } satisfies AuditOutcome as AuditOutcome
      }
      return yield* audited((a) => a.auditReport(checked.right, auditOptions))
    }

    const answersLayer = Answer.layer({ mode, uncited: Config.resolvedUncited(config), needsCitation: Config.resolvedCitationRule(config), citations: Config.resolvedCitations(config) }).pipe(
      Layer.provide(Verifier.layer),
      Layer.provide(Policy.layer(config)),
      Layer.provideMerge(oldStore)
    )
    const verified = yield* Effect.gen(function*() {
      const manifest = yield* Manifest.make(config)
      const bindOptions = { manifestDigest: input.manifestDigest }
      const bound: Either.Either<BoundAnswer, AnswerError> = AnswerFormats.bind(input.formatIn, input.text, manifest, bindOptions)
      const answers = yield* Answer.Answers
      return yield* Effect.either(Effect.flatMap(bound, answers.verify))
    }).pipe(Effect.provide(answersLayer))
    if (Either.isLeft(verified)) {
      const reason = AnswerRender.render("text", AnswerRender.AnswerRendering.Rejected({ error: verified.left }))
      return { _tag: "NoBaseline", reason } satisfies AuditOutcome as AuditOutcome
    }
    return yield* audited((a) => a.auditAnswer(verified.right.answer, auditOptions))
  })
