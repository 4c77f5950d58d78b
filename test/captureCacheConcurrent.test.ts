/**
 * Concurrent misses in the verified-capture cache (verify/CaptureCache.ts): on a cold cache, many
 * verifications of the same capture at once read and hash it once (one load in flight per capture);
 * a failed read is given to the loads that waited for it and to no later one; a waiter whose reader
 * was interrupted reads for itself; the service, under concurrent requests, opens each record once.
 */
import { assert, describe, it } from "@effect/vitest"
import { Deferred, Effect, Either, Fiber, Option } from "effect"
import * as fsp from "node:fs/promises"
import * as path from "node:path"
import { CorruptCapture } from "../src/Errors.js"
import * as CaptureStore from "../src/store/CaptureStore.js"
import * as MemoryStore from "../src/store/Memory.js"
import * as CaptureCache from "../src/verify/CaptureCache.js"
import { call, startService, tokens } from "./serverSupport.js"
import { citationOf, fixtureSources, textOf, verifierFor } from "./support/captureCacheFixture.js"
import { countOpens } from "./support/countOpens.js"

const { recordOf } = fixtureSources("merge.example.com")

/** A store whose reads are counted and pass through `gate` first (a fault injected on read: slow, failing or stuck). */
const gated = (
  store: CaptureStore.CaptureStoreShape,
  gate: (read: number) => Effect.Effect<void, CorruptCapture>
) => {
  let reads = 0
  const wrapped: CaptureStore.CaptureStoreShape = {
    ...store,
    read: (source) => Effect.suspend(() => Effect.zipRight(gate(++reads), store.read(source)))
  }
  return { store: wrapped, reads: () => reads }
}

const firstTag = (checked: { readonly results: ReadonlyArray<Either.Either<unknown, ReadonlyArray<{ readonly _tag: string }>>> }) =>
  Either.getLeft(checked.results[0]!).pipe(Option.map((failures) => failures[0]!._tag), Option.getOrUndefined)

describe("verified-capture cache: concurrent misses", () => {
  it.live("eight verifications of one capture at once on a cold cache: one read; later ones hit", () =>
    Effect.gen(function*() {
      const record = recordOf(1)
      const { reads, store } = gated(yield* MemoryStore.make({ records: [record] }), () => Effect.sleep("20 millis"))
      const cache = CaptureCache.make({ maxBytes: 1 << 20 })
      const verifier = yield* verifierFor(store, [record.source], cache)
      const checked = yield* Effect.all(Array.from({ length: 8 }, () => verifier.checkCitations([citationOf(record)])), { concurrency: "unbounded" })
      for (const one of checked) assert.isTrue(Either.isRight(one.results[0]!))
      assert.strictEqual(reads(), 1)
      assert.deepInclude(yield* cache.stats, { misses: 1, merged: 7, hits: 0, entries: 1 })
      yield* verifier.checkCitations([citationOf(record)])
      assert.strictEqual(reads(), 1)
    }))

  it.live("a failed read goes to the loads that waited for it, and to no later one", () =>
    Effect.gen(function*() {
      const record = recordOf(2)
      const { reads, store } = gated(
        yield* MemoryStore.make({ records: [record] }),
        (read) =>
          Effect.zipRight(
            Effect.sleep("20 millis"),
            read === 1 ? Effect.fail(new CorruptCapture({ source: record.source, reason: "unreadable", detail: "injected" })) : Effect.void
          )
      )
      const cache = CaptureCache.make({ maxBytes: 1 << 20 })
      const verifier = yield* verifierFor(store, [record.source], cache)
      const checked = yield* Effect.all(Array.from({ length: 6 }, () => verifier.checkCitations([citationOf(record)])), { concurrency: "unbounded" })
      assert.deepStrictEqual(checked.map(firstTag), Array(6).fill("CorruptCapture"))
      assert.strictEqual(reads(), 1)
      assert.strictEqual((yield* cache.stats).entries, 0)
      // The failure was not kept: the next verification reads again (and this time the read succeeds).
      const again = yield* verifier.checkCitations([citationOf(record)])
      assert.isTrue(Either.isRight(again.results[0]!))
      assert.strictEqual(reads(), 2)
    }))

  it.live("a waiter whose reader is interrupted reads for itself", () =>
    Effect.gen(function*() {
      const record = recordOf(3)
      const stuck = yield* Deferred.make<void>()
      const { reads, store } = gated(yield* MemoryStore.make({ records: [record] }), (read) => read === 1 ? Deferred.await(stuck) : Effect.void)
      const cache = CaptureCache.make({ maxBytes: 1 << 20 })
      const verifier = yield* verifierFor(store, [record.source], cache)
      const first = yield* Effect.fork(verifier.checkCitations([citationOf(record)]))
      yield* Effect.sleep("20 millis")
      const second = yield* Effect.fork(verifier.checkCitations([citationOf(record)]))
      yield* Effect.sleep("20 millis")
      assert.strictEqual((yield* cache.stats).merged, 1)
      yield* Fiber.interrupt(first)
      const checked = yield* Fiber.join(second)
      assert.isTrue(Either.isRight(checked.results[0]!))
      assert.strictEqual(reads(), 2)
      assert.strictEqual((yield* cache.stats).entries, 1)
    }))
})

describe("the service under concurrent requests on a cold cache (loopback)", () => {
  it.scoped("eight requests at once open each record once", () =>
    Effect.gen(function*() {
      // Over 256 KiB each: read asynchronously, so the requests' reads overlap.
      const records = [1, 2, 3].map((i) => recordOf(i, textOf(i, 8_000)))
      const sources = records.map((r) => r.source)
      const service = yield* startService({ sources, readerRuns: "*", server: {} })
      const directory = path.join(service.runRoot, "stored-run")
      yield* Effect.promise(() => fsp.mkdir(directory, { recursive: true }))
      const disk = yield* CaptureStore.makeFileSystem({ directory })
      for (const record of records) yield* disk.write(record)
      const report = JSON.stringify({
        facts: records.map((record, i) => ({ state: "cited", label: ["q3_net_sales", "q3_inventory", "q4_forecast"][i], ...citationOf(record) }))
      })
      const { opened } = yield* countOpens
      const answers = yield* Effect.all(
        Array.from({ length: 8 }, () =>
          call(service, "/v1/verify/report?run=stored-run", { token: tokens.reader, body: report, headers: { "content-type": "application/json" } })),
        { concurrency: "unbounded" }
      )
      for (const answer of answers) {
        assert.strictEqual(answer.status, 200, answer.text)
        assert.strictEqual(answer.json.status, "verified", answer.text)
      }
      assert.strictEqual(opened.length, 3, opened.map((file) => path.basename(file)).join("\n"))
    }))
})
