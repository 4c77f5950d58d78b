/**
 * Anthropic Messages streams (Server-Sent Events) as Anthropic responses.
 *
 * The events (`message_start`, `content_block_start`, `content_block_delta`
 * with `text_delta` or `citations_delta`, `content_block_stop`,
 * `message_delta`, `message_stop`, `ping`, `error`) are accumulated into the
 * content blocks of the response they stream, which then go through the one
 * Anthropic mapping (`Anthropic.decodeResponse`, `Anthropic.toAnswer`: the
 * last-sentence rule, `char_location` / `page_location` /
 * `content_block_location`). The streaming route reads the same events with
 * the same `Accumulator`, block by block (`server/stream/AnthropicReader.ts`).
 *
 * Reading is strict about the stream's shape and lenient about vendor keys,
 * as `Anthropic.decodeResponse` is: each event's data must be one strict JSON
 * object (no repeated or prototype keys) whose `type` matches its `event:`
 * name; blocks start in order (index 0, 1, 2, …), one at a time; deltas and
 * the stop name the open block; a text block takes only `text_delta` and
 * `citations_delta` (another delta type could carry text or citations that
 * would be lost); other blocks' deltas (thinking, tool input) are not part of
 * the answer and skipped. Unknown event types are skipped (the API adds
 * them over time); `ping` too. An `error` event is `ProviderStreamError`; the
 * input ending before `message_stop` is `ProviderStreamIncomplete`. SSE lines
 * end with LF or CRLF; comments (`:`), `id:` and `retry:` are ignored.
 *
 * Bounded while reading (`SseLimits`): one event's data, the answer's text,
 * content blocks, cited blocks and citations; past a limit nothing more is read.
 *
 * @since 0.2.0
 */
import * as Either from "effect/Either"
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"
import {
  type AnswerError,
  InvalidAnswer,
  ProviderEventInvalid,
  ProviderStreamError,
  ProviderStreamIncomplete,
  type StaleManifest
} from "../Errors.js"
import { boundMessage, boundSegment, cut } from "../internal/bounded.js"
import * as StrictJson from "../internal/strictJson.js"
import type { Manifest } from "../Manifest.js"
import * as Anthropic from "./Anthropic.js"
import { type BoundAnswer, limits as answerLimits } from "./Records.js"
import { answerLimitError } from "./StreamLimits.js"

// ---------------------------------------------------------------------------
// Limits and failures
// ---------------------------------------------------------------------------

/** The bounds of one stream, checked as its events arrive. */
export interface SseLimits {
  /** UTF-16 code units of one event's data (all its `data:` lines). */
  readonly maxEventChars: number
  /** UTF-16 code units of answer text (all `text_delta`s). */
  readonly maxTextChars: number
  /** Content blocks of any type (the response's `content` items). */
  readonly maxBlocks: number
  /** Text blocks with citations (each one claim). */
  readonly maxClaims: number
  /** Citations of all blocks together. */
  readonly maxCitations: number
}

/** The non-streamed route's limits (`Anthropic.fromJson`). */
export const answerSseLimits: SseLimits = {
  maxEventChars: answerLimits.maxChars,
  maxTextChars: answerLimits.maxChars,
  maxBlocks: answerLimits.maxClaims,
  maxClaims: answerLimits.maxClaims,
  maxCitations: answerLimits.maxCitations
}

/** A limit passed: each caller reports it as its own typed error. */
export class LimitPassed {
  readonly _tag = "LimitPassed" as const
  constructor(
    readonly limit: "event-size" | "answer-size" | "blocks" | "claims" | "citations",
    readonly max: number,
    readonly received: number
  ) {}
}

/** What reading a stream fails with (thrown by `Accumulator`, as the first issue stops it). */
export type SseFailure = ProviderEventInvalid | ProviderStreamError | ProviderStreamIncomplete | InvalidAnswer | LimitPassed

/** A thrown failure, carried out of the synchronous reader. */
export class SseAbort {
  constructor(readonly failure: SseFailure) {}
}

// ---------------------------------------------------------------------------
// Event shapes (vendor objects: unknown keys ignored)
// ---------------------------------------------------------------------------

const Index = Schema.Int.pipe(Schema.greaterThanOrEqualTo(0))
const Typed = Schema.Struct({ type: Schema.String })
const MessageStart = Schema.Struct({ message: Schema.Struct({ content: Schema.Array(Schema.Unknown) }) })
const BlockStart = Schema.Struct({ index: Index, content_block: Typed })
const TextStart = Schema.Struct({
  text: Schema.String,
  citations: Schema.optional(Schema.NullOr(Schema.Array(Schema.Unknown)))
})
const BlockDelta = Schema.Struct({ index: Index, delta: Schema.Unknown })
const TextDelta = Schema.Struct({ text: Schema.String })
const CitationsDelta = Schema.Struct({ citation: Schema.Unknown })
const BlockStop = Schema.Struct({ index: Index })
const ErrorData = Schema.Struct({ error: Schema.Struct({ type: Schema.String, message: Schema.String }) })

const lenient = { errors: "all", onExcessProperty: "ignore" } as const

/** The first issue of a failed decode, as one line. */
const firstIssue = (error: ParseResult.ParseError): string => {
  const issue = ParseResult.ArrayFormatter.formatErrorSync(error)[0]
  if (issue === undefined) return "invalid"
  const at = issue.path.length === 0 ? "" : ` at ${issue.path.map((p) => boundSegment(String(p))).join(".")}`
  return `${boundMessage(issue.message)}${at}`
}

const decodeTextCitation = Schema.decodeUnknownEither(Anthropic.TextCitation, lenient)
const TextBlockStart = Schema.Struct({ content_block: TextStart })

// Hand checks of the hot events' shapes (thousands per answer, where a Schema decode cost more than
// the rest of the event's handling). Each one only accepts what its Schema accepts, with the same
// values; anything else goes to the Schema decode, which alone words the issue.

const isRecord = (value: unknown): value is Readonly<Record<string, unknown>> => typeof value === "object" && value !== null
/** `Index`: a non-negative safe integer (Schema.Int's rule). */
const isIndex = (value: unknown): value is number => typeof value === "number" && Number.isSafeInteger(value) && value >= 0
/** `NonBlankString`: a non-whitespace character, and well-formed. */
const isNonBlank = (value: unknown): boolean => typeof value === "string" && /\S/u.test(value) && value.isWellFormed()
const has = (value: Readonly<Record<string, unknown>>, key: string) => Object.prototype.hasOwnProperty.call(value, key)

/** `typeOf(v)` is `Typed`'s decode of `v` when that is a record with a string `type`. */
const typeOf = (value: unknown): string | undefined => (isRecord(value) && typeof value["type"] === "string" ? value["type"] : undefined)

/** A citation `Anthropic.TextCitation` accepts, by hand (the three location types). */
const isTextCitation = (c: unknown): boolean => {
  if (!isRecord(c) || !isNonBlank(c["cited_text"]) || !isIndex(c["document_index"])) return false
  switch (c["type"]) {
    case "char_location":
      return isIndex(c["start_char_index"]) && isIndex(c["end_char_index"])
    case "page_location":
      return isPage(c["start_page_number"]) && isPage(c["end_page_number"])
    case "content_block_location":
      return isIndex(c["start_block_index"]) && isIndex(c["end_block_index"])
  }
  return false
}
const isPage = (value: unknown): boolean => typeof value === "number" && Number.isSafeInteger(value) && value >= 1

// ---------------------------------------------------------------------------
// The accumulator
// ---------------------------------------------------------------------------

/** A text block as it accumulates (plain data, as in a response). */
export interface TextBlockData {
  readonly type: "text"
  text: string
  readonly citations: Array<unknown>
}

/** Where the response's blocks go while they stream. */
export interface Listener {
  /** Text of block `index`, as it arrives. */
  readonly text?: (index: number, text: string) => void
  /** A text block ended (with or without citations). */
  readonly textBlockStop?: (index: number, block: TextBlockData) => void
}

/**
 * SSE lines in, the streamed response's content blocks out. `line` and `end` throw `SseAbort` at
 * the first issue; nothing after it is read.
 *
 * @since 0.2.0
 */
export class Accumulator {
  /** The response's content blocks so far (plain data, for `Anthropic.decodeResponse`). */
  readonly content: Array<TextBlockData | { readonly type: string }> = []
  private phase: "before" | "message" | "stopped" = "before"
  private open: number | undefined
  private lineNo = 0
  private events = 0
  private name: string | undefined
  /** The event's `data:` lines: how many, the first, and any others (rare: one line per event is the norm). */
  private dataLines = 0
  private data = ""
  private moreData: Array<string> | undefined
  private dataChars = 0
  private eventLine = 0
  private textChars = 0
  private claims = 0
  private citations = 0

  constructor(private readonly limits: SseLimits, private readonly listener: Listener = {}) {}

  private invalid(detail: string): SseAbort {
    return new SseAbort(new ProviderEventInvalid({ format: "anthropic-sse", event: this.events, line: this.eventLine, detail }))
  }

  /** `count` blank lines (each dispatches the event before it, if any). */
  blank(count: number = 1): void {
    this.lineNo += count
    this.dispatch()
  }

  /** One SSE line, without its LF (a trailing CR is dropped). */
  line(raw: string): void {
    this.lineAt(raw, 0, raw.length)
  }

  /**
   * The SSE line `text[from, to)`, without its LF (a trailing CR is dropped): as `line`, read in
   * place, so a whole text is read without a string per line (only the values kept are cut out).
   */
  lineAt(text: string, from: number, to: number): void {
    if (to > from && text.charCodeAt(to - 1) === 13) to--
    if (to === from) return this.blank()
    this.lineNo++
    if (text.charCodeAt(from) === 58) return
    // The field ends at the first colon (a scan of this line only: linear however the lines run).
    let colon = from
    while (colon < to && text.charCodeAt(colon) !== 58) colon++
    const fieldLength = colon - from
    const isEvent = fieldLength === 5 && text.startsWith("event", from)
    const isData = !isEvent && fieldLength === 4 && text.startsWith("data", from)
    if (this.name === undefined && this.dataLines === 0) this.eventLine = this.lineNo
    // `id`, `retry` and unknown fields are ignored, as the SSE standard says.
    if (!isEvent && !isData) return
    const valueFrom = colon + 1 < to && text.charCodeAt(colon + 1) === 32 ? colon + 2 : colon + 1
    const value = valueFrom >= to ? "" : text.slice(valueFrom, to)
    if (isEvent) {
      this.name = value
      return
    }
    this.dataChars += value.length + 1
    if (this.dataChars > this.limits.maxEventChars) throw new SseAbort(new LimitPassed("event-size", this.limits.maxEventChars, this.dataChars))
    if (this.dataLines++ === 0) this.data = value
    else (this.moreData ??= []).push(value)
  }

  private dispatch(): void {
    if (this.dataLines === 0) {
      this.name = undefined
      return
    }
    const data = this.moreData === undefined ? this.data : [this.data, ...this.moreData].join("\n")
    const name = this.name
    this.dataLines = 0
    this.data = ""
    this.moreData = undefined
    this.dataChars = 0
    this.name = undefined
    this.events++
    this.apply(name, data)
  }

  private decode<A, I>(schema: Schema.Schema<A, I, never>, value: unknown): A {
    const decoded = Schema.decodeUnknownEither(schema, lenient)(value)
    if (Either.isLeft(decoded)) throw this.invalid(firstIssue(decoded.left))
    return decoded.right
  }

  private apply(name: string | undefined, data: string): void {
    const parsed = StrictJson.parse(data)
    if (parsed._tag === "Left") throw this.invalid(`data is not strict JSON: ${boundMessage(parsed.issue.message)}`)
    const value = parsed.value
    const type = typeOf(value) ?? this.decode(Typed, value).type
    if (name !== undefined && name !== "message" && name !== type) {
      throw this.invalid(`event ${JSON.stringify(cut(name))} carries data of type ${JSON.stringify(cut(type))}`)
    }
    if (type === "ping") return
    if (type === "error") {
      const { error } = this.decode(ErrorData, parsed.value)
      throw new SseAbort(new ProviderStreamError({ format: "anthropic-sse", errorType: cut(error.type), detail: boundMessage(error.message) }))
    }
    if (this.phase === "stopped") throw this.invalid(`${cut(type)} after message_stop`)
    switch (type) {
      case "message_start":
        if (this.phase !== "before") throw this.invalid("a second message_start")
        if (this.decode(MessageStart, parsed.value).message.content.length > 0) {
          throw this.invalid("message_start carries content blocks: they must stream as content_block events")
        }
        this.phase = "message"
        return
      case "content_block_start":
        return this.start(
          isRecord(value) && isIndex(value["index"]) && typeOf(value["content_block"]) !== undefined
            ? value as typeof BlockStart.Type
            : this.decode(BlockStart, value),
          value
        )
      case "content_block_delta":
        return this.delta(isRecord(value) && isIndex(value["index"]) && has(value, "delta") ? value as typeof BlockDelta.Type : this.decode(BlockDelta, value))
      case "content_block_stop":
        return this.stop(isRecord(value) && isIndex(value["index"]) ? value["index"] : this.decode(BlockStop, value).index)
      case "message_delta":
      case "message_stop":
        if (this.phase !== "message") throw this.invalid(`${type} before message_start`)
        if (this.open !== undefined) throw this.invalid(`${type} while block ${this.open} is open`)
        if (type === "message_stop") this.phase = "stopped"
        return
    }
    // Another event type: the API adds them over time; none carries the answer's text or citations.
    if (this.phase !== "message") throw this.invalid(`${cut(type)} before message_start`)
  }

  private start(event: typeof BlockStart.Type, value: unknown): void {
    if (this.phase !== "message") throw this.invalid("content_block_start before message_start")
    if (this.open !== undefined) throw this.invalid(`content_block_start while block ${this.open} is open`)
    if (event.index !== this.content.length) throw this.invalid(`block ${event.index} starts where block ${this.content.length} is next`)
    if (this.content.length + 1 > this.limits.maxBlocks) throw new SseAbort(new LimitPassed("blocks", this.limits.maxBlocks, this.content.length + 1))
    this.open = event.index
    if (event.content_block.type !== "text") {
      this.content.push({ type: event.content_block.type })
      return
    }
    const block0 = (value as { readonly content_block: Readonly<Record<string, unknown>> }).content_block
    const citations = block0["citations"]
    const start = typeof block0["text"] === "string" && (citations === undefined || citations === null || Array.isArray(citations))
      ? block0 as typeof TextStart.Type
      : this.decode(TextBlockStart, value).content_block
    const block: TextBlockData = { type: "text", text: "", citations: [] }
    this.content.push(block)
    // A start may carry text and citations already (the API sends them empty): read as deltas.
    for (const citation of start.citations ?? []) this.citation(event.index, block, citation)
    if (start.text !== "") this.text(event.index, block, start.text)
  }

  private delta(event: typeof BlockDelta.Type): void {
    const type = typeOf(event.delta) ?? this.decode(Typed, event.delta).type
    if (this.open !== event.index) throw this.invalid(`a delta for block ${event.index}, which is not open`)
    const block = this.content[event.index]!
    if (!("text" in block)) return
    switch (type) {
      case "text_delta": {
        const text = (event.delta as Readonly<Record<string, unknown>>)["text"]
        return this.text(event.index, block, typeof text === "string" ? text : this.decode(TextDelta, event.delta).text)
      }
      case "citations_delta": {
        const delta = event.delta as Readonly<Record<string, unknown>>
        return this.citation(event.index, block, has(delta, "citation") ? delta["citation"] : this.decode(CitationsDelta, delta).citation)
      }
    }
    throw this.invalid(`a ${cut(type)} in text block ${event.index} (only text_delta and citations_delta are read)`)
  }

  private text(index: number, block: TextBlockData, text: string): void {
    this.textChars += text.length
    if (this.textChars > this.limits.maxTextChars) throw new SseAbort(new LimitPassed("answer-size", this.limits.maxTextChars, this.textChars))
    block.text += text
    this.listener.text?.(index, text)
  }

  private citation(index: number, block: TextBlockData, citation: unknown): void {
    this.citations++
    if (this.citations > this.limits.maxCitations) throw new SseAbort(new LimitPassed("citations", this.limits.maxCitations, this.citations))
    const j = block.citations.length
    // As in a whole response: a citation citegate cannot check (web search, search result) is an InvalidAnswer.
    const decoded = isTextCitation(citation) ? undefined : decodeTextCitation(citation)
    if (decoded !== undefined && Either.isLeft(decoded)) {
      const issue = ParseResult.ArrayFormatter.formatErrorSync(decoded.left)[0]
      throw new SseAbort(
        new InvalidAnswer({
          issues: [{
            path: ["content", index, "citations", j, ...(issue?.path ?? []).map((p) => boundSegment(String(p)))],
            message: boundMessage(issue?.message ?? "invalid")
          }]
        })
      )
    }
    block.citations.push(citation)
  }

  private stop(index: number): void {
    if (this.open !== index) throw this.invalid(`content_block_stop for block ${index}, which is not open`)
    this.open = undefined
    const block = this.content[index]!
    if (!("text" in block)) return
    if (block.citations.length > 0) {
      this.claims++
      if (this.claims > this.limits.maxClaims) throw new SseAbort(new LimitPassed("claims", this.limits.maxClaims, this.claims))
    }
    this.listener.textBlockStop?.(index, block)
  }

  /** The input ended: the stream must have reached `message_stop`. */
  end(): { readonly content: ReadonlyArray<unknown> } {
    const incomplete = (at: ProviderStreamIncomplete["at"]) =>
      new SseAbort(new ProviderStreamIncomplete({ format: "anthropic-sse", at, events: this.events }))
    if (this.dataLines > 0 || this.name !== undefined) {
      if (this.phase === "stopped") throw this.invalid("an unterminated event after message_stop")
      throw incomplete("inside-event")
    }
    if (this.phase === "before") throw incomplete("before-message")
    if (this.open !== undefined) throw incomplete("inside-block")
    if (this.phase === "message") throw incomplete("before-message-stop")
    return { content: this.content }
  }
}

// ---------------------------------------------------------------------------
// A whole stream (a file): the library function beside `Anthropic.fromJson`
// ---------------------------------------------------------------------------

/** The response a whole Anthropic SSE text streams (its events read as `Accumulator` reads them). */
export const decodeSse = (
  text: string,
  limits: SseLimits = answerSseLimits
): Either.Either<Anthropic.Response, AnswerError> => {
  if (text.length > answerLimits.maxChars) {
    return Either.left(new InvalidAnswer({ issues: [{ path: [], message: `is longer than ${answerLimits.maxChars} characters` }] }))
  }
  const accumulator = new Accumulator(limits)
  try {
    let from = 0
    for (let nl = text.indexOf("\n"); nl !== -1; nl = text.indexOf("\n", from)) {
      accumulator.lineAt(text, from, nl)
      from = nl + 1
    }
    if (from < text.length) accumulator.lineAt(text, from, text.length)
    return Anthropic.decodeResponse(accumulator.end())
  } catch (e) {
    if (!(e instanceof SseAbort)) throw e
    return Either.left(e.failure instanceof LimitPassed ? answerLimitError(e.failure) : e.failure)
  }
}

/** Decode an Anthropic SSE text and bind it to this run's manifest (named by the caller), as `Anthropic.fromJson`. */
export const fromSse = (
  text: string,
  manifest: Manifest,
  options: { readonly manifestDigest?: string | undefined }
): Either.Either<BoundAnswer, AnswerError | StaleManifest> =>
  Either.flatMap(decodeSse(text), (response) => Anthropic.toAnswer(response, manifest, options))
