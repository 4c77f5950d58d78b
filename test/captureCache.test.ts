/**
 * The verified-capture cache (verify/CaptureCache.ts): a capture is read and hashed once, then
 * served from memory to later verifications of the same store; bounded by bytes (least recently
 * used out); failures and captures whose text does not hash to their digest are never kept; a record
 * file changed on disk is read again; and the service uses it (`server.cacheBytes`).
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Either, Option } from "effect"
import * as fsp from "node:fs/promises"
import * as path from "node:path"
import * as Config from "../src/Config.js"
import * as CaptureStore from "../src/store/CaptureStore.js"
import * as MemoryStore from "../src/store/Memory.js"
import * as CaptureCache from "../src/verify/CaptureCache.js"
import { call, sources as sourceServer, startService, tokens, waitForRun } from "./serverSupport.js"
import { tempDirectory } from "./support.js"
import { citationOf, counting, fixtureSources, verifierFor } from "./support/captureCacheFixture.js"
import { countOpens } from "./support/countOpens.js"

const { recordOf, sourceOf } = fixtureSources("cache.example.com")

const verifiedCount = (checked: { readonly results: ReadonlyArray<Either.Either<unknown, unknown>> }) =>
  checked.results.filter(Either.isRight).length

describe("verified-capture cache", () => {
  it.effect("the second verification of the same store reads nothing; each capture read and hashed once", () =>
    Effect.gen(function*() {
      const records = [recordOf(1), recordOf(2)]
      const memory = yield* MemoryStore.make({ records })
      const { reads, store } = counting(memory)
      const cache = CaptureCache.make({ maxBytes: 1 << 20 })
      const verifier = yield* verifierFor(store, records.map((r) => r.source), cache)
      // Two citations of each capture: still one read each.
      const citations = [...records.map((r) => citationOf(r)), ...records.map((r) => citationOf(r))]
      assert.strictEqual(verifiedCount(yield* verifier.checkCitations(citations)), 4)
      assert.deepStrictEqual(reads, [sourceOf(1), sourceOf(2)])
      assert.strictEqual(verifiedCount(yield* verifier.checkCitations(citations)), 4)
      assert.deepStrictEqual(reads, [sourceOf(1), sourceOf(2)], "the second verification read again")
      const stats = yield* cache.stats
      assert.deepInclude(stats, { entries: 2, hits: 2, misses: 2, evictions: 0 })
      // The report's digest is still checked on every verification, cached or not.
      const stale = yield* verifier.checkCitations([citationOf(records[0]!, "0".repeat(64))])
      assert.strictEqual(Either.getLeft(stale.results[0]!).pipe(Option.getOrThrow)[0]!._tag, "DigestMismatch")
    }))

  it.effect("without a cache (the CLI, the library default) every verification reads again", () =>
    Effect.gen(function*() {
      const records = [recordOf(1)]
      const { reads, store } = counting(yield* MemoryStore.make({ records }))
      const verifier = yield* verifierFor(store, [sourceOf(1)])
      yield* verifier.checkCitations([citationOf(records[0]!)])
      yield* verifier.checkCitations([citationOf(records[0]!)])
      assert.strictEqual(reads.length, 2)
    }))

  it.effect("bounded by bytes: the least recently used capture is evicted first; one larger than the budget is never kept", () =>
    Effect.gen(function*() {
      const records = [1, 2, 3].map((i) => recordOf(i))
      const perCapture = 2 * records[0]!.text.length
      // Room for two captures and not three (each entry also counts its other fields).
      const cache = CaptureCache.make({ maxBytes: 2 * perCapture + 4096 })
      const { reads, store } = counting(yield* MemoryStore.make({ records }))
      const verifier = yield* verifierFor(store, records.map((r) => r.source), cache)
      const verify = (i: number) => verifier.checkCitations([citationOf(records[i - 1]!)])
      yield* verify(1)
      yield* verify(2)
      yield* verify(1) // 1 is now the most recently used
      yield* verify(3) // evicts 2
      assert.deepStrictEqual(reads, [sourceOf(1), sourceOf(2), sourceOf(3)])
      yield* verify(1)
      yield* verify(3)
      assert.strictEqual(reads.length, 3)
      yield* verify(2)
      assert.deepStrictEqual(reads.slice(3), [sourceOf(2)])
      const stats = yield* cache.stats
      assert.isAtMost(stats.bytes, stats.maxBytes)
      assert.strictEqual(stats.entries, 2)
      assert.strictEqual(stats.evictions, 2)

      const tiny = CaptureCache.make({ maxBytes: perCapture / 2 })
      const small = counting(yield* MemoryStore.make({ records }))
      const uncached = yield* verifierFor(small.store, records.map((r) => r.source), tiny)
      yield* uncached.checkCitations([citationOf(records[0]!)])
      yield* uncached.checkCitations([citationOf(records[0]!)])
      assert.strictEqual(small.reads.length, 2)
      assert.deepInclude(yield* tiny.stats, { entries: 0, bytes: 0 })
    }))

  it.effect("a failure is never cached: a missing capture, and a capture whose text does not hash to its digest", () =>
    Effect.gen(function*() {
      const cache = CaptureCache.make({ maxBytes: 1 << 20 })
      const present = recordOf(1)
      const { reads, store } = counting(yield* MemoryStore.make({ records: [present] }))
      const verifier = yield* verifierFor(store, [sourceOf(1), sourceOf(2)], cache)
      const missing = recordOf(2)
      for (let round = 0; round < 2; round++) {
        const checked = yield* verifier.checkCitations([citationOf(missing)])
        assert.strictEqual(Either.getLeft(checked.results[0]!).pipe(Option.getOrThrow)[0]!._tag, "MissingCapture")
      }
      assert.deepStrictEqual(reads, [sourceOf(2), sourceOf(2)])

      // A store that returns a record whose text was altered after it was written (a fault injected on read).
      const altered = counting(
        yield* MemoryStore.make({ records: [present] }),
        (record) => ({ ...record, text: record.text.replace("rose", "fell") })
      )
      const tampered = yield* verifierFor(altered.store, [sourceOf(1)], cache)
      for (let round = 0; round < 2; round++) {
        const checked = yield* tampered.checkCitations([citationOf(present)])
        const failure = Either.getLeft(checked.results[0]!).pipe(Option.getOrThrow)[0]!
        assert.strictEqual(failure._tag, "DigestMismatch")
        assert.strictEqual((failure as { kind?: string }).kind, "stored")
      }
      assert.strictEqual(altered.reads.length, 2)
      assert.strictEqual((yield* cache.stats).entries, 0)
    }))

  it.scoped("the filesystem store: a record file changed on disk after caching is read and checked again", () =>
    Effect.gen(function*() {
      const directory = yield* tempDirectory
      const original = recordOf(1)
      const disk = yield* CaptureStore.makeFileSystem({ directory })
      yield* disk.write(original)
      const cache = CaptureCache.make({ maxBytes: 1 << 20 })
      const { reads, store } = counting(disk)
      const verifier = yield* verifierFor(store, [sourceOf(1)], cache)
      assert.strictEqual(verifiedCount(yield* verifier.checkCitations([citationOf(original)])), 1)
      assert.strictEqual(verifiedCount(yield* verifier.checkCitations([citationOf(original)])), 1)
      assert.strictEqual(reads.length, 1)
      // Another record of the same source put in its place (what immutability forbids, done anyway).
      const other = recordOf(1, "Source 1: net sales fell 4% to 1,180 units in Q3 2026. ".repeat(40))
      const elsewhere = yield* tempDirectory
      yield* (yield* CaptureStore.makeFileSystem({ directory: elsewhere })).write(other)
      const file = path.join(directory, CaptureStore.recordFileName(sourceOf(1)))
      yield* Effect.promise(async () => {
        await fsp.chmod(file, 0o644)
        await fsp.copyFile(path.join(elsewhere, CaptureStore.recordFileName(sourceOf(1))), file)
      })
      const after = yield* verifier.checkCitations([citationOf(original)])
      assert.strictEqual(reads.length, 2)
      assert.strictEqual(Either.getLeft(after.results[0]!).pipe(Option.getOrThrow)[0]!._tag, "DigestMismatch")
      // A new store value over the same directory shares the entries (the identity is the directory).
      const again = counting(yield* CaptureStore.makeFileSystem({ directory }))
      const second = yield* verifierFor(again.store, [sourceOf(1)], cache)
      assert.strictEqual(verifiedCount(yield* second.checkCitations([citationOf(other)])), 1)
      assert.strictEqual(again.reads.length, 0)
    }))
})

describe("server.cacheBytes", () => {
  const decode = (server: Record<string, unknown>) =>
    Effect.either(Config.decode({ sources: ["https://a.example.com/"], labels: ["x"], server: { tokens: [], ...server } }))

  it.effect("a documented default, a checked range, strict", () =>
    Effect.gen(function*() {
      const plain = yield* Config.decode({ sources: ["https://a.example.com/"], labels: ["x"], server: { tokens: [] } })
      assert.strictEqual(Config.resolvedServer(plain).cacheBytes, 256 * 1024 * 1024)
      const off = yield* decode({ cacheBytes: 0 })
      assert.isTrue(Either.isRight(off))
      if (Either.isRight(off)) assert.strictEqual(Config.resolvedServer(off.right).cacheBytes, 0)
      for (const bad of [-1, 1.5, 64 * 1024 * 1024 * 1024 + 1, "1024"]) {
        const decoded = yield* decode({ cacheBytes: bad })
        assert.isTrue(Either.isLeft(decoded), `cacheBytes ${JSON.stringify(bad)} was accepted`)
      }
      assert.isTrue(Either.isLeft(yield* decode({ cacheByte: 1024 })), "an unknown key was accepted")
    }))
})

describe("the service keeps verified captures (loopback)", () => {
  const sources = [1, 2, 3].map(sourceOf)
  const records = [1, 2, 3].map((i) => recordOf(i))
  const report = JSON.stringify({
    facts: records.map((record, i) => ({ state: "cited", label: ["q3_net_sales", "q3_inventory", "q4_forecast"][i], ...citationOf(record) }))
  })

  const serviceWith = (server: Record<string, unknown>) =>
    Effect.gen(function*() {
      const service = yield* startService({ sources, readerRuns: "*", server })
      const directory = path.join(service.runRoot, "stored-run")
      yield* Effect.promise(() => fsp.mkdir(directory, { recursive: true }))
      const store = yield* CaptureStore.makeFileSystem({ directory })
      for (const record of records) yield* store.write(record)
      return { service, directory }
    })

  const verify = (service: { readonly base: string }) =>
    Effect.map(call(service, "/v1/verify/report?run=stored-run", { token: tokens.reader, body: report, headers: { "content-type": "application/json" } }), (answer) => {
      assert.strictEqual(answer.status, 200, answer.text)
      assert.strictEqual(answer.json.status, "verified", answer.text)
      assert.strictEqual(answer.json.report.facts.length, 3)
    })

  it.scoped("the second request reads no capture; a record changed on disk is read again", () =>
    Effect.gen(function*() {
      const { directory, service } = yield* serviceWith({})
      const { opened } = yield* countOpens
      yield* verify(service)
      assert.strictEqual(opened.length, 3, opened.join("\n"))
      yield* verify(service)
      assert.strictEqual(opened.length, 3, "the second request reread a capture")
      // chmod changes the record file's change time: that capture alone is read and checked again.
      yield* Effect.promise(() => fsp.chmod(path.join(directory, CaptureStore.recordFileName(sourceOf(2))), 0o400))
      yield* verify(service)
      assert.deepStrictEqual(opened.slice(3).map((file) => path.basename(file)), [CaptureStore.recordFileName(sourceOf(2))])
      // The run's manifest: built once (every source captured), then kept.
      const first = yield* call(service, "/v1/runs/stored-run", { token: tokens.reader })
      assert.strictEqual(first.status, 200, first.text)
      const before = opened.length
      const second = yield* call(service, "/v1/runs/stored-run", { token: tokens.reader })
      assert.strictEqual(second.text, first.text)
      assert.strictEqual(opened.length, before)
    }))

  it.scoped("with server.cacheBytes 0 every request reads every capture", () =>
    Effect.gen(function*() {
      const { service } = yield* serviceWith({ cacheBytes: 0 })
      const { opened } = yield* countOpens
      yield* verify(service)
      yield* verify(service)
      assert.strictEqual(opened.length, 6)
    }))

  it.scoped("a run this server captured: its manifest is built once it is finished, then kept (a missing source included)", () =>
    Effect.gen(function*() {
      const { server } = yield* sourceServer
      const service = yield* startService({ sources: [server.url("/q3-sales.txt"), server.url("/not-there.txt")] })
      const started = yield* call(service, "/v1/runs", { method: "POST", token: tokens.admin })
      assert.strictEqual(started.status, 202, started.text)
      yield* waitForRun(service, started.json.id)
      const { opened } = yield* countOpens
      const first = yield* call(service, `/v1/runs/${started.json.id}`, { token: tokens.admin })
      assert.strictEqual(first.json.status, "completed", first.text)
      assert.deepStrictEqual(first.json.manifest.sources.map((s: { status: string }) => s.status), ["captured", "missing"])
      // Built once: the captured record read, the missing one looked for.
      assert.isAbove(opened.length, 0)
      const before = opened.length
      const second = yield* call(service, `/v1/runs/${started.json.id}`, { token: tokens.admin })
      assert.strictEqual(second.text, first.text)
      assert.strictEqual(opened.length, before, "the finished run's manifest was built again")
    }))
})
