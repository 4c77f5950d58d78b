/**
 * The `run-pipeline` entry point: runs the command at the edge and turns its
 * result into the process exit code.
 */
import { Command, ValidationError } from "@effect/cli"
import * as NodeContext from "@effect/platform-node/NodeContext"
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import { Cause, Effect, Exit } from "effect"
import { version } from "../version.js"
import { command, commandNames } from "./Commands.js"
import { helpFirst, withHelpConsole } from "./Help.js"
import * as Io from "./Io.js"

const cli = Command.run(command, { name: "run-pipeline", version })

const program = Effect.suspend(() => cli(helpFirst(process.argv, commandNames))).pipe(
  withHelpConsole("run-pipeline"),
  Effect.as(0),
  Effect.catchAll((error) => {
    if (ValidationError.isValidationError(error)) return Effect.succeed(2)
    return Effect.succeed(error.code)
  }),
  Effect.catchAllDefect((defect) =>
    Effect.as(Io.stderr(`run-pipeline: internal error: ${Cause.pretty(Cause.die(defect))}\n`), 1)
  ),
  Effect.provide(NodeContext.layer)
)

NodeRuntime.runMain(program, {
  disableErrorReporting: true,
  teardown: (exit, onExit) => onExit(Exit.isSuccess(exit) ? (exit.value as number) : 1)
})
