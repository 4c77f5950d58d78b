/**
 * A verification of many small records with the helper thread reading them ahead
 * (internal/readAhead.ts, through the filesystem store's `readAhead` option): the same outcome,
 * errors included word for word, as the same store with it off and as the general path (a wrapper
 * of `read`), on a run directory with records that fail every way a read fails; while the thread
 * reads, is slowed mid-file, or crashes holding a file. The thread did take part, every batch was
 * ended, and only the verification that started a batch reads through it.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Either } from "effect"
import * as fs from "node:fs"
import * as ReadAhead from "../src/internal/readAhead.js"
import { readAheadOf } from "../src/internal/readNow.js"
import * as CaptureStore from "../src/store/CaptureStore.js"
import { random } from "./searchSupport.js"
import { recordPath } from "./support.js"
import { all, comparable, small, everyRecordReport, gateOf, outcomeOf, policies, runDirectory } from "./support/smallRun.js"

const threadIdle = Effect.promise(async () => {
  const deadline = Date.now() + 5_000
  while (ReadAhead.threadBusy()) {
    if (Date.now() > deadline) throw new Error("the thread stayed busy")
    await new Promise((resolve) => setTimeout(resolve, 5))
  }
})

describe("verifying with records read ahead by the helper thread", () => {
  it.scopedLive("seeded reports citing every record, under four policies: the same outcome with the thread, without it, and on the general path", () =>
    Effect.gen(function*() {
      assert.isAtLeast(all.length, ReadAhead.minFiles)
      yield* Effect.promise(() => ReadAhead.configureForTests({}))
      const directory = yield* runDirectory
      const before = ReadAhead.filesHandedOver()
      const tags = new Set<string>()
      for (const verify of policies) {
        const ahead = yield* gateOf(directory, verify, false)
        const alone = yield* gateOf(directory, verify, false, { readAhead: false })
        const general = yield* gateOf(directory, verify, true)
        const next = random(57 + policies.indexOf(verify))
        for (let n = 0; n < 25; n++) {
          const text = everyRecordReport(next)
          // The thread has finished the last batch, so that it takes part in this one.
          yield* threadIdle
          const fromAhead = yield* outcomeOf(ahead.checkJsonWithCaptures(text))
          assert.deepStrictEqual(fromAhead, yield* outcomeOf(alone.checkJsonWithCaptures(text)), `${JSON.stringify(verify)}: ${text}`)
          assert.strictEqual(comparable(fromAhead), comparable(yield* outcomeOf(general.checkJsonWithCaptures(text))))
          if (Either.isRight(fromAhead)) for (const r of fromAhead.right.report.retractions) tags.add(r.error._tag)
          // Every batch is ended with its verification (or no later one could start).
          assert.isFalse(ReadAhead.batchOut())
        }
      }
      assert.isAbove(ReadAhead.filesHandedOver() - before, 0)
      for (const tag of ["MissingCapture", "CorruptCapture", "LegacyCapture", "DigestMismatch", "SnippetAbsent"]) {
        assert.isTrue(tags.has(tag), `${tag} in ${[...tags].join(", ")}`)
      }
    }), 180_000)

  it.scopedLive("a thread slowed mid-file, or crashing on its first file: the same outcome, every record read", () =>
    Effect.gen(function*() {
      const directory = yield* runDirectory
      const verify = { mode: "drop" }
      const next = random(91)
      let crashes = 0
      for (const options of [{ delayMs: 2 }, { delayMs: 40 }, { dieAfter: 1 }]) {
        yield* Effect.promise(() => ReadAhead.configureForTests(options))
        const ahead = yield* gateOf(directory, verify, false)
        const alone = yield* gateOf(directory, verify, false, { readAhead: false })
        for (let n = 0; n < 6; n++) {
          const text = everyRecordReport(next)
          yield* threadIdle
          const running = ReadAhead.threadRunning()
          const expected = yield* outcomeOf(alone.checkJsonWithCaptures(text))
          assert.deepStrictEqual(yield* outcomeOf(ahead.checkJsonWithCaptures(text)), expected, `${JSON.stringify(options)}: ${text}`)
          assert.isFalse(ReadAhead.batchOut())
          // A thread that claimed a file under dieAfter: 1 ended itself, holding it.
          if (options.dieAfter !== undefined && running) {
            yield* Effect.sleep("20 millis")
            if (!ReadAhead.threadRunning()) crashes++
          }
        }
      }
      assert.isAbove(crashes, 0)
      yield* Effect.promise(() => ReadAhead.configureForTests({}))
    }), 120_000)

  it.scopedLive("only the caller that started a batch reads through it: another read of the store reads on its own", () =>
    Effect.gen(function*() {
      yield* Effect.promise(() => ReadAhead.configureForTests({}))
      const directory = yield* runDirectory
      const store = yield* CaptureStore.makeFileSystem({ directory })
      const aheadFor = readAheadOf(store.read)!
      const sources = all.map((r) => r.source)
      // Batches ended at once until the thread runs (the second of a process starts it), then idle.
      for (let i = 0; i < 3 && !ReadAhead.threadRunning(); i++) aheadFor(sources)?.end()
      yield* threadIdle
      const batch = aheadFor(sources)!
      yield* threadIdle
      // The thread has read a record (the batch's caller has not taken it yet); it is then removed.
      const last = small[small.length - 1]!
      assert.strictEqual(ReadAhead.slotState(sources.indexOf(last.source)), "read")
      fs.rmSync(recordPath(directory, last.source))
      const other = yield* Effect.flip(store.read(last.source))
      assert.strictEqual(other._tag, "MissingCapture")
      // The batch's own reader has the bytes the thread read after the batch started.
      const own = batch.readNow(last.source)
      assert.isTrue(Either.isEither(own) && Either.isRight(own) && own.right.text === last.text)
      batch.end()
      assert.isFalse(ReadAhead.batchOut())
    }), 60_000)
})
