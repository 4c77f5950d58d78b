/**
 * `audit`: what became of a verified report's or answer's citations in a new run (read-only).
 */
import * as Command from "@effect/cli/Command"
import * as Options from "@effect/cli/Options"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as AnswerFormats from "../../answer/Formats.js"
import * as AuditRender from "../../audit/Render.js"
import { terminal } from "../../render/Escape.js"
import * as AuditRun from "../AuditRun.js"
import { describe, usageCodes } from "../CommandHelp.js"
import { checkOut, exitWith, loadConfig, orUsageError } from "../Common.js"
import { choiceOption, configOption, forceOption, formatOption, modeOption, outOption } from "../CommonOptions.js"
import * as Io from "../Io.js"

export const audit = Command.make(
  "audit",
  {
    input: Options.file("report").pipe(
      Options.withDescription("The report verified against the old run (JSON)"),
      Options.orElseEither(Options.file("answer").pipe(Options.withDescription("Or: the answer verified against the old run")))
    ),
    formatIn: choiceOption("format-in", AnswerFormats.answerFormats, "json", "With --answer: the answer's format (as for verify-answer)"),
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
      // A binary answer format is read as bytes; a report and every other answer as UTF-8 text.
      const binary = what === "answer" && AnswerFormats.isBinary(args.formatIn)
      const read: Effect.Effect<string | Uint8Array, Effect.Effect.Error<ReturnType<typeof Io.readText>>> = binary
        ? Io.readBytes(inputFile, what)
        : Io.readText(inputFile, what)
      const text = yield* orUsageError(read)
      const input: AuditRun.AuditInput = typeof text === "string" && what === "report"
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
