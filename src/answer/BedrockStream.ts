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
 * Not yet wired to an input format: the Bedrock answer mapping reads these blocks.
 *
 * @since 0.2.0
 */
import * as Either from "effect/Either"
import * as Schema from "effect/Schema"
import { ProviderEventInvalid, ProviderStreamError, ProviderStreamIncomplete } from "../Errors.js"
import { boundMessage } from "../internal/bounded.js"

/** A Converse content block as the non-streamed response has it. */
export type ConverseBlock =
  | { readonly text: string }
  | { readonly citationsContent: { readonly content: ReadonlyArray<{ readonly text: string }>; readonly citations: ReadonlyArray<unknown> } }

export type BedrockStreamFailure = ProviderEventInvalid | ProviderStreamError | ProviderStreamIncomplete

const Index = Schema.Int.pipe(Schema.greaterThanOrEqualTo(0))
const BlockStart = Schema.Struct({ contentBlockIndex: Index })
const BlockDelta = Schema.Struct({
  contentBlockIndex: Index,
  delta: Schema.Struct({ text: Schema.optional(Schema.String), citation: Schema.optional(Schema.Unknown) })
})
const decodeStart = Schema.decodeUnknownEither(BlockStart, { onExcessProperty: "ignore" })
const decodeDelta = Schema.decodeUnknownEither(BlockDelta, { onExcessProperty: "ignore" })
const decodeStop = decodeStart

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

  constructor(private readonly maxChars: number = 16 * 1024 * 1024, private readonly maxCitations: number = 20_000) {}

  private chars = 0
  private citationCount = 0

  private invalid(detail: string): Either.Either<never, BedrockStreamFailure> {
    return Either.left(new ProviderEventInvalid({ format: "bedrock-converse-stream", event: this.events, line: this.events, detail }))
  }

  /** One event (`{ messageStart }`, `{ contentBlockDelta }`, …), as the SDK yields it. */
  push(event: unknown): Either.Either<void, BedrockStreamFailure> {
    this.events++
    if (typeof event !== "object" || event === null) return this.invalid("an event must be an object")
    const keys = Object.keys(event).filter((k) => (event as Record<string, unknown>)[k] !== undefined)
    if (keys.length !== 1) return this.invalid(`an event has exactly one member, got ${keys.length}`)
    const name = keys[0]!
    const body = (event as Record<string, unknown>)[name]
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
        const start = decodeStart(body)
        if (Either.isLeft(start)) return this.invalid("contentBlockStart without a contentBlockIndex")
        // A started block is tool use (text blocks start with their first delta): not part of the answer.
        return this.begin(start.right.contentBlockIndex, false)
      }
      case "contentBlockDelta":
        return this.delta(body)
      case "contentBlockStop": {
        const stop = decodeStop(body)
        if (Either.isLeft(stop) || stop.right.contentBlockIndex !== this.open) return this.invalid("contentBlockStop for a block that is not open")
        this.open = undefined
        return Either.void
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
    this.blocks.set(index, { text: "", citations: [], answer })
    this.order.push(index)
    this.open = index
    return Either.void
  }

  private delta(body: unknown): Either.Either<void, BedrockStreamFailure> {
    const decoded = decodeDelta(body)
    if (Either.isLeft(decoded)) return this.invalid("contentBlockDelta without a contentBlockIndex and a delta")
    const { contentBlockIndex: index, delta } = decoded.right
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
      if (this.chars > this.maxChars) return this.invalid(`more than ${this.maxChars} characters of text`)
      block.text += delta.text
    }
    if (delta.citation !== undefined) {
      if (++this.citationCount > this.maxCitations) return this.invalid(`more than ${this.maxCitations} citations`)
      block.citations.push(delta.citation)
    }
    return Either.void
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
      out.push(block.citations.length === 0 ? { text: block.text } : { citationsContent: { content: [{ text: block.text }], citations: block.citations } })
    }
    return Either.right(out)
  }
}
