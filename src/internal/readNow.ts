/**
 * A store's `read` as it can run at once: the record (or why not) as an `Either` when the store has
 * it without waiting (the filesystem store: a small v1 record), else the effect that finishes the
 * read, to be run at once (it may hold an open file). Kept beside the very `read` function it
 * stands for, not as a field of the store: a store value that wraps `read` (a fault injected, a
 * read counted) has another function there, and so no synchronous form, and is read through its
 * own `read`.
 *
 * @since 0.5.0
 */
import type * as Effect from "effect/Effect"
import type * as Either from "effect/Either"
import type { CaptureRecord, SourceUrl } from "../Domain.js"
import type { CaptureReadError } from "../Errors.js"

export type ReadNow = (
  source: SourceUrl
) => Either.Either<CaptureRecord, CaptureReadError> | Effect.Effect<CaptureRecord, CaptureReadError>

const forms = new WeakMap<object, ReadNow>()

/** `read`, remembered with `now`, its synchronous form (which must give the same outcome for every source). */
export const withReadNow = <F extends (source: SourceUrl) => Effect.Effect<CaptureRecord, CaptureReadError>>(read: F, now: ReadNow): F => {
  forms.set(read, now)
  return read
}

/** The synchronous form of exactly this `read` function, if it has one. */
export const readNowOf = (read: (source: SourceUrl) => Effect.Effect<CaptureRecord, CaptureReadError>): ReadNow | undefined =>
  forms.get(read)
