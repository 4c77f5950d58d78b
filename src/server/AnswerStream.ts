/**
 * Streaming verification of a drafted EVI1 answer, independent of HTTP.
 *
 * Input: the drafting model's output as NDJSON lines `{"type":"delta","text":"…"}`.
 * Output: events with monotonic ids (1, 2, 3, …):
 *
 * - `delta`: body text as it arrives, each citation group `[n]…{cX}` replaced
 *   by placeholder footnote markers `[^k]` (k counts citations in body order;
 *   `footnotes` gives each marker's offset in the whole streamed text);
 * - `citation`: footnote k verified (through the Verifier, the one matching path);
 * - `retraction`: footnote k failed (its typed reasons); `removeSentence` when its
 *   claim has no citation left, with the claim's sentence and its span;
 * - `error`: why the stream ended early (a typed error), always followed by
 * - `done`: exactly one, last: `grounded | no_evidence | rejected` and a summary.
 *
 * Evidence lines are only known in the appendix, so citations verify as the
 * appendix arrives: the evidence lines of one input chunk go to the Verifier in
 * one call (each capture read and rehashed once per call), never the whole
 * answer again. At the end the whole text is parsed once more by `Evi1.Parser`
 * and bound by `Evi1.toAnswer`, so a stream never grounds what `verify-answer`
 * would reject.
 *
 * A stream reads a text as `Evi1.Parser` does (a line that is exactly `EVI1`
 * starts the one appendix; a second is `Evi1ExtraAppendix`, an `END_EVI1` line
 * in the body a malformed line), but fails at the first line that shows an
 * issue, where the parser lists them all.
 *
 * The parts live in `stream/`: `Events` (limits, options, the event model),
 * `Ndjson` (the bounded line reader), `Evi1Reader` (the incremental parser),
 * `Verification` (the batch scheduler), `Machine` (one stream's life, whatever
 * its input format). This module is their public surface and the service.
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Stream from "effect/Stream"
import { limits as answerLimits } from "../answer/Records.js"
import type { StreamLimitExceeded, StreamLineInvalid } from "../Errors.js"
import * as Verifier from "../verify/Verifier.js"
import { defaultLimits, type StreamEvent, type StreamLimits, type StreamOptions } from "./stream/Events.js"
import { anthropicEvents, checkAnswers } from "./stream/AnthropicReader.js"
import { bedrockEvents } from "./stream/BedrockReader.js"
import { evi1Lines } from "./stream/Evi1Reader.js"
import * as Machine from "./stream/Machine.js"
import { checkQuotes } from "./stream/Verification.js"

export {
  CitationEvent,
  decodeEvent,
  defaultLimits,
  DeltaEvent,
  DocumentEvent,
  DoneEvent,
  DoneState,
  encodeEvent,
  ErrorEvent,
  FootnoteMark,
  RetractionEvent,
  StreamEvent,
  StreamFailure,
  type StreamLimits,
  type StreamOptions,
  Summary
} from "./stream/Events.js"
export { blankLines, InputLine, ndjsonLines } from "./stream/Ndjson.js"

// ---------------------------------------------------------------------------
// The service
// ---------------------------------------------------------------------------

/**
 * @since 0.1.0
 * @category models
 */
export interface AnswerStreamShape {
  readonly limits: StreamLimits
  /**
   * The events of one streamed answer. Never fails: an input failure (a
   * malformed line, a limit, the deadline) becomes an `error` event, and
   * every stream ends with exactly one `done`.
   */
  readonly stream: (
    lines: Stream.Stream<string, StreamLineInvalid | StreamLimitExceeded>,
    options: StreamOptions
  ) => Stream.Stream<StreamEvent>
  /**
   * The same events for an Anthropic Messages stream: `lines` are its SSE lines (`ndjsonLines`
   * of the body: LF-split and bounded), read by `AnthropicSse.Accumulator`; each text block with
   * citations becomes a claim when it stops (see `stream/AnthropicReader.ts`). The caller must name
   * the manifest (`manifestDigest`).
   *
   * @since 0.2.0
   */
  readonly streamAnthropicSse: (
    lines: Stream.Stream<string, StreamLineInvalid | StreamLimitExceeded>,
    options: StreamOptions
  ) => Stream.Stream<StreamEvent>
  /**
   * The same events for a Bedrock ConverseStream body: `bytes` are its AWS event stream messages as
   * they arrive (each message at most `maxLineBytes`, `maxInputBytes` in all), read by
   * `BedrockStream.Accumulator`; each text block with citations becomes a claim when it stops (see
   * `stream/BedrockReader.ts`), its document-level citations judged by `options.citations`. The
   * caller must name the manifest (`manifestDigest`).
   *
   * @since 0.2.0
   */
  readonly streamBedrock: (bytes: Stream.Stream<Uint8Array>, options: StreamOptions) => Stream.Stream<StreamEvent>
}

/**
 * @since 0.1.0
 * @category tags
 */
export class AnswerStream extends Context.Tag("citegate/AnswerStream")<AnswerStream, AnswerStreamShape>() {}

/**
 * @since 0.1.0
 * @category constructors
 */
export const make = (limits: Partial<StreamLimits> = {}): Effect.Effect<AnswerStreamShape, never, Verifier.Verifier> =>
  Effect.gen(function*() {
    const verifier = yield* Verifier.Verifier
    const resolved: StreamLimits = {
      ...defaultLimits,
      ...limits,
      maxAnswerChars: Math.min(limits.maxAnswerChars ?? defaultLimits.maxAnswerChars, answerLimits.maxChars),
      maxClaims: Math.min(limits.maxClaims ?? defaultLimits.maxClaims, answerLimits.maxClaims)
    }

    const stream = (
      lines: Stream.Stream<string, StreamLineInvalid | StreamLimitExceeded>,
      options: StreamOptions
    ): Stream.Stream<StreamEvent> => Machine.run(lines, options, resolved, checkQuotes(verifier), evi1Lines(options, resolved))

    // Provider citations through the Answers path, under the stream's `answers.citations` policy.
    const providerChecks = { quote: yield* checkAnswers(verifier, "quote"), document: yield* checkAnswers(verifier, "document") }
    const streamAnthropicSse = (
      lines: Stream.Stream<string, StreamLineInvalid | StreamLimitExceeded>,
      options: StreamOptions
    ): Stream.Stream<StreamEvent> =>
      Machine.run(lines, options, resolved, providerChecks[options.citations ?? "quote"], anthropicEvents(options, resolved))
    const streamBedrock = (bytes: Stream.Stream<Uint8Array>, options: StreamOptions): Stream.Stream<StreamEvent> =>
      Machine.run(bytes, options, resolved, providerChecks[options.citations ?? "quote"], bedrockEvents(options, resolved))

    return AnswerStream.of({ limits: resolved, stream, streamAnthropicSse, streamBedrock })
  })

/**
 * The AnswerStream service over the Verifier (which brings the run's store and policy).
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (limits: Partial<StreamLimits> = {}): Layer.Layer<AnswerStream, never, Verifier.Verifier> =>
  Layer.effect(AnswerStream, make(limits))
