/**
 * `verify`: a drafted report against a run's captures (read-only), rendered; `verifyAndRender` is also the verify step of `run`.
 */
import * as Command from "@effect/cli/Command"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as path from "node:path"
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
import * as ResultSigning from "../ResultSigning.js"
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
  /** `--sign-key`: sign the result if it passes (the report's exact bytes and its file name). */
  readonly signing?: { readonly signing: ResultSigning.Signing; readonly reportBytes: Uint8Array; readonly reportName: string } | undefined
}) =>
  Effect.gen(function*() {
    const text = options.reportText
    const mode = Option.getOrElse(options.mode, () => Config.resolvedMode(options.config))
    const config = { ...options.config, verify: { ...options.config.verify, mode } }
    const storeLayer = yield* Store.existingRun(options.store)
    const [policy, outcome] = yield* Effect.flatMap(
      Gate.Gate,
      (gate) => Effect.map(Effect.either(gate.checkJsonWithCaptures(text)), (outcome) => [gate.policy, outcome] as const)
    ).pipe(
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
    const passed = Either.isRight(outcome) && outcome.right.report.outcome === "grounded" && !JudgeReview.failsRun(judge)
    const signing = options.signing
    if (signing !== undefined) {
      yield* ResultSigning.write(
        "verify",
        signing.signing,
        passed && Either.isRight(outcome)
          ? [
            { kind: "report", ...outcome.right },
            { name: signing.reportName, input: signing.reportBytes, policy, run: ResultSigning.runOf(options.store) }
          ]
          : undefined
      )
    }
    return passed ? 0 : 1
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
  readonly signKey?: Option.Option<string>
  readonly attestationOut?: Option.Option<string>
}) =>
  Effect.gen(function*() {
    const store = yield* orUsageError(Store.choose(args.runDir, args.store))
    yield* checkOut({ ...args, runDir: Store.runDirectoryOf(store) })
    const resultSigning = yield* ResultSigning.setup({
      command: "verify",
      signKey: args.signKey ?? Option.none(),
      attestationOut: args.attestationOut ?? Option.none(),
      out: args.out,
      runDirectory: Store.runDirectoryOf(store),
      inputs: [{ path: args.config, what: "configuration" }, { path: args.report, what: "report" }]
    })
    const config = yield* orUsageError(loadConfig(args.config))
    const judge = yield* orUsageError(JudgeCli.judgeLayer(config, args.config))
    // One read: the text verified and the bytes a signed result names are the same.
    const reportBytes = yield* orUsageError(Io.readBytes(args.report, "report"))
    const reportText = yield* orUsageError(Io.decodeText(reportBytes, args.report, "report"))
    const signing = resultSigning === undefined
      ? undefined
      : { signing: resultSigning, reportBytes, reportName: path.basename(args.report) }
    return { store, config, judge, reportText, signing }
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
    force: forceOption,
    signKey: ResultSigning.signKeyOption,
    attestationOut: ResultSigning.attestationOutOption
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
