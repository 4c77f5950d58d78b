/**
 * A run's review log kept per process in the service, not read per request (read once and kept
 * while its `reviews/` directory is unchanged and settled; src/server/KeptReviews.ts): the tests
 * count the reads (they fail without the keeping) and pin what a kept log can and cannot go stale
 * about (docs/threat-model.md). And a stored run's directory, still checked on every request
 * (synchronously now, src/server/Runs.ts): never stale.
 */
import { assert, describe, it } from "@effect/vitest"
import { Context, Effect, Either, Layer } from "effect"
import * as fsp from "node:fs/promises"
import * as path from "node:path"
import * as Decisions from "../src/review/Decisions.js"
import * as KeptReviews from "../src/server/KeptReviews.js"
import * as Runs from "../src/server/Runs.js"
import * as CaptureStore from "../src/store/CaptureStore.js"
import * as ReviewFilesystem from "../src/store/ReviewFilesystem.js"
import * as ReviewLog from "../src/store/ReviewLog.js"
import * as Gate from "../src/verify/Gate.js"
import { cited, salesRecord } from "./support.js"
import { oneRunRoot } from "./support/serverRun.js"

const reportText = JSON.stringify({ facts: [cited("q3_net_sales", salesRecord, "Net sales for Q3 2026 were 4,210 units")] })

/** The real Runs service over a run root holding run `r1` (one capture), and a decision maker for it. */
const setup = Effect.gen(function*() {
  const { base, config, directory, runRoot } = yield* oneRunRoot
  const built = yield* Layer.build(Runs.layer.pipe(Layer.provideMerge(base)))
  const runs = Context.get(built, Runs.Runs)
  const outcome = yield* Effect.flatMap(Gate.Gate, (gate) => Effect.either(gate.checkJsonWithCaptures(reportText))).pipe(
    Effect.provide(Gate.layerWithStore(config).pipe(Layer.provide(CaptureStore.layerFileSystem({ directory })))),
    Effect.orDie
  )
  /** Appends one decision through the filesystem log itself (as another process, or the review route, would). */
  const append = (decision: string) =>
    Effect.gen(function*() {
      const request = yield* Decisions.request({ fact: 0, decision, reviewer: "alice" })
      return yield* Decisions.record({ run: "r1", reportText, outcome, request }).pipe(Effect.provide(ReviewFilesystem.layer({ directory })))
    }).pipe(Effect.orDie)
  const make = (options: { readonly maxDecisions?: number; readonly settleMs?: number } = {}) =>
    Effect.provideService(KeptReviews.make(options), Runs.Runs, runs)
  return { runs, runRoot, directory, append, make }
})

const decisionsOf = (logged: ReadonlyArray<ReviewLog.LoggedDecision>) => logged.map((entry) => entry.record.decision)

describe("KeptReviews: a run's review log read once while unchanged", () => {
  it.live("an unchanged, settled log is read once for ten verifications; an append is seen by the next", () =>
    Effect.scoped(Effect.gen(function*() {
      const { append, make, runs } = yield* setup
      const kept = yield* make({ settleMs: 200 })
      const run = yield* runs.get("r1")
      // No log yet: kept as empty (an append creates `reviews/` and changes the stamp).
      for (let i = 0; i < 10; i++) assert.deepStrictEqual(yield* kept.list(run), [])
      assert.deepStrictEqual(yield* kept.stats, { reads: 1, hits: 9, entries: 1, decisions: 0 })

      yield* append("supported")
      assert.deepStrictEqual(decisionsOf(yield* kept.list(run)), ["supported"])
      // Just changed: read again until it has been still for settleMs.
      assert.deepStrictEqual(decisionsOf(yield* kept.list(run)), ["supported"])
      assert.strictEqual((yield* kept.stats).reads, 3)
      yield* Effect.sleep("300 millis")
      for (let i = 0; i < 10; i++) assert.deepStrictEqual(decisionsOf(yield* kept.list(run)), ["supported"])
      assert.deepStrictEqual(yield* kept.stats, { reads: 4, hits: 18, entries: 1, decisions: 1 })

      // An append by another writer after the log was kept: the stamp changed, the next list reads it.
      yield* append("wrong-period")
      assert.deepStrictEqual(decisionsOf(yield* kept.list(run)), ["supported", "wrong-period"])
      assert.strictEqual((yield* kept.stats).reads, 5)
    })))

  it.live("a log holding more than maxDecisions is read per request, never kept", () =>
    Effect.scoped(Effect.gen(function*() {
      const { append, make, runs } = yield* setup
      yield* append("supported")
      yield* append("wrong-metric")
      const kept = yield* make({ settleMs: 0, maxDecisions: 1 })
      const run = yield* runs.get("r1")
      for (let i = 0; i < 3; i++) assert.strictEqual((yield* kept.list(run)).length, 2)
      assert.deepStrictEqual(yield* kept.stats, { reads: 3, hits: 0, entries: 0, decisions: 0 })
    })))

  it.live("a log that fails to read is never kept: every request reads it and reports its error", () =>
    Effect.scoped(Effect.gen(function*() {
      const { directory, make, runs } = yield* setup
      yield* Effect.promise(() => fsp.mkdir(path.join(directory, "reviews")))
      yield* Effect.promise(() => fsp.writeFile(path.join(directory, "reviews", "not-a-decision"), "x"))
      const kept = yield* make({ settleMs: 0 })
      const run = yield* runs.get("r1")
      for (let i = 0; i < 2; i++) assert.strictEqual((yield* Effect.flip(kept.list(run)))._tag, "DecisionLogCorrupt")
      assert.deepStrictEqual(yield* kept.stats, { reads: 2, hits: 0, entries: 0, decisions: 0 })
    })))

  it.live("a `reviews` that is a symlink is not stamped: read per request (and refused by the log)", () =>
    Effect.scoped(Effect.gen(function*() {
      const { directory, make, runs, runRoot } = yield* setup
      yield* Effect.promise(() => fsp.mkdir(path.join(runRoot, "elsewhere")))
      yield* Effect.promise(() => fsp.symlink(path.join(runRoot, "elsewhere"), path.join(directory, "reviews")))
      const kept = yield* make({ settleMs: 0 })
      const run = yield* runs.get("r1")
      for (let i = 0; i < 2; i++) yield* Effect.either(kept.list(run))
      assert.strictEqual((yield* kept.stats).reads, 2)
      assert.strictEqual(Runs.reviewStampOf(run), undefined)
    })))
})

describe("Runs: a stored run's directory checked on every request (synchronously)", () => {
  it.scoped("a run directory removed, or replaced by a symlink, after its first request is RunNotFound on the next", () =>
    Effect.gen(function*() {
      const { directory, runs } = yield* setup
      assert.strictEqual((yield* runs.get("r1")).status, "stored")
      yield* Effect.promise(() => fsp.rename(directory, `${directory}-moved`))
      assert.strictEqual((yield* Effect.flip(runs.get("r1")))._tag, "RunNotFound")
      yield* Effect.promise(() => fsp.symlink(`${directory}-moved`, directory))
      assert.strictEqual((yield* Effect.flip(runs.get("r1")))._tag, "RunNotFound")
    }))

  it.scoped("a run not found is looked up again: created later, it is found", () =>
    Effect.gen(function*() {
      const { runRoot, runs } = yield* setup
      assert.strictEqual((yield* Effect.flip(runs.get("r2")))._tag, "RunNotFound")
      yield* Effect.promise(() => fsp.mkdir(path.join(runRoot, "r2")))
      assert.strictEqual((yield* runs.get("r2")).status, "stored")
      assert.isTrue(Either.isLeft(yield* Effect.either(runs.get("../r1"))))
    }))
})
