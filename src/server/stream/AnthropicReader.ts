/**
 * An Anthropic Messages stream (`format=anthropic-sse`) through the stream
 * machine: SSE lines go to `AnthropicSse.Accumulator`; text deltas stream out
 * as they arrive; when a text block with citations stops, it is mapped by
 * `Anthropic.toAnswer` exactly as in a whole response (claim `block-<i>`, its
 * LAST sentence, citations by `document_index` + 1), its placeholders
 * `[^k]` are streamed after the block's text and its citations are queued for
 * verification through the Answers path (`char_location` offsets,
 * `page_location` pages, content blocks unsupported), so a streamed
 * citation is judged as `verify-answer --format-in anthropic` judges it.
 * At the end the accumulated blocks go once more through
 * `Anthropic.decodeResponse` and `toAnswer` for the uncited text.
 *
 * @since 0.2.0
 */
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Answer from "../../answer/Answer.js"
import * as Anthropic from "../../answer/Anthropic.js"
import * as AnthropicSse from "../../answer/AnthropicSse.js"
import type { BoundAnswer, BoundClaim, CitationsPolicy, UncitedText } from "../../answer/Records.js"
import { InvalidAnswer, StreamLimitExceeded } from "../../Errors.js"
import * as Verifier from "../../verify/Verifier.js"
import { blankLines } from "./Ndjson.js"
import type { StreamFailure, StreamLimits, StreamOptions } from "./Events.js"
import type { PendingDelta, StreamReader } from "./Machine.js"
import { blockFailure, TextDeltas } from "./TextDeltas.js"
import { Abort, type Check, type CitationResult, documentAccepted, type Verification } from "./Verification.js"

/** The stream's limits as the accumulator's (the answers' block limit stays the non-streamed route's). */
const sseLimits = (limits: StreamLimits): AnthropicSse.SseLimits => ({
  maxEventChars: limits.maxLineBytes,
  maxTextChars: limits.maxAnswerChars,
  maxBlocks: AnthropicSse.answerSseLimits.maxBlocks,
  maxClaims: limits.maxClaims,
  maxCitations: limits.maxCitations
})

const failureOf = (failure: AnthropicSse.SseFailure): StreamFailure => {
  if (!(failure instanceof AnthropicSse.LimitPassed)) return failure
  switch (failure.limit) {
    case "event-size":
      return new StreamLimitExceeded({ limit: "line-length", max: failure.max, received: failure.received })
    case "blocks":
      return new InvalidAnswer({ issues: [{ path: ["content"], message: `must hold at most ${failure.max} content blocks` }] })
    default:
      return new StreamLimitExceeded({ limit: failure.limit, max: failure.max, received: failure.received })
  }
}

/** Runs the accumulator, turning its failures into the stream's. */
const guarded = <A>(f: () => A): A => {
  try {
    return f()
  } catch (e) {
    if (e instanceof AnthropicSse.SseAbort) throw new Abort(failureOf(e.failure))
    throw e
  }
}

/**
 * Pending citations through `Answers.verify` (drop mode, one claim per citation, under the stream's
 * `answers.citations` policy): the span check of `char_location` / `documentChar`, page ranges and
 * `AnchorUnsupported` for content blocks and chunks, as for a whole response, in one Verifier call
 * per batch; a document-level citation is accepted (`document`) or a `CoarseCitation` (`quote`), one
 * that did not resolve is retracted with its error, exactly as `Answer.make` judges them.
 */
export const checkAnswers = (verifier: Verifier.VerifierShape, citations: CitationsPolicy = "quote"): Effect.Effect<Check> =>
  Effect.map(
    Answer.make({ mode: "drop", uncited: "report", citations }).pipe(Effect.provideService(Verifier.Verifier, verifier)),
    (answers): Check => (batch) => {
      const bound: BoundAnswer = {
        manifest: null,
        claims: batch.map((p, i): BoundClaim => {
          const base = { id: String(i), text: p.note.claim.text }
          switch (p.kind) {
            case "document":
              return { ...base, citations: [], documents: [p.document], unresolved: [] }
            case "unresolved":
              return { ...base, citations: [], documents: [], unresolved: [p.unresolved] }
            default:
              return { ...base, citations: [p.citation] }
          }
        }),
        uncited: []
      }
      return answers.verify(bound).pipe(
        // Drop mode with no uncited text never rejects; a limit cannot be passed by an empty list.
        Effect.catchTags({ AnswerRejected: Effect.die, AnswerLimitExceeded: Effect.die }),
        Effect.map(({ answer }) => {
          const results: Array<CitationResult> = []
          for (const claim of answer.claims) results[claim.index] = Either.right(claim.citations[0].evidence)
          for (const claim of answer.documentLevel ?? []) results[claim.index] = documentAccepted
          for (const claim of answer.removed) results[claim.index] = Either.left(claim.reasons.map((r) => r.error))
          return results
        })
      )
    }
  )

/**
 * The reader of one `anthropic-sse` stream.
 *
 * @since 0.2.0
 */
export const anthropicEvents = (options: StreamOptions, limits: StreamLimits) => (verification: Verification): StreamReader<string> => {
  const deltas = new TextDeltas()

  const textBlockStop = (index: number, block: AnthropicSse.TextBlockData) => {
    deltas.blockStop()
    if (block.citations.length === 0) return
    // The block as a one-block response, through the whole response's mapping (issues re-pathed to the block).
    const mapped = Either.flatMap(
      Anthropic.decodeResponse({ content: [block] }),
      (response) => Anthropic.toAnswer(response, options.manifest, { manifestDigest: options.manifestDigest })
    )
    if (Either.isLeft(mapped)) throw blockFailure(mapped.left, 1, index)
    const claim = mapped.right.claims[0]!
    deltas.openClaim(index, claim.text, block.text, claim.citations.map((citation, citationIndex) => {
      const source = (block.citations[citationIndex] as { readonly document_index: number }).document_index + 1
      return { source, queue: (footnote, state) => verification.add({ note: { footnote, claim: state, citationIndex, source, line: index }, citation }) }
    }))
  }

  const accumulator = new AnthropicSse.Accumulator(sseLimits(limits), { text: deltas.text, textBlockStop })
  let started = false

  return {
    read: (line) => {
      if (!started) {
        started = true
        // The response names no manifest: the caller must, before anything is read.
        const checked = Answer.checkManifest(options.manifest, [options.manifestDigest])
        if (Either.isLeft(checked)) throw new Abort(checked.left)
      }
      const blank = blankLines(line)
      guarded(() => (blank > 0 ? accumulator.blank(blank) : accumulator.line(line)))
    },
    takeDelta: (): PendingDelta | undefined => deltas.take(),
    endInput: () => {
      if (!started) {
        const checked = Answer.checkManifest(options.manifest, [options.manifestDigest])
        if (Either.isLeft(checked)) throw new Abort(checked.left)
      }
      guarded(() => accumulator.end())
    },
    final: (): Either.Either<ReadonlyArray<UncitedText>, StreamFailure> =>
      Either.map(
        Either.flatMap(
          Anthropic.decodeResponse(guarded(() => accumulator.end())),
          (response) => Anthropic.toAnswer(response, options.manifest, { manifestDigest: options.manifestDigest })
        ),
        (answer) => answer.uncited
      ),
    claims: () => deltas.claims,
    citations: () => deltas.footnotes
  }
}
