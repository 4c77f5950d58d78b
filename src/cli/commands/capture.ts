/**
 * `capture`: every approved source into a new run; `captureInto` is also the capture step of `run` and `recapture`.
 */
import * as Command from "@effect/cli/Command"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import * as path from "node:path"
import * as TrustedKeys from "../../evidence/TrustedKeys.js"
import * as Capture from "../../capture/Capture.js"
import * as Trust from "../../capture/Trust.js"
import * as Config from "../../Config.js"
import { CaptureError } from "../../Errors.js"
import { TestModeRequired } from "../CliError.js"
import { describe, usageCodes } from "../CommandHelp.js"
import { exitWith, loadConfig, needsLoopbackFlag, orUsageError } from "../Common.js"
import { choiceOption, configOption, loopbackOption, runDirOption } from "../CommonOptions.js"
import * as Io from "../Io.js"
import * as Report from "../Report.js"
import * as Store from "../Store.js"

const encodeCaptureError = Schema.encodeSync(CaptureError)

/**
 * `capture --format json`: one result per approved source in configuration order, numbered as in
 * `sources`; a captured source with the digest a citation must name, a failed one with its typed error.
 */
const captureJson = (results: ReadonlyArray<Capture.CaptureResult>): string =>
  JSON.stringify({
    format: "citegate.capture-results/1",
    results: results.map(({ result, source }, i) =>
      Either.match(result, {
        onRight: (ref) => ({
          number: i + 1,
          source,
          status: "captured",
          captureSha256: ref.sha256,
          byteLength: ref.byteLength,
          accessedAt: ref.accessedAt
        }),
        onLeft: (error) => ({ number: i + 1, source, status: "failed", error: encodeCaptureError(error) })
      })
    )
  }, null, 2) + "\n"

/** Captures every approved source into a new run (directory); returns whether all succeeded. */
export const captureInto = (
  config: Config.PipelineConfig,
  configFile: string,
  store: Store.StoreChoice,
  allowLoopbackHttp: boolean,
  table: (text: string) => Effect.Effect<void>,
  format: "table" | "json" = "table"
) =>
  Effect.gen(function*() {
    const plainHttp = needsLoopbackFlag(config, allowLoopbackHttp)
    if (plainHttp.length > 0) yield* orUsageError(Effect.fail(new TestModeRequired({ sources: plainHttp })))
    // A relative caFile names a file beside pipeline.json, wherever the command is run from. It is read
    // (and checked) before the run directory exists, so a bad one leaves nothing behind.
    const { caFile, signing: _signing, ...budgets } = config.capture ?? {}
    const ca = yield* orUsageError(
      Trust.loadExtraCa({ caFile: caFile === undefined ? undefined : path.resolve(path.dirname(configFile), caFile) })
    )
    // The signing key (capture.signing.keyFile), read and checked before the run exists, like the CA file.
    const signingKey = yield* orUsageError(TrustedKeys.signingKeyOf(config, path.dirname(configFile)))
    const storeLayer = yield* orUsageError(Store.createRun(store))
    const captureLayer = Capture.layer({ approved: config.sources, allowLoopbackHttp, ...budgets, ca, signingKey }).pipe(
      Layer.provide(storeLayer)
    )
    const results = yield* Effect.flatMap(
      Capture.Capture,
      (capture) => capture.captureAll(config.sources, { onEvent: (event) => Io.stderr(Report.progress(event)) })
    ).pipe(Effect.provide(captureLayer), orUsageError)
    yield* table(format === "json" ? captureJson(results) : Report.captureTable(results))
    return results.every((r) => Either.isRight(r.result))
  })

export const capture = Command.make(
  "capture",
  {
    config: configOption,
    runDir: runDirOption,
    store: Store.storeOption,
    allowLoopbackHttp: loopbackOption,
    format: choiceOption("format", ["table", "json"], "table", "table, or json (citegate.capture-results/1, for scripts) on stdout")
  },
  (args) =>
    Effect.gen(function*() {
      const store = yield* orUsageError(Store.choose(args.runDir, args.store))
      const config = yield* orUsageError(loadConfig(args.config))
      const allCaptured = yield* captureInto(config, args.config, store, args.allowLoopbackHttp, Io.stdout, args.format)
      yield* exitWith(allCaptured ? 0 : 1)
    })
).pipe(Command.withDescription(describe("capture", "Capture every approved source into a NEW run directory.", {
  success: "every approved source captured",
  failure: "a source could not be captured (its error in the table)",
  usage: `${usageCodes}, existing run directory`
})))
