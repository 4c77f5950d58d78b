/**
 * `verify`: a drafted report against a run's captures (read-only), rendered; `verifyAndRender` is also the verify step of `run`.
 */
import * as Command from "@effect/cli/Command"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import type * as Redacted from "effect/Redacted"
import * as Config from "../../Config.js"
import { terminal } from "../../render/Escape.js"
import * as Render from "../../render/Render.js"
import { fromOutcome } from "../../render/Rendering.js"
import * as Repair from "../../render/Repair.js"
import * as Review from "../../render/Review.js"
import * as Gate from "../../verify/Gate.js"
import type * as Judge from "../../review/Judge.js"
import * as JudgeReview from "../../review/JudgeReview.js"
import { describe } from "../CommandHelp.js"
import { checkOut, exitWith, loadConfig, orUsageError } from "../Common.js"
import { configOption, forceOption, modeOption, outOption, repairFormatOption, reportOption, runDirOption } from "../CommonOptions.js"
import * as Io from "../Io.js"
import * as JudgeCli from "../JudgeCli.js"
import * as Store from "../Store.js"
import { recordedReview } from "./review.js"

/**
 * Verifies a report read-only and renders it; returns the exit code: 0 for a
 * grounded report, 1 for a rejected one or a `no_evidence` outcome.
 */
export const verifyAndRender = (options: {
  readonly config: Config.PipelineConfig
  readonly store: Store.StoreChoice
  readonly reportText: string
  readonly mode: Option.Option<"reject" | "drop">
  readonly format: Render.Format | "repair"
  readonly out: Option.Option<string>
  readonly force: boolean
  /** The judge layer (`review.judge`), empty when judging is off. */
  readonly judge: Layer.Layer<never> | Layer.Layer<Judge.Judge>
}) =>
  Effect.gen(function*() {
    const text = options.reportText
    const mode = Option.getOrElse(options.mode, () => Config.resolvedMode(options.config))
    const config = { ...options.config, verify: { ...options.config.verify, mode } }
    const storeLayer = yield* Store.existingRun(options.store)
    const outcome = yield* Effect.flatMap(Gate.Gate, (gate) => Effect.either(gate.checkJsonWithCaptures(text))).pipe(
      Effect.provide(Gate.layerWithStore(config).pipe(Layer.provide(storeLayer))),
      orUsageError
    )
    // --- semantic review hook: the judge's outcome, beside provenance ---
    const judge = Either.isRight(outcome)
      ? yield* JudgeReview.ofReport(outcome.right.report, outcome.right.captures).pipe(Effect.provide(options.judge))
      : undefined
    // --- recorded human review: the run's decisions about the verified facts, beside provenance ---
    const humanReview = Either.isRight(outcome) ? yield* recordedReview(options.store, outcome.right.report) : undefined
    const provenance = fromOutcome(outcome, Config.resolvedMatching(config))
    const rendering = provenance._tag === "Verified" ? Render.Rendering.Verified({ ...provenance, judge, humanReview }) : provenance
    const output = options.format === "repair" ? Repair.renderReport(rendering) : Render.render(options.format, rendering)
    yield* Option.match(options.out, {
      onNone: () => Io.stdout(output),
      onSome: (file) => orUsageError(Io.writeOutput(file, output, { overwrite: options.force }))
    })
    const summary = Either.match(outcome, {
      onLeft: (error) => `verify: REJECTED (${error._tag})`,
      onRight: ({ report }) =>
        report.outcome === "grounded"
          ? `verify: GROUNDED (${report.mode} mode, ${report.retractions.length} retracted)${Review.summary(report)}`
          : `verify: NO EVIDENCE (${report.mode} mode): no cited fact was verified${Review.summary(report)}`
    })
    const written = Option.match(options.out, { onNone: () => "", onSome: (file) => `; written to ${terminal(file)}` })
    yield* Io.stderr(`${summary}${written}\n${JudgeCli.summaryLine("verify", judge)}`)
    return Either.isRight(outcome) && outcome.right.report.outcome === "grounded" && !JudgeReview.failsRun(judge) ? 0 : 1
  })

/**
 * What `verify` and `run` settle before any work, in this order: the store, the output, the
 * configuration, the judge (startable) and the report (readable); each a usage error.
 */
export const verifyInputs = (args: {
  readonly runDir: string
  readonly store: Option.Option<Redacted.Redacted>
  readonly config: string
  readonly report: string
  readonly out: Option.Option<string>
  readonly force: boolean
}) =>
  Effect.gen(function*() {
    const store = yield* orUsageError(Store.choose(args.runDir, args.store))
    yield* checkOut({ ...args, runDir: Store.runDirectoryOf(store) })
    const config = yield* orUsageError(loadConfig(args.config))
    const judge = yield* orUsageError(JudgeCli.judgeLayer(config, args.config))
    const reportText = yield* orUsageError(Io.readText(args.report, "report"))
    return { store, config, judge, reportText }
  })

export const verify = Command.make(
  "verify",
  {
    config: configOption,
    runDir: runDirOption,
    store: Store.storeOption,
    report: reportOption,
    mode: modeOption,
    format: repairFormatOption,
    out: outOption,
    force: forceOption
  },
  (args) =>
    Effect.gen(function*() {
      const inputs = yield* verifyInputs(args)
      const code = yield* verifyAndRender({ ...args, ...inputs })
      yield* exitWith(code === 0 ? 0 : 1)
    })
).pipe(Command.withDescription(describe("verify", "Verify a drafted report against a run's captures (read-only) and render it.", {
  success: "report verified and grounded",
  failure: "report rejected, or a no_evidence outcome"
})))
