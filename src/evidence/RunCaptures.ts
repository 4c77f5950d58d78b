/**
 * The captures of a run directory, one at a time, each read strictly and checked exactly as the store
 * reads it for verification: the record under its own source's name, a v2 body beside it of the right
 * length and digest, and the text hashing to the record's digest. Read-only.
 *
 * @since 0.3.0
 */
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as fsp from "node:fs/promises"
import * as path from "node:path"
import { type CaptureRecord, captureFormat, recordBody, sha256Of } from "../Domain.js"
import {
  type CaptureReadError,
  DigestMismatch,
  ExportTooLarge,
  InvalidRunDirectory,
  MissingCapture
} from "../Errors.js"
import { checkBody, corrupt, decodeRecordBytes } from "../internal/recordDecode.js"
import { errorText, readRegularFile } from "../internal/safeRead.js"
import { bodyFileName, defaultMaxBodyBytes, defaultMaxRecordBytes, recordFileName } from "../store/CaptureStore.js"

/** A capture with the body it describes (for a v1 record, the UTF-8 bytes of its text). */
export interface StoredCapture {
  readonly record: CaptureRecord
  readonly body: Uint8Array
}

export interface RunCapturesOptions {
  readonly directory: string
  /** Captures one export takes at most (default 10 000), checked on the listing before any is read. */
  readonly maxCaptures?: number
  /** As the filesystem store's options of the same names. */
  readonly maxRecordBytes?: number
  readonly maxBodyBytes?: number
}

export const defaultMaxCaptures = 10_000

const recordNamePattern = /^[0-9a-f]{64}\.json$/

/** The record file names of a run directory, sorted (so an export of the same run is the same file). */
export const recordNames = Effect.fn("RunCaptures.recordNames")(function*(options: RunCapturesOptions) {
  const directory = path.resolve(options.directory)
  const names = yield* Effect.tryPromise({
    try: () => fsp.readdir(directory),
    catch: (error) => new InvalidRunDirectory({ path: directory, detail: errorText(error) })
  })
  const records = names.filter((name) => recordNamePattern.test(name)).sort()
  const limit = options.maxCaptures ?? defaultMaxCaptures
  if (records.length > limit) return yield* new ExportTooLarge({ captures: records.length, limit })
  return records
})

/** One capture by its record file name, checked; memory: the one record and its body. */
export const readCapture = (
  options: RunCapturesOptions,
  name: string
): Effect.Effect<StoredCapture, CaptureReadError | DigestMismatch> =>
  Effect.gen(function*() {
    const directory = path.resolve(options.directory)
    const bytes = yield* readRegularFile(path.join(directory, name), options.maxRecordBytes ?? defaultMaxRecordBytes).pipe(
      Effect.mapError((failure) =>
        failure.reason === "missing" ? new MissingCapture({ source: name }) : corrupt(name, failure.reason, failure.detail)
      )
    )
    const record = yield* decodeRecordBytes(name, undefined, bytes)
    if (recordFileName(record.source) !== name) {
      return yield* corrupt(name, "source-mismatch", `the record is a capture of ${record.source}, stored under another name`)
    }
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
    const ref = recordBody(record)
    const body = yield* readRegularFile(path.join(directory, bodyFileName(ref.sha256)), options.maxBodyBytes ?? defaultMaxBodyBytes).pipe(
      Effect.mapError((failure) =>
        corrupt(
          record.source,
          failure.reason === "missing" ? "body-missing" : failure.reason,
          `the body file ${bodyFileName(ref.sha256)}: ${failure.detail}`
        )
      )
    )
    yield* Either.match(checkBody(record.source, record, body), { onLeft: Effect.fail, onRight: () => Effect.void })
    return { record, body }
  })
