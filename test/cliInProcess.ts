/**
 * The `run-pipeline` program run inside the test process (src/cli/Program.ts, the program main.ts
 * runs, without the signal handling), so a mutant switched on in this process reaches the commands.
 * What the commands write to stdout and stderr is captured by swapping `process.stdout.write` and
 * `process.stderr.write` for the duration of one run: the tests of a file using this run one at a
 * time. A defect ends the run as main.ts ends it (Exit.outcome: 70 and the cause on stderr).
 */
import { Effect } from "effect"
import * as Console from "effect/Console"
import * as CliExit from "../src/cli/Exit.js"
import { program } from "../src/cli/Program.js"

export interface Ran {
  readonly code: number
  readonly stdout: string
  readonly stderr: string
}

type Write = typeof process.stdout.write

/**
 * Runs `run-pipeline ...args` in this process and resolves with its exit code and its output.
 * `stdoutFails` injects a fault: every write to stdout throws (a defect for the program).
 */
export const cliInProcess = (args: ReadonlyArray<string>, options?: { readonly stdoutFails?: boolean }) =>
  Effect.promise(async (): Promise<Ran> => {
    let stdout = ""
    let stderr = ""
    const realOut = process.stdout.write
    const realErr = process.stderr.write
    // Only the text is kept; a callback is called at once, as a drained stream would.
    const sink = (append: (text: string) => void): Write =>
      ((chunk: string | Uint8Array, ...rest: Array<unknown>) => {
        append(typeof chunk === "string" ? chunk : Buffer.from(chunk).toString("utf8"))
        const callback = rest.find((r) => typeof r === "function") as (() => void) | undefined
        callback?.()
        return true
      }) as Write
    // @effect/cli's help and usage errors go through the Console service, not Io: send them to the same buffers.
    const captured = (base: Console.Console): Console.Console => ({
      ...base,
      log: (...parts) => Effect.sync(() => void (stdout += parts.join(" ") + "\n")),
      error: (...parts) => Effect.sync(() => void (stderr += parts.join(" ") + "\n"))
    })
    process.stdout.write = sink((text) => {
      if (options?.stdoutFails === true) throw new Error("stdout is gone")
      stdout += text
    })
    process.stderr.write = sink((text) => (stderr += text))
    try {
      const exit = await Effect.runPromiseExit(
        Console.consoleWith((base) => Effect.withConsole(program(["node", "run-pipeline", ...args]), captured(base)))
      )
      const { code, message } = CliExit.outcome(exit, undefined)
      if (message !== undefined) stderr += message
      return { code, stdout, stderr }
    } finally {
      process.stdout.write = realOut
      process.stderr.write = realErr
    }
  })

