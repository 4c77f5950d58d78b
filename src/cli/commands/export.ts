/**
 * `run-pipeline export`: a run's evidence in formats other tools read (docs/evidence.md).
 *
 * - `--format warc`: every capture of a run as WARC/1.1 records (src/evidence/Warc.ts), from the run
 *   directory or, with `--store postgres://…`, from the PostgreSQL run `--run-dir` names.
 * - `--format annotations`: a report (`--report`) or answer (`--answer`) is verified against the run
 *   exactly as `verify` / `verify-answer` verify it, and each verified citation becomes a W3C Web
 *   Annotation (src/evidence/Annotations.ts). A rejected report or answer exports nothing.
 *
 * The output is always a new file (`--out`), never inside the run directory, never over an input.
 */
import * as Command from "@effect/cli/Command"
import * as Options from "@effect/cli/Options"
import * as Effect from "effect/Effect"
import { createHash } from "node:crypto"
import * as path from "node:path"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Answer from "../../answer/Answer.js"
import * as Anthropic from "../../answer/Anthropic.js"
import * as Evi1 from "../../answer/Evi1.js"
import type { BoundAnswer } from "../../answer/Records.js"
import * as Config from "../../Config.js"
import type { AnswerError } from "../../Errors.js"
import * as Annotations from "../../evidence/Annotations.js"
import * as Warc from "../../evidence/Warc.js"
import * as Signatures from "../../evidence/Signatures.js"
import * as Manifest from "../../Manifest.js"
import { terminal } from "../../render/Escape.js"
import * as Gate from "../../verify/Gate.js"
import * as Policy from "../../verify/Policy.js"
import * as Verifier from "../../verify/Verifier.js"
import { CliExit } from "../CliError.js"
import * as Io from "../Io.js"
import { describe } from "../CommandHelp.js"
import { loadConfig, orUsageError } from "../Common.js"
import * as Store from "../Store.js"

export const exportFormats = ["warc", "annotations"] as const

/** A domain failure (nothing written): its tag and message on stderr, exit 1. */
const failWith = (error: { readonly _tag: string; readonly message: string }) =>
  Effect.zipRight(Io.stderr(`${error._tag}: ${terminal(error.message)}\n`), Effect.fail(new CliExit({ code: 1 })))

/** A usage failure (an existing --out, an unwritable directory): exit 2. */
const usage = (error: { readonly _tag: string; readonly message: string }) =>
  Effect.zipRight(Io.stderr(`${error._tag}: ${terminal(error.message)}\n`), Effect.fail(new CliExit({ code: 2 })))

interface AnnotationArgs {
  readonly config: Config.PipelineConfig
  readonly store: Store.StoreChoice
  readonly report: Option.Option<string>
  readonly answer: Option.Option<string>
  readonly formatIn: "json" | "evi1" | "anthropic"
  readonly manifestDigest: Option.Option<string>
  readonly mode: Option.Option<"reject" | "drop">
}

/** Verifies the report or answer as `verify` / `verify-answer` do; the annotations of what verified. */
const verifiedAnnotations = (args: AnnotationArgs, text: string) =>
  Effect.gen(function*() {
    const mode = Option.getOrElse(args.mode, () => Config.resolvedMode(args.config))
    const config = { ...args.config, verify: { ...args.config.verify, mode } }
    const storeLayer = yield* Store.existingRun(args.store)
    if (Option.isSome(args.report)) {
      const checked = yield* Effect.flatMap(Gate.Gate, (gate) => Effect.either(gate.checkJsonWithCaptures(text))).pipe(
        Effect.provide(Gate.layerWithStore(config).pipe(Layer.provide(storeLayer))),
        orUsageError
      )
      if (Either.isLeft(checked)) return yield* failWith(checked.left)
      return Annotations.fromReport(checked.right.report)
    }
    const answersLayer = Answer.layer({
      mode,
      uncited: Config.resolvedUncited(config),
      needsCitation: Config.resolvedCitationRule(config)
    }).pipe(Layer.provide(Verifier.layer), Layer.provide(Policy.layer(config)), Layer.provideMerge(storeLayer))
    const verified = yield* Effect.gen(function*() {
      const manifest = yield* Manifest.make(config)
      const options = { manifestDigest: Option.getOrUndefined(args.manifestDigest) }
      const bound: Either.Either<BoundAnswer, AnswerError> = args.formatIn === "evi1"
        ? Evi1.decode(text, manifest, options)
        : args.formatIn === "anthropic"
        ? Anthropic.fromJson(text, manifest, options)
        : Answer.fromJson(text, manifest, options)
      const answers = yield* Answer.Answers
      return yield* Effect.either(Effect.flatMap(bound, answers.verify))
    }).pipe(Effect.provide(answersLayer), orUsageError)
    if (Either.isLeft(verified)) return yield* failWith(verified.left)
    return Annotations.fromAnswer(verified.right.answer)
  })

interface Signing {
  readonly key: Signatures.SigningKey
  readonly out: string
}

/**
 * The signing key and the envelope's name, checked before anything is exported: a bad key or an
 * envelope name that exists stops the export with nothing written.
 */
const signingSetup = (
  args: {
    readonly signKey: Option.Option<string>
    readonly signatureOut: Option.Option<string>
    readonly out: string
    readonly runDirectory: string | undefined
  },
  inputs: ReadonlyArray<{ readonly path: string; readonly what: string }>
) =>
  Effect.gen(function*() {
    if (Option.isNone(args.signKey)) {
      if (Option.isSome(args.signatureOut)) {
        yield* Io.stderr("export: --signature-out needs --sign-key\n")
        return yield* Effect.fail(new CliExit({ code: 2 }))
      }
      return undefined
    }
    const out = Option.getOrElse(args.signatureOut, () => `${args.out}.dsse.json`)
    if (path.resolve(out) === path.resolve(args.out)) {
      yield* Io.stderr("export: --signature-out must differ from --out\n")
      return yield* Effect.fail(new CliExit({ code: 2 }))
    }
    const keyInput = { path: args.signKey.value, what: "signing key" }
    yield* orUsageError(Io.checkOutput({ out, runDirectory: args.runDirectory, inputs: [...inputs, keyInput], force: false }))
    // The envelope must not replace the key either; the key is only read, never shown.
    const key = yield* Signatures.loadSigningKey(args.signKey.value).pipe(Effect.catchAll(usage))
    return { key, out } satisfies Signing
  })

/** Signs the export just written: its envelope under a new name (atomic, never replacing a file). */
const writeSignature = (
  signing: Signing | undefined,
  exported: string,
  subject: { readonly sha256: string; readonly format: Signatures.ExportFormat; readonly items: number }
) =>
  Effect.gen(function*() {
    if (signing === undefined) return
    const statement = Signatures.statementOf({ name: path.basename(exported), ...subject })
    const envelope = Signatures.signStatement(statement, signing.key)
    yield* orUsageError(Io.writeOutput(signing.out, Signatures.renderEnvelope(envelope)))
    yield* Io.stderr(`export: signed by key ${signing.key.keyid}; envelope written to ${terminal(signing.out)}\n`)
  })

export const exportCommand = Command.make(
  "export",
  {
    format: Options.choice("format", exportFormats).pipe(
      Options.withDescription("warc: every capture of the run as WARC/1.1; annotations: W3C Web Annotations of a verified report or answer")
    ),
    runDir: Options.directory("run-dir").pipe(
      Options.withDescription("The run directory of captures (only read); with --store, the run's name in the database")
    ),
    store: Store.storeOption,
    out: Options.file("out").pipe(Options.withDescription("The file to create (atomically); never an existing file, never inside the run directory")),
    config: Options.file("config").pipe(Options.optional, Options.withDescription("The operator's pipeline.json (annotations)")),
    report: Options.file("report").pipe(Options.optional, Options.withDescription("The drafted report (annotations)")),
    answer: Options.file("answer").pipe(Options.optional, Options.withDescription("The drafted answer (annotations; instead of --report)")),
    formatIn: Options.choice("format-in", ["json", "evi1", "anthropic"]).pipe(
      Options.withDefault("json" as const),
      Options.withDescription("The answer's format, as for verify-answer (default json)")
    ),
    manifestDigest: Options.text("manifest-digest").pipe(Options.optional, Options.withDescription("As for verify-answer")),
    mode: Options.choice("mode", ["reject", "drop"]).pipe(Options.optional, Options.withDescription("As for verify")),
    signKey: Options.file("sign-key").pipe(
      Options.optional,
      Options.withDescription("An Ed25519 private key (PKCS#8 PEM): also write a DSSE envelope signing the export")
    ),
    signatureOut: Options.file("signature-out").pipe(
      Options.optional,
      Options.withDescription("Where the envelope goes (default: --out with .dsse.json appended); a new file")
    )
  },
  (args) =>
    Effect.gen(function*() {
      const inputs = [args.config, args.report, args.answer].flatMap((file, i) =>
        Option.isSome(file) ? [{ path: file.value, what: ["configuration", "report", "answer"][i]! }] : []
      )
      const store = yield* orUsageError(Store.choose(args.runDir, args.store))
      const runDirectory = Store.runDirectoryOf(store)
      yield* orUsageError(Io.checkOutput({ out: args.out, runDirectory, inputs, force: false }))
      const signing = yield* signingSetup({ ...args, runDirectory }, inputs)
      if (args.format === "warc") {
        const storeLayer = yield* Store.existingRun(store)
        const summary = yield* Warc.exportRun({ out: args.out }).pipe(
          Effect.provide(storeLayer),
          Effect.catchTags({
            ExportOutputExists: usage,
            ExportWriteFailed: usage,
            InvalidRunDirectory: usage,
            StoreUnavailable: usage,
            StorePackageMissing: usage,
            RunExists: usage
          }),
          Effect.catchIf((e): e is Exclude<typeof e, CliExit> => !(e instanceof CliExit), failWith)
        )
        yield* Io.stderr(
          `export: ${summary.captures} capture(s) as ${summary.records} WARC record(s), ${summary.bytes} bytes; written to ${terminal(args.out)}\n`
        )
        return yield* writeSignature(signing, args.out, { sha256: summary.sha256, format: "warc", items: summary.captures })
      }
      const input = Option.orElse(args.report, () => args.answer)
      if (Option.isNone(args.config) || Option.isNone(input) || (Option.isSome(args.report) && Option.isSome(args.answer))) {
        yield* Io.stderr("export: --format annotations needs --config and exactly one of --report, --answer\n")
        return yield* Effect.fail(new CliExit({ code: 2 }))
      }
      const config = yield* orUsageError(loadConfig(args.config.value))
      const text = yield* orUsageError(Io.readText(input.value, Option.isSome(args.report) ? "report" : "answer"))
      const annotations = yield* verifiedAnnotations({ ...args, store, config }, text)
      if (!("first" in annotations)) return yield* failWith(annotations)
      const rendered = Annotations.render(annotations)
      yield* orUsageError(Io.writeOutput(args.out, rendered))
      yield* Io.stderr(`export: ${annotations.total} annotation(s); written to ${terminal(args.out)}\n`)
      const sha256 = createHash("sha256").update(rendered, "utf8").digest("hex")
      yield* writeSignature(signing, args.out, { sha256, format: "annotations", items: annotations.total })
    })
).pipe(Command.withDescription(describe(
  "export",
  "Export a run's captures (a run directory or, with --store, a PostgreSQL run) as WARC, or a verified report's or answer's citations as W3C Web Annotations (read-only).",
  {
    success: "the export was written",
    failure: "nothing written: a capture does not read back intact, or the report or answer was rejected",
    usage: "bad options, unreadable input, an --out that exists or lies inside the run directory"
  }
)))
