/**
 * Large records read one ahead (verify/Load.ts `readAllNow`, internal/safeRead.ts `startRest`): the
 * next large record's read starts before the one before it is decoded and hashed. Checked against
 * the general path (the same store behind a wrapper of `read`, one capture after the other), with
 * the files open counted: never more than two, and every one closed, also when the verification is
 * interrupted or a started read is never waited for.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Either, Fiber, Layer } from "effect"
import * as fs from "node:fs"
import type { PipelineConfig } from "../src/Config.js"
import { type CaptureRecord, makeCaptureRecord, type SourceUrl } from "../src/Domain.js"
import { readNowOf } from "../src/internal/readNow.js"
import { syncReadLimit } from "../src/internal/safeRead.js"
import * as CaptureStore from "../src/store/CaptureStore.js"
import { VerificationTimeout } from "../src/Errors.js"
import * as Gate from "../src/verify/Gate.js"
import { loadCaptures } from "../src/verify/Load.js"
import { accessedAt, recordPath, tempDirectory } from "./support.js"
import { trackOpenRecords } from "./support/countOpens.js"

const source = (name: string) => `https://ahead.example.com/${name}` as SourceUrl
const prose = "Net sales rose 4% to 1,180 units in Q3 2026. Revenue was 4,210,000 euros.\n"
const plain = (name: string, text: string) => makeCaptureRecord({ source: source(name), text, accessedAt, contentType: "text/plain" })
// Past syncReadLimit, so read asynchronously; each its own text, some with non-ASCII (the strict UTF-8 path).
const largeText = (i: number) => `Large ${i}${i % 2 === 0 ? " (café, Zürich)" : ""}: ${prose.repeat(Math.ceil((syncReadLimit + 5_000) / prose.length))}`
const large = Array.from({ length: 6 }, (_, i) => plain(`large-${i}.txt`, largeText(i)))
const small = Array.from({ length: 3 }, (_, i) => plain(`small-${i}.txt`, `Small ${i}: ${prose}`))
// Large records broken after they are written: one with an extra key, one not UTF-8; and one never written.
const extraKey = plain("large-extra-key.txt", largeText(10))
const notUtf8 = plain("large-not-utf8.txt", largeText(11))
const missing = plain("missing.txt", "never written")
// Small and large interleaved, a broken or missing one between large ones.
const cited: ReadonlyArray<CaptureRecord> = [large[0]!, small[0]!, large[1]!, extraKey, large[2]!, small[1]!, notUtf8, large[3]!, missing, large[4]!, small[2]!, large[5]!]

const runDirectory = Effect.gen(function*() {
  const directory = yield* tempDirectory
  const store = yield* CaptureStore.makeFileSystem({ directory })
  for (const record of [...large, ...small, extraKey, notUtf8]) yield* store.write(record)
  const rewrite = (record: CaptureRecord, change: (json: string) => string | Buffer) => {
    const file = recordPath(directory, record.source)
    const stored = fs.readFileSync(file, "utf8")
    fs.rmSync(file)
    fs.writeFileSync(file, change(stored))
  }
  rewrite(extraKey, (json) => JSON.stringify({ ...JSON.parse(json), extra: 1 }))
  rewrite(notUtf8, (json) => Buffer.concat([Buffer.from(json.slice(0, -2)), Buffer.from([0xff, 0x22, 0x7d])]))
  return directory
}).pipe(Effect.orDie)

const labels = cited.map((_, i) => `fact_${i}`)
const report = JSON.stringify({
  facts: cited.map((record, i) => ({
    state: "cited",
    label: labels[i],
    source: record.source,
    captureSha256: record.sha256,
    snippet: record.text.slice(0, 12 + i)
  }))
})
const configOf = (verify: Record<string, unknown>) =>
  ({ sources: cited.map((r) => r.source), labels, verify: { maxFacts: 100, mode: "drop", ...verify } }) as unknown as PipelineConfig

const gateOf = (directory: string, wrapped: boolean, verify: Record<string, unknown> = {}) =>
  Effect.provide(
    Gate.Gate,
    Gate.layerWithStore(configOf(verify)).pipe(
      Layer.provide(Layer.effect(
        CaptureStore.CaptureStore,
        Effect.map(CaptureStore.makeFileSystem({ directory }), (store): CaptureStore.CaptureStoreShape =>
          wrapped ? { ...store, read: (s) => store.read(s) } : store)
      )),
      Layer.orDie
    )
  )

const outcomeOf = <E>(checked: Effect.Effect<Gate.Checked, E>) =>
  Effect.map(Effect.either(checked), (outcome) => Either.map(outcome, (c) => ({ ...c, captures: [...c.captures.entries()] })))

/** Waits (up to 5 s) until no record file is open. */
const allClosed = (state: { readonly open: ReadonlySet<number> }) =>
  Effect.gen(function*() {
    for (let i = 0; i < 500 && state.open.size > 0; i++) yield* Effect.sleep("10 millis")
    assert.strictEqual(state.open.size, 0, "record files left open")
  })

describe("large records read one ahead", () => {
  it.scopedLive("the outcome of reading one after the other, in the sources' order, with two files open at most", () =>
    Effect.gen(function*() {
      const directory = yield* runDirectory
      const general = yield* outcomeOf((yield* gateOf(directory, true)).checkJsonWithCaptures(report))
      const files = yield* trackOpenRecords
      const ahead = yield* outcomeOf((yield* gateOf(directory, false)).checkJsonWithCaptures(report))
      assert.deepStrictEqual(ahead, general)
      // Each record opened once; the next large one opened while the one before it was still open.
      assert.strictEqual(files.opened, cited.length - 1)
      assert.strictEqual(files.most, 2)
      yield* allClosed(files)
      assert.isTrue(Either.isRight(ahead))
      if (Either.isRight(ahead)) {
        const verified = ahead.right.report.facts.map((entry) => entry.fact.state === "cited" ? entry.fact.source : "")
        const broken: ReadonlyArray<CaptureRecord> = [extraKey, notUtf8, missing]
        assert.deepStrictEqual(verified, cited.filter((r) => !broken.includes(r)).map((r) => r.source))
        assert.deepStrictEqual(ahead.right.captures.map(([s]) => s), verified)
        const reasons = ahead.right.report.retractions.map((r) => `${r.error._tag}:${"reason" in r.error ? String(r.error.reason) : ""}`)
        assert.sameMembers(reasons, ["CorruptCapture:not-a-v1-record", "CorruptCapture:invalid-utf8", "MissingCapture:"])
      }
    }), 60_000)

  it.scopedLive("the loaded captures are in the sources' order, large ones joined late included", () =>
    Effect.gen(function*() {
      const directory = yield* runDirectory
      const store = yield* CaptureStore.makeFileSystem({ directory })
      const sources = cited.map((r) => r.source)
      const loaded = yield* loadCaptures(store, new Set(sources))
      assert.deepStrictEqual([...loaded.keys()], sources)
      for (const [source, capture] of loaded) {
        if (Either.isRight(capture)) assert.strictEqual(capture.right.record.source, source)
      }
    }), 30_000)

  it.scopedLive("a long run of large records yields to the timers: an overrun deadline stops it before the last", () =>
    Effect.gen(function*() {
      // 40 records of about 300,000 code units, each read by an effect: 12 Mi units in all, past the
      // 8 Mi after which the load yields to the timers.
      const many = Array.from({ length: 40 }, (_, i) => plain(`many-${i}.txt`, `${i} ${largeText(i)}`))
      const directory = yield* tempDirectory
      const store = yield* CaptureStore.makeFileSystem({ directory })
      for (const record of many) yield* store.write(record)
      const facts = many.map((r, i) => ({ state: "cited", label: `fact_${i}`, source: r.source, captureSha256: r.sha256, snippet: r.text.slice(0, 20) }))
      const config = { sources: many.map((r) => r.source), labels: facts.map((f) => f.label), verify: { maxFacts: 100, mode: "drop", timeoutMs: 1 } }
      const gate = yield* Effect.provide(
        Gate.Gate,
        Gate.layerWithStore(config).pipe(Layer.provide(Layer.succeed(CaptureStore.CaptureStore, store)), Layer.orDie)
      )
      const files = yield* trackOpenRecords
      const error = yield* Effect.flip(gate.checkJson(JSON.stringify({ facts })))
      assert.instanceOf(error, VerificationTimeout)
      assert.isAbove(files.opened, 0)
      assert.isBelow(files.opened, 40)
      yield* allClosed(files)
    }), 60_000)

  it.scopedLive("a large record's read, started and never waited for, still ends and closes its file", () =>
    Effect.gen(function*() {
      const directory = yield* runDirectory
      const store = yield* CaptureStore.makeFileSystem({ directory })
      const readNow = readNowOf(store.read)!
      const files = yield* trackOpenRecords
      const started = readNow(large[0]!.source)
      assert.isFalse(Either.isEither(started), "a large record is read by an effect")
      assert.strictEqual(files.open.size, 1)
      yield* allClosed(files)
      // Run late, the effect gives the record all the same.
      if (!Either.isEither(started)) assert.strictEqual((yield* started).text, large[0]!.text)
    }), 30_000)

  for (const afterTicks of [0, 1, 3, 10]) {
    it.scopedLive(`a verification interrupted ${afterTicks} ticks in leaves no record file open`, () =>
      Effect.gen(function*() {
        const directory = yield* runDirectory
        const gate = yield* gateOf(directory, false)
        const files = yield* trackOpenRecords
        const fiber = yield* Effect.fork(gate.checkJson(report))
        for (let i = 0; i < afterTicks; i++) yield* Effect.promise(() => new Promise((resolve) => setImmediate(resolve)))
        yield* Fiber.interrupt(fiber)
        yield* allClosed(files)
        assert.isAtMost(files.most, 2)
      }), 30_000)
  }
})
