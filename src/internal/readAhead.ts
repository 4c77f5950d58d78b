/**
 * A helper thread that reads small record files ahead of the
 * main thread, so that a verification of many small captures reads them on
 * both cores. The main thread walks the batch from its first file, the thread
 * from its last; each file is claimed by exactly one of them
 * (`Atomics.compareExchange` on its slot), and they meet in the middle.
 *
 * The thread only ever accepts a file the main thread's `startRead` would
 * accept with the same bytes: opened without following links and without
 * blocking (the same flags), `fstat`ed as a regular file within the size cap,
 * and read whole by its first read. Everything else (a missing file, a link, a
 * FIFO, a file too large, a short read, a file that grew, any error) it
 * declines, and the main thread reads that file itself, through `startRead`,
 * which decides the outcome and its typed failure. The bytes are copied out of
 * the shared buffer before they are decoded, and decoding, the digest and
 * every check of the record stay on the main thread.
 *
 * The thread is started by the second batch large enough to use it (a
 * one-shot CLI never starts it: see `askedBefore`), does not keep the process
 * alive, and ends after `idleMs` without a batch; the next batch starts a new
 * one. It costs about 5 MiB of shared buffers (the 4 MiB arena, 1 MiB of file
 * names, the slots) and a thread's own heap and stack (about 10 MB of RSS).
 * All of this is per JavaScript thread (this module's state): in the CLI and a
 * typical embedding, the process's main thread.
 *
 * At most one batch is out at a time; a caller that gets none reads on its
 * own, as without the thread, and only the caller that started a batch reads
 * through it (the store hands its `take` to that caller alone). The thread
 * stops claiming files when the arena might not hold the next one. A file the
 * thread has not finished within `waitMs` is read by the main thread too (a
 * thread that died mid-read never holds a verification up). A record over
 * the synchronous size (256 KiB) is opened by both: the thread declines it
 * after its `fstat`, and the main thread reads it as any large record.
 *
 * @since 0.6.0
 */
import * as fs from "node:fs"
import { Worker } from "node:worker_threads"

/** A batch of fewer files is read by the main thread alone: the thread's wake-up would not pay. */
export const minFiles = 32

/** Files per batch at most; the rest of a longer list is read by the main thread. */
export const maxFiles = 4096

/** The shared buffer the thread reads into: when it might not hold the next file, the thread stops. */
export const arenaBytes = 4 * 1024 * 1024

/** Bytes of file names per batch at most (a name that does not fit ends the batch there). */
const namesBytes = 1024 * 1024

/**
 * How long the main thread waits for a file the thread is reading before it reads the file itself.
 * The two walk towards each other, so the main thread meets the thread inside a file at most once
 * per batch: the event loop is held up by this at most once per verification.
 */
export const waitMs = 20

/** An idle thread ends after this long without a batch. */
export const idleMs = 30_000

// Slot states.
const free = 0
const byThread = 1
const read = 2
const declined = 3
const byMain = 4

// Control words.
const generation = 0
const count = 1
const busy = 2
const stop = 3
const maxBytesWord = 4
const delayWord = 5
const dieWord = 6
/** The generation word of a thread that has ended (idle): no batch is taken after it. */
const closed = -1

const openFlags = fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW | fs.constants.O_NONBLOCK

/**
 * The thread's code, evaluated in the thread (`eval: true`, as extract/Worker.ts): the same code runs
 * from the sources, from `dist/` and from the bundled CLI. It parses nothing and decides nothing: it
 * only reads bytes the main thread then checks as it checks its own.
 */
const script = `
"use strict"
const { workerData } = require("node:worker_threads")
const fs = require("node:fs")
const { control, slots, names, spans, arena, flags, idleMs } = workerData
const namesText = Buffer.from(names.buffer)
const arenaBytes = Buffer.from(arena.buffer)
let seen = 0
for (;;) {
  if (Atomics.wait(control, ${generation}, seen, idleMs) === "timed-out" &&
    Atomics.compareExchange(control, ${generation}, seen, ${closed}) === seen) break
  seen = Atomics.load(control, ${generation})
  const files = control[${count}]
  const maxBytes = control[${maxBytesWord}]
  const delay = control[${delayWord}]
  const dieAfter = control[${dieWord}]
  let used = 0
  let claimed = 0
  for (let k = files - 1; k >= 0 && Atomics.load(control, ${stop}) === 0; k--) {
    // The arena might not hold the next file: the main thread reads the rest.
    if (arenaBytes.length - used < maxBytes + 1) break
    if (Atomics.compareExchange(slots, k, ${free}, ${byThread}) !== ${free}) continue
    if (dieAfter > 0 && ++claimed >= dieAfter) process.exit(1)
    const name = namesText.utf8Slice(spans[4 * k], spans[4 * k] + spans[4 * k + 1])
    let length = -1
    try {
      const fd = fs.openSync(name, flags)
      try {
        const st = fs.fstatSync(fd)
        if (delay > 0) Atomics.wait(control, ${stop}, 0, delay)
        if (st.isFile() && st.size <= maxBytes) {
          // One spare byte: a file that grew after fstat fills it, and is declined.
          const got = fs.readSync(fd, arenaBytes, used, st.size + 1, 0)
          if (got === st.size) length = got
        }
      } finally {
        fs.closeSync(fd)
      }
    } catch {}
    if (length >= 0) {
      spans[4 * k + 2] = used
      spans[4 * k + 3] = length
      used += length
    }
    Atomics.store(slots, k, length >= 0 ? ${read} : ${declined})
    Atomics.notify(slots, k)
  }
  Atomics.store(control, ${busy}, 0)
}
`

const stateNames = ["free", "thread", "read", "declined", "main"] as const

interface Thread {
  readonly worker: Worker
  readonly control: Int32Array
  readonly slots: Int32Array
  /** Per file: its name's offset and length in `names`, then its bytes' offset and length in `arena`. */
  readonly spans: Int32Array
  readonly names: Buffer
  readonly arena: Buffer
  /** A batch is out (between `start` and its `end`). */
  out: boolean
}

let thread: Thread | undefined
/** Files the thread read and handed over, for tests (that the thread took part). */
let handedOver = 0
/** The thread could not be made here (no worker threads): the main thread reads alone from then on. */
let unavailable = false
/** For tests: a pause in each of the thread's reads, in milliseconds. */
let threadDelayMs = 0
/** For tests: the thread ends itself (a crash) on claiming its n-th file of a batch. */
let threadDieAfter = 0
/**
 * A batch that could use the thread was asked for before: the thread is started by the second such
 * batch of a process, not the first. A one-shot process (the CLI) verifies once, and the thread's
 * start (tens of milliseconds on a second core, and some on the main thread) costs more than it
 * could save on that one verification.
 */
let askedBefore = false
let threadIdleMs = idleMs

const shared = (bytes: number) => new SharedArrayBuffer(bytes)

const startThread = (): Thread | undefined => {
  const control = new Int32Array(shared(8 * 4))
  const slots = new Int32Array(shared(maxFiles * 4))
  const spans = new Int32Array(shared(maxFiles * 4 * 4))
  const names = new Uint8Array(shared(namesBytes))
  const arena = new Uint8Array(shared(arenaBytes))
  let worker: Worker
  try {
    worker = new Worker(script, {
      eval: true,
      workerData: { control, slots, names, spans, arena, flags: openFlags, idleMs: threadIdleMs },
      // It allocates almost nothing of its own: the file names it reads, and fs's own objects.
      resourceLimits: { maxOldGenerationSizeMb: 16, maxYoungGenerationSizeMb: 4 },
      // Its standard streams are the process's (it writes nothing): piped ones would keep an
      // ended CLI alive until the thread's idle end.
      stdout: false,
      stderr: false
    })
  } catch {
    unavailable = true
    return undefined
  }
  worker.unref()
  const made: Thread = {
    worker,
    control,
    slots,
    spans,
    names: Buffer.from(names.buffer),
    arena: Buffer.from(arena.buffer),
    out: false
  }
  const gone = () => {
    if (thread === made) thread = undefined
  }
  worker.once("error", gone).once("exit", gone)
  return made
}

/**
 * The files of one batch, read by whichever thread claims each first. `take` is asked once per file
 * index, by the main thread; `end` once, when the caller is done with the batch (whether or not it
 * took every file).
 */
export interface Batch {
  /**
   * File `index`'s bytes if the thread read them, copied into `into` when they fit (a view of it,
   * valid until its next use) or into a new buffer; `undefined` when the caller is to read the file
   * itself: the thread had not reached it (the caller has claimed it now), declined it, or did not
   * finish it within `waitMs`, or the batch has ended.
   */
  readonly take: (index: number, into: Buffer) => Buffer | undefined
  readonly end: () => void
  /** For tests: who holds file `index`, and what became of it. */
  readonly stateOf: (index: number) => (typeof stateNames)[number] | undefined
}

/**
 * A batch over `files` (full paths), read ahead by the helper thread, or `undefined` when the caller
 * reads alone: too few files, worker threads unavailable, another batch out in the process, or the
 * thread still finishing the last one.
 */
export const start = (files: ReadonlyArray<string>, maxBytes: number): Batch | undefined => {
  if (files.length < minFiles || unavailable) return undefined
  if (thread === undefined) {
    if (!askedBefore) {
      askedBefore = true
      return undefined
    }
    thread = startThread()
    if (thread === undefined) return undefined
  }
  const current = thread
  const { control, names, slots, spans } = current
  if (current.out || Atomics.load(control, busy) !== 0) return undefined
  const seen = Atomics.load(control, generation)
  if (seen === closed) {
    // Ended while idle: the next batch starts another thread.
    thread = undefined
    return start(files, maxBytes)
  }
  let size = 0
  let used = 0
  for (; size < files.length && size < maxFiles; size++) {
    const name = files[size]!
    // A UTF-8 name takes at most three bytes per UTF-16 code unit.
    if (used + name.length * 3 > names.length) break
    const written = names.write(name, used, "utf8")
    spans[4 * size] = used
    spans[4 * size + 1] = written
    used += written
  }
  slots.fill(free, 0, size)
  control[count] = size
  control[maxBytesWord] = maxBytes
  control[delayWord] = threadDelayMs
  control[dieWord] = threadDieAfter
  Atomics.store(control, stop, 0)
  Atomics.store(control, busy, 1)
  if (Atomics.compareExchange(control, generation, seen, seen + 1) !== seen) {
    // The thread ended (idle) just now: this batch is read by the main thread alone.
    Atomics.store(control, busy, 0)
    thread = undefined
    return undefined
  }
  Atomics.notify(control, generation)
  current.out = true
  let ended = false
  const take = (index: number, into: Buffer): Buffer | undefined => {
    // After `end` the arena may hold the next batch's bytes.
    if (ended || index >= size) return undefined
    let state = Atomics.compareExchange(slots, index, free, byMain)
    if (state === free) return undefined
    if (state === byThread) {
      const until = performance.now() + waitMs
      while (state === byThread) {
        const left = until - performance.now()
        if (left <= 0) return undefined
        Atomics.wait(slots, index, byThread, left)
        state = Atomics.load(slots, index)
      }
    }
    if (state !== read) return undefined
    const offset = spans[4 * index + 2]!
    const length = spans[4 * index + 3]!
    const bytes = length <= into.length ? into.subarray(0, length) : Buffer.allocUnsafe(length)
    current.arena.copy(bytes, 0, offset, offset + length)
    handedOver++
    return bytes
  }
  const end = () => {
    if (ended) return
    ended = true
    // The thread stops at its next file; the arena is not reused until it says it has left the batch.
    Atomics.store(control, stop, 1)
    current.out = false
  }
  return { take, end, stateOf: (index) => stateNames[Atomics.load(slots, index)] }
}

/** A record's bytes from a batch by key, as `Batch.take`. */
export type Take<K> = (key: K, into: Buffer) => Buffer | undefined

/**
 * A store's side: a batch over the records of `keys` (in that order), `take` by key, and `end`; or
 * `undefined`, as `start`. The store hands `take` only to the caller that asked for the batch.
 */
export const forRecords = <K>(
  keys: ReadonlyArray<K>,
  pathOf: (key: K) => string,
  maxBytes: number
): { readonly take: Take<K>; readonly end: () => void } | undefined => {
  if (keys.length < minFiles) return undefined
  const batch = start(keys.map(pathOf), maxBytes)
  if (batch === undefined) return undefined
  const index = new Map<K, number>()
  keys.forEach((key, i) => index.set(key, i))
  return {
    take: (key, into) => {
      const i = index.get(key)
      return i === undefined ? undefined : batch.take(i, into)
    },
    end: batch.end
  }
}

/** For tests: how many files the thread has read and handed over in this process. */
export const filesHandedOver = (): number => handedOver

/**
 * For tests: a pause in each of the thread's reads, between its `fstat` and its read (so that the
 * main thread catches it mid-file, or the file changes under it), a crash of the thread on claiming
 * its n-th file of a batch, and the idle time after which a thread started from now on ends. Ends
 * the current thread.
 */
export const configureForTests = async (
  options: { readonly delayMs?: number; readonly idleMs?: number; readonly dieAfter?: number }
): Promise<void> => {
  threadDelayMs = options.delayMs ?? 0
  threadDieAfter = options.dieAfter ?? 0
  threadIdleMs = options.idleMs ?? idleMs
  await stopThread()
}

/** Ends the helper thread now, if there is one (for tests: a thread that dies between batches or within one). */
export const stopThread = async (): Promise<void> => {
  const current = thread
  thread = undefined
  if (current !== undefined) await current.worker.terminate()
}

/** For tests: whether a batch is out (started and not yet ended) in this process. */
export const batchOut = (): boolean => thread?.out === true

/** For tests: whether a helper thread is running now. */
export const threadRunning = (): boolean => thread !== undefined

/** For tests: whether the helper thread is inside a batch (reading, or not yet past its end). */
export const threadBusy = (): boolean => thread !== undefined && Atomics.load(thread.control, busy) !== 0

/** For tests: who holds file `index` of the current batch, and what became of it. */
export const slotState = (index: number): (typeof stateNames)[number] | undefined =>
  thread === undefined ? undefined : stateNames[Atomics.load(thread.slots, index)]
