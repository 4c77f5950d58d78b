/**
 * The `run-pipeline` commands. Errors and progress go to stderr; renderings to
 * stdout or `--out`. Exit codes: 0 success, 1 domain failure (rejected report,
 * no evidence, failed capture or migration), 2 usage or configuration error;
 * main.ts adds 70 (internal error) and 130 / 143 (SIGINT / SIGTERM).
 */
import * as Command from "@effect/cli/Command"
import * as Descriptor from "@effect/cli/CommandDescriptor"
import * as HelpDoc from "@effect/cli/HelpDoc"
import * as Options from "@effect/cli/Options"
import * as ValidationError from "@effect/cli/ValidationError"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as path from "node:path"
import * as Answer from "../answer/Answer.js"
import * as Anthropic from "../answer/Anthropic.js"
import * as AnthropicSse from "../answer/AnthropicSse.js"
import * as Documents from "../answer/Documents.js"
import * as Evi1 from "../answer/Evi1.js"
import * as AnswerRender from "../answer/Render.js"
import * as AuditRender from "../audit/Render.js"
import * as Capture from "../capture/Capture.js"
import * as Trust from "../capture/Trust.js"
import * as CaptureStore from "../store/CaptureStore.js"
import * as Config from "../Config.js"
import type { BoundAnswer } from "../answer/Records.js"
import { type AnswerError, CaptureError } from "../Errors.js"
import * as Gate from "../verify/Gate.js"
import * as Manifest from "../Manifest.js"
import * as Migrate from "../store/Migrate.js"
import * as Policy from "../verify/Policy.js"
import * as Verifier from "../verify/Verifier.js"
import * as Render from "../render/Render.js"
import * as Repair from "../render/Repair.js"
import { fromOutcome } from "../render/Rendering.js"
import { terminal } from "../render/Escape.js"
import { CliExit, StoreChoiceInvalid, TestModeRequired } from "./CliError.js"
import * as Demo from "./Demo.js"
import * as AuditRun from "./AuditRun.js"
import * as Io from "./Io.js"
import * as Recapture from "./Recapture.js"
import * as Report from "./Report.js"
import * as Serve from "./Serve.js"
import * as Store from "./Store.js"

const configOption = Options.file("config").pipe(
  Options.withDescription("The operator's pipeline.json (approved sources, labels, budgets)")
)
const runDirOption = Options.directory("run-dir").pipe(Options.withDescription("The run directory of captures"))
const reportOption = Options.file("report").pipe(Options.withDescription("The drafted report (JSON)"))
const modeOption = Options.choice("mode", ["reject", "drop"]).pipe(
  Options.optional,
  Options.withDescription(
    "reject: any failure rejects the report; drop: failed facts are retracted. Default: the config's verify.mode, else reject"
  )
)

/** A choice with a default whose error names the flag (the parser's own message does not). */
const choiceOption = <const C extends ReadonlyArray<string>>(
  name: string,
  choices: C,
  fallback: C[number],
  description: string
) =>
  Options.text(name).pipe(
    Options.withPseudoName(choices.join(" | ")),
    Options.withDefault(fallback),
    Options.mapEffect((value) =>
      choices.includes(value)
        ? Effect.succeed(value as C[number])
        : Effect.fail(ValidationError.invalidValue(HelpDoc.p(
          `--${name} must be one of ${choices.join(", ")}; got ${JSON.stringify(value)}`
        )))
    ),
    Options.withDescription(`${description} (default ${fallback})`)
  )

const formatOption = choiceOption("format", Render.formats, "text", `Output format: ${Render.formats.join(" | ")}`)
/** `verify` and `verify-answer` also render a rejection as repair instructions for the drafting model. */
const repairFormats = [...Render.formats, "repair"] as const
const repairFormatOption = choiceOption(
  "format",
  repairFormats,
  "text",
  `Output format: ${repairFormats.join(" | ")} (repair: instructions for the drafting model)`
)
const outOption = Options.file("out").pipe(
  Options.optional,
  Options.withDescription("Write the rendering to this file (atomically) instead of stdout; never inside the run directory or over an input")
)
const forceOption = Options.boolean("force").pipe(
  Options.withDescription("Let --out replace an existing writable file (never a read-only one such as a capture record of any run, the config or the report)")
)

/** Refuses, before anything is read, fetched or written, an --out that would destroy evidence or input. */
const checkOut = (args: {
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
const loopbackOption = Options.boolean("allow-loopback-http").pipe(
  Options.withDescription("Test mode: http (or https) to the literal host 127.0.0.1 only, and no other address. Off unless given")
)

/** The sources a capture would refuse without test mode: named here, before anything is created. */
const needsLoopbackFlag = (config: Config.PipelineConfig, allowLoopbackHttp: boolean) =>
  allowLoopbackHttp ? [] : config.sources.filter((source) => source.startsWith("http:"))

/** Reports a usage or configuration error and ends with exit code 2. */
const orUsageError = <A, R>(effect: Effect.Effect<A, Report.UsageError, R>) =>
  Effect.catchAll(effect, (error) =>
    Effect.zipRight(Io.stderr(Report.usageError(error)), Effect.fail(new CliExit({ code: 2 }))))

/** What exit codes 0, 1 and 2 mean for one command (70, 130 and 143 mean the same for all). */
interface ExitCodes {
  readonly success: string
  readonly failure?: string
  readonly usage?: string
}

const usageCodes = "usage or configuration error (bad options, invalid config, unreadable file)"

/** The exit codes of the program as a whole, for the top-level help. */
const programCodes: ExitCodes = {
  success: "success (all sources captured; report or answer verified and grounded; nothing drifted)",
  failure: "domain failure (rejected report or answer, no_evidence outcome, a failed capture or migration entry, drift)",
  usage: `${usageCodes}, existing run directory`
}

/** Each command's summary (its description's first line), for one line per command in the top-level help. */
export const commandSummaries = new Map<string, string>()

/** A command's description followed by its own exit codes; `what` is also its line in the top-level help. */
const describe = (name: string, what: string, codes: ExitCodes) => {
  commandSummaries.set(name, what)
  return HelpDoc.blocks([
    HelpDoc.p(what),
    HelpDoc.enumeration([
      HelpDoc.p(`Exit codes: 0 ${codes.success}`),
      ...(codes.failure === undefined ? [] : [HelpDoc.p(`1 ${codes.failure}`)]),
      HelpDoc.p(`2 ${codes.usage ?? usageCodes}`),
      HelpDoc.p("70 internal error; 130 interrupted (SIGINT); 143 terminated (SIGTERM)")
    ])
  ])
}

const exitWith = (code: 0 | 1 | 2) => (code === 0 ? Effect.void : Effect.fail(new CliExit({ code })))

const loadConfig = (file: string) =>
  Effect.flatMap(Io.readText(file, "configuration"), Config.decodeText)

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
const captureInto = (
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
    const { caFile, ...budgets } = config.capture ?? {}
    const ca = yield* orUsageError(
      Trust.loadExtraCa({ caFile: caFile === undefined ? undefined : path.resolve(path.dirname(configFile), caFile) })
    )
    const storeLayer = yield* orUsageError(Store.createRun(store))
    const captureLayer = Capture.layer({ approved: config.sources, allowLoopbackHttp, ...budgets, ca }).pipe(
      Layer.provide(storeLayer)
    )
    const results = yield* Effect.flatMap(
      Capture.Capture,
      (capture) => capture.captureAll(config.sources, { onEvent: (event) => Io.stderr(Report.progress(event)) })
    ).pipe(Effect.provide(captureLayer), orUsageError)
    yield* table(format === "json" ? captureJson(results) : Report.captureTable(results))
    return results.every((r) => Either.isRight(r.result))
  })

/**
 * Verifies a report read-only and renders it; returns the exit code: 0 for a
 * grounded report, 1 for a rejected one or a `no_evidence` outcome.
 */
const verifyAndRender = (options: {
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

const capture = Command.make(
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

const verify = Command.make(
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

const run = Command.make(
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
).pipe(Command.withDescription(describe("migrate", "Restore approved legacy records as v1 captures in a NEW run directory.", {
  success: "every approved legacy record migrated",
  failure: "a legacy record was rejected",
  usage: `${usageCodes}, existing run directory`
})))

const demo = Command.make(
  "demo",
  {
    output: Options.directory("output").pipe(
      Options.withDefault("demo-output"),
      Options.withDescription("Where the demo writes its run and renderings, in a new timestamped folder (default ./demo-output)")
    )
  },
  (args) => Demo.run(args.output).pipe(orUsageError)
).pipe(Command.withDescription(describe("demo", "Run the whole pipeline offline against a synthetic source server on 127.0.0.1.", {
  success: "the demo ran and wrote its renderings"
})))

// --- serve: the HTTP service (src/server/) ----------------------------------------------------------

const serveCommand = Command.make(
  "serve",
  {
    config: configOption,
    listen: Options.text("listen").pipe(
      Options.withDefault("127.0.0.1:8787"),
      Options.mapEffect((value) => {
        const parsed = Serve.parseListen(value)
        return typeof parsed === "string" ? Effect.fail(ValidationError.invalidValue(HelpDoc.p(parsed))) : Effect.succeed(parsed)
      }),
      Options.withDescription("HOST:PORT to listen on, an IP address (default 127.0.0.1:8787)")
    ),
    runRoot: Options.directory("run-root", { exists: "either" }).pipe(
      Options.optional,
      Options.withDescription("Where runs live, one directory each (default: runs/ beside the config)")
    ),
    allowLoopbackHttp: loopbackOption,
    behindTlsProxy: Options.boolean("behind-tls-proxy").pipe(
      Options.withDescription("A TLS-terminating proxy is the only way in: allow plain HTTP on a non-loopback --listen address")
    )
  },
  (args) =>
    Effect.gen(function*() {
      const config = yield* orUsageError(loadConfig(args.config))
      const plainHttp = needsLoopbackFlag(config, args.allowLoopbackHttp)
      if (plainHttp.length > 0) yield* orUsageError(Effect.fail(new TestModeRequired({ sources: plainHttp })))
      yield* orUsageError(Serve.checkListen(args.listen, config, args.behindTlsProxy))
      const tls = yield* orUsageError(Serve.loadTls(config, args.config))
      yield* Serve.serve({
        config,
        configFile: args.config,
        ...args.listen,
        runRoot: Option.getOrUndefined(args.runRoot),
        allowLoopbackHttp: args.allowLoopbackHttp,
        tls
      }).pipe(
        Effect.catchTag("ServeError", (error) =>
          Effect.zipRight(Io.stderr(`serve: cannot listen on ${args.listen.host}:${args.listen.port}: ${String(error.cause)}\n`), Effect.fail(new CliExit({ code: 2 }))))
      )
    })
).pipe(Command.withDescription(describe(
  "serve",
  "Serve the verification API over HTTP (runs, verify report/answer, SSE run events; OpenAPI at /openapi.json) until SIGINT/SIGTERM.",
  { success: "never: the service runs until SIGINT (130) or SIGTERM (143), then drains", usage: `${usageCodes}, or the address cannot be listened on` }
)))

// --- sources: the run's manifest for the drafting model -------------------------------------------

const sourceFormats = ["text", "json", "prompt", ...Documents.formats] as const

const sources = Command.make(
  "sources",
  {
    config: configOption,
    runDir: runDirOption,
    store: Store.storeOption,
    format: choiceOption(
      "format",
      sourceFormats,
      "text",
      "text, json (citegate.manifest/1), prompt (a block for the drafting model), or the capture texts for the model: " +
        "documents (citegate.documents/1), anthropic (Messages document blocks), bedrock (Converse document blocks), evi1 (the EVI1 prompt with its documents)"
    )
  },
  (args) =>
    Effect.gen(function*() {
      const store = yield* orUsageError(Store.choose(args.runDir, args.store))
      const config = yield* orUsageError(loadConfig(args.config))
      const storeLayer = yield* Store.existingRun(store)
      const format = args.format
      const manifest = format === "text" || format === "json" || format === "prompt"
        ? yield* Effect.map(Manifest.make(config), (manifest) => {
          const render = { text: Manifest.toText, json: Manifest.toJson, prompt: Manifest.toPrompt }[format]
          return { manifest, output: render(manifest) }
        }).pipe(Effect.provide(storeLayer), orUsageError)
        : yield* Effect.map(Documents.make(config), (handOff) => ({ manifest: handOff.manifest, output: Documents.render(format, handOff) })).pipe(
          Effect.catchTag("DocumentsTooLarge", (error) =>
            Effect.zipRight(Io.stderr(`${error._tag}: ${terminal(error.message)}\n`), Effect.fail(new CliExit({ code: 1 })))),
          Effect.provide(storeLayer),
          Effect.catchIf((e): e is Exclude<typeof e, CliExit> => !(e instanceof CliExit), (e) => orUsageError(Effect.fail(e)))
        )
      yield* Io.stdout(manifest.output)
      const missing = manifest.manifest.sources.filter((s) => s.status === "missing").length
      if (missing > 0) {
        yield* Io.stderr(`sources: ${missing} of ${manifest.manifest.sources.length} approved source(s) have no usable capture in this run\n`)
      }
      // Like capture: 1 when an approved source cannot be cited from this run.
      yield* exitWith(Manifest.isComplete(manifest.manifest) ? 0 : 1)
    })
).pipe(Command.withDescription(describe(
  "sources",
  "List the run's sources for the drafting model, or hand it their texts (documents, anthropic, bedrock, evi1); read-only.",
  {
    success: "every approved source has a usable capture in the run",
    failure: "an approved source has no usable capture (listed as missing), or the texts pass the hand-off limit"
  }
)))

// --- verify-answer: prose with inline citations ---------------------------------------------------

/**
 * Verifies an answer (citegate.answer/1 JSON, EVI1 text or an Anthropic Messages response) against
 * the run's manifest and captures, read-only; renders it; returns 0 for a grounded answer, else 1.
 */
const verifyAnswer = Command.make(
  "verify-answer",
  {
    answer: Options.file("answer").pipe(Options.withDescription("The drafted answer")),
    formatIn: choiceOption(
      "format-in",
      ["json", "evi1", "anthropic", "anthropic-sse"],
      "json",
      "The answer's format: json (citegate.answer/1), evi1 (VeriQuote's plain text), anthropic (a Messages API response with citations), " +
        "anthropic-sse (a Messages API event stream, as streamed)"
    ),
    config: configOption,
    runDir: runDirOption,
    manifestDigest: Options.text("manifest-digest").pipe(
      Options.optional,
      Options.withDescription(
        "The digest of the manifest the answer was drafted against (from `sources --format json`). Required for evi1 " +
          "without a MANIFEST line and for anthropic and anthropic-sse; when the answer names one too, both must match"
      )
    ),
    mode: modeOption,
    format: repairFormatOption,
    out: outOption,
    force: forceOption
  },
  (args) =>
    Effect.gen(function*() {
      // The answer is an input like a report: --out may never replace it (nor a capture or the config).
      yield* checkOut({ ...args, report: args.answer, reportWhat: "answer" })
      const config = yield* orUsageError(loadConfig(args.config))
      const text = yield* orUsageError(Io.readText(args.answer, "answer"))
      const mode = Option.getOrElse(args.mode, () => Config.resolvedMode(config))
      const storeLayer = CaptureStore.layerFileSystem({ directory: args.runDir })
      const answersLayer = Answer.layer({ mode, uncited: Config.resolvedUncited(config), needsCitation: Config.resolvedCitationRule(config) }).pipe(
        Layer.provide(Verifier.layer),
        Layer.provide(Policy.layer(config)),
        Layer.provideMerge(storeLayer)
      )
      const outcome = yield* Effect.gen(function*() {
        const manifest = yield* Manifest.make(config)
        const options = { manifestDigest: Option.getOrUndefined(args.manifestDigest) }
        const bound: Either.Either<BoundAnswer, AnswerError> = args.formatIn === "evi1"
          ? Evi1.decode(text, manifest, options)
          : args.formatIn === "anthropic"
          ? Anthropic.fromJson(text, manifest, options)
          : args.formatIn === "anthropic-sse"
          ? AnthropicSse.fromSse(text, manifest, options)
          : Answer.fromJson(text, manifest, options)
        const answers = yield* Answer.Answers
        return yield* Effect.either(Effect.flatMap(bound, answers.verify))
      }).pipe(Effect.provide(answersLayer), orUsageError)
      const rendering = Either.match(outcome, {
        onLeft: (error) => AnswerRender.AnswerRendering.Rejected({ error, matching: Config.resolvedMatching(config) }),
        onRight: ({ answer, captures }) => AnswerRender.AnswerRendering.Verified({ answer, captures, matching: Config.resolvedMatching(config) })
      })
      const output = args.format === "repair" ? Repair.renderAnswer(rendering) : AnswerRender.render(args.format, rendering)
      yield* Option.match(args.out, {
        onNone: () => Io.stdout(output),
        onSome: (file) => orUsageError(Io.writeOutput(file, output, { overwrite: args.force }))
      })
      const summary = Either.match(outcome, {
        onLeft: (error) => `verify-answer: REJECTED (${error._tag})`,
        onRight: ({ answer }) =>
          answer.outcome === "grounded"
            ? `verify-answer: GROUNDED (${answer.mode} mode, ${answer.summary.claimsGrounded} of ${answer.summary.claims} claims, ${answer.summary.claimsRemoved} removed)`
            : `verify-answer: NO EVIDENCE (${answer.mode} mode): no claim was grounded`
      })
      const written = Option.match(args.out, { onNone: () => "", onSome: (file) => `; written to ${terminal(file)}` })
      yield* Io.stderr(`${summary}${written}\n`)
      yield* exitWith(Either.isRight(outcome) && outcome.right.answer.outcome === "grounded" ? 0 : 1)
    })
).pipe(Command.withDescription(describe(
  "verify-answer",
  "Verify an answer with inline citations (json, evi1, anthropic or anthropic-sse) against a run's manifest and captures (read-only) and render it.",
  {
    success: "answer verified and grounded",
    failure: "answer rejected, or a no_evidence outcome"
  }
)))


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
    ...result.bodies.flatMap((b) =>
      b.problem !== null
        ? [`CORRUPT   ${terminal(b.name)}: body-mismatch: ${terminal(b.problem)} (left alone)`]
        : b.referenced
        ? []
        : [`unused    ${terminal(b.name)} (${b.bytes} bytes): a stored body no record names (a write that died before its record), left alone`]
    ),
    ...result.others.map((name) => `other     ${terminal(name)}: not written by citegate, left alone`),
    `${result.records} records verify, ${result.leftovers.length} leftovers${
      removed === undefined ? "" : ` (${gone.size} removed)`
    }, ${result.problems.length} corrupt records${
      result.bodies.length === 0 ? "" : `, ${result.bodies.length} stored bodies (${badBodies(result)} corrupt)`
    }`
  ]
}

const badBodies = (result: CaptureStore.RunInspection) => result.bodies.filter((b) => b.problem !== null).length

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
        return yield* exitWith(
          result.leftovers.length === 0 && result.problems.length === 0 && badBodies(result) === 0 ? 0 : 1
        )
      }
      const result = yield* orUsageError(CaptureStore.sweep(options))
      const lines = [
        ...doctorLines(result, result.removed),
        ...result.failed.map((f) => `NOT REMOVED ${terminal(f.name)}: ${terminal(f.detail)}`)
      ]
      yield* Io.stdout(lines.join("\n") + "\n")
      yield* exitWith(result.failed.length === 0 && result.problems.length === 0 && badBodies(result) === 0 ? 0 : 1)
    })
).pipe(Command.withDescription(describe(
  "doctor",
  "Check a run directory: every record verifies; list (and with --fix remove) leftovers of interrupted writes.",
  {
    success: "every record and body verifies, and no leftover remains (or --fix removed them)",
    failure: "a leftover found without --fix, one --fix could not remove, or a record or body that does not verify",
    usage: `${usageCodes}, or not a run directory`
  }
)))

// ---------------------------------------------------------------------------
// store-init: citegate's tables, trigger and roles in a PostgreSQL database
// ---------------------------------------------------------------------------

const storeInit = Command.make(
  "store-init",
  { store: Store.storeOption },
  (args) =>
    Effect.gen(function*() {
      const store = yield* orUsageError(Store.choose("", args.store))
      if (store._tag !== "Postgres") {
        return yield* orUsageError(Effect.fail(new StoreChoiceInvalid({ detail: "store-init needs a database" })))
      }
      const ran = yield* orUsageError(Store.initialise(store.url))
      const lines = ran.length === 0
        ? ["the schema is current; no migration ran"]
        : ran.map(([id, name]) => `migrated  ${id}_${name}`)
      yield* Io.stdout(lines.join("\n") + "\n")
    })
).pipe(Command.withDescription(describe(
  "store-init",
  "Create or upgrade citegate's tables, append-only trigger and roles in PostgreSQL (--store or CITEGATE_DATABASE_URL); run as the database owner.",
  { success: "the schema is current (migrations ran, or none was needed)", usage: `${usageCodes}, or the database refused (unreachable, no right)` }
)))

// ---------------------------------------------------------------------------
// recapture: the same approved sources again, into a new run (for an audit)
// ---------------------------------------------------------------------------

const recapture = Command.make(
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

// ---------------------------------------------------------------------------
// audit: what became of a verified report's or answer's citations in a new run
// ---------------------------------------------------------------------------

const audit = Command.make(
  "audit",
  {
    input: Options.file("report").pipe(
      Options.withDescription("The report verified against the old run (JSON)"),
      Options.orElseEither(Options.file("answer").pipe(Options.withDescription("Or: the answer verified against the old run")))
    ),
    formatIn: choiceOption("format-in", ["json", "evi1", "anthropic"], "json", "With --answer: the answer's format (as for verify-answer)"),
    manifestDigest: Options.text("manifest-digest").pipe(
      Options.optional,
      Options.withDescription("With --answer: the digest of the old run's manifest the answer was drafted against (as for verify-answer)")
    ),
    config: configOption,
    runDir: Options.directory("run-dir").pipe(Options.withDescription("The OLD run directory the report or answer was verified in (only read)")),
    against: Options.directory("against").pipe(Options.withDescription("The NEW run directory (from recapture) to audit against (only read)")),
    mode: modeOption,
    format: formatOption,
    out: outOption,
    force: forceOption
  },
  (args) =>
    Effect.gen(function*() {
      const inputFile = Either.merge(args.input)
      const what = Either.isLeft(args.input) ? "report" : "answer"
      // --out may replace neither run's evidence nor an input.
      yield* checkOut({ ...args, report: inputFile, reportWhat: what })
      yield* checkOut({ ...args, runDir: args.against, report: inputFile, reportWhat: what })
      const config = yield* orUsageError(loadConfig(args.config))
      const text = yield* orUsageError(Io.readText(inputFile, what))
      const input: AuditRun.AuditInput = what === "report"
        ? { kind: "report", text }
        : { kind: "answer", text, formatIn: args.formatIn, manifestDigest: Option.getOrUndefined(args.manifestDigest) }
      const outcome = yield* orUsageError(AuditRun.audit({ config, input, oldRun: args.runDir, newRun: args.against, mode: Option.getOrUndefined(args.mode) }))
      if (outcome._tag === "TimedOut") {
        yield* Io.stderr(outcome.reason)
        yield* Io.stderr(`audit: TIMED OUT: nothing was audited (audit.timeoutMs)\n`)
        return yield* exitWith(2)
      }
      if (outcome._tag === "NoBaseline") {
        yield* Io.stderr(outcome.reason)
        yield* Io.stderr(`audit: NO BASELINE: the ${what} does not verify against the old run; nothing was audited\n`)
        return yield* exitWith(2)
      }
      const output = AuditRender.render(args.format, outcome.result)
      yield* Option.match(args.out, {
        onNone: () => Io.stdout(output),
        onSome: (file) => orUsageError(Io.writeOutput(file, output, { overwrite: args.force }))
      })
      const written = Option.match(args.out, { onNone: () => "", onSome: (file) => `; written to ${terminal(file)}` })
      yield* Io.stderr(`${AuditRun.summary(outcome.result)}${written}\n`)
      yield* exitWith(outcome.result.outcome === "stable" ? 0 : 1)
    })
).pipe(Command.withDescription(describe(
  "audit",
  "Audit a report's or answer's verified citations against a NEW run of the same sources: unchanged, relocated, changed, deleted or source_missing (read-only).",
  {
    success: "nothing drifted",
    failure: "something drifted (changed, deleted or source_missing)",
    usage: `${usageCodes}, a report or answer that does not verify against the old run, or the audit timed out (audit.timeoutMs)`
  }
)))

const commands = [capture, verify, run, migrate, demo, sources, doctor, verifyAnswer, storeInit, recapture, audit, serveCommand] as const

/** The subcommands' names. */
export const commandNames: ReadonlyArray<string> = commands.flatMap((c) => [
  ...Descriptor.getNames(c.descriptor as Descriptor.Command<unknown>)
])

export const command = Command.make("run-pipeline").pipe(
  Command.withDescription(describe("run-pipeline", "citegate: provable citations for generated reports.", programCodes)),
  Command.withSubcommands(commands)
)
