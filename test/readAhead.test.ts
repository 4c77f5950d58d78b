/**
 * The helper thread that reads small records ahead (internal/readAhead.ts), on real files in a
 * temporary directory: what it hands over is exactly what `startRead` reads; everything
 * `startRead` refuses, and everything it would read differently, the thread declines; a thread
 * slow on a file, killed mid-batch or ended while idle never holds the main thread up nor loses a
 * file; one batch at a time in a process.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import * as ReadAhead from "../src/internal/readAhead.js"
import { PendingRead, startRead, syncReadLimit } from "../src/internal/safeRead.js"
import { tempDirectory } from "./support.js"

const scratch = Buffer.alloc(64 * 1024)

/** `count` files of different lengths (0 bytes to a few KiB, some past the scratch buffer), their bytes. */
const writeFiles = (directory: string, count: number, prefix = "f") =>
  Array.from({ length: count }, (_, i) => {
    const file = path.join(directory, `${prefix}-${i}.json`)
    const bytes = Buffer.from(i === 0 ? "" : `{"n":${i},"text":"${"é".repeat(i * 37 % 3000)}${i === 7 ? "x".repeat(70_000) : ""}"}`)
    fs.writeFileSync(file, bytes)
    return { file, bytes }
  })

/** Waits (real clock) until `check` holds, or fails after `ms`. */
const until = (check: () => boolean, ms = 5_000) =>
  Effect.promise(async () => {
    const deadline = Date.now() + ms
    while (!check()) {
      if (Date.now() > deadline) throw new Error("timed out waiting")
      await new Promise((resolve) => setTimeout(resolve, 5))
    }
  })

/** A thread started and idle: batches ended at once until one has started it (the second of a process does). */
const threadUp = (files: ReadonlyArray<string>) =>
  Effect.gen(function*() {
    for (let i = 0; i < 3 && !ReadAhead.threadRunning(); i++) ReadAhead.start(files, syncReadLimit)?.end()
    yield* until(() => ReadAhead.threadRunning())
    yield* until(() => !ReadAhead.threadBusy())
  })

/** What the main thread alone reads of `file`: its bytes, or why not. */
const readAlone = (file: string, maxBytes: number) => {
  const started = startRead(file, maxBytes)
  if (started instanceof PendingRead) {
    fs.closeSync(started.fd)
    return "pending"
  }
  return "reason" in started ? started.reason : Buffer.from(started).toString("base64")
}

const reset = Effect.promise(() => ReadAhead.configureForTests({}))

describe("readAhead: the helper thread", () => {
  // First in this file, which runs in a module of its own: nothing has asked for a batch before.
  it.scopedLive("the first batch of a process starts no thread (a one-shot CLI pays nothing); the second starts it", () =>
    Effect.gen(function*() {
      const directory = yield* tempDirectory
      const files = writeFiles(directory, ReadAhead.minFiles).map((f) => f.file)
      assert.isUndefined(ReadAhead.start(files, syncReadLimit))
      assert.isFalse(ReadAhead.threadRunning())
      const second = ReadAhead.start(files, syncReadLimit)
      assert.isDefined(second)
      assert.isTrue(ReadAhead.threadRunning())
      second!.end()
      yield* until(() => !ReadAhead.threadBusy())
    }))

  it.scopedLive("hands over exactly the bytes of each file it read, and the caller reads the rest; nothing is lost", () =>
    Effect.gen(function*() {
      yield* reset
      const directory = yield* tempDirectory
      const files = writeFiles(directory, 200)
      yield* threadUp(files.map((f) => f.file))
      const before = ReadAhead.filesHandedOver()
      const batch = ReadAhead.start(files.map((f) => f.file), syncReadLimit)
      assert.isDefined(batch)
      // The thread reads the whole batch while the caller waits.
      yield* until(() => !ReadAhead.threadBusy())
      files.forEach(({ bytes }, i) => {
        const taken = batch!.take(i, scratch)
        assert.isDefined(taken, `file ${i}`)
        assert.isTrue(taken!.equals(bytes), `file ${i}`)
        // A file larger than the caller's buffer comes in a buffer of its own.
        if (bytes.length > scratch.length) assert.notStrictEqual(taken!.buffer, scratch.buffer)
      })
      assert.strictEqual(ReadAhead.filesHandedOver() - before, files.length)
      // Asked again: the same bytes; past the batch, or once it has ended: the caller reads it itself.
      assert.isTrue(batch!.take(3, scratch)!.equals(files[3]!.bytes))
      assert.isUndefined(batch!.take(files.length, scratch))
      batch!.end()
      assert.isUndefined(batch!.take(3, scratch))
    }))

  it.scopedLive("declines whatever startRead refuses or would read otherwise: the caller's own read decides", () =>
    Effect.gen(function*() {
      yield* reset
      const directory = yield* tempDirectory
      const ok = writeFiles(directory, 40)
      const odd = {
        missing: path.join(directory, "missing.json"),
        symlink: path.join(directory, "symlink.json"),
        directory: path.join(directory, "directory.json"),
        fifo: path.join(directory, "fifo.json"),
        tooLarge: path.join(directory, "too-large.json"),
        pastSync: path.join(directory, "past-sync.json"),
        hardLink: path.join(directory, "hard-link.json"),
        // A character device: not followed, not a link, and reads nothing; only the fstat check refuses it.
        device: "/dev/null"
      }
      fs.symlinkSync(ok[1]!.file, odd.symlink)
      fs.mkdirSync(odd.directory)
      execFileSync("mkfifo", [odd.fifo])
      fs.writeFileSync(odd.tooLarge, "x".repeat(5_001))
      fs.writeFileSync(odd.pastSync, "y".repeat(syncReadLimit + 1))
      fs.linkSync(ok[2]!.file, odd.hardLink)
      const maxBytes = 5_000
      const refused = [odd.missing, odd.symlink, odd.directory, odd.fifo, odd.tooLarge, odd.device]
      const list = [...refused, odd.hardLink, ...ok.filter((f) => f.bytes.length <= maxBytes).map((f) => f.file)]
      yield* threadUp(list)
      const batch = ReadAhead.start(list, maxBytes)!
      yield* until(() => !ReadAhead.threadBusy())
      refused.forEach((file, i) => {
        assert.strictEqual(ReadAhead.slotState(i), "declined", file)
        assert.isUndefined(batch.take(i, scratch), file)
      })
      assert.deepStrictEqual(refused.map((file) => readAlone(file, maxBytes)), ["missing", "symlink", "not-a-regular-file", "not-a-regular-file", "too-large", "not-a-regular-file"])
      // A second name for a record is read like the record (as startRead reads it).
      assert.isTrue(batch.take(refused.length, scratch)!.equals(ok[2]!.bytes))
      batch.end()
      // Past the synchronous size the caller reads it itself, asynchronously, as before.
      const large = [odd.pastSync, ...ok.map((f) => f.file)]
      const second = ReadAhead.start(large, syncReadLimit)!
      yield* until(() => !ReadAhead.threadBusy())
      assert.isUndefined(second.take(0, scratch))
      assert.strictEqual(readAlone(odd.pastSync, syncReadLimit * 2), "pending")
      second.end()
    }))

  it.scopedLive("a file that grows between the thread's fstat and its read is declined (the spare byte fills)", () =>
    Effect.gen(function*() {
      yield* Effect.promise(() => ReadAhead.configureForTests({ delayMs: 150 }))
      const directory = yield* tempDirectory
      const files = writeFiles(directory, 40)
      yield* threadUp(files.map((f) => f.file))
      const last = files.length - 1
      const batch = ReadAhead.start(files.map((f) => f.file), syncReadLimit)!
      // The thread claims the last file first and pauses between its fstat and its read: the file grows meanwhile.
      yield* until(() => ReadAhead.slotState(last) === "thread")
      fs.appendFileSync(files[last]!.file, "grown")
      yield* until(() => ReadAhead.slotState(last) !== "thread")
      assert.strictEqual(ReadAhead.slotState(last), "declined")
      assert.isUndefined(batch.take(last, scratch))
      batch.end()
      yield* until(() => !ReadAhead.threadBusy())
      yield* reset
    }), 30_000)

  it.scopedLive("a file the thread holds past waitMs is read by the caller: the thread never holds it up", () =>
    Effect.gen(function*() {
      yield* Effect.promise(() => ReadAhead.configureForTests({ delayMs: 1_000 }))
      const directory = yield* tempDirectory
      const files = writeFiles(directory, 40)
      yield* threadUp(files.map((f) => f.file))
      const batch = ReadAhead.start(files.map((f) => f.file), syncReadLimit)!
      // The thread has claimed the last file and sleeps before reading it.
      yield* Effect.sleep("50 millis")
      const started = performance.now()
      assert.isUndefined(batch.take(files.length - 1, scratch))
      const waited = performance.now() - started
      assert.isAtLeast(waited, ReadAhead.waitMs - 5)
      assert.isBelow(waited, 500)
      // The others were never claimed by the thread: the caller takes them at once.
      for (let i = 0; i < files.length - 1; i++) assert.isUndefined(batch.take(i, scratch))
      batch.end()
      yield* reset
    }), 30_000)

  it.scopedLive("a thread killed mid-batch: the caller reads what it had not handed over; the next batch starts a new thread", () =>
    Effect.gen(function*() {
      yield* Effect.promise(() => ReadAhead.configureForTests({ delayMs: 20 }))
      const directory = yield* tempDirectory
      const files = writeFiles(directory, 60)
      yield* threadUp(files.map((f) => f.file))
      const batch = ReadAhead.start(files.map((f) => f.file), syncReadLimit)!
      yield* Effect.sleep("100 millis")
      yield* Effect.promise(() => ReadAhead.stopThread())
      assert.isFalse(ReadAhead.threadRunning())
      let handed = 0
      files.forEach(({ bytes, file }, i) => {
        const taken = batch.take(i, scratch)
        if (taken !== undefined) handed++
        const bytesRead = taken ?? Buffer.from(startRead(file, syncReadLimit) as Buffer)
        assert.isTrue(bytesRead.equals(bytes), `file ${i}`)
      })
      assert.isAbove(handed, 0)
      assert.isBelow(handed, files.length)
      batch.end()
      yield* reset
      const next = ReadAhead.start(files.map((f) => f.file), syncReadLimit)
      assert.isDefined(next)
      assert.isTrue(ReadAhead.threadRunning())
      next!.end()
    }), 30_000)

  it.scopedLive("an idle thread ends by itself; the next batch starts another", () =>
    Effect.gen(function*() {
      yield* Effect.promise(() => ReadAhead.configureForTests({ idleMs: 100 }))
      const directory = yield* tempDirectory
      const files = writeFiles(directory, 40)
      yield* threadUp(files.map((f) => f.file))
      yield* until(() => !ReadAhead.threadRunning())
      const batch = ReadAhead.start(files.map((f) => f.file), syncReadLimit)
      assert.isDefined(batch)
      assert.isTrue(ReadAhead.threadRunning())
      yield* until(() => !ReadAhead.threadBusy())
      assert.isTrue(batch!.take(5, scratch)!.equals(files[5]!.bytes))
      batch!.end()
      yield* reset
    }), 30_000)

  it.scopedLive("the thread stops where the arena might not hold the next file: the rest is the caller's, none declined", () =>
    Effect.gen(function*() {
      yield* reset
      const directory = yield* tempDirectory
      const files = Array.from({ length: 100 }, (_, i) => {
        const file = path.join(directory, `big-${i}.json`)
        const bytes = Buffer.alloc(100_000, 48 + (i % 10))
        fs.writeFileSync(file, bytes)
        return { file, bytes }
      })
      yield* threadUp(files.map((f) => f.file))
      const batch = ReadAhead.start(files.map((f) => f.file), syncReadLimit)!
      yield* until(() => !ReadAhead.threadBusy())
      const states = files.map((_, i) => ReadAhead.slotState(i))
      const read = states.filter((state) => state === "read").length
      // (4 MiB - 256 KiB - 1) / 100,000 bytes: 39 files, then it stops; it never claims one it cannot hold.
      assert.strictEqual(read, Math.floor((ReadAhead.arenaBytes - syncReadLimit - 1) / 100_000) + 1)
      assert.notInclude(states, "declined")
      files.forEach(({ bytes, file }, i) => {
        const taken = batch.take(i, scratch) ?? Buffer.from(startRead(file, syncReadLimit) as Buffer)
        assert.isTrue(taken.equals(bytes), `file ${i}`)
      })
      batch.end()
    }))

  it.scopedLive("a thread that dies holding a file: the caller waits at most waitMs for it, then reads it; the rest are handed over or free", () =>
    Effect.gen(function*() {
      yield* Effect.promise(() => ReadAhead.configureForTests({ dieAfter: 3 }))
      const directory = yield* tempDirectory
      const files = writeFiles(directory, 40)
      yield* threadUp(files.map((f) => f.file))
      const batch = ReadAhead.start(files.map((f) => f.file), syncReadLimit)!
      yield* until(() => !ReadAhead.threadRunning())
      const last = files.length - 1
      assert.deepStrictEqual([last, last - 1, last - 2, last - 3].map((i) => batch.stateOf(i)), ["read", "read", "thread", "free"])
      const started = performance.now()
      assert.isUndefined(batch.take(last - 2, scratch))
      assert.isAtLeast(performance.now() - started, ReadAhead.waitMs - 2)
      files.forEach(({ bytes, file }, i) => {
        const taken = batch.take(i, scratch) ?? Buffer.from(startRead(file, syncReadLimit) as Buffer)
        assert.isTrue(taken.equals(bytes), `file ${i}`)
      })
      batch.end()
      yield* reset
    }))

  it.scopedLive("one batch at a time, and none for a short list", () =>
    Effect.gen(function*() {
      yield* reset
      const directory = yield* tempDirectory
      const files = writeFiles(directory, ReadAhead.minFiles).map((f) => f.file)
      assert.isUndefined(ReadAhead.start(files.slice(1), syncReadLimit))
      yield* threadUp(files)
      const first = ReadAhead.start(files, syncReadLimit)!
      assert.isUndefined(ReadAhead.start(files, syncReadLimit))
      first.end()
      first.end()
      yield* until(() => !ReadAhead.threadBusy())
      const second = ReadAhead.start(files, syncReadLimit)
      assert.isDefined(second)
      second!.end()
    }))
})
