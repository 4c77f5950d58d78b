/**
 * The `run-pipeline` program without the process around it: the command run on an argv, ending
 * with the exit code (0, 1, 2 from the command, 70 for a defect, its cause written to stderr).
 * main.ts adds the process wiring (signals, the exit itself); tests run it in-process.
 */
import * as Command from "@effect/cli/Command"
import * as ValidationError from "@effect/cli/ValidationError"
import * as NodeContext from "@effect/platform-node/NodeContext"
import * as FileSystem from "@effect/platform/FileSystem"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { version } from "../version.js"
import { command, commandNames, commandSummaries } from "./Commands.js"
import * as CliExit from "./Exit.js"
import { helpFirst, withHelpConsole } from "./Help.js"
import * as Io from "./Io.js"

const cli = Command.run(command, { name: "run-pipeline", version })

/**
 * The platform's `exists` answers false only for ENOENT and fails otherwise (ENOTDIR for a path below
 * a regular file, ELOOP for a symbolic link loop), and @effect/cli checks every path option with it, so
 * `--run-dir some-file/run` ended as an internal error (70). A path whose existence cannot be checked
 * is taken as absent: the command's own read or write then refuses it with the reason (exit 2).
 */
const fileSystem = Layer.effect(
  FileSystem.FileSystem,
  Effect.map(FileSystem.FileSystem, (fs): FileSystem.FileSystem => ({
    ...fs,
    exists: (file) => Effect.orElseSucceed(fs.exists(file), () => false)
  }))
).pipe(Layer.provide(NodeContext.layer))

/** Runs the command line `argv` (`[node, script, ...arguments]`, as `process.argv`); succeeds with the exit code. */
export const program = (argv: ReadonlyArray<string>): Effect.Effect<number> =>
  Effect.suspend(() => cli(helpFirst(argv, commandNames))).pipe(
    withHelpConsole("run-pipeline", commandSummaries),
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
    Effect.provide(fileSystem),
    Effect.provide(NodeContext.layer)
  )
