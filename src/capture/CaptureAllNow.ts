/**
 * `captureAll` for a stage that accepts `text/plain` only, over a store whose `write` has a promise
 * form (`internal/writeNow.ts`: the filesystem store), when nobody listens for events and spans stay
 * in the process: the same captures, as plain callbacks and promises inside ONE asynchronous effect
 * for the whole list, not an effect per source.
 *
 * Why: an effect per source resumed from a socket or a file callback keeps what it carries (the
 * source's text) alive past young-generation collections, so it is promoted and collected only by a
 * full collection; with 200 small sources that doubled the collector's work and was most of what the
 * stage cost above the raw limit (docs/performance.md).
 *
 * The same steps in the same order per source, with the same typed results, as `capture`: the URL
 * policy, the fetch under the one deadline (`startPlainText`: address policy, response checks, the
 * cap, fatal UTF-8), the record, its atomic exclusive write. At most `concurrency` sources at once,
 * started in input order; results in input order. Interruption stops every fetch in flight and waits
 * for every write in flight to stop and remove its temporary file.
 */
import type * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import type { CaptureRecordV1, CaptureRef } from "../Domain.js"
import { type CaptureError, NotApproved } from "../Errors.js"
import type { WriteNow } from "../internal/writeNow.js"
import type { FetchedText } from "./Fetch.js"
import type { Target } from "./UrlPolicy.js"

/** One source's result (`Capture.CaptureResult`, which this module cannot import: Capture.ts imports it). */
interface CaptureResult {
  readonly source: string
  readonly result: Either.Either<CaptureRef, CaptureError>
}

export interface CaptureAllNowSteps {
  readonly checkUrl: (source: string) => Target | NotApproved
  /** Starts one fetch; calls `done` once unless stopped (`Fetch.startPlainText`). */
  readonly fetch: (target: Target, done: (result: FetchedText | CaptureError) => void) => () => void
  /** The record of a fetched source at `now` (what `capture` builds). */
  readonly record: (target: Target, fetched: FetchedText, now: number) => CaptureRecordV1
  readonly writeNow: WriteNow
  readonly concurrency: number
}

export const captureAllNow = (steps: CaptureAllNowSteps, clock: Clock.Clock) =>
(sources: Iterable<string>): Effect.Effect<ReadonlyArray<CaptureResult>> =>
  Effect.async<ReadonlyArray<CaptureResult>>((resume) => {
    const list = Array.from(sources)
    const results = new Array<CaptureResult>(list.length)
    const signal = { aborted: false }
    const fetching = new Set<() => void>()
    const writing = new Set<Promise<unknown>>()
    let next = 0
    let active = 0
    let filling = false

    const settle = (index: number, result: Either.Either<CaptureRef, CaptureError>) => {
      results[index] = { source: list[index]!, result }
      active--
      // A source refused at once settles inside `fill`'s loop, which goes on: no recursion per source.
      if (!filling) fill()
    }

    // A defect (a step that throws) ends the batch as `capture` would end: the work in flight is stopped.
    const die = (defect: unknown) => {
      if (signal.aborted) return
      signal.aborted = true
      for (const stop of fetching) stop()
      // As on interruption: the writes in flight stop at their next step and remove their temporary files first.
      resume(Effect.zipRight(Effect.promise(() => Promise.all(writing)), Effect.die(defect)))
    }

    const write = (index: number, record: CaptureRecordV1, byteLength: number) => {
      const ref: CaptureRef = { source: record.source, sha256: record.sha256, accessedAt: record.accessedAt, byteLength }
      const written = steps.writeNow(record, signal).then((failure) => {
        writing.delete(written)
        if (!signal.aborted) settle(index, failure === undefined ? Either.right(ref) : Either.left(failure))
      })
      writing.add(written)
    }

    const start = (index: number) => {
      const target = steps.checkUrl(list[index]!)
      if (target instanceof NotApproved) return settle(index, Either.left(target))
      let stop: (() => void) | undefined
      let called = false
      stop = steps.fetch(target, (fetched) => {
        called = true
        if (stop !== undefined) fetching.delete(stop)
        if ("_tag" in fetched) return settle(index, Either.left(fetched))
        try {
          write(index, steps.record(target, fetched, clock.unsafeCurrentTimeMillis()), fetched.body.byteLength)
        } catch (defect) {
          die(defect)
        }
      })
      if (!called) fetching.add(stop)
    }

    function fill(): void {
      if (signal.aborted) return
      filling = true
      try {
        while (active < steps.concurrency && next < list.length) {
          active++
          start(next++)
        }
      } catch (defect) {
        return die(defect)
      } finally {
        filling = false
      }
      if (active === 0 && next === list.length) {
        signal.aborted = true
        resume(Effect.succeed(results))
      }
    }

    fill()
    return Effect.promise(() => {
      if (!signal.aborted) {
        signal.aborted = true
        for (const stop of fetching) stop()
      }
      return Promise.all(writing)
    })
  })
