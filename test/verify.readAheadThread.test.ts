/**
 * A verification of many small records with the helper thread reading them ahead
 * (internal/readAhead.ts, through the filesystem store's `readAhead` option): the same outcome,
 * errors included word for word, as the same store with it off and as the general path (a wrapper
 * of `read`), on a run directory with records that fail every way a read fails; while the thread
 * reads, is slowed mid-file, or is killed mid-batch. And the thread did take part.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Either, Fiber } from "effect"
import * as ReadAhead from "../src/internal/readAhead.js"
import { random } from "./searchSupport.js"
import { all, comparable, everyRecordReport, gateOf, outcomeOf, policies, runDirectory } from "./support/smallRun.js"

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
        }
      }
      assert.isAbove(ReadAhead.filesHandedOver() - before, 0)
      for (const tag of ["MissingCapture", "CorruptCapture", "LegacyCapture", "DigestMismatch", "SnippetAbsent"]) {
        assert.isTrue(tags.has(tag), `${tag} in ${[...tags].join(", ")}`)
      }
    }), 180_000)

  it.scopedLive("a thread slowed mid-file, or killed mid-batch: the same outcome, every record read", () =>
    Effect.gen(function*() {
      const directory = yield* runDirectory
      const verify = { mode: "drop" }
      const next = random(91)
      for (const delayMs of [2, 120]) {
        yield* Effect.promise(() => ReadAhead.configureForTests({ delayMs }))
        const ahead = yield* gateOf(directory, verify, false)
        const alone = yield* gateOf(directory, verify, false, { readAhead: false })
        for (let n = 0; n < 6; n++) {
          const text = everyRecordReport(next)
          yield* threadIdle
          const expected = yield* outcomeOf(alone.checkJsonWithCaptures(text))
          // Killed while it sleeps inside a file, from another fiber, while the verification runs.
          const kill = n % 2 === 1 ? yield* Effect.fork(Effect.delay(Effect.promise(() => ReadAhead.stopThread()), "1 millis")) : undefined
          assert.deepStrictEqual(yield* outcomeOf(ahead.checkJsonWithCaptures(text)), expected, `delay ${delayMs}: ${text}`)
          if (kill !== undefined) yield* Fiber.join(kill)
        }
      }
      yield* Effect.promise(() => ReadAhead.configureForTests({}))
    }), 120_000)

  it.scopedLive("two verifications at once on one store: one batch out, both outcomes right", () =>
    Effect.gen(function*() {
      yield* Effect.promise(() => ReadAhead.configureForTests({}))
      const directory = yield* runDirectory
      const ahead = yield* gateOf(directory, { mode: "drop" }, false)
      const alone = yield* gateOf(directory, { mode: "drop" }, false, { readAhead: false })
      const next = random(7)
      const texts = Array.from({ length: 8 }, () => everyRecordReport(next))
      const together = yield* Effect.forEach(texts, (text) => outcomeOf(ahead.checkJsonWithCaptures(text)), { concurrency: "unbounded" })
      const oneByOne = yield* Effect.forEach(texts, (text) => outcomeOf(alone.checkJsonWithCaptures(text)))
      assert.deepStrictEqual(together, oneByOne)
    }), 60_000)
})
