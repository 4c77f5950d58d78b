/**
 * `verify`: a drafted report against a run's captures (read-only), rendered; `verifyAndRender` is also the verify step of `run`.
 */
import * as Command from "@effect/cli/Command"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Config from "../../Config.js"
import { terminal } from "../../render/Escape.js"
import * as Render from "../../render/Render.js"
import { fromOutcome } from "../../render/Rendering.js"
import * as Repair from "../../render/Repair.js"
import * as Gate from "../../verify/Gate.js"
import { describe } from "../CommandHelp.js"
import { checkOut, exitWith, loadConfig, orUsageError } from "../Common.js"
import { configOption, forceOption, modeOption, outOption, repairFormatOption, reportOption, runDirOption } from "../CommonOptions.js"
import * as Io from "../Io.js"
import * as Store from "../Store.js"

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
    const rendering = fromOutcome(outcome, Config.resolvedMatching(config))
    const output = options.format === "repair" ? Repair.renderReport(rendering) : Render.render(options.format, rendering)
    yield* Option.match(options.out, {
      onNone: () => Io.stdout(output),
      onSome: (file) => orUsageError(Io.writeOutput(file, output, { overwrite: options.force }))
    })
    const summary = Either.match(outcome, {
      onLeft: (error) => `verify: REJECTED (${error._tag})`,
      onRight: ({ report }) =>
        report.outcome === "grounded"
          ? `verify: GROUNDED (${report.mode} mode, ${report.retractions.length} retracted)`
          : `verify: NO EVIDENCE (${report.mode} mode): no cited fact was verified`
    })
    const written = Option.match(options.out, { onNone: () => "", onSome: (file) => `; written to ${terminal(file)}` })
    yield* Io.stderr(`${summary}${written}\n`)
    return Either.isRight(outcome) && outcome.right.report.outcome === "grounded" ? 0 : 1
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
      const store = yield* orUsageError(Store.choose(args.runDir, args.store))
      yield* checkOut({ ...args, runDir: Store.runDirectoryOf(store) })
      const config = yield* orUsageError(loadConfig(args.config))
      const reportText = yield* orUsageError(Io.readText(args.report, "report"))
      const code = yield* verifyAndRender({ ...args, config, reportText, store })
      yield* exitWith(code === 0 ? 0 : 1)
    })
).pipe(Command.withDescription(describe("verify", "Verify a drafted report against a run's captures (read-only) and render it.", {
  success: "report verified and grounded",
  failure: "report rejected, or a no_evidence outcome"
})))
