/**
 * The `run-pipeline` commands, assembled: one module per command in `commands/`, the options they
 * share in CommonOptions.ts. Errors and progress go to stderr; renderings to stdout or `--out`.
 * Exit codes: 0 success, 1 domain failure (rejected report, no evidence, failed capture or
 * migration), 2 usage or configuration error; main.ts adds 70 (internal error) and 130 / 143
 * (SIGINT / SIGTERM).
 */
import * as Command from "@effect/cli/Command"
import * as Descriptor from "@effect/cli/CommandDescriptor"
import { describe, programCodes } from "./CommandHelp.js"
import { audit } from "./commands/audit.js"
import { capture } from "./commands/capture.js"
import { demo } from "./commands/demo.js"
import { doctor } from "./commands/doctor.js"
import { exportCommand } from "./commands/export.js"
import { migrate } from "./commands/migrate.js"
import { recapture } from "./commands/recapture.js"
import { review } from "./commands/review.js"
import { run } from "./commands/run.js"
import { serve } from "./commands/serve.js"
import { sources } from "./commands/sources.js"
import { storeInit } from "./commands/store-init.js"
import { verifyAnswer } from "./commands/verify-answer.js"
import { validateGraph } from "./commands/validate-graph.js"
import { verifySignature } from "./commands/verify-signature.js"
import { checkAttestation } from "./commands/check-attestation.js"
import { verify } from "./commands/verify.js"
import { judgePrompt } from "./JudgeCli.js"

export { commandSummaries } from "./CommandHelp.js"

const commands = [capture, verify, run, migrate, demo, sources, doctor, verifyAnswer, storeInit, recapture, audit, serve, judgePrompt, exportCommand, verifySignature, review, validateGraph, checkAttestation] as const

/** The subcommands' names. */
export const commandNames: ReadonlyArray<string> = commands.flatMap((c) => [
  ...Descriptor.getNames(c.descriptor as Descriptor.Command<unknown>)
])

export const command = Command.make("run-pipeline").pipe(
  Command.withDescription(describe("run-pipeline", "citegate: provable citations for generated reports.", programCodes)),
  Command.withSubcommands(commands)
)
