/**
 * Crash safety of the filesystem store: after a crash at any point of a write,
 * the run directory holds, for that source, no record or one complete record
 * that verifies; leftovers are named `.partial-*`, ignored by reads, reported
 * by `inspect` and removed by `sweep`.
 */
import { assert, describe, it } from "@effect/vitest"
import { Deferred, Effect, Exit, Fiber } from "effect"
import * as esbuild from "esbuild"
import { spawn } from "node:child_process"
import * as fsp from "node:fs/promises"
import * as path from "node:path"
import * as CaptureStore from "../src/store/CaptureStore.js"
import { makeCaptureRecord } from "../src/Domain.js"
import { CaptureWriteFailed, MissingCapture } from "../src/Errors.js"
import { crashRecord, crashSource } from "./storeCrashRecords.js"
import { SALES, salesRecord, tempDirectory } from "./support.js"

/** 3 MiB of text with control characters: a record of several staging buffers, so several `write` calls. */
const bigRecord = makeCaptureRecord({
  ...salesRecord,
  text: "Net sales \u0001 rose é 😀.\n".repeat(128 * 1024)
})

type Step = "create" | "write" | "fsync" | "close" | "link" | "unlink"

/** Records the steps a write takes; with `stopAt`, the call of that index never runs (the process "dies" there). */
const steppingIo = (stopAt?: number, fault?: number) => {
  const steps: Array<Step> = []
  const stopped = Deferred.unsafeMake<void>(undefined as never)
  let release: (error: Error) => void = () => undefined
  const released = new Promise<never>((_, reject) => (release = reject))
  const step = <A extends Array<any>, B>(name: Step, call: (...args: A) => Promise<B>) => (...args: A): Promise<B> => {
    const index = steps.push(name) - 1
    if (index === stopAt) {
      Deferred.unsafeDone(stopped, Exit.void)
      return released
    }
    if (index === fault) return Promise.reject(Object.assign(new Error(`EIO: injected at ${name}`), { code: "EIO" }))
    return call(...args)
  }
  const base = CaptureStore.nodeIo
  const io: CaptureStore.FileIo = {
    create: step("create", base.create),
    write: step("write", base.write),
    fsync: step("fsync", base.fsync),
    close: step("close", base.close),
    link: step("link", base.link),
    unlink: step("unlink", base.unlink)
  }
  return { io, steps, stopped, release: () => release(new Error("the process is gone")) }
}

/**
 * The invariant, checked on the directory as a crash left it: the source has no
 * record or one that reads back equal to what was written; every other entry
 * is a `.partial-*` leftover that `inspect` reports and `sweep` removes, after
 * which the record (if any) still reads back the same.
 */
const checkInvariant = (directory: string, record: typeof bigRecord) =>
  Effect.gen(function*() {
    const store = yield* CaptureStore.makeFileSystem({ directory })
    const before = yield* Effect.either(store.read(record.source))
    if (before._tag === "Left") assert.instanceOf(before.left, MissingCapture)
    else assert.deepStrictEqual(before.right, record)
    const inspection = yield* CaptureStore.inspect({ directory })
    assert.deepStrictEqual(inspection.problems, [])
    assert.deepStrictEqual(inspection.others, [])
    assert.strictEqual(inspection.records, before._tag === "Right" ? 1 : 0)
    for (const leftover of inspection.leftovers) {
      assert.isTrue(leftover.name.startsWith(CaptureStore.partialPrefix))
      // A leftover is a second link of the record exactly when the write got past link().
      assert.strictEqual(leftover.linkedTo, before._tag === "Right" ? CaptureStore.recordFileName(record.source) : null)
    }
    const swept = yield* CaptureStore.sweep({ directory })
    assert.deepStrictEqual(swept.removed, inspection.leftovers.map((l) => l.name))
    assert.deepStrictEqual(swept.failed, [])
    const after = yield* CaptureStore.inspect({ directory })
    assert.deepStrictEqual(after.leftovers, [])
    assert.strictEqual(after.records, inspection.records)
    const entries = yield* Effect.promise(() => fsp.readdir(directory))
    assert.deepStrictEqual(entries, before._tag === "Right" ? [CaptureStore.recordFileName(record.source)] : [])
    const again = yield* Effect.either(store.read(record.source))
    assert.deepStrictEqual(again, before)
    return { recorded: before._tag === "Right", leftovers: inspection.leftovers.length }
  })

describe("CaptureStore crash safety: a write stopped between any two steps", () => {
  it.scoped("the steps of a multi-buffer write, in order", () =>
    Effect.gen(function*() {
      const directory = yield* tempDirectory
      const { io, steps } = steppingIo()
      const store = yield* CaptureStore.makeFileSystem({ directory, io })
      yield* store.write(bigRecord)
      assert.isAtLeast(steps.filter((s) => s === "write").length, 3)
      assert.deepStrictEqual(steps.filter((s) => s !== "write"), ["create", "fsync", "close", "link", "unlink"])
      assert.deepStrictEqual(yield* checkInvariant(directory, bigRecord), { recorded: true, leftovers: 0 })
    }))

  it.scoped("a crash before each step leaves no record or one that verifies, and only removable leftovers", () =>
    Effect.gen(function*() {
      const probe = steppingIo()
      yield* CaptureStore.makeFileSystem({ directory: yield* tempDirectory, io: probe.io }).pipe(
        Effect.flatMap((store) => store.write(bigRecord))
      )
      const total = probe.steps.length
      const linkAt = probe.steps.indexOf("link")
      for (let stopAt = 0; stopAt < total; stopAt++) {
        const directory = yield* tempDirectory
        const stepping = steppingIo(stopAt)
        const store = yield* CaptureStore.makeFileSystem({ directory, io: stepping.io })
        const fiber = yield* Effect.fork(store.write(bigRecord))
        yield* Deferred.await(stepping.stopped)
        // The directory as a kill at this point leaves it.
        const state = yield* checkInvariant(directory, bigRecord)
        assert.strictEqual(state.recorded, stopAt > linkAt, `stopped before step ${stopAt} (${probe.steps[stopAt]})`)
        assert.strictEqual(state.leftovers, stopAt === 0 ? 0 : 1, `stopped before step ${stopAt}`)
        stepping.release()
        yield* Fiber.await(fiber)
      }
    }))

  it.scoped("a failing step fails the write (or not, for the final unlink) and leaves nothing unverifiable", () =>
    Effect.gen(function*() {
      const probe = steppingIo()
      yield* CaptureStore.makeFileSystem({ directory: yield* tempDirectory, io: probe.io }).pipe(
        Effect.flatMap((store) => store.write(bigRecord))
      )
      const unlinkAt = probe.steps.lastIndexOf("unlink")
      for (let fault = 0; fault < probe.steps.length; fault++) {
        const directory = yield* tempDirectory
        const { io } = steppingIo(undefined, fault)
        const store = yield* CaptureStore.makeFileSystem({ directory, io })
        const result = yield* Effect.either(store.write(bigRecord))
        if (fault === unlinkAt) {
          // The record is complete; only its temporary name could not be removed.
          assert.strictEqual(result._tag, "Right")
          assert.deepStrictEqual(yield* checkInvariant(directory, bigRecord), { recorded: true, leftovers: 1 })
        } else {
          assert.strictEqual(result._tag, "Left")
          if (result._tag === "Left") {
            assert.instanceOf(result.left, CaptureWriteFailed)
            assert.strictEqual(result.left.source, SALES)
            assert.match(result.left.detail, new RegExp(`injected at ${probe.steps[fault]}`))
          }
          assert.deepStrictEqual(yield* checkInvariant(directory, bigRecord), { recorded: false, leftovers: 0 })
        }
      }
    }))

  it.scoped("interrupting a write stops it at the next buffer and removes its temporary file", () =>
    Effect.gen(function*() {
      const directory = yield* tempDirectory
      const started = yield* Deferred.make<void>()
      let writes = 0
      const io: CaptureStore.FileIo = {
        ...CaptureStore.nodeIo,
        write: (fd, bytes) => {
          writes++
          Deferred.unsafeDone(started, Exit.void)
          return CaptureStore.nodeIo.write(fd, bytes)
        }
      }
      const store = yield* CaptureStore.makeFileSystem({ directory, io })
      // About 24 MiB of JSON: two dozen staging buffers.
      const huge = makeCaptureRecord({ ...salesRecord, text: "\u0001".repeat(4 * 1024 * 1024) })
      const fiber = yield* Effect.fork(store.write(huge))
      yield* Deferred.await(started)
      yield* Fiber.interrupt(fiber)
      assert.isAtMost(writes, 2)
      assert.deepStrictEqual(yield* Effect.promise(() => fsp.readdir(directory)), [])
      assert.instanceOf(yield* Effect.flip(store.read(SALES)), MissingCapture)
    }))
})

/** Spawns the writing child, waits until it is ready, lets it write for `delayMs`, then SIGKILLs it. */
const killWriterAfter = (script: string, directory: string, delayMs: number) =>
  Effect.async<void, Error>((resume) => {
    const child = spawn(process.execPath, [script, directory], { stdio: ["ignore", "pipe", "pipe"] })
    let stderr = ""
    let timer: NodeJS.Timeout | undefined
    child.stderr.on("data", (chunk) => (stderr += String(chunk)))
    child.stdout.on("data", (chunk) => {
      if (timer === undefined && String(chunk).includes("ready")) timer = setTimeout(() => child.kill("SIGKILL"), delayMs)
    })
    child.on("exit", (_code, signal) => {
      clearTimeout(timer)
      resume(signal === "SIGKILL" ? Effect.void : Effect.fail(new Error(`the writer exited on its own: ${stderr}`)))
    })
    return Effect.sync(() => child.kill("SIGKILL"))
  })

describe("CaptureStore crash safety: a real writer killed at random moments", () => {
  it.scoped("after every kill -9, each source has no record or one complete record, and leftovers are swept", () =>
    Effect.gen(function*() {
      const kills = 52
      // One bundle of the writer (the store and its dependencies), so that a child starts in a fraction of a second.
      const bundleDirectory = yield* tempDirectory
      const child = path.join(bundleDirectory, "writer.mjs")
      yield* Effect.promise(() =>
        esbuild.build({
          entryPoints: [path.join(import.meta.dirname, "storeCrashChild.ts")],
          bundle: true,
          platform: "node",
          format: "esm",
          outfile: child,
          logLevel: "warning"
        })
      )
      let state = 0x9e3779b9
      const random = () => (state = (state * 1664525 + 1013904223) >>> 0) / 2 ** 32
      const expected = new Map<string, string>()
      const expectedDigest = (index: number) => {
        const name = CaptureStore.recordFileName(crashSource(index))
        if (!expected.has(name)) expected.set(name, crashRecord(index).sha256)
        return expected.get(name)!
      }
      let withLeftover = 0
      let totalRecords = 0
      const killOne = (delayMs: number) =>
        Effect.gen(function*() {
          const directory = yield* tempDirectory
          yield* killWriterAfter(child, directory, delayMs)
          const store = yield* CaptureStore.makeFileSystem({ directory })
          // What `run-pipeline doctor --fix` does: check every record, remove the leftovers.
          const swept = yield* CaptureStore.sweep({ directory })
          assert.deepStrictEqual(swept.problems, [], `after a kill at ${delayMs} ms`)
          assert.deepStrictEqual(swept.others, [])
          assert.isAtMost(swept.leftovers.length, 1)
          assert.deepStrictEqual(swept.removed, swept.leftovers.map((l) => l.name))
          // Records 0 … n-1, each complete: the one being written when the kill came is there whole or not at all.
          for (let index = 0; index < swept.records; index++) {
            const record = yield* store.read(crashSource(index))
            assert.strictEqual(record.sha256, expectedDigest(index))
          }
          assert.instanceOf(yield* Effect.flip(store.read(crashSource(swept.records))), MissingCapture)
          const left = yield* Effect.promise(() => fsp.readdir(directory))
          assert.deepStrictEqual(
            left.sort(),
            Array.from({ length: swept.records }, (_, i) => CaptureStore.recordFileName(crashSource(i))).sort()
          )
          const inspection = swept
          return { leftovers: inspection.leftovers.length, records: inspection.records }
        }).pipe(Effect.scoped)
      // Two writers at a time: the machine's two cores, and half the wall time.
      const delays = Array.from({ length: kills }, () => Math.floor(random() * 300))
      const results = yield* Effect.forEach(delays, killOne, { concurrency: 2 })
      for (const result of results) {
        if (result.leftovers > 0) withLeftover++
        totalRecords += result.records
      }
      assert.strictEqual(results.length, kills)
      // Not vacuous: kills did land in the middle of writes, and writes did complete.
      assert.isAbove(withLeftover, 0)
      assert.isAbove(totalRecords, 0)
    }), { timeout: 120_000 })
})
