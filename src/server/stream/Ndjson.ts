/**
 * The NDJSON input of a streamed answer: bytes to lines, each line bounded
 * while it arrives, and the schema of one line (`{"type":"delta","text":"…"}`).
 *
 * @since 0.1.0
 */
import * as Chunk from "effect/Chunk"
import * as Either from "effect/Either"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import { StreamLimitExceeded, StreamLineInvalid } from "../../Errors.js"
import { decodeJson } from "../../internal/decode.js"

const strict = { parseOptions: { onExcessProperty: "error" as const } }

/** One line of a streamed answer's NDJSON request body. */
export const InputLine = Schema.Struct({
  type: Schema.Literal("delta"),
  text: Schema.String
}).annotations({ ...strict, identifier: "DeltaLine" })
export const decodeInputLine = decodeJson(InputLine)

const utf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true })
const stop: unique symbol = Symbol("stop")

/**
 * How many blank input lines an element of a line stream stands for: a run of
 * blank lines may come as one element made of that many LFs (a line itself
 * never contains an LF); 0 for any other element.
 *
 * @since 0.1.0
 */
export const blankLines = (line: string): number => {
  if (line.length === 0) return 1
  if (line.charCodeAt(0) !== 10) return 0
  for (let i = 1; i < line.length; i++) if (line.charCodeAt(i) !== 10) return 0
  return line.length
}

/**
 * Bytes to NDJSON lines (without their LF), each line bounded while it arrives:
 * past `maxLineBytes` the stream fails with `StreamLimitExceeded` and nothing
 * more of that line is held; past `maxInputBytes` in total likewise (blank
 * lines cost no answer text, so they are bounded here). Invalid UTF-8 is a
 * `StreamLineInvalid`. A run of blank lines (empty or a lone CR) in one chunk
 * comes out as one element of that many LFs (`blankLines`), so a body of
 * nothing but line ends costs a scan, not an element per line.
 *
 * @since 0.1.0
 */
export const ndjsonLines = <E>(
  bytes: Stream.Stream<Uint8Array, E>,
  maxLineBytes: number,
  maxInputBytes: number = Number.MAX_SAFE_INTEGER
): Stream.Stream<string, E | StreamLimitExceeded | StreamLineInvalid> =>
  Stream.suspend(() => {
    let parts: Array<Uint8Array> = []
    let held = 0
    let total = 0
    let lineNo = 0
    const lineOf = (last: Uint8Array): Either.Either<string, StreamLineInvalid> => {
      lineNo++
      const all = parts.length === 0 ? last : Buffer.concat([...parts, last])
      parts = []
      held = 0
      try {
        return Either.right(utf8.decode(all))
      } catch {
        return Either.left(new StreamLineInvalid({ line: lineNo, detail: "not valid UTF-8" }))
      }
    }
    const tooLong = (received: number) => new StreamLimitExceeded({ limit: "line-length", max: maxLineBytes, received })
    // Lines before a failure in the same chunk still go out, then the failure: the chunk is cut there.
    let failure: StreamLimitExceeded | StreamLineInvalid | undefined
    const lines = bytes.pipe(
      Stream.mapChunks((chunks) => {
        const out: Array<string | typeof stop> = []
        // A run of blank lines (the cheapest input to send) goes out as ONE element of that many LFs
        // (see `blankLines`): megabytes of LFs cost a scan, not millions of elements.
        let blanks = 0
        const flushBlanks = () => {
          if (blanks > 0) out.push("\n".repeat(blanks))
          blanks = 0
        }
        const fail = (error: StreamLimitExceeded | StreamLineInvalid) => {
          flushBlanks()
          failure = error
          out.push(stop)
          return Chunk.unsafeFromArray(out)
        }
        for (const chunk of chunks) {
          total += chunk.length
          if (total > maxInputBytes) return fail(new StreamLimitExceeded({ limit: "input-size", max: maxInputBytes, received: total }))
          let from = 0
          for (let nl = chunk.indexOf(10); nl !== -1; nl = chunk.indexOf(10, from)) {
            if (held + nl - from > maxLineBytes) return fail(tooLong(held + nl - from))
            // Blank: empty, or a lone CR (CRLF line ends); the machine skips both.
            if (held === 0 && (nl === from || (nl === from + 1 && chunk[from] === 13))) {
              lineNo++
              blanks++
              from = nl + 1
              continue
            }
            flushBlanks()
            const line = lineOf(chunk.subarray(from, nl))
            if (Either.isLeft(line)) return fail(line.left)
            out.push(line.right)
            from = nl + 1
          }
          flushBlanks()
          if (from < chunk.length) {
            held += chunk.length - from
            if (held > maxLineBytes) return fail(tooLong(held))
            // A copy: the caller may reuse its buffer.
            parts.push(chunk.slice(from))
          }
        }
        return Chunk.unsafeFromArray(out)
      }),
      // Nothing more is pulled from the body after a failure.
      Stream.takeUntil((line) => line === stop),
      Stream.filter((line): line is string => line !== stop)
    )
    return Stream.concat(
      lines,
      Stream.suspend(() => {
        if (failure !== undefined) return Stream.fail(failure)
        if (held === 0) return Stream.empty
        const line = lineOf(new Uint8Array(0))
        return Either.isLeft(line) ? Stream.fail(line.left) : Stream.make(line.right)
      })
    )
  })

