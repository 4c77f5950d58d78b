/**
 * What the commands share beyond their options: the configuration read, the --out check made before
 * anything is read or written, usage errors (exit 2) and the exit code of a command.
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as path from "node:path"
import * as Config from "../Config.js"
import * as TrustedKeys from "../evidence/TrustedKeys.js"
import { CliExit } from "./CliError.js"
import * as Io from "./Io.js"
import * as Report from "./Report.js"

/** Refuses, before anything is read, fetched or written, an --out that would destroy evidence or input. */
export const checkOut = (args: {
  readonly out: Option.Option<string>
  readonly force: boolean
  readonly runDir: string | undefined
  readonly config: string
  readonly report: string
  /** What the report input is called in messages (an answer for verify-answer). */
  readonly reportWhat?: string
}) =>
  Option.match(args.out, {
    onNone: () => Effect.void,
    onSome: (out) =>
      orUsageError(Io.checkOutput({
        out,
        runDirectory: args.runDir,
        inputs: [{ path: args.config, what: "configuration" }, { path: args.report, what: args.reportWhat ?? "report" }],
        force: args.force
      }))
  })

/** The sources a capture would refuse without test mode: named here, before anything is created. */
export const needsLoopbackFlag = (config: Config.PipelineConfig, allowLoopbackHttp: boolean) =>
  allowLoopbackHttp ? [] : config.sources.filter((source) => source.startsWith("http:"))

/** Reports a usage or configuration error and ends with exit code 2. */
export const orUsageError = <A, R>(effect: Effect.Effect<A, Report.UsageError, R>) =>
  Effect.catchAll(effect, (error) =>
    Effect.zipRight(Io.stderr(Report.usageError(error)), Effect.fail(new CliExit({ code: 2 }))))


export const exitWith = (code: 0 | 1 | 2) => (code === 0 ? Effect.void : Effect.fail(new CliExit({ code })))

/** pipeline.json decoded, its `verify.trustedKeys` files read (relative ones beside it). */
export const loadConfig = (file: string) =>
  Io.readText(file, "configuration").pipe(
    Effect.flatMap(Config.decodeText),
    Effect.flatMap((config) => TrustedKeys.resolve(config, path.dirname(file)))
  )
