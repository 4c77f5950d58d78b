/**
 * A store's `write` of a v1 record as a plain promise, for the capture stage's batch of small
 * `text/plain` sources (`capture/CaptureAllNow.ts`): the same files, steps and typed outcome as the
 * effect, with no effect to run per record. Kept beside the very `write` function it stands for, not
 * as a field of the store: a store value that wraps `write` (a fault injected, a write counted) has
 * another function there, and so no promise form, and is written through its own `write`.
 *
 * @since 0.5.0
 */
import type * as Effect from "effect/Effect"
import type { CaptureRecord, CaptureRecordV1 } from "../Domain.js"
import type { CaptureWriteError } from "../Errors.js"

/**
 * Writes `record` (a v1 record: no body beside it); settles with `undefined` once it is stored, or with
 * the typed failure `write` fails with; never rejects. Once `signal.aborted` is set the write stops at
 * its next step and removes its temporary file before settling (what interrupting `write` does).
 */
export type WriteNow = (record: CaptureRecordV1, signal: { readonly aborted: boolean }) => Promise<CaptureWriteError | undefined>

type Write = (record: CaptureRecord, body?: Uint8Array) => Effect.Effect<void, CaptureWriteError>

const forms = new WeakMap<object, WriteNow>()

/** `write`, remembered with `now`, its promise form (which must write the same files with the same outcome). */
export const withWriteNow = <F extends Write>(write: F, now: WriteNow): F => {
  forms.set(write, now)
  return write
}

/** The promise form of exactly this `write` function, if it has one. */
export const writeNowOf = (write: Write): WriteNow | undefined => forms.get(write)
