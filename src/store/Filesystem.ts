/**
 * The embedded capture store: one run directory on the local filesystem.
 * Records are written crash-safely and exclusively (a temporary file, fsync,
 * then a hard link under the final name) and read strictly, through the shared
 * decoder. The public names are re-exported by `store/CaptureStore.ts`.
 *
 * @since 0.3.0
 */
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import { randomUUID } from "node:crypto"
import * as fs from "node:fs"
import * as fsp from "node:fs/promises"
import * as path from "node:path"
import { type CaptureRecord, captureFormat, sha256Of, type Sha256Hex, type SourceUrl } from "../Domain.js"
import {
  CaptureExists,
  type CaptureReadError,
  type CaptureWriteError,
  CaptureWriteFailed,
  InvalidRunDirectory,
  MissingCapture
} from "../Errors.js"
import * as Arrivals from "../internal/Arrivals.js"
import { checkBody, checkWrittenBody, corrupt, decodeRecordBytes } from "../internal/recordDecode.js"
import {
  errorCode,
  errorText,
  nodeReadIo,
  PendingRead,
  readRegularFile,
  type SafeReadFailure,
  startRead,
  startRest,
  syncReadLimit
} from "../internal/safeRead.js"
import * as ReadAhead from "../internal/readAhead.js"
import { withReadNow } from "../internal/readNow.js"
import { type WriteNow, withWriteNow } from "../internal/writeNow.js"
import { listSources } from "./FilesystemList.js"
import {
  attestationFileName,
  bodyFileName,
  defaultMaxBodyBytes,
  defaultMaxRecordBytes,
  encodeRecordChunks,
  encodeSmallRecordBytes,
  maxAttestationBytes,
  partialPrefix,
  type RecordWithBody,
  recordFileName
} from "./Format.js"

/**
 * The buffer every store's small records are read into (up to 64 KiB), decoded before the next read:
 * reads are synchronous and one at a time, and a buffer made per record was garbage to collect.
 */
const readScratch = Buffer.allocUnsafe(64 * 1024)

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

/** Bytes gathered before one write(2): few system calls, one small buffer reused for the whole record. */
const stagingBytes = 1024 * 1024

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
  signal: { readonly aborted: boolean }
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

/** A record's bytes: one exact buffer for a text of one piece (most records), else staged pieces. */
const recordBuffers = (record: CaptureRecord): Iterable<Uint8Array> => {
  const small = encodeSmallRecordBytes(record)
  return small === undefined ? staged(encodeRecordChunks(record)) : [small]
}

export interface FileSystemOptions {
  /** The run directory; it must exist. */
  readonly directory: string
  /** Largest record file `read` accepts, in bytes (default 400 MiB). */
  readonly maxRecordBytes?: number
  /** Largest body file `read` and `readBody` accept, in bytes (default 64 MiB, the largest capture budget). */
  readonly maxBodyBytes?: number
  /**
   * A verification without a capture cache that reads 32 or more records may have a helper thread
   * read the small ones ahead (default true); it only reads bytes, and the outcome is the same either
   * way (internal/readAhead.ts; costs and limits: docs/threat-model.md).
   */
  readonly readAhead?: boolean
  readonly io?: FileIo
}

/** Reading: records strictly, a v2 record only with its body, bodies checked against their digests. */
const recordReader = (
  directory: string,
  recordPath: (source: SourceUrl) => string,
  maxRecordBytes: number,
  maxBodyBytes: number,
  readAheadOn: boolean
) => {
  const readBodyFile = (sha256: string) => readRegularFile(path.join(directory, bodyFileName(sha256)), maxBodyBytes)

  /** A v2 record's body must be stored beside it and be the body it describes. */
  const withBody = (source: SourceUrl, record: CaptureRecord): Effect.Effect<RecordWithBody, CaptureReadError> =>
    record.format === captureFormat ? Effect.succeed({ record, body: undefined }) : readBodyFile(record.body.sha256).pipe(
      Effect.mapError((failure) =>
        corrupt(
          source,
          failure.reason === "missing" ? "body-missing" : failure.reason,
          `the body file ${bodyFileName(record.body.sha256)}: ${failure.detail}`
        )
      ),
      Effect.flatMap((body) => Either.map(checkBody(source, record, body), (checked) => ({ record: checked, body })))
    )

  const recordFailure = (source: SourceUrl, failure: SafeReadFailure): CaptureReadError =>
    failure.reason === "missing"
      ? new MissingCapture({ source })
      : corrupt(source, failure.reason, `the record file: ${failure.detail}`)

  /**
   * The record stored under `source`'s name, decoded strictly: a small record (most) is opened,
   * read, closed and decoded now, with no effect of its own (a verification of a thousand small
   * captures spent more on effect steps than on reading them); a larger one is opened and its read
   * started now (`startRest`: it ends and closes whether or not the effect is run), and the effect
   * waits for its bytes, then decodes them.
   */
  const recordNow = (
    source: SourceUrl,
    ahead?: ReadAhead.Take<SourceUrl>
  ): Either.Either<CaptureRecord, CaptureReadError> | Effect.Effect<CaptureRecord, CaptureReadError> => {
    // With a batch read ahead (only the caller that started it passes it), its bytes first.
    const started = ahead?.(source, readScratch) ?? startRead(recordPath(source), maxRecordBytes, nodeReadIo, readScratch)
    if (started instanceof PendingRead) {
      return startRest(nodeReadIo, started).pipe(
        Effect.mapError((failure) => recordFailure(source, failure)),
        Effect.flatMap((bytes) => decodeRecordBytes(source, source, bytes))
      )
    }
    return "reason" in started
      ? Either.left(recordFailure(source, started))
      : decodeRecordBytes(source, source, started)
  }

  const readWithBody = (source: SourceUrl): Effect.Effect<RecordWithBody, CaptureReadError> =>
    Effect.suspend(() => Effect.flatMap(recordNow(source), (record) => withBody(source, record)))

  const bodyChecked = (source: SourceUrl, record: CaptureRecord): Effect.Effect<CaptureRecord, CaptureReadError> =>
    Effect.map(withBody(source, record), (read) => read.record)

  // A small v1 record (most) is read and decoded in this one step: it has no body to read.
  const readNow = (
    source: SourceUrl,
    ahead?: ReadAhead.Take<SourceUrl>
  ): Either.Either<CaptureRecord, CaptureReadError> | Effect.Effect<CaptureRecord, CaptureReadError> => {
    const now = recordNow(source, ahead)
    if (!Either.isEither(now)) return Effect.flatMap(now, (record) => bodyChecked(source, record))
    return Either.isLeft(now) || now.right.format === captureFormat ? now : bodyChecked(source, now.right)
  }
  // The Verifier's load step reads through `readNow` when it is this very `read` (internal/readNow.ts).
  // Records read ahead for the caller that asks (verify/Load.ts), which alone reads through the batch.
  const readAheadFor = (sources: ReadonlyArray<SourceUrl>) => {
    const batch = readAheadOn ? ReadAhead.forRecords(sources, recordPath, Math.min(maxRecordBytes, syncReadLimit)) : undefined
    return batch === undefined ? undefined : { readNow: (source: SourceUrl) => readNow(source, batch.take), end: batch.end }
  }
  const read = withReadNow(
    (source: SourceUrl): Effect.Effect<CaptureRecord, CaptureReadError> => Effect.suspend(() => readNow(source)),
    (source) => readNow(source),
    readAheadFor
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

  return { read, readWithBody, readBody }
}

/**
 * One file, written crash-safely (writeRecordFile) under a new temporary name, as a promise that never
 * rejects: the outcome, or the typed failure. Setting `signal.aborted` stops it at the next step.
 */
const writeFileNow = (io: FileIo, directory: string) =>
(
  source: string,
  finalPath: string,
  buffers: Iterable<Uint8Array>,
  signal: { readonly aborted: boolean }
): Promise<"written" | "exists" | CaptureWriteFailed> =>
  writeRecordFile(io, path.join(directory, `${partialPrefix}${randomUUID()}`), finalPath, buffers, signal).catch(
    (error) => new CaptureWriteFailed({ source, detail: errorText(error) })
  )

/** One file, written crash-safely (writeFileNow); interruption stops it at the next buffer. */
const fileWriter = (writeNow: ReturnType<typeof writeFileNow>) =>
(
  source: string,
  finalPath: string,
  buffers: Iterable<Uint8Array>
): Effect.Effect<"written" | "exists", CaptureWriteFailed> =>
  Effect.async<"written" | "exists", CaptureWriteFailed>((resume) => {
    // A plain flag, read between steps: an AbortController per file cost more than it does.
    const signal = { aborted: false }
    const done = writeNow(source, finalPath, buffers, signal).then((outcome) =>
      resume(typeof outcome === "string" ? Effect.succeed(outcome) : Effect.fail(outcome))
    )
    // Interruption stops the write at the next chunk and waits for the temporary file to be removed.
    return Effect.promise(() => {
      signal.aborted = true
      return done
    })
  })

type WriteFile = ReturnType<typeof fileWriter>

/**
 * Writing a record: its body first (a record never names a body that is not stored), then the record.
 * A v1 record can also be written as a plain promise (`internal/writeNow.ts`): the same steps.
 */
const recordWriter = (directory: string, writeFile: WriteFile, writeNow: ReturnType<typeof writeFileNow>) => {
  const writeRecord = (record: CaptureRecord): Effect.Effect<void, CaptureWriteError> =>
    writeFile(record.source, path.join(directory, recordFileName(record.source)), recordBuffers(record))
      .pipe(
        Effect.flatMap((outcome) =>
          outcome === "written" ? Effect.void : Effect.fail(new CaptureExists({ source: record.source }))
        )
      )

  const writeRecordNow: WriteNow = (record, signal) => {
    const source = record.source
    return writeNow(source, path.join(directory, recordFileName(source)), recordBuffers(record), signal).then((outcome) =>
      outcome === "written" ? undefined : outcome === "exists" ? new CaptureExists({ source }) : outcome
    )
  }

  return withWriteNow((record: CaptureRecord, body?: Uint8Array): Effect.Effect<void, CaptureWriteError> => {
    if (record.format === captureFormat) return writeRecord(record)
    const checked = checkWrittenBody(record, body)
    if (Either.isLeft(checked)) return Effect.fail(checked.left)
    // A body already stored under its digest (another source sent the same bytes) is kept; read
    // checks it against the digest anyway.
    return writeFile(record.source, path.join(directory, bodyFileName(record.body.sha256)), [checked.right]).pipe(
      Effect.zipRight(writeRecord(record))
    )
  }, writeRecordNow)
}

/** Record file paths kept per store (a SHA-256 of the source each): at most this many, then started afresh. */
const maxKeptPaths = 4096

/** A source's record file, its name (a SHA-256 of the source) computed once per store for the last `maxKeptPaths` sources. */
const recordPaths = (directory: string) => {
  const paths = new Map<SourceUrl, string>()
  return (source: SourceUrl): string => {
    let file = paths.get(source)
    if (file === undefined) {
      if (paths.size >= maxKeptPaths) paths.clear()
      file = path.join(directory, recordFileName(source))
      paths.set(source, file)
    }
    return file
  }
}

/**
 * The record file as `lstat` sees it (read refuses links, so a link has nothing to stamp), as
 * `stamp` for one source and `stamps` for all a verification cites (one effect, not one per
 * capture). Every call is a fresh `lstat`, except in a verification thread: there a request may
 * use a stamp the thread took after that request arrived (internal/Arrivals.ts), so that requests
 * queued together share one `lstat` per capture.
 */
const recordStamps = (pathOf: (source: SourceUrl) => string) => {
  const stampNow = (source: SourceUrl): string | undefined => {
    try {
      const stats = fs.lstatSync(pathOf(source), { bigint: true, throwIfNoEntry: false })
      if (stats === undefined || !stats.isFile()) return undefined
      return `${stats.dev}:${stats.ino}:${stats.size}:${stats.mtimeNs}:${stats.ctimeNs}:${stats.mode}:${stats.nlink}`
    } catch {
      return undefined
    }
  }
  const shared = Arrivals.sharing<SourceUrl, string>(maxKeptPaths)
  const stampsNow = (sources: Iterable<SourceUrl>): ReadonlyMap<SourceUrl, string> => {
    const found = new Map<SourceUrl, string>()
    for (const source of sources) {
      const stamp = shared(source, stampNow)
      if (stamp !== undefined) found.set(source, stamp)
    }
    return found
  }
  return {
    stamp: (source: SourceUrl): Effect.Effect<string | undefined> => Effect.sync(() => stampNow(source)),
    stamps: (sources: Iterable<SourceUrl>): Effect.Effect<ReadonlyMap<SourceUrl, string>> => Effect.sync(() => stampsNow(sources)),
    stampsNow
  }
}

/** Attestations beside their records, written like them: exclusive, read-only, crash-safe. */
const attestationFiles = (directory: string, writeFile: WriteFile) => {
  const writeAttestation = (source: SourceUrl, envelope: string): Effect.Effect<void, CaptureWriteError> => {
    const bytes = Buffer.from(envelope, "utf8")
    if (bytes.byteLength > maxAttestationBytes) {
      return Effect.fail(new CaptureWriteFailed({ source, detail: `the attestation is over ${maxAttestationBytes} bytes` }))
    }
    return writeFile(source, path.join(directory, attestationFileName(source)), [bytes]).pipe(
      Effect.flatMap((outcome) => outcome === "written" ? Effect.void : Effect.fail(new CaptureExists({ source })))
    )
  }

  const readAttestation = (source: SourceUrl): Effect.Effect<string | undefined, CaptureReadError> =>
    readRegularFile(path.join(directory, attestationFileName(source)), maxAttestationBytes).pipe(
      Effect.map((bytes): string | undefined => bytes.toString("utf8")),
      Effect.catchAll((failure) =>
        failure.reason === "missing"
          ? Effect.succeed(undefined)
          : Effect.fail(corrupt(source, failure.reason, `the attestation file: ${failure.detail}`))
      )
    )

  return { writeAttestation, readAttestation }
}

/**
 * A store over one run directory on the local filesystem: the implementation
 * `CaptureStore.makeFileSystem` and `CaptureStore.layerFileSystem` bind to the
 * `CaptureStore` tag (this module does not import the tag, so the contract
 * module can re-export it without an import circle).
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = Effect.fn("CaptureStore.makeFileSystem")(function*(options: FileSystemOptions) {
  const directory = yield* runDirectory(options.directory)
  const maxRecordBytes = options.maxRecordBytes ?? defaultMaxRecordBytes
  const recordPath = recordPaths(directory)
  const { read, readBody, readWithBody } = recordReader(
    directory,
    recordPath,
    maxRecordBytes,
    options.maxBodyBytes ?? defaultMaxBodyBytes,
    options.readAhead ?? true
  )
  const writeNow = writeFileNow(options.io ?? nodeIo, directory)
  const writeFile = fileWriter(writeNow)
  return {
    read,
    write: recordWriter(directory, writeFile, writeNow),
    readBody,
    readWithBody,
    list: (listOptions?: { readonly limit?: number }) => listSources(directory, maxRecordBytes, listOptions),
    identity: `file:${directory}`,
    ...recordStamps(recordPath),
    ...attestationFiles(directory, writeFile)
  }
})

/** The run directory, resolved; it must exist and be a directory. */
export const runDirectory = (directory: string) =>
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

