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
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import { randomUUID } from "node:crypto"
import { CaptureStore, type CaptureStoreShape } from "./CaptureStore.js"
import { encodeRecord, listLimit, maxAttestationBytes, type RecordWithBody } from "./Format.js"
import { type CaptureRecord, captureFormat, captureFormatV2, sha256Of, type Sha256Hex, type SourceUrl } from "../Domain.js"
import {
  CaptureExists,
  CaptureListTooLarge,
  type CaptureReadError,
  type CaptureWriteError,
  CaptureWriteFailed,
  CorruptCapture,
  MissingCapture
} from "../Errors.js"
import { checkBody, checkWrittenBody, decodeRecordText } from "../internal/recordDecode.js"

/**
 * @since 0.1.0
 * @category models
 */
export interface MemoryOptions {
  /** Records the store starts with, written through the same exclusive `write` (a repeated source fails). */
  readonly records?: Iterable<CaptureRecord>
}

/** The shared strict read path (the same checks, in the same order, as a record file on disk), then the body. */
const decodeStored = (
  source: SourceUrl,
  text: string,
  bodies: ReadonlyMap<string, Uint8Array>
): Either.Either<RecordWithBody, CaptureReadError> => {
  const checked = decodeRecordText(source, source, text)
  if (Either.isLeft(checked)) return Either.left(checked.left)
  if (checked.right.format === captureFormat) return Either.right({ record: checked.right, body: undefined })
  const record = checked.right
  const body = bodies.get(record.body.sha256)
  if (body === undefined) {
    return Either.left(new CorruptCapture({ source, reason: "body-missing", detail: `no body ${record.body.sha256} is stored` }))
  }
  return Either.map(checkBody(source, record, body), (record) => ({ record, body }))
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
  // Bodies of v2 records by digest: copies, so the caller's buffer can change without changing the evidence.
  const bodies = new Map<string, Uint8Array>()

  const write = (record: CaptureRecord, body?: Uint8Array): Effect.Effect<void, CaptureWriteError> =>
    Effect.suspend((): Effect.Effect<void, CaptureWriteError> => {
      if (stored.has(record.source)) return Effect.fail(new CaptureExists({ source: record.source }))
      if (record.format === captureFormatV2) {
        const checked = checkWrittenBody(record, body)
        if (Either.isLeft(checked)) return Effect.fail(checked.left)
        if (!bodies.has(record.body.sha256)) bodies.set(record.body.sha256, Uint8Array.prototype.slice.call(checked.right))
      }
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

  /** The stored body itself (not a copy): only for `read`, which does not hand it out. */
  const readStored = (source: SourceUrl): Effect.Effect<RecordWithBody, CaptureReadError> =>
    Effect.suspend((): Effect.Effect<RecordWithBody, CaptureReadError> => {
      const text = stored.get(source)
      return text === undefined ? Effect.fail(new MissingCapture({ source })) : decodeStored(source, text, bodies)
    })

  const read = (source: SourceUrl): Effect.Effect<CaptureRecord, CaptureReadError> =>
    Effect.map(readStored(source), (read) => read.record)

  // A copy of the body, as `readBody` gives: the caller cannot change the evidence through it.
  const readWithBody = (source: SourceUrl): Effect.Effect<RecordWithBody, CaptureReadError> =>
    Effect.map(readStored(source), ({ body, record }) => ({ record, body: body && Uint8Array.prototype.slice.call(body) }))

  const readBody = (sha256: Sha256Hex): Effect.Effect<Uint8Array, CaptureReadError> =>
    Effect.suspend((): Effect.Effect<Uint8Array, CaptureReadError> => {
      const body = bodies.get(sha256)
      if (body === undefined) return Effect.fail(new MissingCapture({ source: `body ${sha256}` }))
      const actual = sha256Of(body)
      return actual === sha256
        ? Effect.succeed(Uint8Array.prototype.slice.call(body))
        : Effect.fail(
          new CorruptCapture({ source: `body ${sha256}`, reason: "body-mismatch", detail: `the stored body hashes to ${actual}` })
        )
    })

  // Attestations by source, kept like records: once, never replaced.
  const attestations = new Map<string, string>()
  const writeAttestation = (source: SourceUrl, envelope: string): Effect.Effect<void, CaptureWriteError> =>
    Effect.suspend((): Effect.Effect<void, CaptureWriteError> => {
      if (attestations.has(source)) return Effect.fail(new CaptureExists({ source }))
      if (Buffer.byteLength(envelope, "utf8") > maxAttestationBytes) {
        return Effect.fail(new CaptureWriteFailed({ source, detail: `the attestation is over ${maxAttestationBytes} bytes` }))
      }
      attestations.set(source, envelope)
      return Effect.void
    })
  const readAttestation = (source: SourceUrl): Effect.Effect<string | undefined> => Effect.sync(() => attestations.get(source))

  const identity = `memory:${randomUUID()}`
  const list = (listOptions?: { readonly limit?: number }): Effect.Effect<ReadonlyArray<SourceUrl>, CaptureListTooLarge> =>
    Effect.suspend(() => {
      const limit = listLimit(listOptions?.limit)
      if (stored.size > limit) return Effect.fail(new CaptureListTooLarge({ run: identity, captures: stored.size, limit }))
      // Only sources `write` accepted are keys (a record's source is a SourceUrl).
      return Effect.succeed(Array.from(stored.keys() as Iterable<SourceUrl>).sort())
    })

  for (const record of options.records ?? []) yield* write(record)
  // One store is one run, and its records are never replaced: a fresh identity, and no stamp.
  return CaptureStore.of({ read, write, readBody, readWithBody, list, identity, writeAttestation, readAttestation }) satisfies CaptureStoreShape
})

/**
 * The in-memory store as a layer: a fresh store each time the layer is built.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (options: MemoryOptions = {}): Layer.Layer<CaptureStore, CaptureWriteError> =>
  Layer.effect(CaptureStore, make(options))
