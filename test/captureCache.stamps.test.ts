/**
 * The filesystem store stamps every capture a verification cites in one call (`stamps`): the same
 * stamps `stamp` gives one at a time, taken afresh on every call, so a record changed on disk
 * between two verifications through the cache is read and checked again, and a hit is taken
 * without reading.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Either } from "effect"
import * as fsp from "node:fs/promises"
import * as path from "node:path"
import * as CaptureStore from "../src/store/CaptureStore.js"
import { recordFileName } from "../src/store/Format.js"
import * as CaptureCache from "../src/verify/CaptureCache.js"
import { tempDirectory, writeRecords } from "./support.js"
import { citationOf, counting, fixtureSources, verifierFor } from "./support/captureCacheFixture.js"

const { recordOf, sourceOf } = fixtureSources("stamps.cache.example.com")

describe("filesystem store: stamps in one call", () => {
  it.scoped("stamps equal each source's stamp; a missing source has none; every call is a fresh lstat", () =>
    Effect.gen(function*() {
      const directory = yield* tempDirectory
      const records = [recordOf(1), recordOf(2)]
      yield* writeRecords(directory, records)
      const store = yield* CaptureStore.makeFileSystem({ directory })
      assert.isDefined(store.stamps)
      const sources = [sourceOf(1), sourceOf(2), sourceOf(3)]
      const bulk = yield* store.stamps!(sources)
      assert.strictEqual(bulk.size, 2)
      for (const source of sources) assert.strictEqual(bulk.get(source), yield* store.stamp!(source))
      // A chmod changes the change time and mode: the next call sees it (nothing is remembered but the path).
      yield* Effect.promise(() => fsp.chmod(path.join(directory, recordFileName(sourceOf(1))), 0o600))
      const after = yield* store.stamps!(sources)
      assert.notStrictEqual(after.get(sourceOf(1)), bulk.get(sourceOf(1)))
      assert.strictEqual(after.get(sourceOf(2)), bulk.get(sourceOf(2)))
    }))

  it.scoped("through the cache: one bulk stamp per verification, hits read nothing, a record replaced on disk is read again", () =>
    Effect.gen(function*() {
      const directory = yield* tempDirectory
      const records = [recordOf(1), recordOf(2)]
      yield* writeRecords(directory, records)
      const { reads, stamps, store } = counting(yield* CaptureStore.makeFileSystem({ directory }))
      const cache = CaptureCache.make({ maxBytes: 1 << 20 })
      const verifier = yield* verifierFor(store, records.map((r) => r.source), cache)
      const citations = records.map((r) => citationOf(r))
      const first = yield* verifier.checkCitations(citations)
      assert.isTrue(first.results.every(Either.isRight))
      const second = yield* verifier.checkCitations(citations)
      assert.deepStrictEqual(second.results, first.results)
      assert.deepStrictEqual(reads, [sourceOf(1), sourceOf(2)])
      assert.strictEqual(stamps(), 2)
      assert.deepInclude(yield* cache.stats, { hits: 2, misses: 2 })
      // Replaced by another file with other text: a new inode, so a new stamp; read again and fails its digest.
      const file = path.join(directory, recordFileName(sourceOf(2)))
      const other = recordOf(2, "Other text entirely, with no quote of the first. ".repeat(30))
      const otherDirectory = yield* tempDirectory
      yield* writeRecords(otherDirectory, [other])
      yield* Effect.promise(async () => {
        await fsp.chmod(directory, 0o700)
        await fsp.rm(file, { force: true })
        await fsp.copyFile(path.join(otherDirectory, recordFileName(sourceOf(2))), file)
      })
      const third = yield* verifier.checkCitations(citations)
      assert.deepStrictEqual(reads, [sourceOf(1), sourceOf(2), sourceOf(2)])
      assert.isTrue(Either.isRight(third.results[0]!))
      assert.isTrue(Either.isLeft(third.results[1]!))
    }))
})
