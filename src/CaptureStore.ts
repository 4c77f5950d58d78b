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
import { CaptureRecord, captureFormat, type SourceUrl } from "./Domain.js"
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

/** The canonical serialisation of a record (fixed key order, one trailing newline). */
export const encodeRecord = (record: CaptureRecord): string =>
  JSON.stringify({
    format: record.format,
    source: record.source,
    sha256: record.sha256,
    accessedAt: record.accessedAt,
    contentType: record.contentType,
    byteLength: record.byteLength,
    text: record.text
  }) + "\n"

/**
 * The filesystem calls the store's `write` makes. Replaceable only to inject
 * faults in tests (a write failing half-way, say); the default uses plain file
 * descriptors and callbacks, which cost far less per record than FileHandles.
 */
export interface FileIo {
  /** Create `file` exclusively (failing if the name exists) with `mode`, write all of `bytes`, fsync, close. */
  readonly createExclusive: (file: string, bytes: Uint8Array, mode: number) => Promise<void>
  readonly link: (existing: string, name: string) => Promise<void>
  readonly unlink: (file: string) => Promise<void>
}

const createExclusive = (file: string, bytes: Uint8Array, mode: number) =>
  new Promise<void>((resolve, reject) => {
    fs.open(file, "wx", mode, (openError, fd) => {
      if (openError !== null) return reject(openError)
      const done = (error: Error | null) => fs.close(fd, (closeError) => {
        const failure = error ?? closeError
        if (failure === null) resolve()
        else reject(failure)
      })
      const writeFrom = (offset: number): void => {
        if (offset >= bytes.byteLength) return fs.fsync(fd, done)
        fs.write(fd, bytes, offset, bytes.byteLength - offset, null, (writeError, written) => {
          if (writeError !== null) return done(writeError)
          writeFrom(offset + written)
        })
      }
      writeFrom(0)
    })
  })

export const nodeIo: FileIo = { createExclusive, link: fsp.link, unlink: fsp.unlink }

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

/**
 * A store over one run directory on the local filesystem.
 *
 * @since 0.1.0
 * @category constructors
 */
export const makeFileSystem = Effect.fn("CaptureStore.makeFileSystem")(function*(options: FileSystemOptions) {
  const io = options.io ?? nodeIo
  const directory = path.resolve(options.directory)
  const maxRecordBytes = options.maxRecordBytes ?? defaultMaxRecordBytes

  const stats = yield* Effect.tryPromise({
    try: () => fsp.stat(directory),
    catch: (error) => new InvalidRunDirectory({ path: directory, detail: errorText(error) })
  })
  if (!stats.isDirectory()) {
    return yield* new InvalidRunDirectory({ path: directory, detail: "not a directory" })
  }

  const corrupt = (source: string, reason: CorruptReason, detail: string) =>
    new CorruptCapture({ source, reason, detail })

  /** Everything after the bytes are read: plain code, no Effect per step (a hot path for many small captures). */
  const decodeFile = (source: SourceUrl, bytes: Uint8Array): Either.Either<CaptureRecord, CaptureReadError> => {
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
    if (record.source !== source) {
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

  const read = (source: SourceUrl): Effect.Effect<CaptureRecord, CaptureReadError> =>
    readRegularFile(path.join(directory, recordFileName(source)), maxRecordBytes).pipe(
      Effect.mapError((failure) =>
        failure.reason === "missing"
          ? new MissingCapture({ source })
          : corrupt(source, failure.reason, `the record file: ${failure.detail}`)
      ),
      Effect.flatMap((bytes) => decodeFile(source, bytes))
    )

  const write = (record: CaptureRecord): Effect.Effect<void, CaptureWriteError> => {
    const finalPath = path.join(directory, recordFileName(record.source))
    const tempPath = path.join(directory, `.partial-${randomUUID()}`)
    const failed = (error: unknown) => new CaptureWriteFailed({ source: record.source, detail: errorText(error) })
    const bytes = Buffer.from(encodeRecord(record), "utf8")
    return Effect.tryPromise({
      // Written read-only from the start (a record is never meant to be edited), and fsynced before it is linked.
      try: () => io.createExclusive(tempPath, bytes, 0o444),
      catch: failed
    }).pipe(
      // link() fails if anything (a symlink included) holds the final name: exclusive and atomic.
      Effect.zipRight(Effect.tryPromise({
        try: () => io.link(tempPath, finalPath),
        catch: (error) =>
          errorCode(error) === "EEXIST" ? new CaptureExists({ source: record.source }) : failed(error)
      })),
      Effect.ensuring(Effect.promise(() => io.unlink(tempPath).catch(() => undefined)))
    )
  }

  return CaptureStore.of({ read, write })
})

/**
 * The filesystem store as a layer.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerFileSystem = (options: FileSystemOptions): Layer.Layer<CaptureStore, InvalidRunDirectory> =>
  Layer.effect(CaptureStore, makeFileSystem(options))
