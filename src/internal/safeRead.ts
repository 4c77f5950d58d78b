import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as FiberId from "effect/FiberId"
import * as fs from "node:fs"

export type SafeReadFailure =
  | { readonly reason: "missing"; readonly detail: string }
  | { readonly reason: "symlink"; readonly detail: string }
  | { readonly reason: "not-a-regular-file"; readonly detail: string }
  | { readonly reason: "too-large"; readonly detail: string }
  | { readonly reason: "unreadable"; readonly detail: string }

export const errorCode = (error: unknown): string =>
  typeof error === "object" && error !== null && "code" in error ? String(error.code) : "unknown"

export const errorText = (error: unknown): string => (error instanceof Error ? error.message : String(error))

const unreadable = (error: unknown): SafeReadFailure => ({ reason: "unreadable", detail: errorText(error) })

const openFlags = fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW | fs.constants.O_NONBLOCK

const openFailure = (error: NodeJS.ErrnoException): SafeReadFailure => {
  const code = errorCode(error)
  if (code === "ENOENT") return { reason: "missing", detail: "no such file" }
  if (code === "ELOOP") return { reason: "symlink", detail: "the file is a symbolic link" }
  return unreadable(error)
}

/** Files up to this size are read with synchronous calls (see `readRegularFile`). */
export const syncReadLimit = 256 * 1024

const checkStats = (st: fs.Stats, maxBytes: number): SafeReadFailure | undefined => {
  if (!st.isFile()) return { reason: "not-a-regular-file", detail: "not a regular file" }
  if (st.size > maxBytes) return { reason: "too-large", detail: `${st.size} bytes exceeds the ${maxBytes} byte limit` }
  return undefined
}

/**
 * The file-system calls `readRegularFile` makes. Production code uses `nodeReadIo`; a test passes
 * a wrapper of it to inject what a local file rarely does on cue: a short read, a file that grows
 * or shrinks between fstat and read, a read that fails.
 */
export interface ReadIo {
  readonly openSync: (file: string, flags: number) => number
  readonly fstatSync: (fd: number) => fs.Stats
  readonly readSync: (fd: number, buffer: Buffer, offset: number, length: number, position: number) => number
  readonly read: (
    fd: number,
    buffer: Buffer,
    offset: number,
    length: number,
    position: number,
    callback: (error: NodeJS.ErrnoException | null, bytesRead: number) => void
  ) => void
  readonly closeSync: (fd: number) => void
  readonly close: (fd: number, callback: () => void) => void
}

export const nodeReadIo: ReadIo = {
  openSync: (file, flags) => fs.openSync(file, flags),
  fstatSync: (fd) => fs.fstatSync(fd),
  readSync: (fd, buffer, offset, length, position) => fs.readSync(fd, buffer, offset, length, position),
  read: (fd, buffer, offset, length, position, callback) => fs.read(fd, buffer, offset, length, position, callback),
  closeSync: (fd) => fs.closeSync(fd),
  close: (fd, callback) => fs.close(fd, () => callback())
}

/**
 * The first read (of the size fstat gave plus one spare byte) returned exactly that size: the file
 * ends there, with no read that returns nothing after it (a fifth file call per small record). A
 * file that grows after fstat fills the spare byte; a file read in short pieces is read on until a
 * read returns nothing, as before, so growth during short reads is still seen.
 */
const wholeAtOnce = (filled: number, bytesRead: number, size: number): boolean => bytesRead === filled && filled === size

const changed: SafeReadFailure = { reason: "unreadable", detail: "the file changed while being read" }

/**
 * Reads a file only if it is a regular file that is not a symlink, within a
 * size cap. A hard-linked file is read like any other: a second name gives no
 * one a way to change the bytes that the first name did not (see
 * docs/threat-model.md), and snapshots (`cp -al`, `rsync --link-dest`) and a
 * write interrupted between link and unlink leave records with several links.
 * Opening never follows a symlink (O_NOFOLLOW) and never blocks on a FIFO
 * (O_NONBLOCK); devices and FIFOs are refused as not regular files. Nothing
 * is written, renamed or chmodded.
 *
 * Open and fstat are synchronous, and so is the read of a small file: on a
 * local file these are microseconds, less than the thread-pool round trips of
 * asynchronous calls, which dominate a run of a thousand small captures.
 * Larger files are read asynchronously so that reads overlap. The descriptor is
 * closed on every path, interruption included.
 */
export const readRegularFile = (
  file: string,
  maxBytes: number,
  io: ReadIo = nodeReadIo
): Effect.Effect<Buffer, SafeReadFailure> =>
  Effect.suspend(() => {
    const started = startRead(file, maxBytes, io)
    return started instanceof PendingRead
      ? finishRead(io, started)
      : "reason" in started
      ? Effect.fail(started)
      : Effect.succeed(started)
  })

/**
 * A file over `syncReadLimit` bytes, open and checked, its bytes still to be read (`finishRead`, or
 * `startRest` to start reading it now).
 */
export class PendingRead {
  constructor(readonly fd: number, readonly buffer: Buffer, readonly size: number) {}
}

/**
 * The synchronous part of `readRegularFile`, run now: a small file's bytes or why it was refused
 * (the descriptor closed), or a larger file open and checked (`PendingRead`). For a caller that
 * does its own work on the bytes in the same step (a store reading thousands of small records), so
 * that a read costs no effect of its own. With `scratch`, a small file is read into it, and the
 * bytes returned are a view of it, valid only until the next read into the same scratch buffer.
 */
export const startRead = (
  file: string,
  maxBytes: number,
  io: ReadIo = nodeReadIo,
  scratch?: Buffer
): Buffer | SafeReadFailure | PendingRead => {
  let fd: number
  try {
    fd = io.openSync(file, openFlags)
  } catch (error) {
    return openFailure(error as NodeJS.ErrnoException)
  }
  let st: fs.Stats
  try {
    st = io.fstatSync(fd)
  } catch (error) {
    io.closeSync(fd)
    return unreadable(error)
  }
  const invalid = checkStats(st, maxBytes)
  if (invalid !== undefined) {
    io.closeSync(fd)
    return invalid
  }
  // One spare byte detects a file that grew after fstat. Reads go on until one returns nothing (a
  // short read is the end on a local disk, but not on every file system: NFS, FUSE), except when the
  // first read returns exactly the size fstat gave (`wholeAtOnce`).
  // The caller's scratch buffer when a small file fits (no buffer made per file); the same reads either way.
  const capacity = st.size + 1
  let buffer: Buffer
  try {
    const fits = st.size <= syncReadLimit && scratch !== undefined && capacity <= scratch.length
    buffer = fits ? scratch : Buffer.allocUnsafe(capacity)
  } catch (error) {
    // No memory for the bytes (a file near the size limit): the descriptor is closed all the same.
    io.closeSync(fd)
    return unreadable(error)
  }
  if (st.size > syncReadLimit) return new PendingRead(fd, buffer, st.size)
  try {
    let filled = 0
    for (;;) {
      const bytesRead = io.readSync(fd, buffer, filled, capacity - filled, filled)
      filled += bytesRead
      if (bytesRead === 0 || filled > st.size || wholeAtOnce(filled, bytesRead, st.size)) break
    }
    return filled === st.size ? buffer.subarray(0, filled) : changed
  } catch (error) {
    return unreadable(error)
  } finally {
    io.closeSync(fd)
  }
}

/** The rest of a `PendingRead`, asynchronously; the descriptor is closed on every path, interruption included. */
export const finishRead = (io: ReadIo, pending: PendingRead): Effect.Effect<Buffer, SafeReadFailure> =>
  Effect.async<Buffer, SafeReadFailure>((resume) => {
    let interrupted = false
    readThenClose(io, pending, () => interrupted, (result) => {
      if (!interrupted) resume(result)
    })
    return Effect.sync(() => {
      interrupted = true
    })
  })

/**
 * The rest of a `PendingRead`, started now rather than when the effect runs: its reads are issued
 * at once, and the descriptor is closed when they end, whether the effect returned is run, run
 * later, interrupted while it waits, or never run. The effect only waits for the outcome. For a
 * caller that opens the next file while this one's bytes are still arriving (verify/Load.ts reads
 * one large record ahead).
 */
export const startRest = (io: ReadIo, pending: PendingRead): Effect.Effect<Buffer, SafeReadFailure> => {
  const outcome = Deferred.unsafeMake<Buffer, SafeReadFailure>(FiberId.none)
  readThenClose(io, pending, () => false, (result) => Deferred.unsafeDone(outcome, result))
  return Deferred.await(outcome)
}

/**
 * Reads a `PendingRead` to its end, closes it, then hands `done` the outcome. `stopped` is asked
 * before each read: once it answers true, no further read is made and the outcome is a failure.
 */
const readThenClose = (
  io: ReadIo,
  { buffer, fd, size }: PendingRead,
  stopped: () => boolean,
  done: (result: Exit.Exit<Buffer, SafeReadFailure>) => void
): void => {
  const finish = (result: Exit.Exit<Buffer, SafeReadFailure>) => io.close(fd, () => done(result))
  const step = (filled: number): void => {
    if (stopped()) return finish(Exit.fail(unreadable("interrupted")))
    io.read(fd, buffer, filled, buffer.length - filled, filled, (readError, bytesRead) => {
      if (readError !== null) return finish(Exit.fail(unreadable(readError)))
      const total = filled + bytesRead
      if (bytesRead !== 0 && total <= size && !wholeAtOnce(total, bytesRead, size)) return step(total)
      finish(total === size ? Exit.succeed(buffer.subarray(0, total)) : Exit.fail(changed))
    })
  }
  step(0)
}
