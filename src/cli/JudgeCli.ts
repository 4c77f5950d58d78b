/**
 * The judge at the command line: `run-pipeline judge-prompt` (the versioned prompt, printed), the
 * capability check every verifying command runs at start, and the judge's one-line summary on stderr.
 */
import * as Command from "@effect/cli/Command"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as path from "node:path"
import type { PipelineConfig } from "../Config.js"
import type { JudgeStartError } from "../Errors.js"
import type * as Judge from "../review/Judge.js"
import { printable } from "../review/JudgePrompt.js"
import type { JudgeReview } from "../review/Records.js"
import * as JudgeSetup from "../review/JudgeSetup.js"
import { describe } from "./CommandHelp.js"
import * as Io from "./Io.js"

/**
 * The judge layer the configuration asks for (empty when `review.judge.mode` is off), or the typed
 * reason it cannot start (`CapabilityError`, `JudgeKeyUnavailable`: a usage error, exit 2).
 */
export const judgeLayer = (
  config: PipelineConfig,
  configFile: string
): Effect.Effect<Layer.Layer<Judge.Judge> | Layer.Layer<never>, JudgeStartError> =>
  Effect.map(JudgeSetup.resolve(config, { configDirectory: path.dirname(path.resolve(configFile)) }), JudgeSetup.layerOf)

/** The judge's line on stderr after a verification, when it ran. */
export const summaryLine = (command: string, review: JudgeReview | undefined): string => {
  if (review === undefined) return ""
  const s = review.summary
  return `${command}: judge ${s.supported ? "SUPPORTED" : "NOT SUPPORTED"} (${review.prompt}, ${s.claimsSupported} of ${s.claims} claims supported, ` +
    `${s.error} judge errors${review.mode === "require" && !s.supported ? "; review.judge.mode is require: exit 1" : ""})\n`
}

export const judgePrompt = Command.make("judge-prompt", {}, () => Io.stdout(printable() + "\n")).pipe(
  Command.withDescription(describe(
    "judge-prompt",
    "Print the entailment judge's versioned prompt (judge/1) as review.judge sends it.",
    { success: "prompt printed" }
  ))
)
