/**
 * The `run-pipeline` commands. Errors and progress go to stderr; renderings to
 * stdout or `--out`. Exit codes: 0 success, 1 domain failure (rejected report,
 * no evidence, failed capture or migration), 2 usage or configuration error.
 */
import { Command, Options } from "@effect/cli"
import { Effect, Either, Layer, Option } from "effect"
import * as Capture from "../Capture.js"
import * as CaptureStore from "../CaptureStore.js"
import * as Config from "../Config.js"
import * as Gate from "../Gate.js"
import * as Migrate from "../Migrate.js"
import * as Render from "../render/Render.js"
import { fromOutcome } from "../render/Rendering.js"
import { terminal } from "../render/Escape.js"
import { CliExit } from "./CliError.js"
import * as Demo from "./Demo.js"
import * as Io from "./Io.js"
import * as Report from "./Report.js"

const configOption = Options.file("config").pipe(Options.withDescription("The operator's pipeline.json"))
const runDirOption = Options.directory("run-dir").pipe(Options.withDescription("The run directory of captures"))
const reportOption = Options.file("report").pipe(Options.withDescription("The drafted report (JSON)"))
const modeOption = Options.choice("mode", ["reject", "drop"]).pipe(
  Options.optional,
  Options.withDescription("reject (default): any failure rejects; drop: failed facts are retracted")
)
const formatOption = Options.choice("format", Render.formats).pipe(Options.withDefault("text" as const))
const outOption = Options.file("out").pipe(Options.optional, Options.withDescription("Write the rendering here"))
const loopbackOption = Options.boolean("allow-loopback-http").pipe(
  Options.withDescription("Test mode: plain http to the literal host 127.0.0.1 only")
)

/** Reports a usage or configuration error and ends with exit code 2. */
const orUsageError = <A, R>(effect: Effect.Effect<A, Report.UsageError, R>) =>
  Effect.catchAll(effect, (error) =>
    Effect.zipRight(Io.stderr(Report.usageError(error)), Effect.fail(new CliExit({ code: 2 }))))

const exitWith = (code: 0 | 1 | 2) => (code === 0 ? Effect.void : Effect.fail(new CliExit({ code })))

const loadConfig = (file: string) =>
  Effect.flatMap(Io.readText(file, "configuration"), Config.decodeText)

/** Captures every approved source into a new run directory; returns whether all succeeded. */
const captureInto = (
  config: Config.PipelineConfig,
  runDirectory: string,
  allowLoopbackHttp: boolean,
  table: (text: string) => Effect.Effect<void>
) =>
  Effect.gen(function*() {
    yield* orUsageError(Io.createRunDirectory(runDirectory))
    const captureLayer = Capture.layer({ approved: config.sources, allowLoopbackHttp, ...config.capture }).pipe(
      Layer.provide(CaptureStore.layerFileSystem({ directory: runDirectory }))
    )
    const results = yield* Effect.flatMap(
      Capture.Capture,
      (capture) => capture.captureAll(config.sources, { onEvent: (event) => Io.stderr(Report.progress(event)) })
    ).pipe(Effect.provide(captureLayer), orUsageError)
    yield* table(Report.captureTable(results))
    return results.every((r) => Either.isRight(r.result))
  })

/**
 * Verifies a report read-only and renders it; returns the exit code: 0 for a
 * grounded report, 1 for a rejected one or a `no_evidence` outcome.
 */
const verifyAndRender = (options: {
  readonly config: Config.PipelineConfig
  readonly runDirectory: string
  readonly reportText: string
  readonly mode: Option.Option<"reject" | "drop">
  readonly format: Render.Format
  readonly out: Option.Option<string>
}) =>
  Effect.gen(function*() {
    const text = options.reportText
    const mode = Option.getOrElse(options.mode, () => Config.resolvedMode(options.config))
    const config = { ...options.config, verify: { ...options.config.verify, mode } }
    const outcome = yield* Effect.flatMap(Gate.Gate, (gate) => Effect.either(gate.checkJsonWithCaptures(text))).pipe(
      Effect.provide(Gate.layer({ runDirectory: options.runDirectory, config })),
      orUsageError
    )
    const rendering = fromOutcome(outcome)
    const output = Render.render(options.format, rendering)
    yield* Option.match(options.out, {
      onNone: () => Io.stdout(output),
      onSome: (file) => orUsageError(Io.writeOutput(file, output))
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

const capture = Command.make(
  "capture",
  { config: configOption, runDir: runDirOption, allowLoopbackHttp: loopbackOption },
  (args) =>
    Effect.gen(function*() {
      const config = yield* orUsageError(loadConfig(args.config))
      const allCaptured = yield* captureInto(config, args.runDir, args.allowLoopbackHttp, Io.stdout)
      yield* exitWith(allCaptured ? 0 : 1)
    })
).pipe(Command.withDescription("Capture every approved source into a NEW run directory."))

const verify = Command.make(
  "verify",
  {
    config: configOption,
    runDir: runDirOption,
    report: reportOption,
    mode: modeOption,
    format: formatOption,
    out: outOption
  },
  (args) =>
    Effect.gen(function*() {
      const config = yield* orUsageError(loadConfig(args.config))
      const reportText = yield* orUsageError(Io.readText(args.report, "report"))
      const code = yield* verifyAndRender({ ...args, config, reportText, runDirectory: args.runDir })
      yield* exitWith(code === 0 ? 0 : 1)
    })
).pipe(Command.withDescription("Verify a drafted report against a run's captures (read-only) and render it."))

const run = Command.make(
  "run",
  {
    config: configOption,
    runDir: runDirOption,
    report: reportOption,
    allowLoopbackHttp: loopbackOption,
    mode: modeOption,
    format: formatOption,
    out: outOption
  },
  (args) =>
    Effect.gen(function*() {
      const config = yield* orUsageError(loadConfig(args.config))
      // The report must be readable before anything is fetched.
      const reportText = yield* orUsageError(Io.readText(args.report, "report"))
      const allCaptured = yield* captureInto(config, args.runDir, args.allowLoopbackHttp, Io.stderr)
      const code = yield* verifyAndRender({ ...args, config, reportText, runDirectory: args.runDir })
      yield* exitWith(allCaptured && code === 0 ? 0 : 1)
    })
).pipe(Command.withDescription("Capture, verify and render in one go."))

const migrate = Command.make(
  "migrate",
  {
    legacy: Options.directory("legacy").pipe(Options.withDescription("Directory of legacy records (only read)")),
    map: Options.file("map").pipe(Options.withDescription("The operator's map: legacy file -> exact source")),
    runDir: runDirOption
  },
  (args) =>
    Effect.gen(function*() {
      const map = yield* orUsageError(Effect.flatMap(Io.readText(args.map, "migration map"), Migrate.decodeMap))
      yield* orUsageError(Io.createRunDirectory(args.runDir))
      const result = yield* Migrate.migrate({ legacyDirectory: args.legacy, map }).pipe(
        Effect.provide(CaptureStore.layerFileSystem({ directory: args.runDir })),
        orUsageError
      )
      const lines = [
        ...result.migrated.map((m) => `migrated  ${terminal(m.file)} -> ${terminal(m.source)} (sha256 ${m.sha256.slice(0, 12)}…)`),
        ...result.rejected.map((r) => `REJECTED  ${terminal(r.file)}: ${r.reason}: ${terminal(r.detail)}`),
        ...result.skipped.map((file) => `skipped   ${terminal(file)}: not approved by the map, left alone`),
        `${result.migrated.length} migrated, ${result.rejected.length} rejected, ${result.skipped.length} skipped`
      ]
      yield* Io.stdout(lines.join("\n") + "\n")
      yield* exitWith(result.rejected.length === 0 ? 0 : 1)
    })
).pipe(Command.withDescription("Restore approved legacy records as v1 captures in a NEW run directory."))

const demo = Command.make(
  "demo",
  { output: Options.directory("output").pipe(Options.withDefault("demo-output")) },
  (args) => Demo.run(args.output).pipe(orUsageError)
).pipe(Command.withDescription("Run the whole pipeline offline against a synthetic source server on 127.0.0.1."))

// ---------------------------------------------------------------------------
// doctor: leftovers of interrupted writes and records that do not verify
// ---------------------------------------------------------------------------

/** The doctor's report, one line per finding and a summary; names escaped for the terminal. */
const doctorLines = (result: CaptureStore.RunInspection, removed: ReadonlyArray<string> | undefined) => {
  const gone = new Set(removed ?? [])
  return [
    ...result.leftovers.map((l) =>
      `${gone.has(l.name) ? "removed " : "LEFTOVER"}  ${terminal(l.name)} (${l.bytes} bytes): ${
        l.linkedTo === null
          ? "an interrupted write; no record was made from it"
          : `a second link of ${terminal(l.linkedTo)}, whose write finished; the record is intact`
      }`
    ),
    ...result.problems.map((p) => `CORRUPT   ${terminal(p.name)}: ${p.reason}: ${terminal(p.detail)} (left alone)`),
    ...result.others.map((name) => `other     ${terminal(name)}: not written by citegate, left alone`),
    `${result.records} records verify, ${result.leftovers.length} leftovers${
      removed === undefined ? "" : ` (${gone.size} removed)`
    }, ${result.problems.length} corrupt records`
  ]
}

const doctor = Command.make(
  "doctor",
  {
    runDir: runDirOption,
    fix: Options.boolean("fix").pipe(
      Options.withDescription("Remove the leftovers of interrupted writes (never a record)")
    )
  },
  (args) =>
    Effect.gen(function*() {
      const options = { directory: args.runDir }
      if (!args.fix) {
        const result = yield* orUsageError(CaptureStore.inspect(options))
        yield* Io.stdout(doctorLines(result, undefined).join("\n") + "\n")
        return yield* exitWith(result.leftovers.length === 0 && result.problems.length === 0 ? 0 : 1)
      }
      const result = yield* orUsageError(CaptureStore.sweep(options))
      const lines = [
        ...doctorLines(result, result.removed),
        ...result.failed.map((f) => `NOT REMOVED ${terminal(f.name)}: ${terminal(f.detail)}`)
      ]
      yield* Io.stdout(lines.join("\n") + "\n")
      yield* exitWith(result.failed.length === 0 && result.problems.length === 0 ? 0 : 1)
    })
).pipe(Command.withDescription(
  "Check a run directory: every record verifies; list (and with --fix remove) leftovers of interrupted writes."
))

export const command = Command.make("run-pipeline").pipe(
  Command.withDescription("citegate: provable citations for generated reports."),
  Command.withSubcommands([capture, verify, run, migrate, demo, doctor])
)
