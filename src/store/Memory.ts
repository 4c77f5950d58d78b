/**
 * An in-memory `CaptureStore`: for tests, and for services that keep captures
 * somewhere other than a run directory and load them per request.
 *
 * Same contract as the filesystem store: `write` is exclusive (`CaptureExists`,
 * the first record left untouched), `read` of an unknown source is
 * `MissingCapture`. Records are kept as their canonical serialisation (the
 * bytes the filesystem store would write) and decoded strictly on every read,
 * so a record behaves as it would on disk: a value that is not a valid v1
 * record of its source comes back as `CorruptCapture`, never as a record.
 * Nothing is shared between two stores; one store is one run.
 *
 * @since 0.1.0
 */
import { Effect, Layer } from "effect"
import { CaptureStore, type CaptureStoreShape, encodeRecord } from "../CaptureStore.js"
import type { CaptureRecord, SourceUrl } from "../Domain.js"
import {
  CaptureExists,
  type CaptureReadError,
  type CaptureWriteError,
  CaptureWriteFailed,
  MissingCapture
} from "../Errors.js"
import { decodeRecordText } from "../internal/recordDecode.js"

/**
 * @since 0.1.0
 * @category models
 */
export interface MemoryOptions {
  /** Records the store starts with, written through the same exclusive `write` (a repeated source fails). */
  readonly records?: Iterable<CaptureRecord>
}

/**
 * A new, empty (or seeded) in-memory store.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = Effect.fn("MemoryStore.make")(function*(options: MemoryOptions = {}) {
  // Keyed by the exact source URL string, like the filesystem store's file names.
  const stored = new Map<string, string>()

  const write = (record: CaptureRecord): Effect.Effect<void, CaptureWriteError> =>
    Effect.suspend((): Effect.Effect<void, CaptureWriteError> => {
      if (stored.has(record.source)) return Effect.fail(new CaptureExists({ source: record.source }))
      let text: string
      try {
        text = encodeRecord(record)
      } catch (error) {
        // A value that cannot be serialised (a BigInt, a cycle) is a failed write, as on disk.
        return Effect.fail(new CaptureWriteFailed({ source: String(record.source), detail: String(error) }))
      }
      // The check and the set run without yielding in between: exclusive under concurrent writers.
      stored.set(record.source, text)
      return Effect.void
    })

  const read = (source: SourceUrl): Effect.Effect<CaptureRecord, CaptureReadError> =>
    Effect.suspend((): Effect.Effect<CaptureRecord, CaptureReadError> => {
      const text = stored.get(source)
      return text === undefined ? Effect.fail(new MissingCapture({ source })) : decodeRecordText(source, source, text)
    })

  for (const record of options.records ?? []) yield* write(record)
  return CaptureStore.of({ read, write }) satisfies CaptureStoreShape
})

/**
 * The in-memory store as a layer: a fresh store each time the layer is built.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (options: MemoryOptions = {}): Layer.Layer<CaptureStore, CaptureWriteError> =>
  Layer.effect(CaptureStore, make(options))
