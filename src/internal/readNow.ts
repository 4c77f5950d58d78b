/**
 * A store's `read` as it can run at once: the record (or why not) as an `Either` when the store has
 * it without waiting (the filesystem store: a small v1 record), else the effect that finishes the
 * read. A file it had to open is already being read when the effect is handed back, and is read to
 * its end and closed whether or not the effect is run, so a caller may ask for the next record
 * before it runs this one's effect (verify/Load.ts reads one ahead). Kept beside the very `read`
 * function it stands for, not as a field of the store: a store value that wraps `read` (a fault
 * injected, a read counted) has another function there, and so no synchronous form, and is read
 * through its own `read`.
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

/**
 * Starts reading the records of `sources` ahead, for a caller about to read them all in that order
 * (internal/readAhead.ts): `readNow`, the synchronous form that reads through that batch (for this
 * caller only: every other read of the store reads on its own), and `end`, which the caller must
 * call once it is done. `undefined`: nothing is read ahead.
 */
export type ReadAheadFor = (
  sources: ReadonlyArray<SourceUrl>
) => { readonly readNow: ReadNow; readonly end: () => void } | undefined

const forms = new WeakMap<object, { readonly now: ReadNow; readonly ahead: ReadAheadFor | undefined }>()

/**
 * `read`, remembered with `now`, its synchronous form (which must give the same outcome for every
 * source), and `ahead`, when the store can read records ahead of `now`.
 */
export const withReadNow = <F extends (source: SourceUrl) => Effect.Effect<CaptureRecord, CaptureReadError>>(
  read: F,
  now: ReadNow,
  ahead?: ReadAheadFor
): F => {
  forms.set(read, { now, ahead })
  return read
}

/** The synchronous form of exactly this `read` function, if it has one. */
export const readNowOf = (read: (source: SourceUrl) => Effect.Effect<CaptureRecord, CaptureReadError>): ReadNow | undefined =>
  forms.get(read)?.now

/** How exactly this `read` function's store reads records ahead, if it can. */
export const readAheadOf = (
  read: (source: SourceUrl) => Effect.Effect<CaptureRecord, CaptureReadError>
): ReadAheadFor | undefined => forms.get(read)?.ahead
