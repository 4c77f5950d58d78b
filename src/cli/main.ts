/**
 * The `run-pipeline` entry point: runs the command at the edge and turns its
 * result into the process exit code (see Exit.ts): 0, 1, 2 from the command,
 * 70 for a defect, 130 / 143 for SIGINT / SIGTERM.
 *
 * Signals are handled here rather than by NodeRuntime.runMain, which interrupts
 * on either signal but cannot say which one arrived. The first signal
 * interrupts the program (finalizers run: sockets are closed, temporary files
 * removed); a second one ends the process at once.
 */
import * as Effect from "effect/Effect"
import * as JsonLog from "../server/JsonLog.js"
import * as CliExit from "./Exit.js"
import { program } from "./Program.js"

const fiber = Effect.runFork(program(process.argv))
// The fiber may wait on nothing Node counts as pending work (an Effect-level deferred); keep the loop alive.
const keepAlive = setInterval(() => undefined, 2 ** 31 - 1)
let received: CliExit.Signal | undefined

const onSignal = (signal: CliExit.Signal) => {
  if (received !== undefined) process.exit(CliExit.signalExitCode(received))
  received = signal
  fiber.unsafeInterruptAsFork(fiber.id())
}
for (const signal of Object.keys(CliExit.signals) as Array<CliExit.Signal>) process.on(signal, () => onSignal(signal))

/** Resolves once everything written to `stream` so far has been handed to the OS (an empty write is queued last). */
const drained = (stream: NodeJS.WriteStream) =>
  new Promise<void>((resolve) => {
    if (stream.destroyed || !stream.writable) return resolve()
    stream.write("", () => resolve())
  })

fiber.addObserver((exit) => {
  clearInterval(keepAlive)
  const { code, message } = CliExit.outcome(exit, received)
  // Log lines still waiting for their batch were logged before this message, so they go first.
  JsonLog.flush()
  if (message !== undefined) process.stderr.write(message)
  process.exitCode = code
  // Success ends naturally; anything else ends as soon as stdout and stderr are drained, whatever else is still
  // open (a pipe reader must get the whole rendering: `process.exit` straight away cut it at the pipe's buffer).
  if (code !== 0) void Promise.all([drained(process.stdout), drained(process.stderr)]).then(() => process.exit(code))
})
