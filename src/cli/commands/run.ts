/**
 * `run`: capture, verify and render in one go.
 */
import * as Command from "@effect/cli/Command"
import * as Effect from "effect/Effect"
import { describe, usageCodes } from "../CommandHelp.js"
import { exitWith } from "../Common.js"
import { configOption, forceOption, formatOption, loopbackOption, modeOption, outOption, reportOption, runDirOption } from "../CommonOptions.js"
import * as Io from "../Io.js"
import * as Store from "../Store.js"
import { captureInto } from "./capture.js"
import { verifyAndRender, verifyInputs } from "./verify.js"

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
      // The report must be readable, and the judge startable, before anything is fetched.
      const inputs = yield* verifyInputs(args)
      const allCaptured = yield* captureInto(inputs.config, args.config, inputs.store, args.allowLoopbackHttp, Io.stderr)
      const code = yield* verifyAndRender({ ...args, ...inputs })
      yield* exitWith(allCaptured && code === 0 ? 0 : 1)
    })
).pipe(Command.withDescription(describe("run", "Capture, verify and render in one go.", {
  success: "every source captured, report verified and grounded",
  failure: "a failed capture, a rejected report or a no_evidence outcome",
  usage: `${usageCodes}, existing run directory`
})))
