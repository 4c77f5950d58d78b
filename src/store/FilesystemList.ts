/**
 * The filesystem store's `list`: the sources of a run directory's records. A record file is named by
 * the SHA-256 of its source, so the name alone does not give the source: each record's opening bytes
 * do (the canonical serialisation starts `{"format":…,"source":"…"`), accepted only when the source
 * read there hashes to the file's name. A record that is not in that form (written by hand, say) is
 * read whole and decoded strictly for its source. Either way `read(source)` afterwards checks the
 * whole record, as for verification.
 *
 * @since 0.3.0
 */
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as fs from "node:fs"
import * as fsp from "node:fs/promises"
import * as path from "node:path"
import { SourceUrl } from "../Domain.js"
import { CaptureListTooLarge, type CaptureListError, InvalidRunDirectory, MissingCapture } from "../Errors.js"
import { corrupt, decodeRecordBytes } from "../internal/recordDecode.js"
import { errorText, readRegularFile } from "../internal/safeRead.js"
import { listLimit, recordFileName, recordNamePattern } from "./Format.js"
import * as Schema from "effect/Schema"

/** The opening bytes read for a record's source: room for the format and a long URL. */
const prefixBytes = 64 * 1024

// The canonical opening of a record: the format, then the source as a JSON string.
const canonicalOpening = /^\{"format":"citegate\.capture\/[0-9]+","source":("(?:[^"\\\u0000-\u001f]|\\.)*")/

const isSourceUrl = Schema.is(SourceUrl)

/** The source the canonical opening names, if it is there, a URL, and hashes to the file name. */
const openingSource = (file: string, name: string): Promise<SourceUrl | undefined> =>
  fsp.open(file, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW | fs.constants.O_NONBLOCK).then(async (handle) => {
    try {
      const buffer = Buffer.alloc(prefixBytes)
      const { bytesRead } = await handle.read(buffer, 0, prefixBytes, 0)
      const match = canonicalOpening.exec(buffer.subarray(0, bytesRead).toString("utf8"))
      if (match === null) return undefined
      const source: unknown = JSON.parse(match[1]!)
      return isSourceUrl(source) && recordFileName(source) === name ? source : undefined
    } finally {
      await handle.close()
    }
  }).catch(() => undefined)

/** The source of a record file not in canonical form: the whole record, decoded strictly. */
const decodedSource = (file: string, name: string, maxRecordBytes: number) =>
  readRegularFile(file, maxRecordBytes).pipe(
    Effect.mapError((failure) =>
      failure.reason === "missing" ? new MissingCapture({ source: name }) : corrupt(name, failure.reason, failure.detail)
    ),
    Effect.flatMap((bytes) => decodeRecordBytes(name, undefined, bytes)),
    Effect.flatMap((record) =>
      recordFileName(record.source) === name
        ? Either.right(record.source)
        : Either.left(corrupt(name, "source-mismatch", `the record is a capture of ${record.source}, stored under another name`))
    )
  )

/** The record names of the directory: counted all, kept up to `limit` (one directory entry at a time). */
const recordNames = (directory: string, limit: number) =>
  Effect.tryPromise({
    try: async () => {
      const kept: Array<string> = []
      let count = 0
      for await (const entry of await fsp.opendir(directory)) {
        if (!recordNamePattern.test(entry.name)) continue
        count++
        if (count <= limit) kept.push(entry.name)
      }
      return { kept, count }
    },
    catch: (error) => new InvalidRunDirectory({ path: directory, detail: errorText(error) })
  })

/**
 * The sources of every record in `directory`, sorted; at most `limit` (`CaptureListTooLarge` past it,
 * counted before any record is opened).
 */
export const listSources = (
  directory: string,
  maxRecordBytes: number,
  options: { readonly limit?: number } = {}
): Effect.Effect<ReadonlyArray<SourceUrl>, CaptureListError> =>
  Effect.gen(function*() {
    const limit = listLimit(options.limit)
    const { count, kept } = yield* recordNames(directory, limit)
    if (count > limit) return yield* new CaptureListTooLarge({ run: directory, captures: count, limit })
    const sources: Array<SourceUrl> = []
    for (const name of kept) {
      const file = path.join(directory, name)
      const source = yield* Effect.promise(() => openingSource(file, name))
      sources.push(source ?? (yield* decodedSource(file, name, maxRecordBytes)))
    }
    return sources.sort()
  })
