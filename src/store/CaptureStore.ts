/**
 * Where capture records live during one run. The service interface has no
 * paths in it: the filesystem layer here is the embedded default, and other
 * backends can provide the same Tag. The Verifier reads captures only through
 * this service, and only with `read`.
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import { createHash, randomUUID } from "node:crypto"
import * as fs from "node:fs"
import * as fsp from "node:fs/promises"
import * as path from "node:path"
import { type CaptureRecord, captureFormat, type CaptureRecordV2, sha256Of, type Sha256Hex, type SourceUrl } from "../Domain.js"
import {
  CaptureExists,
  type CaptureReadError,
  type CaptureWriteError,
  CaptureWriteFailed,
  type CorruptReason,
  InvalidRunDirectory,
  MissingCapture
} from "../Errors.js"
import { checkBody, checkWrittenBody, corrupt, decodeRecordBytes } from "../internal/recordDecode.js"
import { errorCode, errorText, readRegularFile } from "../internal/safeRead.js"

/**
 * @since 0.1.0
 * @category models
 */
export interface CaptureStoreShape {
  /**
   * Persist a record atomically and exclusively: either the complete record
   * appears under its final name, or nothing does. An existing record of the
   * same source is never replaced (`CaptureExists`). A v2 record needs its
   * body, the one it describes (length and SHA-256 checked here, else
   * `CaptureWriteFailed` and nothing stored): the body is stored first
   * (content-addressed, read-only, exclusive; a body already stored under the
   * same digest is kept), then the record, so a record never names a body that
   * is not there.
   */
  readonly write: (record: CaptureRecord, body?: Uint8Array) => Effect.Effect<void, CaptureWriteError>
  /**
   * Read the record of exactly this source. Never writes, renames, chmods or
   * migrates anything. A v2 record is returned only when its body is stored
   * and hashes to `body.sha256` (`CorruptCapture` `body-missing` /
   * `body-mismatch` otherwise).
   */
  readonly read: (source: SourceUrl) => Effect.Effect<CaptureRecord, CaptureReadError>
  /**
   * The stored body with this digest (audits, `doctor`), checked against it.
   * `MissingCapture` / `CorruptCapture` name the body as `body <sha256>`.
   */
  readonly readBody: (sha256: Sha256Hex) => Effect.Effect<Uint8Array, CaptureReadError>
}

/**
 * @since 0.1.0
 * @category tags
 */
export class CaptureStore extends Context.Tag("citegate/CaptureStore")<CaptureStore, CaptureStoreShape>() {}

/** The shared strict decoder's parts, for stores kept elsewhere (src/internal/recordDecode.ts). */
export { checkBody, checkRecord, decodeRecord } from "../internal/recordDecode.js"

/** The file name of a source's record: the SHA-256 hex of the exact source URL string. */
export const recordFileName = (source: string): string =>
  `${createHash("sha256").update(source, "utf8").digest("hex")}.json`

/** The file name of a stored body: its SHA-256 hex and `.body`. */
export const bodyFileName = (sha256: string): string => `${sha256}.body`

/** The fields of a v2 record before its text, in their fixed serialisation order. */
const v2Head = (record: CaptureRecordV2) => ({
  format: record.format,
  source: record.source,
  sha256: record.sha256,
  accessedAt: record.accessedAt,
  extraction: record.extraction,
  body: { sha256: record.body.sha256, byteLength: record.body.byteLength, contentType: record.body.contentType },
  ...(record.pages === undefined ? {} : { pages: record.pages.map((p) => ({ number: p.number, start: p.start, end: p.end })) }),
  ...(record.headings === undefined ? {} : {
    headings: record.headings.map((h) => ({ level: h.level, text: h.text, path: h.path, start: h.start, end: h.end }))
  }),
  ...(record.bodyMap === undefined ? {} : { bodyMap: record.bodyMap.map(([t, b, n]) => [t, b, n]) }),
  ...(record.hidden === undefined ? {} : { hidden: record.hidden.map(([start, end, kind]) => [start, end, kind]) })
})

/** The fields of a record before its text, in their fixed serialisation order. */
const recordHead = (record: CaptureRecord): string =>
  JSON.stringify(
    record.format === captureFormat
      ? {
        format: record.format,
        source: record.source,
        sha256: record.sha256,
        accessedAt: record.accessedAt,
        contentType: record.contentType,
        byteLength: record.byteLength
      }
      : v2Head(record)
  ).slice(0, -1) + ',"text":"'

const recordTail = "\"}\n"

/**
 * Code units of text escaped at once while writing a record: at most 96 KiB of
 * JSON per piece, small enough for the young generation (a larger string goes
 * to V8's large-object space, which only a full collection frees, and a 64 MiB
 * body then leaves hundreds of MiB of dead pieces behind).
 */
export const encodeChunkCodeUnits = 16 * 1024

/** Bytes gathered before one write(2): few system calls, one small buffer reused for the whole record. */
const stagingBytes = 1024 * 1024

/**
 * The canonical serialisation of a record in pieces (fixed key order, one
 * trailing newline). The pieces joined are byte-for-byte `JSON.stringify` of
 * the record: the text is escaped a slice at a time, and a slice never ends
 * between the two halves of a surrogate pair (which `JSON.stringify` would
 * escape as two lone surrogates). No piece holds more than the escape of
 * `chunkCodeUnits` code units, so writing a record never builds its whole JSON
 * (up to 6 times the text: every control character but `\b\f\n\r\t`
 * becomes a six-character `\u00XX` escape).
 */
export function* encodeRecordChunks(
  record: CaptureRecord,
  chunkCodeUnits: number = encodeChunkCodeUnits
): Generator<string, void, undefined> {
  const text = record.text
  const size = Math.max(2, chunkCodeUnits)
  let pending = recordHead(record)
  let from = 0
  while (text.length - from > size) {
    let to = from + size
    const last = text.charCodeAt(to - 1)
    if (last >= 0xd800 && last <= 0xdbff) to--
    yield pending + JSON.stringify(text.slice(from, to)).slice(1, -1)
    pending = ""
    from = to
  }
  yield pending + JSON.stringify(text.slice(from)).slice(1, -1) + recordTail
}

/** The canonical serialisation of a record as one string (small records and tests; `write` streams it). */
export const encodeRecord = (record: CaptureRecord): string => Array.from(encodeRecordChunks(record)).join("")

/**
 * The filesystem calls the store's `write` makes, one per step, so that a test
 * can inject a fault (or stop) between any two of them. The default uses plain
 * file descriptors and callbacks, which cost far less per record than FileHandles.
 */
export interface FileIo {
  /** Create `file` exclusively (failing if the name exists, a symlink included) for writing, with `mode`. */
  readonly create: (file: string, mode: number) => Promise<number>
  /** Write all of `bytes` at the descriptor's current position (`bytes` may be reused once this settles). */
  readonly write: (fd: number, bytes: Uint8Array) => Promise<void>
  readonly fsync: (fd: number) => Promise<void>
  readonly close: (fd: number) => Promise<void>
  readonly link: (existing: string, name: string) => Promise<void>
  readonly unlink: (file: string) => Promise<void>
}

const createFlags = fs.constants.O_WRONLY | fs.constants.O_CREAT | fs.constants.O_EXCL | fs.constants.O_NOFOLLOW

const settle = <A>(resolve: (a: A) => void, reject: (e: unknown) => void) => (error: Error | null, value: A) =>
  error === null ? resolve(value) : reject(error)

const writeAll = (fd: number, bytes: Uint8Array) =>
  new Promise<void>((resolve, reject) => {
    const from = (offset: number): void => {
      if (offset >= bytes.byteLength) return resolve()
      fs.write(fd, bytes, offset, bytes.byteLength - offset, null, (error, written) => {
        if (error !== null) return reject(error)
        from(offset + written)
      })
    }
    from(0)
  })

export const nodeIo: FileIo = {
  create: (file, mode) => new Promise((resolve, reject) => fs.open(file, createFlags, mode, settle(resolve, reject))),
  write: writeAll,
  fsync: (fd) => new Promise((resolve, reject) => fs.fsync(fd, (error) => settle(resolve, reject)(error, undefined))),
  close: (fd) => new Promise((resolve, reject) => fs.close(fd, (error) => settle(resolve, reject)(error, undefined))),
  link: fsp.link,
  unlink: fsp.unlink
}

/** Temporary files of interrupted writes start with this; no record name does, so reads never see them. */
export const partialPrefix = ".partial-"

/** The whole name of citegate's temporary files: the prefix and a random UUID (`randomUUID`, lowercase). */
const leftoverNamePattern = /^\.partial-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/

/**
 * Whether an entry is citegate's own leftover: its exact name pattern, a regular file, and created
 * read-only (mode 0444 less the umask: no write bit). A user's `.partial-thesis-draft.docx`, or a
 * writable file under a UUID name, is not one, and `sweep` leaves it alone.
 */
const isLeftover = (name: string, stats: fs.Stats) =>
  leftoverNamePattern.test(name) && stats.isFile() && (stats.mode & 0o222) === 0

/** A record's file name: 64 lowercase hex digits and `.json`. */
const recordNamePattern = /^[0-9a-f]{64}\.json$/

/** A body's file name: 64 lowercase hex digits and `.body`. */
const bodyNamePattern = /^[0-9a-f]{64}\.body$/

/** The write was stopped between two chunks (the writing fiber was interrupted). */
class WriteAborted extends Error {}

/**
 * Writes `chunks` into a new temporary file and links it under `finalPath`.
 *
 * Every crash point leaves a safe state (the steps, in order):
 * 1. create `.partial-<uuid>` exclusively, read-only;  2. write the chunks;
 * 3. fsync;  4. close;  5. link to the final name;  6. unlink the temporary name.
 * Before 5 the final name does not exist: there is no record, only a leftover.
 * 5 is atomic and exclusive (link fails if anything, a symlink included, holds
 * the name) and comes after the fsync, so the final name only ever names the
 * complete, durable bytes. Between 5 and 6 the record is complete and has a
 * second link, the leftover temporary name; reading accepts a hard-linked
 * record, so it verifies. Leftovers only have names starting `.partial-`,
 * which no read ever opens; `inspect` reports them and `sweep` removes them.
 *
 * rename(2) would be one step fewer, but it replaces whatever holds the final
 * name (a record, or a planted symlink), and Node has no RENAME_NOREPLACE; a
 * check before the rename races with a concurrent writer of the same source.
 */
const writeRecordFile = async (
  io: FileIo,
  tempPath: string,
  finalPath: string,
  buffers: Iterable<Uint8Array>,
  signal: AbortSignal
): Promise<"written" | "exists"> => {
  const fd = await io.create(tempPath, 0o444)
  try {
    let open = true
    try {
      for (const bytes of buffers) {
        if (signal.aborted) throw new WriteAborted("interrupted")
        await io.write(fd, bytes)
      }
      await io.fsync(fd)
      open = false
      await io.close(fd)
    } finally {
      if (open) await io.close(fd).catch(() => undefined)
    }
    if (signal.aborted) throw new WriteAborted("interrupted")
    try {
      await io.link(tempPath, finalPath)
    } catch (error) {
      if (errorCode(error) === "EEXIST") return "exists"
      throw error
    }
    return "written"
  } finally {
    await io.unlink(tempPath).catch(() => undefined)
  }
}

/**
 * UTF-8 bytes of `pieces`, gathered into one reused staging buffer and handed
 * out a buffer-full at a time; each slice is valid until the next is asked
 * for. A record of one piece (most records) is encoded directly, without the
 * staging buffer.
 */
function* staged(pieces: Iterable<string>): Generator<Uint8Array, void, undefined> {
  const iterator = pieces[Symbol.iterator]()
  let current = iterator.next()
  let staging: Buffer | undefined
  let used = 0
  while (current.done !== true) {
    const piece = current.value
    current = iterator.next()
    if (staging === undefined && current.done === true) return yield Buffer.from(piece, "utf8")
    staging ??= Buffer.allocUnsafe(stagingBytes)
    const length = Buffer.byteLength(piece, "utf8")
    if (used + length > staging.length && used > 0) {
      yield staging.subarray(0, used)
      used = 0
    }
    if (length > staging.length) yield Buffer.from(piece, "utf8")
    else used += staging.write(piece, used, "utf8")
  }
  if (used > 0) yield staging!.subarray(0, used)
}

export interface FileSystemOptions {
  /** The run directory; it must exist. */
  readonly directory: string
  /** Largest record file `read` accepts, in bytes (default 400 MiB). */
  readonly maxRecordBytes?: number
  /** Largest body file `read` and `readBody` accept, in bytes (default 64 MiB, the largest capture budget). */
  readonly maxBodyBytes?: number
  readonly io?: FileIo
}

// A 64 MiB body (the largest capture budget) escapes to at most 6x its size in JSON.
export const defaultMaxRecordBytes = 400 * 1024 * 1024
export const defaultMaxBodyBytes = 64 * 1024 * 1024

/**
 * A store over one run directory on the local filesystem.
 *
 * @since 0.1.0
 * @category constructors
 */
export const makeFileSystem = Effect.fn("CaptureStore.makeFileSystem")(function*(options: FileSystemOptions) {
  const io = options.io ?? nodeIo
  const directory = yield* runDirectory(options.directory)
  const maxRecordBytes = options.maxRecordBytes ?? defaultMaxRecordBytes

  const maxBodyBytes = options.maxBodyBytes ?? defaultMaxBodyBytes

  const readBodyFile = (sha256: string) =>
    readRegularFile(path.join(directory, bodyFileName(sha256)), maxBodyBytes)

  /** A v2 record's body must be stored beside it and be the body it describes. */
  const withBody = (source: SourceUrl, record: CaptureRecord): Effect.Effect<CaptureRecord, CaptureReadError> =>
    record.format === captureFormat ? Effect.succeed(record) : readBodyFile(record.body.sha256).pipe(
      Effect.mapError((failure) =>
        corrupt(
          source,
          failure.reason === "missing" ? "body-missing" : failure.reason,
          `the body file ${bodyFileName(record.body.sha256)}: ${failure.detail}`
        )
      ),
      Effect.flatMap((body) => checkBody(source, record, body))
    )

  const read = (source: SourceUrl): Effect.Effect<CaptureRecord, CaptureReadError> =>
    readRegularFile(path.join(directory, recordFileName(source)), maxRecordBytes).pipe(
      Effect.mapError((failure) =>
        failure.reason === "missing"
          ? new MissingCapture({ source })
          : corrupt(source, failure.reason, `the record file: ${failure.detail}`)
      ),
      Effect.flatMap((bytes) => decodeRecordBytes(source, source, bytes)),
      Effect.flatMap((record) => withBody(source, record))
    )

  const readBody = (sha256: Sha256Hex): Effect.Effect<Uint8Array, CaptureReadError> => {
    const name = `body ${sha256}`
    return readBodyFile(sha256).pipe(
      Effect.mapError((failure) =>
        failure.reason === "missing"
          ? new MissingCapture({ source: name })
          : corrupt(name, failure.reason, `the body file: ${failure.detail}`)
      ),
      Effect.flatMap((body) => {
        const actual = sha256Of(body)
        return actual === sha256
          ? Effect.succeed(body)
          : Effect.fail(corrupt(name, "body-mismatch", `the stored body hashes to ${actual}`))
      })
    )
  }

  /** One file, written crash-safely (writeRecordFile); interruption stops it at the next buffer. */
  const writeFile = (
    source: string,
    finalPath: string,
    buffers: Iterable<Uint8Array>
  ): Effect.Effect<"written" | "exists", CaptureWriteFailed> =>
    Effect.async<"written" | "exists", CaptureWriteFailed>((resume) => {
      const tempPath = path.join(directory, `${partialPrefix}${randomUUID()}`)
      const controller = new AbortController()
      const done = writeRecordFile(io, tempPath, finalPath, buffers, controller.signal).then(
        (outcome) => resume(Effect.succeed(outcome)),
        (error) => resume(Effect.fail(new CaptureWriteFailed({ source, detail: errorText(error) })))
      )
      // Interruption stops the write at the next chunk and waits for the temporary file to be removed.
      return Effect.promise(() => {
        controller.abort()
        return done
      })
    })

  const writeRecord = (record: CaptureRecord): Effect.Effect<void, CaptureWriteError> =>
    writeFile(record.source, path.join(directory, recordFileName(record.source)), staged(encodeRecordChunks(record)))
      .pipe(
        Effect.flatMap((outcome) =>
          outcome === "written" ? Effect.void : Effect.fail(new CaptureExists({ source: record.source }))
        )
      )

  const write = (record: CaptureRecord, body?: Uint8Array): Effect.Effect<void, CaptureWriteError> => {
    if (record.format === captureFormat) return writeRecord(record)
    const checked = checkWrittenBody(record, body)
    if (Either.isLeft(checked)) return Effect.fail(checked.left)
    // Body first: a record never names a body that is not stored. A body already stored under its
    // digest (another source sent the same bytes) is kept; read checks it against the digest anyway.
    return writeFile(record.source, path.join(directory, bodyFileName(record.body.sha256)), [checked.right]).pipe(
      Effect.zipRight(writeRecord(record))
    )
  }

  return CaptureStore.of({ read, write, readBody })
})

const runDirectory = (directory: string) =>
  Effect.gen(function*() {
    const resolved = path.resolve(directory)
    const stats = yield* Effect.tryPromise({
      try: () => fsp.stat(resolved),
      catch: (error) => new InvalidRunDirectory({ path: resolved, detail: errorText(error) })
    })
    if (!stats.isDirectory()) {
      return yield* new InvalidRunDirectory({ path: resolved, detail: "not a directory" })
    }
    return resolved
  })

/**
 * The filesystem store as a layer.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerFileSystem = (options: FileSystemOptions): Layer.Layer<CaptureStore, InvalidRunDirectory> =>
  Layer.effect(CaptureStore, makeFileSystem(options))

// ---------------------------------------------------------------------------
// Inspecting a run directory (`run-pipeline doctor`)
// ---------------------------------------------------------------------------

/**
 * The temporary file of a write that did not finish (the process died).
 *
 * @since 0.1.0
 * @category models
 */
export interface Leftover {
  readonly name: string
  readonly bytes: number
  /**
   * The record file this is a second link of: the write got as far as linking
   * the complete record and died before removing its temporary name. `null`:
   * the write died earlier and no record was made from it.
   */
  readonly linkedTo: string | null
}

/**
 * A record file that does not verify. Never removed: it is evidence, and only
 * an operator decides what to do with it.
 *
 * @since 0.1.0
 * @category models
 */
export interface RecordProblem {
  readonly name: string
  readonly reason: CorruptReason | "legacy" | "name-mismatch" | "digest-mismatch"
  readonly detail: string
}

/**
 * A stored body (`<sha256>.body`, v2 records). Never removed by `sweep`: it is
 * what was fetched.
 *
 * @since 0.2.0
 * @category models
 */
export interface BodyEntry {
  readonly name: string
  readonly bytes: number
  /** Whether some record that verifies names it; `false` after a write that stored the body and died before the record. */
  readonly referenced: boolean
  /** `null` when the body hashes to its name; else why not. */
  readonly problem: string | null
}

/**
 * @since 0.1.0
 * @category models
 */
export interface RunInspection {
  readonly directory: string
  /** Record files that verify: strict v1 records, stored under their source's name, text matching the digest. */
  readonly records: number
  readonly leftovers: ReadonlyArray<Leftover>
  readonly problems: ReadonlyArray<RecordProblem>
  /** Stored bodies of v2 records, each rehashed against its name. */
  readonly bodies: ReadonlyArray<BodyEntry>
  /** Entries citegate did not write (left alone). */
  readonly others: ReadonlyArray<string>
}

/**
 * @since 0.1.0
 * @category models
 */
export interface SweepResult extends RunInspection {
  readonly removed: ReadonlyArray<string>
  readonly failed: ReadonlyArray<{ readonly name: string; readonly detail: string }>
}

/**
 * Checks every entry of a run directory, read-only: each record file is read
 * strictly and rehashed, exactly as verification reads it; temporary files of
 * interrupted writes are listed as leftovers. Nothing is changed.
 *
 * @since 0.1.0
 * @category inspection
 */
export const inspect = Effect.fn("CaptureStore.inspect")(function*(options: {
  readonly directory: string
  readonly maxRecordBytes?: number
}) {
  const directory = yield* runDirectory(options.directory)
  const maxRecordBytes = options.maxRecordBytes ?? defaultMaxRecordBytes
  const names = yield* Effect.tryPromise({
    try: () => fsp.readdir(directory),
    catch: (error) => new InvalidRunDirectory({ path: directory, detail: errorText(error) })
  })
  names.sort()
  const recordInodes = new Map<string, string>()
  const partials: Array<{ readonly name: string; readonly stats: fs.Stats }> = []
  const others: Array<string> = []
  const problems: Array<RecordProblem> = []
  const bodyNames: Array<{ readonly name: string; readonly stats: fs.Stats }> = []
  const referencedBodies = new Set<string>()
  let records = 0
  for (const name of names) {
    const full = path.join(directory, name)
    const stats = yield* Effect.promise(() => fsp.lstat(full).catch(() => undefined))
    if (stats === undefined) continue // removed since the listing
    if (isLeftover(name, stats)) {
      partials.push({ name, stats })
      continue
    }
    if (bodyNamePattern.test(name)) {
      bodyNames.push({ name, stats })
      continue
    }
    if (!recordNamePattern.test(name)) {
      others.push(name)
      continue
    }
    if (stats.isFile()) recordInodes.set(`${stats.dev}:${stats.ino}`, name)
    const problem = yield* readRecord(full, name, maxRecordBytes).pipe(
      Effect.flatMap((record) => {
        if (record.format === captureFormat) return Effect.void
        referencedBodies.add(bodyFileName(record.body.sha256))
        return readRegularFile(path.join(directory, bodyFileName(record.body.sha256)), defaultMaxBodyBytes).pipe(
          Effect.mapError((failure): RecordProblem => ({
            name,
            reason: failure.reason === "missing" ? "body-missing" : failure.reason,
            detail: `the body file ${bodyFileName(record.body.sha256)}: ${failure.detail}`
          })),
          Effect.flatMap((body) =>
            Either.match(checkBody(name, record, body), {
              onLeft: (error): Effect.Effect<void, RecordProblem> =>
                Effect.fail({ name, reason: error.reason, detail: error.detail }),
              onRight: () => Effect.void
            })
          )
        )
      }),
      Effect.as(undefined),
      Effect.merge
    )
    if (problem === undefined) records++
    else problems.push(problem)
  }
  const bodies: Array<BodyEntry> = []
  for (const { name, stats } of bodyNames) {
    const problem = yield* readRegularFile(path.join(directory, name), defaultMaxBodyBytes).pipe(
      Effect.map((bytes) => {
        const actual = sha256Of(bytes)
        return actual === name.slice(0, 64) ? null : `the body hashes to ${actual}`
      }),
      Effect.catchAll((failure) => Effect.succeed(`${failure.reason}: ${failure.detail}`))
    )
    bodies.push({ name, bytes: stats.size, referenced: referencedBodies.has(name), problem })
  }
  const leftovers = partials.map(({ name, stats }): Leftover => ({
    name,
    bytes: stats.size,
    linkedTo: recordInodes.get(`${stats.dev}:${stats.ino}`) ?? null
  }))
  const inspection: RunInspection = { directory, records, leftovers, problems, bodies, others }
  return inspection
})

const readRecord = (file: string, name: string, maxRecordBytes: number): Effect.Effect<CaptureRecord, RecordProblem> =>
  readRegularFile(file, maxRecordBytes).pipe(
    Effect.mapError((failure): RecordProblem => ({
      name,
      reason: failure.reason === "missing" ? "unreadable" : failure.reason,
      detail: failure.detail
    })),
    Effect.flatMap((bytes) =>
      Either.match(decodeRecordBytes(name, undefined, bytes), {
        onLeft: (error): Effect.Effect<CaptureRecord, RecordProblem> =>
          Effect.fail({
            name,
            reason: error._tag === "LegacyCapture" ? "legacy" : error.reason,
            detail: error.detail
          }),
        onRight: (record): Effect.Effect<CaptureRecord, RecordProblem> => {
          if (recordFileName(record.source) !== name) {
            return Effect.fail({
              name,
              reason: "name-mismatch",
              detail: `a capture of ${record.source}, stored under another source's name`
            })
          }
          const actual = sha256Of(record.text)
          return actual === record.sha256 ? Effect.succeed(record) : Effect.fail({
            name,
            reason: "digest-mismatch",
            detail: `the text hashes to ${actual}, the record says ${record.sha256}`
          })
        }
      })
    )
  )

/**
 * Removes the leftovers that `inspect` finds, and nothing else: never a record
 * (not even one that does not verify) and never an entry citegate did not
 * write (a leftover has citegate's exact temporary name and read-only mode).
 * A directory that holds no record or body but other entries is not a run:
 * `InvalidRunDirectory`, and nothing is removed. Removing a leftover that is a second link of a record removes only
 * that name; the record stays. Run it while no capture writes into the directory
 * (a write in progress would lose its temporary file and fail, leaving no record).
 *
 * @since 0.1.0
 * @category inspection
 */
export const sweep = Effect.fn("CaptureStore.sweep")(function*(options: {
  readonly directory: string
  readonly maxRecordBytes?: number
}) {
  const inspection = yield* inspect(options)
  // Only in a run directory: one holding something citegate wrote besides leftovers, or nothing else at all
  // (a new run whose first write died). A directory of other files is not swept.
  const written = inspection.records + inspection.problems.length + inspection.bodies.length
  if (written === 0 && inspection.others.length > 0) {
    return yield* new InvalidRunDirectory({
      path: inspection.directory,
      detail: `not a run directory: no capture record or body, and ${inspection.others.length} entries citegate did not write; nothing was removed`
    })
  }
  const removed: Array<string> = []
  const failed: Array<{ readonly name: string; readonly detail: string }> = []
  for (const leftover of inspection.leftovers) {
    const error = yield* Effect.promise(() =>
      fsp.unlink(path.join(inspection.directory, leftover.name)).then(() => undefined, (e: unknown) => e)
    )
    if (error === undefined || errorCode(error) === "ENOENT") removed.push(leftover.name)
    else failed.push({ name: leftover.name, detail: errorText(error) })
  }
  const result: SweepResult = { ...inspection, removed, failed }
  return result
})
