/**
 * The `run-pipeline` program without the process around it: the command run on an argv, ending
 * with the exit code (0, 1, 2 from the command, 70 for a defect, its cause written to stderr).
 * main.ts adds the process wiring (signals, the exit itself); tests run it in-process.
 */
import * as Command from "@effect/cli/Command"
import * as ValidationError from "@effect/cli/ValidationError"
import * as NodeContext from "@effect/platform-node/NodeContext"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import { version } from "../version.js"
import { command, commandNames } from "./Commands.js"
import * as CliExit from "./Exit.js"
import { helpFirst, withHelpConsole } from "./Help.js"
import * as Io from "./Io.js"

const cli = Command.run(command, { name: "run-pipeline", version })

/** Runs the command line `argv` (`[node, script, ...arguments]`, as `process.argv`); succeeds with the exit code. */
export const program = (argv: ReadonlyArray<string>): Effect.Effect<number> =>
  Effect.suspend(() => cli(helpFirst(argv, commandNames))).pipe(
    withHelpConsole("run-pipeline"),
    Effect.as(CliExit.exitCodes.success as number),
    Effect.catchAll((error) => {
      if (ValidationError.isValidationError(error)) return Effect.succeed(CliExit.exitCodes.usage as number)
      return Effect.succeed(error.code as number)
    }),
    Effect.catchAllDefect((defect) =>
      Effect.as(
        Io.stderr(`run-pipeline: internal error: ${Cause.pretty(Cause.die(defect))}\n`),
        CliExit.exitCodes.internal as number
      )
    ),
    Effect.provide(NodeContext.layer)
  )
