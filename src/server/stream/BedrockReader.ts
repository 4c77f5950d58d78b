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
import * as Either from "effect/Either"
import * as Answer from "../../answer/Answer.js"
import * as Bedrock from "../../answer/Bedrock.js"
import * as BedrockStream from "../../answer/BedrockStream.js"
import type { UncitedText } from "../../answer/Records.js"
import { InvalidAnswer, StreamLimitExceeded } from "../../Errors.js"
import * as EventStream from "../../internal/eventStream.js"
import type { StreamFailure, StreamLimits, StreamOptions } from "./Events.js"
import type { PendingDelta, StreamReader } from "./Machine.js"
import { blockFailure, TextDeltas } from "./TextDeltas.js"
import { Abort, type Pending, type Verification } from "./Verification.js"

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
  const deltas = new TextDeltas()
  const sourceNumbers = new Map(options.manifest.sources.map((s, i) => [s.source as string, i + 1]))

  const textBlockStop = (index: number, block: BedrockStream.ConverseBlock) => {
    deltas.blockStop()
    if (!("citationsContent" in block)) return
    const blockText = block.citationsContent.content.map((c) => c.text).join("")
    // The block as a one-block response, through the whole response's mapping (issues re-pathed to the block).
    const mapped = Either.flatMap(
      Bedrock.decodeResponse({ output: { message: { content: [block] } } }),
      (response) => Bedrock.toAnswer(response, options.manifest, { manifestDigest: options.manifestDigest })
    )
    if (Either.isLeft(mapped)) throw blockFailure(mapped.left, 3, index)
    const claim = mapped.right.claims[0]
    if (claim === undefined) return
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
    deltas.openClaim(index, claim.text, blockText, cited.map(({ pending, source }) => {
      const number = source === undefined ? undefined : sourceNumbers.get(source)
      return {
        source: number,
        queue: (footnote, state, citationIndex) => verification.add(pending({ footnote, claim: state, citationIndex, source: number, line: index }))
      }
    }))
  }

  const accumulator = new BedrockStream.Accumulator(
    { maxChars: limits.maxAnswerChars, maxCitations: limits.maxCitations, maxClaims: limits.maxClaims },
    { text: deltas.text, textBlockStop }
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
      messages.forEach((message, i) => {
        const { body, name } = orAbort(BedrockStream.messageMember(message, before + i + 1))
        orAbort(accumulator.pushMember(name, body))
      })
      if (error !== undefined) throw new Abort(failureOf(BedrockStream.frameFailure(error, decoder.messages + 1, limits.maxLineBytes)))
    },
    takeDelta: (): PendingDelta | undefined => deltas.take(),
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
    claims: () => deltas.claims,
    citations: () => deltas.footnotes,
    documentLevel: true
  }
}
