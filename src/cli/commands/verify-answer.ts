/**
 * `verify-answer`: prose with inline citations (every answer format of `answer/Formats.ts`) against a run's manifest and captures (read-only).
 */
import * as Command from "@effect/cli/Command"
import * as Options from "@effect/cli/Options"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as path from "node:path"
import * as Answer from "../../answer/Answer.js"
import { answerFormatHelp, answerFormats } from "../../answer/Formats.js"
import * as AnswerFormats from "../../answer/Formats.js"
import type { BoundAnswer } from "../../answer/Records.js"
import * as AnswerRender from "../../answer/Render.js"
import * as Config from "../../Config.js"
import type { AnswerError } from "../../Errors.js"
import * as Manifest from "../../Manifest.js"
import { terminal } from "../../render/Escape.js"
import * as Repair from "../../render/Repair.js"
import * as JudgeReview from "../../review/JudgeReview.js"
import * as CaptureStore from "../../store/CaptureStore.js"
import * as Policy from "../../verify/Policy.js"
import * as Verifier from "../../verify/Verifier.js"
import { describe } from "../CommandHelp.js"
import { checkOut, exitWith, loadConfig, orUsageError } from "../Common.js"
import { choiceOption, configOption, forceOption, modeOption, outOption, repairFormatOption, runDirOption } from "../CommonOptions.js"
import * as Io from "../Io.js"
import * as JudgeCli from "../JudgeCli.js"
import * as ResultSigning from "../ResultSigning.js"

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
      answerFormats,
      "json",
      `The answer's format: ${answerFormatHelp}`
    ),
    config: configOption,
    runDir: runDirOption,
    manifestDigest: Options.text("manifest-digest").pipe(
      Options.optional,
      Options.withDescription(
        "The digest of the manifest the answer was drafted against (from `sources --format json`). Required for evi1 " +
          "without a MANIFEST line and for anthropic, anthropic-sse and the provider formats; when the answer names one too, both must match"
      )
    ),
    mode: modeOption,
    format: repairFormatOption,
    out: outOption,
    force: forceOption,
    signKey: ResultSigning.signKeyOption,
    attestationOut: ResultSigning.attestationOutOption
  },
  (args) =>
    Effect.gen(function*() {
      // The answer is an input like a report: --out may never replace it (nor a capture or the config).
      yield* checkOut({ ...args, report: args.answer, reportWhat: "answer" })
      const signing = yield* ResultSigning.setup({
        command: "verify-answer",
        signKey: args.signKey,
        attestationOut: args.attestationOut,
        out: args.out,
        runDirectory: args.runDir,
        inputs: [{ path: args.config, what: "configuration" }, { path: args.answer, what: "answer" }]
      })
      const config = yield* orUsageError(loadConfig(args.config))
      const judgeLayer = yield* orUsageError(JudgeCli.judgeLayer(config, args.config))
      // One read: the answer verified and the bytes a signed result names are the same.
      const bytes = yield* orUsageError(Io.readBytes(args.answer, "answer"))
      const text = AnswerFormats.isBinary(args.formatIn) ? bytes : yield* orUsageError(Io.decodeText(bytes, args.answer, "answer"))
      const mode = Option.getOrElse(args.mode, () => Config.resolvedMode(config))
      const storeLayer = CaptureStore.layerFileSystem({ directory: args.runDir })
      const answersOptions = {
        mode,
        uncited: Config.resolvedUncited(config),
        needsCitation: Config.resolvedCitationRule(config),
        citations: Config.resolvedCitations(config)
      }
      const answersLayer = Answer.layer(answersOptions).pipe(
        Layer.provide(Verifier.layer),
        Layer.provide(Policy.layer(config)),
        Layer.provideMerge(storeLayer)
      )
      const outcome = yield* Effect.gen(function*() {
        const manifest = yield* Manifest.make(config)
        const options = { manifestDigest: Option.getOrUndefined(args.manifestDigest) }
        const bound: Either.Either<BoundAnswer, AnswerError> = AnswerFormats.bind(args.formatIn, text, manifest, options)
        const answers = yield* Answer.Answers
        return yield* Effect.either(Effect.flatMap(bound, answers.verify))
      }).pipe(Effect.provide(answersLayer), orUsageError)
      // --- semantic review hook: the judge's outcome, beside provenance ---
      const judge = Either.isRight(outcome)
        ? yield* JudgeReview.ofAnswer(outcome.right.answer, outcome.right.captures).pipe(Effect.provide(judgeLayer))
        : undefined
      const rendering = Either.match(outcome, {
        onLeft: (error) => AnswerRender.AnswerRendering.Rejected({ error, matching: Config.resolvedMatching(config) }),
        onRight: ({ answer, captures }) => AnswerRender.AnswerRendering.Verified({ answer, captures, matching: Config.resolvedMatching(config), judge })
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
      yield* Io.stderr(`${summary}${written}\n${JudgeCli.summaryLine("verify-answer", judge)}`)
      const passed = Either.isRight(outcome) && outcome.right.answer.outcome === "grounded" && !JudgeReview.failsRun(judge)
      yield* ResultSigning.write(
        "verify-answer",
        signing,
        passed && Either.isRight(outcome)
          ? [
            { kind: "answer", ...outcome.right, options: answersOptions },
            {
              name: path.basename(args.answer),
              input: bytes,
              policy: Policy.fromConfig(config),
              run: { id: path.basename(path.resolve(args.runDir)), store: "filesystem" }
            }
          ]
          : undefined
      )
      yield* exitWith(passed ? 0 : 1)
    })
).pipe(Command.withDescription(describe(
  "verify-answer",
  "Verify an answer with inline citations (json, evi1, anthropic, anthropic-sse or a provider format) against a run's manifest and captures (read-only) and render it.",
  {
    success: "answer verified and grounded",
    failure: "answer rejected, or a no_evidence outcome"
  }
)))
