/**
 * A Bedrock ConverseStream body (`format=bedrock-stream`: AWS event stream
 * messages, as the API sends them) through the stream machine: bytes go to
 * the event stream decoder, its events to `BedrockStream.Accumulator`; text
 * deltas stream out as they arrive; when a text block with citations stops, it
 * is mapped by `Bedrock.toAnswer` exactly as in a whole Converse response
 * (claim `block-<i>`, its LAST sentence, `documentIndex` + 1, `documentChar`
 * code points, `documentPage` pages, `web` by exact URL), its placeholders
 * `[^k]` are streamed after the block's text, and its citations are queued for
 * the Answers path under the stream's `answers.citations` policy: quotes are
 * verified, document-level citations accepted (`document` events) or
 * `CoarseCitation`, unresolved ones retracted with their error. At the end the
 * accumulated blocks go once more through `Bedrock.decodeResponse` and
 * `toAnswer` for the uncited text.
 *
 * @since 0.2.0
 */
import * as Arr from "effect/Array"
import * as Either from "effect/Either"
import * as Answer from "../../answer/Answer.js"
import * as Bedrock from "../../answer/Bedrock.js"
import * as BedrockStream from "../../answer/BedrockStream.js"
import type { UncitedText } from "../../answer/Records.js"
import { InvalidAnswer, StreamLimitExceeded } from "../../Errors.js"
import * as EventStream from "../../internal/eventStream.js"
import type { FootnoteMark, StreamFailure, StreamLimits, StreamOptions } from "./Events.js"
import type { PendingDelta, StreamReader } from "./Machine.js"
import { Abort, type ClaimState, type Pending, type Verification } from "./Verification.js"

const failureOf = (failure: BedrockStream.BedrockStreamFailure): StreamFailure => {
  if (failure._tag !== "LimitPassed") return failure
  switch (failure.limit) {
    case "event-size":
      return new StreamLimitExceeded({ limit: "line-length", max: failure.max, received: failure.received })
    case "blocks":
      return new InvalidAnswer({ issues: [{ path: ["output", "message", "content"], message: `must hold at most ${failure.max} content blocks` }] })
    default:
      return new StreamLimitExceeded({ limit: failure.limit, max: failure.max, received: failure.received })
  }
}

const orAbort = <A>(either: Either.Either<A, BedrockStream.BedrockStreamFailure>): A => {
  if (Either.isLeft(either)) throw new Abort(failureOf(either.left))
  return either.right
}

/**
 * The reader of one `bedrock-stream` stream: chunks of the request body in.
 *
 * @since 0.2.0
 */
export const bedrockEvents = (options: StreamOptions, limits: StreamLimits) => (verification: Verification): StreamReader<Uint8Array> => {
  const claims: Array<ClaimState> = []
  let footnotes = 0
  let out = 0
  let delta = ""
  let held = ""
  let marks: Array<typeof FootnoteMark.Type> = []
  const sourceNumbers = new Map(options.manifest.sources.map((s, i) => [s.source as string, i + 1]))

  const emit = (text: string) => {
    delta += text
    out += text.length
  }
  const text = (_index: number, piece: string) => {
    const all = held + piece
    // A high surrogate ending a piece waits for its pair: a delta never splits a character.
    const last = all.charCodeAt(all.length - 1)
    held = last >= 0xd800 && last <= 0xdbff ? all.slice(-1) : ""
    emit(held === "" ? all : all.slice(0, -1))
  }

  const textBlockStop = (index: number, block: BedrockStream.ConverseBlock) => {
    if (held !== "") emit(held)
    held = ""
    if (!("citationsContent" in block)) return
    const blockText = block.citationsContent.content.map((c) => c.text).join("")
    // Everything of the block's text is out now: it starts its length back.
    const start = out - blockText.length
    // The block as a one-block response, through the whole response's mapping (issues re-pathed to the block).
    const mapped = Either.flatMap(
      Bedrock.decodeResponse({ output: { message: { content: [block] } } }),
      (response) => Bedrock.toAnswer(response, options.manifest, { manifestDigest: options.manifestDigest })
    )
    if (Either.isLeft(mapped)) {
      const error = mapped.left
      throw new Abort(
        error._tag === "InvalidAnswer"
          ? new InvalidAnswer({
            issues: Arr.map(error.issues, (i) => ({ ...i, path: i.path.map((p, k) => (k === 3 && p === 0 ? index : p)) })),
            ...(error.omitted === undefined ? {} : { omitted: error.omitted })
          })
          : error
      )
    }
    const claim = mapped.right.claims[0]
    if (claim === undefined) return
    const id = `block-${index}`
    // The claim's citations in the order the Answers service indexes them: quotes, documents, unresolved.
    const cited: Array<{ readonly source: string | undefined; readonly pending: (note: Pending["note"]) => Pending }> = [
      ...claim.citations.map((citation) => ({ source: citation.source, pending: (note: Pending["note"]): Pending => ({ note, citation }) })),
      ...(claim.documents ?? []).map((document) => ({
        source: document.source,
        pending: (note: Pending["note"]): Pending => ({ note, kind: "document", document })
      })),
      ...(claim.unresolved ?? []).map((unresolved) => ({
        source: "source" in unresolved.citation ? unresolved.citation.source : undefined,
        pending: (note: Pending["note"]): Pending => ({ note, kind: "unresolved", unresolved })
      }))
    ]
    const first = footnotes + 1
    const markers = cited.map((_, k) => `[^${first + k}]`)
    const state: ClaimState = {
      index: claims.length,
      id,
      text: claim.text,
      sentence: { start: start + blockText.trimEnd().length - claim.text.length, end: out + markers.join("").length },
      total: cited.length,
      verified: 0,
      retracted: 0
    }
    claims.push(state)
    cited.forEach(({ pending, source }, citationIndex) => {
      const footnote = ++footnotes
      const number = source === undefined ? undefined : sourceNumbers.get(source)
      marks.push({ footnote, claimId: id, ...(number === undefined ? {} : { source: number }), at: out })
      verification.add(pending({ footnote, claim: state, citationIndex, source: number, line: index }))
      emit(markers[citationIndex]!)
    })
  }

  const accumulator = new BedrockStream.Accumulator(
    { maxChars: limits.maxAnswerChars, maxCitations: limits.maxCitations, maxClaims: limits.maxClaims },
    { text, textBlockStop }
  )
  const decoder = new EventStream.Decoder(limits.maxLineBytes)
  let started = false
  const checkManifest = () => {
    started = true
    // The response names no manifest: the caller must, before anything is read.
    const checked = Answer.checkManifest(options.manifest, [options.manifestDigest])
    if (Either.isLeft(checked)) throw new Abort(checked.left)
  }

  return {
    read: (chunk) => {
      if (!started) checkManifest()
      if (decoder.bytes + chunk.length > limits.maxInputBytes) {
        throw new Abort(new StreamLimitExceeded({ limit: "input-size", max: limits.maxInputBytes, received: decoder.bytes + chunk.length }))
      }
      const before = decoder.messages
      const { messages, error } = decoder.push(chunk)
      // The messages before a refused one are read first: their text goes out before the error.
      messages.forEach((message, i) => orAbort(accumulator.push(orAbort(BedrockStream.messageEvent(message, before + i + 1)))))
      if (error !== undefined) throw new Abort(failureOf(BedrockStream.frameFailure(error, decoder.messages + 1, limits.maxLineBytes)))
    },
    takeDelta: (): PendingDelta | undefined => {
      if (delta === "") return undefined
      const pending = { text: delta, footnotes: marks }
      delta = ""
      marks = []
      return pending
    },
    endInput: () => {
      if (!started) checkManifest()
      if (decoder.pending > 0) throw new Abort(BedrockStream.incompleteInside(decoder.messages))
      orAbort(accumulator.end())
    },
    final: (): Either.Either<ReadonlyArray<UncitedText>, StreamFailure> =>
      Either.map(
        Either.flatMap(
          Bedrock.decodeResponse(orAbort(accumulator.response())),
          (response) => Bedrock.toAnswer(response, options.manifest, { manifestDigest: options.manifestDigest })
        ),
        (answer) => answer.uncited
      ),
    claims: () => claims,
    citations: () => footnotes,
    documentLevel: true
  }
}
