/**
 * The machine of one stream, whatever its input format: input elements go to
 * the format's reader (which streams text and queues citations), the text
 * read from each element goes out as one `delta`, the citations completed by
 * an input chunk are verified in one batch, and the end is decided once: the
 * whole answer once more through the batch path (so a stream never grounds
 * what `verify-answer` would reject), the uncited-sentence rule, the mode, and
 * exactly one `done`. A failure (a malformed input, a limit, the deadline)
 * becomes an `error` event, then `done` with state `rejected`.
 *
 * @since 0.1.0
 */
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Stream from "effect/Stream"
import type { UncitedText } from "../../answer/Records.js"
import { boundedFindings } from "../../answer/Sentences.js"
import { AnswerRejected, StreamDeadline } from "../../Errors.js"
import type { StreamEvent, StreamFailure, StreamLimits, StreamOptions } from "./Events.js"
import { Abort, type Check, type ClaimState, Verification } from "./Verification.js"

/** Streamed text not yet sent as a `delta`, with its markers. */
export interface PendingDelta {
  readonly text: string
  readonly footnotes: Extract<StreamEvent, { readonly type: "delta" }>["footnotes"]
}

/**
 * What an input format brings to the machine. `read` and `endInput` throw an
 * `Abort` at the first issue; citations go to the `Verification` it was made with.
 *
 * @since 0.1.0
 */
export interface StreamReader<I> {
  /** One element of the input. */
  readonly read: (item: I) => void
  /** The text read since the last call, with its markers (undefined when there is none). */
  readonly takeDelta: () => PendingDelta | undefined
  /** The input ended: whatever it still holds is read, and it must be complete. */
  readonly endInput: () => void
  /** The whole answer through the batch path, once the input has ended: its uncited text, or why it fails. */
  readonly final: () => Either.Either<ReadonlyArray<UncitedText>, StreamFailure>
  readonly claims: () => Iterable<ClaimState>
  readonly citations: () => number
  /** Whether the summary counts document-level citations (formats that have them). */
  readonly documentLevel?: boolean
}

class Machine<I> {
  private nextId = 1
  private finished = false
  /** Events made before a failure in the same input chunk: sent before the error. */
  private carry: Array<StreamEvent> = []
  private readonly verification: Verification
  private readonly reader: StreamReader<I>

  constructor(
    private readonly options: StreamOptions,
    check: Check,
    reader: (verification: Verification) => StreamReader<I>
  ) {
    this.verification = new Verification(check, () => this.id())
    this.reader = reader(this.verification)
  }

  private id(): number {
    return this.nextId++
  }

  private flushDelta(): StreamEvent | undefined {
    const delta = this.reader.takeDelta()
    return delta === undefined ? undefined : { id: this.id(), type: "delta", text: delta.text, footnotes: delta.footnotes }
  }

  private summary() {
    return this.verification.summary(this.reader.claims(), this.reader.citations(), this.reader.documentLevel === true)
  }

  feed(items: Chunk.Chunk<I>): Effect.Effect<Array<StreamEvent>, StreamFailure> {
    return Effect.suspend(() => {
      const events: Array<StreamEvent> = []
      try {
        for (const item of items) {
          this.reader.read(item)
          const delta = this.flushDelta()
          if (delta !== undefined) events.push(delta)
        }
      } catch (e) {
        if (!(e instanceof Abort)) throw e
        this.carry = events
        return Effect.fail(e.error)
      }
      return Effect.map(this.verification.run(), (verified) => [...events, ...verified])
    })
  }

  end(): Effect.Effect<Array<StreamEvent>, StreamFailure> {
    const self = this
    return Effect.gen(function*() {
      const events: Array<StreamEvent> = []
      try {
        self.reader.endInput()
      } catch (e) {
        if (e instanceof Abort) return yield* Effect.fail(e.error)
        throw e
      }
      const delta = self.flushDelta()
      if (delta !== undefined) events.push(delta)
      events.push(...yield* self.verification.run())
      const final = self.reader.final()
      if (Either.isLeft(final)) return yield* Effect.fail(final.left)
      const uncited = yield* boundedFindings(final.right, self.options.needsCitation)
      const rejections = self.verification.rejections
      const rejectCitations = self.options.mode === "reject" && rejections.length > 0
      const rejectUncited = self.options.uncited === "reject" && uncited.length > 0
      if (rejectCitations || rejectUncited) {
        return yield* Effect.fail(new AnswerRejected({ citations: rejections, uncited: rejectUncited ? uncited : [] }))
      }
      const summary = self.summary()
      self.finished = true
      events.push({
        id: self.id(),
        type: "done",
        state: summary.claimsGrounded > 0 ? "grounded" : "no_evidence",
        summary,
        uncited
      })
      return events
    })
  }

  /** The stream ended early: its typed error, then the one `done`. */
  fail(error: StreamFailure): Array<StreamEvent> {
    if (this.finished) return []
    this.finished = true
    const events: Array<StreamEvent> = this.carry
    this.carry = []
    const delta = this.flushDelta()
    if (delta !== undefined) events.push(delta)
    events.push({ id: this.id(), type: "error", error })
    events.push({ id: this.id(), type: "done", state: "rejected", summary: this.summary(), uncited: [] })
    return events
  }
}

/**
 * The events of one stream: never fails (an input failure, a limit or the deadline becomes an
 * `error` event) and ends with exactly one `done`.
 *
 * @since 0.1.0
 */
export const run = <I, E extends StreamFailure>(
  input: Stream.Stream<I, E>,
  options: StreamOptions,
  limits: StreamLimits,
  check: Check,
  reader: (verification: Verification) => StreamReader<I>
): Stream.Stream<StreamEvent> =>
  Stream.suspend(() => {
    const machine = new Machine(options, check, reader)
    const deadline = Effect.sleep(limits.deadlineMs).pipe(
      Effect.zipRight(Effect.fail(new StreamDeadline({ timeoutMs: limits.deadlineMs })))
    )
    return input.pipe(
      Stream.mapChunksEffect((chunk) => Effect.map(machine.feed(chunk), Chunk.unsafeFromArray)),
      Stream.concat(Stream.fromIterableEffect(Effect.suspend(() => machine.end()))),
      Stream.interruptWhen(deadline),
      Stream.catchAll((error: StreamFailure) => Stream.fromIterable(machine.fail(error)))
    )
  })
