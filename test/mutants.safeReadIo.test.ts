/**
 * `readRegularFile` with faults injected through its `ReadIo`: reads that return fewer bytes than
 * asked, a file that grows or shrinks between fstat and the read, and calls that fail. A local
 * regular file does none of these on cue, so the real calls are wrapped; the files are real.
 * Each case records the calls made, so the cut between the synchronous and the asynchronous read
 * and the closing of the descriptor are checked too.
 */
import { assert, describe, it } from "@effect/vitest"
import { Deferred, Effect, Either, Fiber } from "effect"
import * as fs from "node:fs"
import * as fsp from "node:fs/promises"
import * as path from "node:path"
import { nodeReadIo, PendingRead, readRegularFile, type ReadIo, startRead, syncReadLimit } from "../src/internal/safeRead.js"
import { tempDirectory } from "./support.js"

type Call = "open" | "fstat" | "readSync" | "read" | "closeSync" | "close"

interface Faults {
  /** Largest number of bytes one read returns (a short read past it). */
  readonly chunk?: number
  /** Called before the read with this index (0 is the first), e.g. to grow the file. */
  readonly beforeRead?: (index: number) => void
  /** The error the read with this index fails with. */
  readonly failRead?: (index: number) => Error | undefined
  readonly failFstat?: Error
}

const recording = (faults: Faults) => {
  const calls: Array<Call> = []
  const reads: Array<{ readonly offset: number; readonly length: number; readonly bytesRead: number }> = []
  let index = 0
  const io: ReadIo = {
    openSync: (file, flags) => {
      calls.push("open")
      return nodeReadIo.openSync(file, flags)
    },
    fstatSync: (fd) => {
      calls.push("fstat")
      if (faults.failFstat !== undefined) throw faults.failFstat
      return nodeReadIo.fstatSync(fd)
    },
    readSync: (fd, buffer, offset, length, position) => {
      calls.push("readSync")
      const current = index++
      faults.beforeRead?.(current)
      const error = faults.failRead?.(current)
      if (error !== undefined) throw error
      const bytesRead = nodeReadIo.readSync(fd, buffer, offset, Math.min(length, faults.chunk ?? length), position)
      reads.push({ offset, length, bytesRead })
      return bytesRead
    },
    read: (fd, buffer, offset, length, position, callback) => {
      calls.push("read")
      const current = index++
      faults.beforeRead?.(current)
      const error = faults.failRead?.(current)
      if (error !== undefined) return callback(error, 0)
      nodeReadIo.read(fd, buffer, offset, Math.min(length, faults.chunk ?? length), position, (readError, bytesRead) => {
        reads.push({ offset, length, bytesRead })
        callback(readError, bytesRead)
      })
    },
    closeSync: (fd) => {
      calls.push("closeSync")
      nodeReadIo.closeSync(fd)
    },
    close: (fd, callback) => {
      calls.push("close")
      nodeReadIo.close(fd, callback)
    }
  }
  return { io, calls, reads }
}

/** A file of `size` bytes whose every byte is known: byte i is i mod 251 (a prime, so no cut lines up). */
const content = (size: number) => Buffer.from(Array.from({ length: size }, (_, i) => i % 251))

const fileOf = (size: number) =>
  Effect.gen(function*() {
    const directory = yield* tempDirectory
    const file = path.join(directory, "f")
    yield* Effect.promise(() => fsp.writeFile(file, content(size)))
    return file
  })

const outcome = (file: string, maxBytes: number, io: ReadIo) =>
  Effect.map(Effect.either(readRegularFile(file, maxBytes, io)), (result) =>
    Either.isLeft(result) ? result.left : { reason: "read" as const, bytes: result.right })

const changed = { reason: "unreadable" as const, detail: "the file changed while being read" }

describe("safeRead: the synchronous read (files up to syncReadLimit bytes)", () => {
  it.scoped("short reads are continued at the right offsets until the end", () =>
    Effect.gen(function*() {
      const file = yield* fileOf(2500)
      const { calls, io, reads } = recording({ chunk: 1000 })
      const result = yield* outcome(file, 1 << 20, io)
      assert.deepStrictEqual(result, { reason: "read", bytes: content(2500) })
      // 2,501 bytes asked (one spare to see growth), 1,000 at a time; a short read is not taken for the
      // end: only a read that returns nothing is.
      assert.deepStrictEqual(reads, [
        { offset: 0, length: 2501, bytesRead: 1000 },
        { offset: 1000, length: 1501, bytesRead: 1000 },
        { offset: 2000, length: 501, bytesRead: 500 },
        { offset: 2500, length: 1, bytesRead: 0 }
      ])
      assert.deepStrictEqual(calls, ["open", "fstat", "readSync", "readSync", "readSync", "readSync", "closeSync"])
    }))

  it.scoped("a read that fills its whole ask goes on; the end is a read that returns nothing", () =>
    Effect.gen(function*() {
      const file = yield* fileOf(10)
      // 11 bytes asked, 5 at a time: 5, 5 (each its whole ask up to the chunk), then nothing.
      const { io, reads } = recording({ chunk: 5 })
      assert.deepStrictEqual(yield* outcome(file, 100, io), { reason: "read", bytes: content(10) })
      assert.deepStrictEqual(reads, [
        { offset: 0, length: 11, bytesRead: 5 },
        { offset: 5, length: 6, bytesRead: 5 },
        { offset: 10, length: 1, bytesRead: 0 }
      ])
    }))

  it.scoped("a first read of exactly the fstat size is the end: no read that returns nothing after it", () =>
    Effect.gen(function*() {
      const file = yield* fileOf(100)
      const { calls, io, reads } = recording({})
      assert.deepStrictEqual(yield* outcome(file, 1000, io), { reason: "read", bytes: content(100) })
      assert.deepStrictEqual(reads, [{ offset: 0, length: 101, bytesRead: 100 }])
      assert.deepStrictEqual(calls, ["open", "fstat", "readSync", "closeSync"])
      // A later read that brings the total to the size (after short reads) is not the end: the reads
      // go on until one returns nothing, where a file that grew in between is seen.
      const short = recording({ chunk: 60 })
      assert.deepStrictEqual(yield* outcome(file, 1000, short.io), { reason: "read", bytes: content(100) })
      assert.deepStrictEqual(short.reads, [
        { offset: 0, length: 101, bytesRead: 60 },
        { offset: 60, length: 41, bytesRead: 40 },
        { offset: 100, length: 1, bytesRead: 0 }
      ])
      const grown = recording({ chunk: 60, beforeRead: (index) => index === 2 && fs.appendFileSync(file, "z") })
      assert.deepStrictEqual(yield* outcome(file, 1000, grown.io), changed)
    }))

  it.scoped("a file that grows after fstat is refused as changed, the descriptor closed", () =>
    Effect.gen(function*() {
      const file = yield* fileOf(100)
      const { calls, io, reads } = recording({
        beforeRead: (index) => index === 0 && fs.appendFileSync(file, "xy")
      })
      assert.deepStrictEqual(yield* outcome(file, 1000, io), changed)
      // The spare byte was filled: the read stops there and does not read the rest of the growth.
      assert.deepStrictEqual(reads, [{ offset: 0, length: 101, bytesRead: 101 }])
      assert.deepStrictEqual(calls, ["open", "fstat", "readSync", "closeSync"])
    }))

  it.scoped("a file that grows while read in short pieces is refused once the spare byte is filled", () =>
    Effect.gen(function*() {
      const file = yield* fileOf(10)
      const { io, reads } = recording({ chunk: 6, beforeRead: (index) => index === 1 && fs.appendFileSync(file, "z") })
      assert.deepStrictEqual(yield* outcome(file, 1000, io), changed)
      assert.deepStrictEqual(reads, [
        { offset: 0, length: 11, bytesRead: 6 },
        { offset: 6, length: 5, bytesRead: 5 }
      ])
    }))

  it.scoped("a file that shrinks after fstat is refused as changed", () =>
    Effect.gen(function*() {
      const file = yield* fileOf(100)
      const { calls, io, reads } = recording({ beforeRead: (index) => index === 0 && fs.truncateSync(file, 40) })
      assert.deepStrictEqual(yield* outcome(file, 1000, io), changed)
      assert.deepStrictEqual(reads, [
        { offset: 0, length: 101, bytesRead: 40 },
        { offset: 40, length: 61, bytesRead: 0 }
      ])
      assert.deepStrictEqual(calls, ["open", "fstat", "readSync", "readSync", "closeSync"])
    }))

  it.scoped("a failing read is unreadable with the error's message, the descriptor closed", () =>
    Effect.gen(function*() {
      const file = yield* fileOf(3000)
      const { calls, io } = recording({
        chunk: 1000,
        failRead: (index) => (index === 1 ? Object.assign(new Error("EIO: i/o error, read"), { code: "EIO" }) : undefined)
      })
      assert.deepStrictEqual(yield* outcome(file, 1 << 20, io), { reason: "unreadable", detail: "EIO: i/o error, read" })
      assert.deepStrictEqual(calls, ["open", "fstat", "readSync", "readSync", "closeSync"])
    }))

  it.scoped("a failing fstat is unreadable with the error's message, the descriptor closed, nothing read", () =>
    Effect.gen(function*() {
      const file = yield* fileOf(10)
      const { calls, io } = recording({ failFstat: new Error("EIO: i/o error, fstat") })
      assert.deepStrictEqual(yield* outcome(file, 100, io), { reason: "unreadable", detail: "EIO: i/o error, fstat" })
      assert.deepStrictEqual(calls, ["open", "fstat", "closeSync"])
    }))
})

describe("safeRead: the cut between the synchronous and the asynchronous read", () => {
  it.scoped("a file of exactly syncReadLimit bytes is read synchronously, one byte more asynchronously", () =>
    Effect.gen(function*() {
      assert.strictEqual(syncReadLimit, 262_144)
      const atLimit = yield* fileOf(syncReadLimit)
      const small = recording({})
      assert.deepStrictEqual(yield* outcome(atLimit, 1 << 20, small.io), { reason: "read", bytes: content(syncReadLimit) })
      assert.deepStrictEqual(small.calls, ["open", "fstat", "readSync", "closeSync"])

      const overLimit = yield* fileOf(syncReadLimit + 1)
      const large = recording({})
      assert.deepStrictEqual(yield* outcome(overLimit, 1 << 20, large.io), {
        reason: "read",
        bytes: content(syncReadLimit + 1)
      })
      // The first read returns the whole file, short of the spare byte: that is the end.
      assert.deepStrictEqual(large.calls, ["open", "fstat", "read", "close"])
      assert.deepStrictEqual(large.reads, [{ offset: 0, length: syncReadLimit + 2, bytesRead: syncReadLimit + 1 }])
    }))
})

describe("safeRead: the asynchronous read (files over syncReadLimit bytes)", () => {
  const size = syncReadLimit + 1000

  it.scoped("short reads are continued at the right offsets until a read returns nothing", () =>
    Effect.gen(function*() {
      const file = yield* fileOf(size)
      const { calls, io, reads } = recording({ chunk: 100_000 })
      assert.deepStrictEqual(yield* outcome(file, 1 << 20, io), { reason: "read", bytes: content(size) })
      assert.deepStrictEqual(reads, [
        { offset: 0, length: size + 1, bytesRead: 100_000 },
        { offset: 100_000, length: size + 1 - 100_000, bytesRead: 100_000 },
        { offset: 200_000, length: size + 1 - 200_000, bytesRead: size - 200_000 },
        { offset: size, length: 1, bytesRead: 0 }
      ])
      assert.deepStrictEqual(calls, ["open", "fstat", "read", "read", "read", "read", "close"])
    }))

  it.scoped("a file that grows after fstat is refused as changed once the spare byte is read", () =>
    Effect.gen(function*() {
      const file = yield* fileOf(size)
      const { calls, io, reads } = recording({ beforeRead: (index) => index === 0 && fs.appendFileSync(file, "grown") })
      assert.deepStrictEqual(yield* outcome(file, 1 << 20, io), changed)
      assert.deepStrictEqual(reads, [{ offset: 0, length: size + 1, bytesRead: size + 1 }])
      assert.deepStrictEqual(calls, ["open", "fstat", "read", "close"])
    }))

  it.scoped("a file that shrinks after fstat is refused as changed", () =>
    Effect.gen(function*() {
      const file = yield* fileOf(size)
      const { calls, io, reads } = recording({ beforeRead: (index) => index === 0 && fs.truncateSync(file, 1000) })
      assert.deepStrictEqual(yield* outcome(file, 1 << 20, io), changed)
      assert.deepStrictEqual(reads, [
        { offset: 0, length: size + 1, bytesRead: 1000 },
        { offset: 1000, length: size + 1 - 1000, bytesRead: 0 }
      ])
      assert.deepStrictEqual(calls, ["open", "fstat", "read", "read", "close"])
    }))

  it.scoped("a failing read is unreadable with the error's message, the descriptor closed", () =>
    Effect.gen(function*() {
      const file = yield* fileOf(size)
      const { calls, io } = recording({
        chunk: 100_000,
        failRead: (index) => (index === 2 ? Object.assign(new Error("EIO: i/o error, read"), { code: "EIO" }) : undefined)
      })
      assert.deepStrictEqual(yield* outcome(file, 1 << 20, io), { reason: "unreadable", detail: "EIO: i/o error, read" })
      assert.deepStrictEqual(calls, ["open", "fstat", "read", "read", "read", "close"])
    }))
})

describe("safeRead: interrupting the asynchronous read", () => {
  it.scopedLive("a read in flight when interrupted is the last one: the descriptor is closed and nothing more is read", () =>
    Effect.gen(function*() {
      const size = syncReadLimit + 1000
      const file = yield* fileOf(size)
      const { calls, io: base } = recording({ chunk: 100_000 })
      const secondReadStarted = yield* Deferred.make<void>()
      const closed = yield* Deferred.make<void>()
      let release: (() => void) | undefined
      const io: ReadIo = {
        ...base,
        read: (fd, buffer, offset, length, position, callback) => {
          if (offset === 100_000) {
            // Hold the second read's answer until the reading fiber has been interrupted.
            release = () => base.read(fd, buffer, offset, length, position, callback)
            Deferred.unsafeDone(secondReadStarted, Effect.void)
            return
          }
          base.read(fd, buffer, offset, length, position, callback)
        },
        close: (fd, callback) =>
          base.close(fd, () => {
            callback()
            Deferred.unsafeDone(closed, Effect.void)
          })
      }
      const fiber = yield* Effect.fork(readRegularFile(file, 1 << 20, io))
      yield* Deferred.await(secondReadStarted)
      yield* Fiber.interrupt(fiber)
      release?.()
      yield* Deferred.await(closed)
      assert.deepStrictEqual(calls, ["open", "fstat", "read", "read", "close"])
    }))
})

describe("safeRead: a small file read into the caller's scratch buffer", () => {
  const scratchLength = 64

  /** One case: a file of `size` bytes (made afresh for each read), the size limit, and the faults on it. */
  interface Case {
    readonly name: string
    readonly size: number
    readonly maxBytes?: number
    readonly faults?: (file: string) => Faults
  }
  const cases: ReadonlyArray<Case> = [
    { name: "empty", size: 0 },
    { name: "small", size: 10 },
    { name: "one byte short of the scratch (the spare byte fills it)", size: scratchLength - 1 },
    { name: "the scratch's length (read into a buffer of its own)", size: scratchLength },
    { name: "larger than the scratch", size: 2500 },
    { name: "short reads", size: 50, faults: () => ({ chunk: 20 }) },
    { name: "short reads past the scratch", size: 2500, faults: () => ({ chunk: 1000 }) },
    { name: "reads that fill their whole ask", size: 10, faults: () => ({ chunk: 5 }) },
    { name: "grows after fstat", size: 30, faults: (file) => ({ beforeRead: (index) => index === 0 && fs.appendFileSync(file, "xy") }) },
    {
      name: "grows between short reads",
      size: 10,
      faults: (file) => ({ chunk: 6, beforeRead: (index) => index === 1 && fs.appendFileSync(file, "z") })
    },
    { name: "shrinks after fstat", size: 40, faults: (file) => ({ beforeRead: (index) => index === 0 && fs.truncateSync(file, 15) }) },
    {
      name: "a failing read",
      size: 50,
      faults: () => ({ chunk: 20, failRead: (index) => (index === 1 ? new Error("EIO: i/o error, read") : undefined) })
    },
    { name: "a failing fstat", size: 10, faults: () => ({ failFstat: new Error("EIO: i/o error, fstat") }) },
    { name: "over the size limit", size: 30, maxBytes: 29 },
    { name: "at the size limit", size: 30, maxBytes: 30 }
  ]

  /** What `startRead` gave (bytes copied at once: a view of the scratch lasts until the next read), and the calls it made. */
  const readOnce = (file: string, testCase: Case, scratch: Buffer | undefined) => {
    const { calls, io, reads } = recording(testCase.faults?.(file) ?? {})
    const started = startRead(file, testCase.maxBytes ?? 1000, io, scratch)
    assert.notInstanceOf(started, PendingRead)
    const outcome = Buffer.isBuffer(started) ? { reason: "read", bytes: Buffer.from(started) } : started
    return { outcome, calls, reads, view: Buffer.isBuffer(started) && scratch !== undefined && started.buffer === scratch.buffer }
  }

  it.scoped("the same outcome, calls and reads (offsets and lengths) as with a buffer of its own, for every case", () =>
    Effect.gen(function*() {
      const scratch = Buffer.alloc(scratchLength, 0xee)
      let views = 0
      for (const testCase of cases) {
        const without = readOnce(yield* fileOf(testCase.size), testCase, undefined)
        const withScratch = readOnce(yield* fileOf(testCase.size), testCase, scratch)
        assert.deepStrictEqual(withScratch.outcome, without.outcome, testCase.name)
        assert.deepStrictEqual(withScratch.calls, without.calls, testCase.name)
        assert.deepStrictEqual(withScratch.reads, without.reads, testCase.name)
        if (withScratch.view) views++
        // The scratch is used exactly when the file and its spare byte fit in it.
        assert.strictEqual(
          withScratch.view,
          withScratch.outcome.reason === "read" && testCase.size + 1 <= scratchLength,
          `${testCase.name}: read into the scratch`
        )
      }
      assert.isAtLeast(views, 4)
      // Not a regular file: refused before any read, with or without a scratch.
      const directory = yield* tempDirectory
      assert.deepStrictEqual(startRead(directory, 1000, nodeReadIo, scratch), startRead(directory, 1000, nodeReadIo))
    }))

  it.scoped("a second read into the same scratch replaces the first one's bytes (callers decode before the next read)", () =>
    Effect.gen(function*() {
      const scratch = Buffer.alloc(scratchLength)
      const first = yield* fileOf(20)
      const second = yield* fileOf(30)
      fs.writeFileSync(second, Buffer.alloc(30, 0x41))
      const a = startRead(first, 1000, nodeReadIo, scratch)
      assert.deepStrictEqual(Buffer.from(a as Buffer), content(20))
      const b = startRead(second, 1000, nodeReadIo, scratch)
      assert.deepStrictEqual(Buffer.from(b as Buffer), Buffer.alloc(30, 0x41))
      assert.deepStrictEqual(Buffer.from(a as Buffer), Buffer.alloc(20, 0x41))
    }))
})
