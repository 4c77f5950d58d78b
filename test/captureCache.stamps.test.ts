/**
 * The filesystem store stamps every capture a verification cites in one call (`stamps`): the same
 * stamps `stamp` gives one at a time, taken afresh on every call, so a record changed on disk
 * between two verifications through the cache is read and checked again, and a hit is taken
 * without reading. The warm path (`Verifier.checkJsonWarm`) counts each capture once, even when it
 * gives up part-way and the general path takes the verification.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Either, Layer, Option } from "effect"
import * as fsp from "node:fs/promises"
import * as path from "node:path"
import type { PipelineConfig } from "../src/Config.js"
import type { CaptureRecord } from "../src/Domain.js"
import * as CaptureStore from "../src/store/CaptureStore.js"
import { recordFileName } from "../src/store/Format.js"
import * as CaptureCache from "../src/verify/CaptureCache.js"
import * as Policy from "../src/verify/Policy.js"
import * as Verifier from "../src/verify/Verifier.js"
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

describe("the warm path's cache statistics", () => {
  it.scoped("a capture is counted once per verification: the warm path's look before a miss is not counted again by the general path", () =>
    Effect.gen(function*() {
      const directory = yield* tempDirectory
      const records = [recordOf(1), recordOf(2), recordOf(3)]
      yield* writeRecords(directory, records)
      const store = yield* CaptureStore.makeFileSystem({ directory })
      assert.isDefined(store.stampsNow)
      const cache = CaptureCache.make({ maxBytes: 1 << 20 })
      const verifier = yield* Verifier.make.pipe(
        Effect.provide(Layer.merge(
          Layer.succeed(CaptureStore.CaptureStore, store),
          Policy.layer({ sources: records.map((r) => r.source), labels: ["fact_0", "fact_1"] } as unknown as PipelineConfig)
        )),
        CaptureCache.provideOption(Option.some(cache))
      )
      const reportOf = (...cited: ReadonlyArray<CaptureRecord>) =>
        JSON.stringify({ facts: cited.map((r, i) => ({ state: "cited", label: `fact_${i}`, ...citationOf(r) })) })
      const warmOnly = reportOf(records[0]!, records[1]!)
      // Cold, then again: both captures kept, their indexes built (the general path).
      for (let i = 0; i < 2; i++) assert.strictEqual((yield* verifier.checkJson(warmOnly)).rejections.length, 0)
      assert.deepInclude(yield* cache.stats, { hits: 2, misses: 2 })
      // Every capture warm: answered at once, each counted once.
      assert.strictEqual(verifier.checkJsonWarm!(warmOnly)?.rejections.length, 0)
      assert.deepInclude(yield* cache.stats, { hits: 4, misses: 2 })
      // Capture 1 warm, capture 3 never read: the warm path gives up at 3 and counts nothing; the
      // general path counts capture 1 as a hit and capture 3 as a miss, once each.
      const partly = reportOf(records[0]!, records[2]!)
      assert.isUndefined(verifier.checkJsonWarm!(partly))
      assert.deepInclude(yield* cache.stats, { hits: 4, misses: 2 })
      assert.strictEqual((yield* verifier.checkJson(partly)).rejections.length, 0)
      assert.deepInclude(yield* cache.stats, { hits: 5, misses: 3 })
    }))
})
