/**
 * Where capture records live during one run. The service interface has no
 * paths in it: the filesystem layer here is the embedded default, and other
 * backends can provide the same Tag. The Verifier reads captures only through
 * this service, and only with `read`.
 *
 * @since 0.1.0
 */
import { Context, Effect, Either, Layer } from "effect"
import { createHash, randomUUID } from "node:crypto"
import * as fs from "node:fs"
import * as fsp from "node:fs/promises"
import * as path from "node:path"
import { CaptureRecord, captureFormat, sha256Of, type SourceUrl } from "./Domain.js"
import {
  CaptureExists,
  type CaptureReadError,
  type CaptureWriteError,
  CaptureWriteFailed,
  CorruptCapture,
  type CorruptReason,
  InvalidRunDirectory,
  LegacyCapture,
  MissingCapture
} from "./Errors.js"
import { decodeUnknown } from "./internal/decode.js"
import { errorCode, errorText, readRegularFile } from "./internal/safeRead.js"
import * as StrictJson from "./internal/strictJson.js"

/**
 * @since 0.1.0
 * @category models
 */
export interface CaptureStoreShape {
  /**
   * Persist a record atomically and exclusively: either the complete record
   * appears under its final name, or nothing does. An existing record of the
   * same source is never replaced (`CaptureExists`).
   */
  readonly write: (record: CaptureRecord) => Effect.Effect<void, CaptureWriteError>
  /**
   * Read the record of exactly this source. Never writes, renames, chmods or
   * migrates anything.
   */
  readonly read: (source: SourceUrl) => Effect.Effect<CaptureRecord, CaptureReadError>
}

/**
 * @since 0.1.0
 * @category tags
 */
export class CaptureStore extends Context.Tag("citegate/CaptureStore")<CaptureStore, CaptureStoreShape>() {}

/** The file name of a source's record: the SHA-256 hex of the exact source URL string. */
export const recordFileName = (source: string): string =>
  `${createHash("sha256").update(source, "utf8").digest("hex")}.json`

/** The fields of a record before its text, in their fixed serialisation order. */
const recordHead = (record: CaptureRecord): string =>
  JSON.stringify({
    format: record.format,
    source: record.source,
    sha256: record.sha256,
    accessedAt: record.accessedAt,
    contentType: record.contentType,
    byteLength: record.byteLength
  }).slice(0, -1) + ',"text":"'

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

/** A record's file name: 64 lowercase hex digits and `.json`. */
const recordNamePattern = /^[0-9a-f]{64}\.json$/

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
  pieces: Iterable<string>,
  signal: AbortSignal
): Promise<"written" | "exists"> => {
  const fd = await io.create(tempPath, 0o444)
  try {
    let open = true
    try {
      for (const bytes of staged(pieces)) {
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
  readonly io?: FileIo
}

// A 64 MiB body (the largest capture budget) escapes to at most 6x its size in JSON.
export const defaultMaxRecordBytes = 400 * 1024 * 1024

const utf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true })

const decodeRecord = decodeUnknown(CaptureRecord)

const isPlainObject = (u: unknown): u is Record<string, unknown> =>
  typeof u === "object" && u !== null && !Array.isArray(u)

const corrupt = (source: string, reason: CorruptReason, detail: string) =>
  new CorruptCapture({ source, reason, detail })

/**
 * Everything after the bytes are read: plain code, no Effect per step (a hot
 * path for many small captures). `expected` is the source whose name the file
 * has, when known; errors name `source`.
 */
const decodeFile = (
  source: string,
  expected: string | undefined,
  bytes: Uint8Array
): Either.Either<CaptureRecord, CorruptCapture | LegacyCapture> => {
  let text: string
  try {
    text = utf8.decode(bytes)
  } catch {
    return Either.left(corrupt(source, "invalid-utf8", "the record file is not valid UTF-8"))
  }
  const parsed = StrictJson.parse(text)
  if (parsed._tag === "Left") return Either.left(corrupt(source, "invalid-json", parsed.issue.message))
  const value = parsed.value
  if (isPlainObject(value) && !("format" in value) && ("text" in value || "sha256" in value)) {
    return Either.left(new LegacyCapture({ source, detail: "a record without a format field (pre-v1)" }))
  }
  const decoded = decodeRecord(value)
  if (decoded._tag === "Left") {
    const detail = decoded.left.issues.map((i) => `${i.path.join(".") || "(root)"}: ${i.message}`).join("; ")
    return Either.left(corrupt(source, "not-a-v1-record", `not a ${captureFormat} record: ${detail}`))
  }
  const record = decoded.right
  if (expected !== undefined && record.source !== expected) {
    return Either.left(corrupt(
      source,
      "source-mismatch",
      `the record stored under this source's name is a capture of ${record.source}`
    ))
  }
  const byteLength = Buffer.byteLength(record.text, "utf8")
  if (byteLength !== record.byteLength) {
    return Either.left(corrupt(
      source,
      "byte-length-mismatch",
      `the text is ${byteLength} bytes, the record says ${record.byteLength}`
    ))
  }
  return Either.right(record)
}

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

  const read = (source: SourceUrl): Effect.Effect<CaptureRecord, CaptureReadError> =>
    readRegularFile(path.join(directory, recordFileName(source)), maxRecordBytes).pipe(
      Effect.mapError((failure) =>
        failure.reason === "missing"
          ? new MissingCapture({ source })
          : corrupt(source, failure.reason, `the record file: ${failure.detail}`)
      ),
      Effect.flatMap((bytes) => decodeFile(source, source, bytes))
    )

  const write = (record: CaptureRecord): Effect.Effect<void, CaptureWriteError> =>
    Effect.async<void, CaptureWriteError>((resume) => {
      const finalPath = path.join(directory, recordFileName(record.source))
      const tempPath = path.join(directory, `${partialPrefix}${randomUUID()}`)
      const controller = new AbortController()
      const done = writeRecordFile(io, tempPath, finalPath, encodeRecordChunks(record), controller.signal).then(
        (outcome) =>
          resume(outcome === "written" ? Effect.void : Effect.fail(new CaptureExists({ source: record.source }))),
        (error) => resume(Effect.fail(new CaptureWriteFailed({ source: record.source, detail: errorText(error) })))
      )
      // Interruption stops the write at the next chunk and waits for the temporary file to be removed.
      return Effect.promise(() => {
        controller.abort()
        return done
      })
    })

  return CaptureStore.of({ read, write })
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
 * @since 0.1.0
 * @category models
 */
export interface RunInspection {
  readonly directory: string
  /** Record files that verify: strict v1 records, stored under their source's name, text matching the digest. */
  readonly records: number
  readonly leftovers: ReadonlyArray<Leftover>
  readonly problems: ReadonlyArray<RecordProblem>
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
  let records = 0
  for (const name of names) {
    const full = path.join(directory, name)
    const stats = yield* Effect.promise(() => fsp.lstat(full).catch(() => undefined))
    if (stats === undefined) continue // removed since the listing
    if (name.startsWith(partialPrefix) && stats.isFile()) {
      partials.push({ name, stats })
      continue
    }
    if (!recordNamePattern.test(name)) {
      others.push(name)
      continue
    }
    if (stats.isFile()) recordInodes.set(`${stats.dev}:${stats.ino}`, name)
    const problem = yield* readRecord(full, name, maxRecordBytes).pipe(
      Effect.as(undefined),
      Effect.merge
    )
    if (problem === undefined) records++
    else problems.push(problem)
  }
  const leftovers = partials.map(({ name, stats }): Leftover => ({
    name,
    bytes: stats.size,
    linkedTo: recordInodes.get(`${stats.dev}:${stats.ino}`) ?? null
  }))
  const inspection: RunInspection = { directory, records, leftovers, problems, others }
  return inspection
})

const readRecord = (file: string, name: string, maxRecordBytes: number): Effect.Effect<void, RecordProblem> =>
  readRegularFile(file, maxRecordBytes).pipe(
    Effect.mapError((failure): RecordProblem => ({
      name,
      reason: failure.reason === "missing" ? "unreadable" : failure.reason,
      detail: failure.detail
    })),
    Effect.flatMap((bytes) =>
      Either.match(decodeFile(name, undefined, bytes), {
        onLeft: (error): Effect.Effect<void, RecordProblem> =>
          Effect.fail({
            name,
            reason: error._tag === "LegacyCapture" ? "legacy" : error.reason,
            detail: error.detail
          }),
        onRight: (record): Effect.Effect<void, RecordProblem> => {
          if (recordFileName(record.source) !== name) {
            return Effect.fail({
              name,
              reason: "name-mismatch",
              detail: `a capture of ${record.source}, stored under another source's name`
            })
          }
          const actual = sha256Of(record.text)
          return actual === record.sha256 ? Effect.void : Effect.fail({
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
 * write. Removing a leftover that is a second link of a record removes only
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
