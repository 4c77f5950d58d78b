/**
 * `verify-answer`: prose with inline citations (json, evi1, anthropic or anthropic-sse) against a run's manifest and captures (read-only).
 */
import * as Command from "@effect/cli/Command"
import * as Options from "@effect/cli/Options"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Answer from "../../answer/Answer.js"
import * as Anthropic from "../../answer/Anthropic.js"
import * as AnthropicSse from "../../answer/AnthropicSse.js"
import * as Evi1 from "../../answer/Evi1.js"
import type { BoundAnswer } from "../../answer/Records.js"
import * as AnswerRender from "../../answer/Render.js"
import * as Config from "../../Config.js"
import type { AnswerError } from "../../Errors.js"
import * as Manifest from "../../Manifest.js"
import { terminal } from "../../render/Escape.js"
import * as Repair from "../../render/Repair.js"
import * as CaptureStore from "../../store/CaptureStore.js"
import * as Policy from "../../verify/Policy.js"
import * as Verifier from "../../verify/Verifier.js"
import { describe } from "../CommandHelp.js"
import { checkOut, exitWith, loadConfig, orUsageError } from "../Common.js"
import { choiceOption, configOption, forceOption, modeOption, outOption, repairFormatOption, runDirOption } from "../CommonOptions.js"
import * as Io from "../Io.js"

/**
 * Verifies an answer (citegate.answer/1 JSON, EVI1 text or an Anthropic Messages response) against
 * the run's manifest and captures, read-only; renders it; returns 0 for a grounded answer, else 1.
 */
export const verifyAnswer = Command.make(
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
