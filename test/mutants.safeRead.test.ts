/**
 * `readRegularFile`, the one read path of stored records and bodies: every
 * failure with its exact reason and detail, the size cap at its edge, the
 * synchronous path for small files, a file whose size is not its length, and
 * no descriptor left open on any path (counted in /proc/self/fd, where it exists).
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Either, Fiber } from "effect"
import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as fsp from "node:fs/promises"
import * as path from "node:path"
import { errorCode, errorText, readRegularFile, syncReadLimit } from "../src/internal/safeRead.js"
import { tempDirectory } from "./support.js"

const hasProc = fs.existsSync("/proc/self/fd") && fs.existsSync("/proc/self/status")

/** Descriptors of this process open on `file`. */
const openOn = (file: string) =>
  fs.readdirSync("/proc/self/fd").filter((fd) => {
    try {
      return fs.readlinkSync(`/proc/self/fd/${fd}`) === file
    } catch {
      return false
    }
  }).length

const failure = (file: string, maxBytes: number) =>
  Effect.map(Effect.either(readRegularFile(file, maxBytes)), (result) =>
    Either.isLeft(result) ? result.left : { reason: "read", detail: result.right.toString("latin1") })

describe("safeRead: error helpers", () => {
  it("errorCode: the code of an object that has one, as a string; else unknown", () => {
    assert.strictEqual(errorCode(Object.assign(new Error("x"), { code: "ENOENT" })), "ENOENT")
    assert.strictEqual(errorCode({ code: 13 }), "13")
    assert.strictEqual(errorCode({ code: undefined }), "undefined")
    assert.strictEqual(errorCode({}), "unknown")
    assert.strictEqual(errorCode(new Error("no code")), "unknown")
    assert.strictEqual(errorCode(null), "unknown")
    assert.strictEqual(errorCode(undefined), "unknown")
    assert.strictEqual(errorCode("ENOENT"), "unknown")
  })

  it("errorText: an Error's message, anything else as a string", () => {
    assert.strictEqual(errorText(new TypeError("bad")), "bad")
    assert.strictEqual(errorText("plain"), "plain")
    assert.strictEqual(errorText(42), "42")
    assert.strictEqual(errorText({ message: "not an Error" }), "[object Object]")
  })
})

describe("safeRead: readRegularFile", () => {
  it.scoped("reads a regular file exactly; the cap is inclusive", () =>
    Effect.gen(function*() {
      const directory = yield* tempDirectory
      const file = path.join(directory, "f")
      yield* Effect.promise(() => fsp.writeFile(file, "0123456789"))
      assert.deepStrictEqual(yield* failure(file, 10), { reason: "read", detail: "0123456789" })
      assert.deepStrictEqual(yield* failure(file, 9), { reason: "too-large", detail: "10 bytes exceeds the 9 byte limit" })
      yield* Effect.promise(() => fsp.writeFile(file, ""))
      assert.deepStrictEqual(yield* failure(file, 0), { reason: "read", detail: "" })
    }))

  it.scoped("missing, a symlink (even to a regular file), a directory, a FIFO, a path through a file", () =>
    Effect.gen(function*() {
      const directory = yield* tempDirectory
      const target = path.join(directory, "target")
      yield* Effect.promise(() => fsp.writeFile(target, "bytes"))
      assert.deepStrictEqual(yield* failure(path.join(directory, "none"), 100), { reason: "missing", detail: "no such file" })
      yield* Effect.promise(() => fsp.symlink(target, path.join(directory, "link")))
      assert.deepStrictEqual(yield* failure(path.join(directory, "link"), 100), {
        reason: "symlink",
        detail: "the file is a symbolic link"
      })
      assert.deepStrictEqual(yield* failure(directory, 1 << 20), { reason: "not-a-regular-file", detail: "not a regular file" })
      const fifo = path.join(directory, "fifo")
      execFileSync("mkfifo", [fifo])
      // O_NONBLOCK: opening a FIFO without a writer does not hang.
      assert.deepStrictEqual(yield* failure(fifo, 100), { reason: "not-a-regular-file", detail: "not a regular file" })
      const through = path.join(target, "x")
      assert.deepStrictEqual(yield* failure(through, 100), {
        reason: "unreadable",
        detail: `ENOTDIR: not a directory, open '${through}'`
      })
    }))

  it.scoped("files up to the synchronous limit and past it are read exactly", () =>
    Effect.gen(function*() {
      assert.strictEqual(syncReadLimit, 256 * 1024)
      const directory = yield* tempDirectory
      const file = path.join(directory, "f")
      yield* Effect.promise(() => fsp.writeFile(file, Buffer.alloc(256 * 1024, 0x61)))
      const small = yield* readRegularFile(file, 1 << 20)
      assert.strictEqual(small.byteLength, 256 * 1024)
      yield* Effect.promise(() => fsp.appendFile(file, "b"))
      const large = yield* readRegularFile(file, 1 << 20)
      assert.strictEqual(large.byteLength, 256 * 1024 + 1)
      assert.strictEqual(large[256 * 1024], 0x62)
      assert.strictEqual(large.toString("latin1", 0, 256 * 1024), "a".repeat(256 * 1024))
    }))

  it.effect.skipIf(!hasProc)("a file whose length differs from its size is refused as changed (a /proc file: size 0)", () =>
    Effect.gen(function*() {
      assert.deepStrictEqual(yield* failure("/proc/self/status", 1 << 20), {
        reason: "unreadable",
        detail: "the file changed while being read"
      })
    }))

  it.scoped.skipIf(!hasProc)("no descriptor stays open, whatever the outcome", () =>
    Effect.gen(function*() {
      const directory = yield* tempDirectory
      const small = path.join(directory, "small")
      const large = path.join(directory, "large")
      yield* Effect.promise(() => fsp.writeFile(small, "0123456789"))
      yield* Effect.promise(() => fsp.writeFile(large, Buffer.alloc(syncReadLimit + 10)))
      const dir = path.join(directory, "dir")
      yield* Effect.promise(() => fsp.mkdir(dir))
      yield* Effect.either(readRegularFile(small, 100))
      yield* Effect.either(readRegularFile(small, 5))
      yield* Effect.either(readRegularFile(large, 1 << 20))
      yield* Effect.either(readRegularFile(dir, 100))
      assert.deepStrictEqual([openOn(small), openOn(large), openOn(dir)], [0, 0, 0])
      // Interrupted while reading a large file: the descriptor is closed too.
      const fiber = yield* Effect.fork(readRegularFile(large, 1 << 20))
      yield* Effect.yieldNow()
      yield* Fiber.interrupt(fiber)
      yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 50)))
      assert.strictEqual(openOn(large), 0)
    }))
})
