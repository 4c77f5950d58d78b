/**
 * `run`: capture, verify and render in one go.
 */
import * as Command from "@effect/cli/Command"
import * as Effect from "effect/Effect"
import { describe, usageCodes } from "../CommandHelp.js"
import { checkOut, exitWith, loadConfig, orUsageError } from "../Common.js"
import { configOption, forceOption, formatOption, loopbackOption, modeOption, outOption, reportOption, runDirOption } from "../CommonOptions.js"
import * as Io from "../Io.js"
import * as Store from "../Store.js"
import { captureInto } from "./capture.js"
import { verifyAndRender } from "./verify.js"

export const run = Command.make(
  "run",
  {
    config: configOption,
    runDir: runDirOption,
    store: Store.storeOption,
    report: reportOption,
    allowLoopbackHttp: loopbackOption,
    mode: modeOption,
    format: formatOption,
    out: outOption,
    force: forceOption
  },
  (args) =>
    Effect.gen(function*() {
      const store = yield* orUsageError(Store.choose(args.runDir, args.store))
      yield* checkOut({ ...args, runDir: Store.runDirectoryOf(store) })
      const config = yield* orUsageError(loadConfig(args.config))
      // The report must be readable before anything is fetched.
      const reportText = yield* orUsageError(Io.readText(args.report, "report"))
      const allCaptured = yield* captureInto(config, args.config, store, args.allowLoopbackHttp, Io.stderr)
      const code = yield* verifyAndRender({ ...args, config, reportText, store })
      yield* exitWith(allCaptured && code === 0 ? 0 : 1)
    })
).pipe(Command.withDescription(describe("run", "Capture, verify and render in one go.", {
  success: "every source captured, report verified and grounded",
  failure: "a failed capture, a rejected report or a no_evidence outcome",
  usage: `${usageCodes}, existing run directory`
})))
