/**
 * `recapture`: the same approved sources again, into a new run (for an audit).
 */
import * as Command from "@effect/cli/Command"
import * as Options from "@effect/cli/Options"
import * as Effect from "effect/Effect"
import { describe, usageCodes } from "../CommandHelp.js"
import { exitWith, loadConfig, orUsageError } from "../Common.js"
import { configOption, loopbackOption } from "../CommonOptions.js"
import * as Io from "../Io.js"
import * as Recapture from "../Recapture.js"
import * as Store from "../Store.js"
import { captureInto } from "./capture.js"

export const recapture = Command.make(
  "recapture",
  {
    from: Options.directory("from").pipe(Options.withDescription("The OLD run directory (only read): its records name the sources to fetch again")),
    config: configOption,
    runDir: Options.directory("run-dir").pipe(Options.withDescription("The NEW run directory (created; must not exist, must not be inside the old run)")),
    allowLoopbackHttp: loopbackOption
  },
  (args) =>
    Effect.gen(function*() {
      yield* orUsageError(Recapture.checkRunDirectories({ from: args.from, to: args.runDir }))
      const config = yield* orUsageError(loadConfig(args.config))
      const plan = yield* orUsageError(Recapture.plan(config, args.from, args.runDir))
      yield* Io.stderr(Recapture.planLines(plan))
      const store: Store.StoreChoice = { _tag: "FileSystem", directory: args.runDir }
      const allCaptured = yield* captureInto(Recapture.narrowed(config, plan), args.config, store, args.allowLoopbackHttp, Io.stdout)
      yield* exitWith(allCaptured ? 0 : 1)
    })
).pipe(Command.withDescription(describe(
  "recapture",
  "Capture again, into a NEW run directory, the approved sources the OLD run holds records of (same budgets and policies as capture).",
  {
    success: "every source the old run holds was captured again",
    failure: "a source could not be captured (it is source_missing in the audit)",
    usage: `${usageCodes}, existing or nested run directory, nothing to recapture`
  }
)))
