import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import * as fsp from "node:fs/promises"
import * as path from "node:path"
import * as CaptureStore from "../src/store/CaptureStore.js"
import { makeCaptureRecord } from "../src/Domain.js"
import { CaptureExists, CaptureWriteFailed, CorruptCapture, InvalidRunDirectory, MissingCapture } from "../src/Errors.js"
import { expectedRecordName } from "./mutants.support.js"
import { inventoryRecord, recordPath, SALES, salesRecord, snapshotDirectory, tempDirectory } from "./support.js"

describe("CaptureStore (filesystem)", () => {
  it.scoped("writes a read-only record under the digest of its exact source and reads it back", () =>
    Effect.gen(function*() {
      const directory = yield* tempDirectory
      const store = yield* CaptureStore.makeFileSystem({ directory })
      yield* store.write(salesRecord)
      const entries = yield* snapshotDirectory(directory)
      assert.deepStrictEqual(entries.map((e) => e.name), [expectedRecordName(SALES)])
      assert.strictEqual(entries[0]!.mode & 0o777, 0o444)
      const read = yield* store.read(SALES)
      assert.deepStrictEqual(read, salesRecord)
    }))

  it.scoped("reads a large record (past the synchronous-read size) back intact", () =>
    Effect.gen(function*() {
      const directory = yield* tempDirectory
      const store = yield* CaptureStore.makeFileSystem({ directory })
      const big = makeCaptureRecord({ ...salesRecord, text: "Net sales rose. ".repeat(128 * 1024) + "é\n" })
      yield* store.write(big)
      assert.deepStrictEqual(yield* store.read(SALES), big)
      const tooSmallCap = yield* CaptureStore.makeFileSystem({ directory, maxRecordBytes: 1024 })
      const error = yield* Effect.flip(tooSmallCap.read(SALES))
      assert.instanceOf(error, CorruptCapture)
      assert.strictEqual(error.reason, "too-large")
    }))

  it.scoped("CaptureExists: a second capture of one source leaves the first byte-for-byte untouched", () =>
    Effect.gen(function*() {
      const directory = yield* tempDirectory
      const store = yield* CaptureStore.makeFileSystem({ directory })
      yield* store.write(salesRecord)
      const before = yield* snapshotDirectory(directory)
      const second = { ...salesRecord, text: "replacement", sha256: inventoryRecord.sha256 } as typeof salesRecord
      const error = yield* Effect.flip(store.write(second))
      assert.instanceOf(error, CaptureExists)
      assert.strictEqual(error.source, SALES)
      assert.deepStrictEqual(yield* snapshotDirectory(directory), before)
    }))

  it.scoped("CaptureExists: a symlink under the final name is never written through", () =>
    Effect.gen(function*() {
      const directory = yield* tempDirectory
      const target = path.join(directory, "..", `${path.basename(directory)}-target`)
      yield* Effect.addFinalizer(() => Effect.promise(() => fsp.rm(target, { force: true })))
      yield* Effect.promise(() => fsp.symlink(target, recordPath(directory, SALES)))
      const store = yield* CaptureStore.makeFileSystem({ directory })
      const error = yield* Effect.flip(store.write(salesRecord))
      assert.instanceOf(error, CaptureExists)
      const exists = yield* Effect.promise(() => fsp.access(target).then(() => true, () => false))
      assert.isFalse(exists)
    }))

  it.scoped("CaptureWriteFailed: a failing disk write leaves neither a record nor a temporary file", () =>
    Effect.gen(function*() {
      const directory = yield* tempDirectory
      const io: CaptureStore.FileIo = {
        ...CaptureStore.nodeIo,
        // The temporary file is created and half written, then the disk is full.
        write: async (fd, bytes) => {
          await CaptureStore.nodeIo.write(fd, bytes.subarray(0, 10))
          throw Object.assign(new Error("ENOSPC: no space left on device, write"), { code: "ENOSPC" })
        }
      }
      const store = yield* CaptureStore.makeFileSystem({ directory, io })
      const error = yield* Effect.flip(store.write(salesRecord))
      assert.instanceOf(error, CaptureWriteFailed)
      assert.match(error.detail, /ENOSPC/)
      assert.deepStrictEqual(yield* snapshotDirectory(directory), [])
      assert.instanceOf(yield* Effect.flip(store.read(SALES)), MissingCapture)
    }))

  it.scoped("InvalidRunDirectory: the run directory must exist and be a directory", () =>
    Effect.gen(function*() {
      const directory = yield* tempDirectory
      const missing = yield* Effect.flip(CaptureStore.makeFileSystem({ directory: path.join(directory, "nope") }))
      assert.instanceOf(missing, InvalidRunDirectory)
      assert.strictEqual(missing.path, path.join(directory, "nope"))
      assert.match(missing.detail, /ENOENT|no such file/)
      yield* Effect.promise(() => fsp.writeFile(path.join(directory, "file"), ""))
      const notDirectory = yield* Effect.flip(CaptureStore.makeFileSystem({ directory: path.join(directory, "file") }))
      assert.instanceOf(notDirectory, InvalidRunDirectory)
      assert.strictEqual(notDirectory.path, path.join(directory, "file"))
      assert.strictEqual(notDirectory.detail, "not a directory")
    }))

  it.scoped("the serialised record decodes back to the same record", () =>
    Effect.sync(() => {
      const encoded = CaptureStore.encodeRecord(salesRecord)
      assert.deepStrictEqual(JSON.parse(encoded), { ...salesRecord })
      assert.isTrue(encoded.endsWith("}\n"))
    }))
})
