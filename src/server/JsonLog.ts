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

/**
 * `format`, one line each, on stderr (what `Logger.withConsoleError(Logger.jsonLogger)` writes).
 *
 * @since 0.4.0
 * @category loggers
 */
export const stderr: Logger.Logger<unknown, void> = Logger.map(format, (line) => {
  if (!ignoringErrors) {
    // As the global console does (`ignoreErrors`): a closed stderr (EPIPE) must not end the service.
    ignoringErrors = true
    process.stderr.on("error", () => {})
  }
  process.stderr.write(line + "\n")
})

let ignoringErrors = false
