/**
 * The service's JSON log lines (one per request, on stderr): the same text as Effect's
 * `Logger.jsonLogger`, byte for byte, made without its per-value replacer when a line holds only a
 * string message and string, number or boolean annotations (the access-log line and most others),
 * and written to stderr directly rather than through the Console service. Anything else (a cause,
 * an object annotation, several messages) is formatted by `Logger.jsonLogger` itself.
 *
 * @since 0.4.0
 */
import * as Cause from "effect/Cause"
import * as FiberId from "effect/FiberId"
import * as Logger from "effect/Logger"

const isPlain = (value: unknown): value is string | number | boolean =>
  typeof value === "string" || typeof value === "number" || typeof value === "boolean"

/**
 * One log entry as `Logger.jsonLogger` writes it.
 *
 * @since 0.4.0
 * @category loggers
 */
export const format: Logger.Logger<unknown, string> = Logger.make((options) => {
  const { annotations, cause, date, fiberId, logLevel, message, spans } = options
  const messages = Array.isArray(message) ? message : [message]
  const text: unknown = messages.length === 1 ? messages[0] : undefined
  if (typeof text !== "string" || !Cause.isEmpty(cause)) return Logger.jsonLogger.log(options)
  const annotationsObject: Record<string, unknown> = {}
  for (const [key, value] of annotations) {
    if (!isPlain(value)) return Logger.jsonLogger.log(options)
    annotationsObject[key] = value
  }
  const now = date.getTime()
  const spansObject: Record<string, number> = {}
  for (const span of spans) spansObject[span.label] = now - span.startTime
  // The key order of Effect's structured log (its `cause`, undefined here, is left out by JSON.stringify).
  return JSON.stringify({
    message: text,
    logLevel: logLevel.label,
    timestamp: date.toISOString(),
    annotations: annotationsObject,
    spans: spansObject,
    fiberId: FiberId.threadName(fiberId)
  })
})

/** How long a logged line waits at most for the write that carries it (the lines of that time go in one write). */
export const flushMs = 10

/** Pending text (UTF-16 code units, so at most three times as many bytes) past which the lines are written at once, without waiting for `flushMs`. */
export const flushBytes = 64 * 1024

/**
 * `format`, one line each, on stderr (the text `Logger.withConsoleError(Logger.jsonLogger)` writes).
 * The lines logged within `flushMs` are written together, in order, by one write (at once when
 * they pass `flushBytes`; any still pending when the process exits, at exit): stderr on a pipe or a
 * file is a synchronous write per call, and each write wakes the reader of the pipe. Under load a
 * write per turn of the event loop was a fifth of the main thread's time (docs/performance.md).
 *
 * @since 0.4.0
 */
export const stderr: Logger.Logger<unknown, void> = Logger.map(format, (line) => {
  if (pending.length === 0) {
    if (!installed) {
      installed = true
      // As the global console does (`ignoreErrors`): a closed stderr (EPIPE) must not end the service.
      process.stderr.on("error", () => {})
      process.on("exit", flush)
    }
    // Unref'd: pending lines do not keep the process alive (the exit handler writes them).
    setTimeout(flush, flushMs).unref()
  }
  pending.push(line + "\n")
  pendingBytes += line.length + 1
  if (pendingBytes >= flushBytes) flush()
})

let installed = false
let pending: Array<string> = []
let pendingBytes = 0

/**
 * Writes the lines logged since the last write, in one call: for a caller about to write to stderr
 * itself (the CLI's last message), so that the lines logged before it come before it.
 */
export const flush = (): void => {
  if (pending.length === 0) return
  const text = pending.length === 1 ? pending[0]! : pending.join("")
  pending = []
  pendingBytes = 0
  process.stderr.write(text)
}
