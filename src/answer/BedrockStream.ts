/**
 * Bedrock ConverseStream events accumulated into the Converse response's
 * content blocks, for the Bedrock answer mapping to read as it reads a
 * `Converse` response: text deltas of one `contentBlockIndex` join into its
 * text; its `delta.citation` events (each one whole citation: `title`,
 * `source`, `sourceContent`, `location`) make it a `citationsContent` block
 * `{ content: [{ text }], citations: [...] }`; a block without citations is
 * `{ text }`. Reasoning and tool-use deltas are not part of the answer and are
 * skipped. Citation objects are passed on as they came (the mapping decodes
 * them), so no citation is lost and none is judged here.
 *
 * Blocks start in order (`contentBlockIndex` 0, 1, 2, …), one at a time, as
 * ConverseStream sends them. The input format `bedrock-stream` is the raw
 * ConverseStream response body (`application/vnd.amazon.eventstream`, AWS
 * event stream encoding): `fromEventStream` reads a whole one (a file),
 * `server/stream/BedrockReader.ts` reads one as it arrives.
 *
 * @since 0.2.0
 */
import * as Either from "effect/Either"
import {
  type AnswerError,
  ProviderEventInvalid,
  ProviderStreamError,
  ProviderStreamIncomplete,
  type StaleManifest
} from "../Errors.js"
import { boundMessage, cut } from "../internal/bounded.js"
import * as EventStream from "../internal/eventStream.js"
import * as StrictJson from "../internal/strictJson.js"
import type { Manifest } from "../Manifest.js"
import { LimitPassed } from "./AnthropicSse.js"
import * as Bedrock from "./Bedrock.js"
import { type BoundAnswer, limits as answerLimits } from "./Records.js"
import { answerLimitError } from "./StreamLimits.js"

/** A Converse content block as the non-streamed response has it. */
export type ConverseBlock =
  | { readonly text: string }
  | { readonly citationsContent: { readonly content: ReadonlyArray<{ readonly text: string }>; readonly citations: ReadonlyArray<unknown> } }

export type BedrockStreamFailure = ProviderEventInvalid | ProviderStreamError | ProviderStreamIncomplete | LimitPassed

/** The bounds of one stream, checked as its events arrive. */
export interface BedrockStreamLimits {
  /** UTF-16 code units of answer text (all text deltas). */
  readonly maxChars: number
  /** Citations of all blocks together. */
  readonly maxCitations: number
  /** Text blocks with citations (each one claim). */
  readonly maxClaims: number
}

/** The non-streamed route's limits (`Bedrock.fromJson`). */
export const answerStreamLimits: BedrockStreamLimits = {
  maxChars: answerLimits.maxChars,
  maxCitations: answerLimits.maxCitations,
  maxClaims: answerLimits.maxClaims
}

/** Where the answer's blocks go while they stream. */
export interface Listener {
  /** Text of block `index`, as it arrives. */
  readonly text?: (index: number, text: string) => void
  /** A text block stopped (as a Converse content block: with its citations, or plain text). */
  readonly textBlockStop?: (index: number, block: ConverseBlock) => void
}

// The three event shapes are checked by hand, not by Schema: one check per event, thousands per
// answer, where a Schema decode cost about as much as the rest of the event's handling. The answer
// they build is decoded strictly at the end (Bedrock.decodeResponse).

/** The event's `contentBlockIndex` when it is a non-negative safe integer (Schema.Int's rule). */
const blockIndexOf = (body: unknown): number | undefined => {
  const index = typeof body === "object" && body !== null ? (body as { readonly contentBlockIndex?: unknown }).contentBlockIndex : undefined
  return typeof index === "number" && Number.isSafeInteger(index) && index >= 0 ? index : undefined
}

/** A delta event's index and delta (`text` a string when present, `citation` anything), else undefined. */
const deltaOf = (body: unknown): { readonly index: number; readonly text: string | undefined; readonly citation: unknown } | undefined => {
  const index = blockIndexOf(body)
  const delta = index === undefined ? undefined : (body as { readonly delta?: unknown }).delta
  if (index === undefined || typeof delta !== "object" || delta === null) return undefined
  const { citation, text } = delta as { readonly text?: unknown; readonly citation?: unknown }
  return text === undefined || typeof text === "string" ? { index, text, citation } : undefined
}

/** The stream's exception members (ConverseStreamOutput): the answer is incomplete. */
const exceptions = [
  "internalServerException",
  "modelStreamErrorException",
  "validationException",
  "throttlingException",
  "serviceUnavailableException"
]

interface Open {
  text: string
  readonly citations: Array<unknown>
  readonly answer: boolean
}

/**
 * ConverseStream events in, Converse content blocks out. Each `push` fails at the first issue
 * (a failure is final: nothing after it is read).
 *
 * @since 0.2.0
 */
export class Accumulator {
  private readonly blocks = new Map<number, Open>()
  private readonly order: Array<number> = []
  private events = 0
  private started = false
  private stopped = false
  private open: number | undefined

  constructor(private readonly limits: BedrockStreamLimits = answerStreamLimits, private readonly listener: Listener = {}) {}

  private chars = 0
  private citationCount = 0
  private claims = 0

  /** Events read so far. */
  get count(): number {
    return this.events
  }

  private invalid(detail: string): Either.Either<never, BedrockStreamFailure> {
    return Either.left(new ProviderEventInvalid({ format: "bedrock-converse-stream", event: this.events, line: this.events, detail }))
  }

  /** One event (`{ messageStart }`, `{ contentBlockDelta }`, …), as the SDK yields it. */
  push(event: unknown): Either.Either<void, BedrockStreamFailure> {
    if (typeof event !== "object" || event === null) return this.refuse("an event must be an object")
    const keys = Object.keys(event).filter((k) => (event as Record<string, unknown>)[k] !== undefined)
    if (keys.length !== 1) return this.refuse(`an event has exactly one member, got ${keys.length}`)
    return this.pushMember(keys[0]!, (event as Record<string, unknown>)[keys[0]!])
  }

  /** An event that is not one: counted, then refused. */
  private refuse(detail: string): Either.Either<never, BedrockStreamFailure> {
    this.events++
    return this.invalid(detail)
  }

  /**
   * One event given as its member's name and body (`push({ [name]: body })` without the wrapper
   * object): how the wire carries it, an `:event-type` header and a payload.
   */
  pushMember(name: string, body: unknown): Either.Either<void, BedrockStreamFailure> {
    this.events++
    if (exceptions.includes(name)) {
      const message = typeof body === "object" && body !== null && typeof (body as { message?: unknown }).message === "string" ? (body as { message: string }).message : ""
      return Either.left(new ProviderStreamError({ format: "bedrock-converse-stream", errorType: name, detail: boundMessage(message) }))
    }
    if (this.stopped && name !== "metadata") return this.invalid(`${name} after messageStop`)
    switch (name) {
      case "messageStart":
        if (this.started) return this.invalid("a second messageStart")
        this.started = true
        return Either.void
      case "contentBlockStart": {
        const start = blockIndexOf(body)
        if (start === undefined) return this.invalid("contentBlockStart without a contentBlockIndex")
        // A started block is tool use (text blocks start with their first delta): not part of the answer.
        return this.begin(start, false)
      }
      case "contentBlockDelta":
        return this.delta(body)
      case "contentBlockStop": {
        const stop = blockIndexOf(body)
        if (stop === undefined || stop !== this.open) return this.invalid("contentBlockStop for a block that is not open")
        this.open = undefined
        return this.stopBlock(stop)
      }
      case "messageStop":
        if (!this.started || this.open !== undefined) return this.invalid("messageStop before messageStart or inside a block")
        this.stopped = true
        return Either.void
      default:
        // `metadata` (usage, metrics) and members added later carry no answer text.
        return Either.void
    }
  }

  private begin(index: number, answer: boolean): Either.Either<void, BedrockStreamFailure> {
    if (!this.started) return this.invalid("a content block before messageStart")
    if (this.open !== undefined && this.open !== index) return this.invalid(`block ${index} starts while block ${this.open} is open`)
    if (this.blocks.has(index)) return this.open === index ? Either.void : this.invalid(`block ${index} started twice`)
    // ConverseStream numbers blocks 0, 1, 2, … in order: a gap would shift every later claim's id.
    if (index !== this.order.length) return this.invalid(`block ${index} starts where block ${this.order.length} is next`)
    this.blocks.set(index, { text: "", citations: [], answer })
    this.order.push(index)
    this.open = index
    return Either.void
  }

  private delta(body: unknown): Either.Either<void, BedrockStreamFailure> {
    const delta = deltaOf(body)
    if (delta === undefined) return this.invalid("contentBlockDelta without a contentBlockIndex and a delta")
    const index = delta.index
    const isAnswer = delta.text !== undefined || delta.citation !== undefined
    if (!this.blocks.has(index)) {
      const begun = this.begin(index, isAnswer)
      if (Either.isLeft(begun)) return begun
    } else if (this.open !== index) return this.invalid(`a delta for block ${index}, which is not open`)
    const block = this.blocks.get(index)!
    if (!isAnswer) return block.answer ? this.invalid(`a delta in text block ${index} that is neither text nor citation`) : Either.void
    if (!block.answer) return this.invalid(`text or a citation in block ${index}, which is not a text block`)
    if (delta.text !== undefined) {
      this.chars += delta.text.length
      if (this.chars > this.limits.maxChars) return Either.left(new LimitPassed("answer-size", this.limits.maxChars, this.chars))
      block.text += delta.text
      this.listener.text?.(index, delta.text)
    }
    if (delta.citation !== undefined) {
      if (++this.citationCount > this.limits.maxCitations) {
        return Either.left(new LimitPassed("citations", this.limits.maxCitations, this.citationCount))
      }
      block.citations.push(delta.citation)
    }
    return Either.void
  }

  private stopBlock(index: number): Either.Either<void, BedrockStreamFailure> {
    const block = this.blocks.get(index)!
    if (!block.answer) return Either.void
    if (block.citations.length > 0 && ++this.claims > this.limits.maxClaims) {
      return Either.left(new LimitPassed("claims", this.limits.maxClaims, this.claims))
    }
    this.listener.textBlockStop?.(index, converse(block))
    return Either.void
  }

  /**
   * The input ended: the message must have stopped. The Converse response it streamed, every
   * block at its `contentBlockIndex` (a block that is not part of the answer as an empty object,
   * so claim ids `block-<i>` are the stream's indices).
   */
  response(): Either.Either<{ readonly output: { readonly message: { readonly content: ReadonlyArray<ConverseBlock | {}> } } }, BedrockStreamFailure> {
    return Either.map(this.end(), () => ({
      output: { message: { content: this.order.map((index) => this.blocks.get(index)!).map((b) => (b.answer ? converse(b) : {})) } }
    }))
  }

  /** The input ended: the message must have stopped. The answer's blocks, in index order. */
  end(): Either.Either<ReadonlyArray<ConverseBlock>, BedrockStreamFailure> {
    const incomplete = (at: ProviderStreamIncomplete["at"]) =>
      Either.left(new ProviderStreamIncomplete({ format: "bedrock-converse-stream", at, events: this.events }))
    if (!this.started) return incomplete("before-message")
    if (this.open !== undefined) return incomplete("inside-block")
    if (!this.stopped) return incomplete("before-message-stop")
    const out: Array<ConverseBlock> = []
    for (const index of [...this.order].sort((a, b) => a - b)) {
      const block = this.blocks.get(index)!
      if (!block.answer) continue
      out.push(converse(block))
    }
    return Either.right(out)
  }
}

const converse = (block: Open): ConverseBlock =>
  block.citations.length === 0 ? { text: block.text } : { citationsContent: { content: [{ text: block.text }], citations: block.citations } }

// ---------------------------------------------------------------------------
// The wire: AWS event stream messages to ConverseStream events
// ---------------------------------------------------------------------------

const format = "bedrock-converse-stream" as const
const utf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true })

/** A message's known string headers, as `readMember` reads them, from its header map. */
const knownOf = (message: EventStream.Message): EventStream.Known => {
  const header = (name: string) => {
    const value = message.headers.get(name)
    return typeof value === "string" ? value : undefined
  }
  return {
    messageType: header(":message-type"),
    eventType: header(":event-type"),
    exceptionType: header(":exception-type"),
    errorCode: header(":error-code"),
    errorMessage: header(":error-message")
  }
}

/**
 * One event stream message as the ConverseStream event it carries (`{ <:event-type>: payload }`),
 * or the stream's failure: an `exception` message (`:exception-type`, payload `{ message }`) or an
 * `error` message (`:error-code`, `:error-message`) is `ProviderStreamError`; a payload that is not
 * one strict JSON object, or another message type, is `ProviderEventInvalid`. `n` is the message's
 * 1-based number.
 */
export const messageEvent = (message: EventStream.Message, n: number): Either.Either<unknown, BedrockStreamFailure> =>
  Either.map(messageMember(message, n), ({ body, name }) => ({ [name]: body }))

const invalidAt = (n: number, detail: string) => new ProviderEventInvalid({ format, event: n, line: n, detail })

/** A message refused: its failure, told apart from a payload (a parsed JSON object is never one). */
class Refused {
  constructor(readonly failure: BedrockStreamFailure) {}
}

/**
 * The payload `payload[from, to)` of a message with these headers, as the event's body (its name is
 * `known.eventType`), or why the message is refused. Allocates only the text and the parsed value.
 */
const readMember = (known: EventStream.Known, payload: Uint8Array, from: number, to: number, n: number): object | Refused => {
  const type = known.messageType
  if (type === "error") {
    return new Refused(new ProviderStreamError({ format, errorType: cut(known.errorCode ?? "error"), detail: boundMessage(known.errorMessage ?? "") }))
  }
  let body: unknown
  try {
    const parsed = StrictJson.parse(utf8.decode(from === 0 && to === payload.length ? payload : payload.subarray(from, to)))
    if (parsed._tag === "Left") return new Refused(invalidAt(n, `the payload is not strict JSON: ${boundMessage(parsed.issue.message)}`))
    body = parsed.value
  } catch {
    return new Refused(invalidAt(n, "the payload is not UTF-8"))
  }
  if (typeof body !== "object" || body === null || Array.isArray(body)) return new Refused(invalidAt(n, "the payload is not a JSON object"))
  if (type === "exception") {
    const detail = (body as { message?: unknown }).message
    return new Refused(
      new ProviderStreamError({ format, errorType: cut(known.exceptionType ?? "exception"), detail: boundMessage(typeof detail === "string" ? detail : "") })
    )
  }
  if (type !== "event") return new Refused(invalidAt(n, `a message of type ${JSON.stringify(cut(type ?? "(none)"))}`))
  const name = known.eventType
  if (name === undefined || name === "") return new Refused(invalidAt(n, "an event without :event-type"))
  return body
}

/** `messageEvent`'s event as its member's name and body (for `Accumulator.pushMember`). */
export const messageMember = (
  message: EventStream.Message,
  n: number
): Either.Either<{ readonly name: string; readonly body: object }, BedrockStreamFailure> => {
  const known = knownOf(message)
  const body = readMember(known, message.payload, 0, message.payload.length, n)
  return body instanceof Refused ? Either.left(body.failure) : Either.right({ name: known.eventType!, body })
}

/** A frame the decoder refused, as the stream's failure (a message past the size limit is `LimitPassed` "event-size"). */
export const frameFailure = (error: EventStream.FrameError, n: number, maxBytes: number): BedrockStreamFailure =>
  error.kind === "too-large"
    ? new LimitPassed("event-size", maxBytes, error.size)
    : new ProviderEventInvalid({ format, event: n, line: n, detail: `a malformed event stream message: ${error.detail}` })

/** The Accumulator's end as the cut stream it is when a message was only partly read. */
export const incompleteInside = (events: number) => new ProviderStreamIncomplete({ format, at: "inside-event", events })

// ---------------------------------------------------------------------------
// A whole stream (a file): the library function beside `Bedrock.fromJson`
// ---------------------------------------------------------------------------

/** The Converse response a whole ConverseStream body streams (AWS event stream encoding). */
export const decodeEventStream = (bytes: Uint8Array): Either.Either<Bedrock.Response, AnswerError> => {
  const failed = (failure: BedrockStreamFailure): Either.Either<never, AnswerError> =>
    Either.left(failure instanceof LimitPassed ? answerLimitError(failure) : failure)
  if (bytes.length > answerLimits.maxChars) return failed(new LimitPassed("event-size", answerLimits.maxChars, bytes.length))
  // The body is in hand: each message is read in place (`EventStream.readMessage`, the checks of
  // `EventStream.Decoder` without its copies and header maps) and handled before the next is read;
  // the first failure ends the reading, as it does when the Decoder's messages are handled in order.
  const accumulator = new Accumulator()
  const frame: EventStream.Frame = { known: EventStream.emptyKnown(), payloadFrom: 0, payloadTo: 0 }
  let at = 0
  let n = 0
  while (at < bytes.length) {
    const read = EventStream.readMessage(bytes, at, answerLimits.maxChars, frame)
    if (read instanceof EventStream.FrameError) return failed(frameFailure(read, n + 1, answerLimits.maxChars))
    if (read === 0) return failed(incompleteInside(n))
    n++
    const body = readMember(frame.known, bytes, frame.payloadFrom, frame.payloadTo, n)
    if (body instanceof Refused) return failed(body.failure)
    const pushed = accumulator.pushMember(frame.known.eventType!, body)
    if (Either.isLeft(pushed)) return failed(pushed.left)
    at += read
  }
  const response = accumulator.response()
  return Either.isLeft(response) ? failed(response.left) : Bedrock.decodeResponse(response.right)
}

/** Decode a whole ConverseStream body and bind it to this run's manifest (named by the caller), as `Bedrock.fromJson`. */
export const fromEventStream = (
  bytes: Uint8Array,
  manifest: Manifest,
  options: { readonly manifestDigest?: string | undefined }
): Either.Either<BoundAnswer, AnswerError | StaleManifest> =>
  Either.flatMap(decodeEventStream(bytes), (response) => Bedrock.toAnswer(response, manifest, options))
