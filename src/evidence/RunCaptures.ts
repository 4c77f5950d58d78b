/**
 * The captures of a run, one at a time, from any store (filesystem, PostgreSQL, memory): the run's
 * sources from the store's bounded `list`, then each capture read through `read` (strictly, a v2
 * record only with its body stored and matching, as for verification), its text hashing to the
 * capture digest, and its body with it (`readWithBody`: read and hashed once, checked against the
 * record) or, from a store without that, through `readBody` (checked against its digest). Read-only.
 *
 * @since 0.3.0
 */
import * as Effect from "effect/Effect"
import { type CaptureRecord, captureFormat, recordBody, sha256Of, type SourceUrl } from "../Domain.js"
import { type CaptureListError, type CaptureReadError, DigestMismatch, ExportTooLarge } from "../Errors.js"
import { type CaptureStoreShape, defaultMaxListedCaptures } from "../store/CaptureStore.js"

/** A capture with the body it describes (for a v1 record, the UTF-8 bytes of its text). */
export interface StoredCapture {
  readonly record: CaptureRecord
  readonly body: Uint8Array
}

export interface RunCapturesOptions {
  /** The run directory (`exportWarc`); a store's export (`exportRun`) takes the store from context. */
  readonly directory: string
  /** Captures one export takes at most (default 10 000), checked on the listing before any is read. */
  readonly maxCaptures?: number
  /** As the filesystem store's options of the same names. */
  readonly maxRecordBytes?: number
  readonly maxBodyBytes?: number
}

export const defaultMaxCaptures = defaultMaxListedCaptures

/** The run's sources, sorted (so an export of the same run is the same file), at most `maxCaptures`. */
export const listSources = (
  store: CaptureStoreShape,
  maxCaptures: number | undefined
): Effect.Effect<ReadonlyArray<SourceUrl>, ExportTooLarge | Exclude<CaptureListError, { readonly _tag: "CaptureListTooLarge" }>> =>
  store.list({ limit: maxCaptures ?? defaultMaxCaptures }).pipe(
    Effect.catchTag("CaptureListTooLarge", (error) => new ExportTooLarge({ captures: error.captures, limit: error.limit }))
  )

/**
 * One capture, checked; memory: the one record and its body. A store with `readWithBody` reads
 * and hashes the body once (checked against the record there); another reads it again through
 * `readBody` (checked against the record's body digest).
 */
export const readCapture = (
  store: CaptureStoreShape,
  source: SourceUrl
): Effect.Effect<StoredCapture, CaptureReadError | DigestMismatch> =>
  Effect.gen(function*() {
    const { body, record } = store.readWithBody === undefined
      ? { record: yield* store.read(source), body: undefined }
      : yield* store.readWithBody(source)
    const textSha256 = sha256Of(record.text)
    if (textSha256 !== record.sha256) {
      return yield* new DigestMismatch({
        source: record.source,
        kind: "stored",
        reported: record.sha256,
        stored: record.sha256,
        computed: textSha256
      })
    }
    if (record.format === captureFormat) return { record, body: Buffer.from(record.text, "utf8") }
    return { record, body: body ?? (yield* store.readBody(recordBody(record).sha256)) }
  })
