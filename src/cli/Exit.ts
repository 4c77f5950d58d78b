/**
 * How the `run-pipeline` process ends. Exit codes: 0 success; 1 domain failure;
 * 2 usage or configuration error; 70 internal error (a defect: a bug, never an
 * expected failure); 128 + the signal number when interrupted by a signal
 * (130 SIGINT, 143 SIGTERM).
 */
import * as Cause from "effect/Cause"
import * as Exit from "effect/Exit"

export const exitCodes = {
  success: 0,
  domainFailure: 1,
  usage: 2,
  /** EX_SOFTWARE (sysexits.h). */
  internal: 70
} as const

/** The signals the CLI ends on gracefully, with their numbers (POSIX, the same on every platform Node runs on). */
export const signals = { SIGINT: 2, SIGTERM: 15 } as const
export type Signal = keyof typeof signals

export const signalExitCode = (signal: Signal): number => 128 + signals[signal]

/**
 * The exit code and the last line for stderr, from how the program's fiber
 * ended and which signal (if any) arrived first. A signal decides, whatever the
 * fiber did after it: the run was cut short.
 */
export const outcome = (
  exit: Exit.Exit<number, unknown>,
  signal: Signal | undefined
): { readonly code: number; readonly message: string | undefined } => {
  if (signal !== undefined) {
    return {
      code: signalExitCode(signal),
      message: `run-pipeline: interrupted by ${signal}; open connections closed, no partial capture kept\n`
    }
  }
  if (Exit.isSuccess(exit)) return { code: exit.value, message: undefined }
  return {
    code: exitCodes.internal,
    message: `run-pipeline: internal error: ${Cause.pretty(exit.cause)}\n`
  }
}
