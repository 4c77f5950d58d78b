/**
 * A cached capture carries span-offset checkpoints (anchor/Offsets.ts), counted in the cache's
 * bytes, and the evidence verified through the cache (offsets in code points and UTF-8 bytes,
 * selectors) is the evidence verified without it, on non-ASCII captures.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Either } from "effect"
import { checkpoints } from "../src/anchor/Offsets.js"
import * as MemoryStore from "../src/store/Memory.js"
import * as CaptureCache from "../src/verify/CaptureCache.js"
import { fixtureSources, verifierFor } from "./support/captureCacheFixture.js"
import { random } from "./support/seeded.js"

const { recordOf } = fixtureSources("offsets.cache.example.com")

const pieces = ["word ", "café ", "e\u0301", "漢字 ", "한국 ", "€", "\u{1F600}", "\u{20000}", "\u{1D11E} ", "\n", "ß"]

const seededText = (seed: number, length: number) => {
  const seeded = random(seed)
  const next = (bound: number) => seeded() % bound
  let text = ""
  while (text.length < length) text += pieces[next(pieces.length)]! + String(next(1000))
  return { text, next }
}

const isLow = (text: string, at: number) => (text.charCodeAt(at) & 0xfc00) === 0xdc00

describe("verified-capture cache: span offsets", () => {
  it.effect("evidence through the cache (from checkpoints) equals evidence without it, on non-ASCII text", () =>
    Effect.gen(function*() {
      const made = [1, 2, 3].map((i) => seededText(i, 30_000 + 997 * i))
      const records = made.map(({ text }, i) => recordOf(i + 1, text))
      const citations = records.flatMap((record, r) =>
        Array.from({ length: 12 }, () => {
          const { next } = made[r]!
          let start = next(record.text.length - 80)
          if (isLow(record.text, start)) start += 1
          let end = start + 20 + next(40)
          if (isLow(record.text, end)) end += 1
          return { source: record.source, captureSha256: record.sha256, snippet: record.text.slice(start, end) }
        })
      )
      const store = yield* MemoryStore.make({ records })
      const cache = CaptureCache.make({ maxBytes: 64 << 20 })
      const cached = yield* verifierFor(store, records.map((r) => r.source), cache)
      const plain = yield* verifierFor(store, records.map((r) => r.source))
      const expected = (yield* plain.checkCitations(citations)).results
      assert.isTrue(expected.every(Either.isRight))
      const first = (yield* cached.checkCitations(citations)).results
      const second = (yield* cached.checkCitations(citations)).results
      assert.deepStrictEqual(first, expected)
      assert.deepStrictEqual(second, expected)
      assert.deepInclude(yield* cache.stats, { hits: 3, misses: 3 })
    }))

  it.effect("the checkpoints are counted in the cache's bytes", () =>
    Effect.gen(function*() {
      const record = recordOf(9, seededText(9, 40_000).text)
      const store = yield* MemoryStore.make({ records: [record] })
      // Room for the text, too little for a search index (about 4.9 bytes per code unit): text and checkpoints only.
      const cache = CaptureCache.make({ maxBytes: 2 * record.text.length + 8_192 })
      const verifier = yield* verifierFor(store, [record.source], cache)
      yield* verifier.checkCitations([{ source: record.source, captureSha256: record.sha256, snippet: record.text.slice(100, 140) }])
      const stats = yield* cache.stats
      assert.strictEqual(stats.entries, 1)
      const text = 2 * record.text.length + 2 * JSON.stringify({ ...record, text: "" }).length + 256
      assert.strictEqual(stats.bytes, text + checkpoints(record.text).bytes)
    }))
})
