/**
 * The service keeps one Gate per (run, mode) (src/server/Gates.ts): built once for any number of
 * verifications, another for another mode, never kept when it failed to build or its store has no
 * cache identity, bounded, and never stale about what its run holds.
 */
import { assert, describe, it } from "@effect/vitest"
import { Context, Effect, Either, Layer } from "effect"
import * as fsp from "node:fs/promises"
import * as path from "node:path"
import * as AnswerFormats from "../src/answer/Formats.js"
import type { ReportRejected } from "../src/Errors.js"
import * as Gates from "../src/server/Gates.js"
import * as Runs from "../src/server/Runs.js"
import { CaptureStore } from "../src/store/CaptureStore.js"
import * as CaptureCache from "../src/verify/CaptureCache.js"
import { cited, inventoryRecord, salesRecord, writeRecords } from "./support.js"
import { oneRunRoot } from "./support/serverRun.js"

const good = JSON.stringify({ facts: [cited("q3_net_sales", salesRecord, "Net sales for Q3 2026 were 4,210 units")] })
const oneBad = JSON.stringify({
  facts: [
    cited("q3_net_sales", salesRecord, "Net sales for Q3 2026 were 4,210 units"),
    cited("q3_returns", salesRecord, "Returns were 9.9% of units sold")
  ]
})
const onInventory = JSON.stringify({ facts: [cited("q3_inventory", inventoryRecord, "1,180 units")] })

/**
 * Gates over a real run root (`runs/` in a temporary directory), the real Runs service and a
 * verified-capture cache; counts how often a run's store is opened (once per Gate built).
 */
const setup = (options: { readonly maxEntries?: number; readonly withoutIdentity?: boolean } = {}) =>
  Effect.gen(function*() {
    const { base, runRoot } = yield* oneRunRoot
    let opened = 0
    const counted = Layer.effect(
      Runs.Runs,
      Effect.map(Runs.Runs, (runs) =>
        Runs.Runs.of({
          ...runs,
          store: (run) => {
            opened++
            const store = runs.store(run)
            // A store that cannot name itself for the cache (as a PostgreSQL role without the right to).
            return options.withoutIdentity === true
              ? Layer.map(store, (ctx) => Context.add(ctx, CaptureStore, { ...Context.get(ctx, CaptureStore), identity: undefined }))
              : store
          }
        }))
    ).pipe(Layer.provide(Runs.layer))
    const services = Layer.mergeAll(counted, CaptureCache.layer({ maxBytes: 64 * 1024 * 1024 })).pipe(Layer.provideMerge(base))
    const built = yield* Layer.build(services)
    const gates = yield* Effect.provide(Gates.make(options), built)
    const runs = Context.get(built, Runs.Runs)
    const verify = (runId: string, mode: "reject" | "drop", text: string) =>
      Effect.scoped(Effect.gen(function*() {
        const run = yield* runs.get(runId)
        const gate = yield* gates.gate(run, mode)
        return yield* Effect.either(gate.checkJsonWithCaptures(text))
      }))
    /** An answer (citegate.answer/1) against the run's manifest, through the kept Answers of `mode`. */
    const verifyAnswer = (runId: string, mode: "reject" | "drop", claims: ReadonlyArray<unknown>) =>
      Effect.scoped(Effect.gen(function*() {
        const run = yield* runs.get(runId)
        const manifest = yield* runs.manifest(run)
        const text = JSON.stringify({ format: "citegate.answer/1", manifest: manifest.digest, claims })
        const bound = AnswerFormats.bind("json", text, manifest, {})
        const kept = yield* gates.answers(run, mode)
        return yield* Effect.either(Effect.flatMap(bound, kept.answers.verify))
      }))
    return { gates, runs, verify, verifyAnswer, opened: () => opened, runRoot }
  })

describe("Gates: one Gate per (run, mode)", () => {
  it.scoped("is built once for twenty verifications; another mode builds another, with its own policy", () =>
    Effect.gen(function*() {
      const { gates, opened, verify } = yield* setup()
      for (let i = 0; i < 20; i++) {
        const outcome = yield* verify("r1", "reject", good)
        assert.isTrue(Either.isRight(outcome))
      }
      assert.strictEqual(opened(), 1)
      assert.deepStrictEqual(yield* gates.stats, { builds: 1, hits: 19, entries: 1, evictions: 0 })

      // The same report under both modes: rejected whole, or the failing fact retracted.
      const rejected = yield* verify("r1", "reject", oneBad)
      assert.isTrue(Either.isLeft(rejected) && rejected.left._tag === "ReportRejected")
      const dropped = yield* verify("r1", "drop", oneBad)
      assert.isTrue(Either.isRight(dropped))
      if (Either.isRight(dropped)) {
        assert.strictEqual(dropped.right.report.mode, "drop")
        assert.strictEqual(dropped.right.report.facts.length, 1)
        assert.strictEqual(dropped.right.report.retractions.length, 1)
      }
      assert.strictEqual(opened(), 2)
      assert.deepStrictEqual(yield* gates.stats, { builds: 2, hits: 20, entries: 2, evictions: 0 })
    }))

  it.scoped("a kept Gate is not stale: a capture added to its run later is verified", () =>
    Effect.gen(function*() {
      const { opened, runRoot, verify } = yield* setup()
      const before = yield* verify("r1", "reject", onInventory)
      assert.isTrue(Either.isLeft(before))
      if (Either.isLeft(before)) {
        assert.strictEqual(before.left._tag, "ReportRejected")
        assert.strictEqual((before.left as ReportRejected).failures[0]!.error._tag, "MissingCapture")
      }
      yield* writeRecords(path.join(runRoot, "r1"), [inventoryRecord])
      const after = yield* verify("r1", "reject", onInventory)
      assert.isTrue(Either.isRight(after))
      assert.strictEqual(opened(), 1)
    }))

  it.scoped("a Gate that fails to build is not kept: the next request builds again", () =>
    Effect.gen(function*() {
      const { gates, opened, runRoot, verify } = yield* setup()
      const missing = { id: "r2", status: "stored" as const, owner: null, directory: path.join(runRoot, "r2") }
      const failed = yield* Effect.flip(Effect.scoped(gates.gate(missing, "reject")))
      assert.strictEqual(failed._tag, "RunNotFound")
      yield* Effect.promise(() => fsp.mkdir(path.join(runRoot, "r2")))
      yield* writeRecords(path.join(runRoot, "r2"), [salesRecord])
      assert.isTrue(Either.isRight(yield* verify("r2", "reject", good)))
      assert.strictEqual(opened(), 2)
      assert.deepStrictEqual(yield* gates.stats, { builds: 1, hits: 0, entries: 1, evictions: 0 })
    }))

  it.scoped("at most maxEntries are kept, least recently used first out", () =>
    Effect.gen(function*() {
      const { gates, opened, runRoot, verify } = yield* setup({ maxEntries: 2 })
      for (const id of ["r2", "r3"]) {
        yield* Effect.promise(() => fsp.mkdir(path.join(runRoot, id)))
        yield* writeRecords(path.join(runRoot, id), [salesRecord])
      }
      for (const id of ["r1", "r2", "r1", "r3"]) assert.isTrue(Either.isRight(yield* verify(id, "reject", good)))
      // r2 was the least recently used when r3 came in.
      assert.deepStrictEqual(yield* gates.stats, { builds: 3, hits: 1, entries: 2, evictions: 1 })
      assert.isTrue(Either.isRight(yield* verify("r1", "reject", good)))
      assert.strictEqual(opened(), 3)
      assert.isTrue(Either.isRight(yield* verify("r2", "reject", good)))
      assert.strictEqual(opened(), 4)
    }))

  it.scoped("a store without a cache identity is opened per request, never kept", () =>
    Effect.gen(function*() {
      const { gates, opened, verify } = yield* setup({ withoutIdentity: true })
      for (let i = 0; i < 3; i++) assert.isTrue(Either.isRight(yield* verify("r1", "reject", good)))
      assert.strictEqual(opened(), 3)
      assert.deepStrictEqual(yield* gates.stats, { builds: 3, hits: 0, entries: 0, evictions: 0 })
    }))

  it.scoped("keptGate: none before the first build, then the kept Gate itself (a hit), per mode; never one not kept", () =>
    Effect.gen(function*() {
      const { gates, runs, verify } = yield* setup()
      const run = yield* runs.get("r1")
      assert.isUndefined(gates.keptGate(run, "reject"))
      assert.deepStrictEqual(yield* gates.stats, { builds: 0, hits: 0, entries: 0, evictions: 0 })
      assert.isTrue(Either.isRight(yield* verify("r1", "reject", good)))
      const kept = gates.keptGate(run, "reject")
      assert.isDefined(kept)
      assert.strictEqual(kept, yield* Effect.scoped(gates.gate(run, "reject")))
      assert.deepStrictEqual(yield* gates.stats, { builds: 1, hits: 2, entries: 1, evictions: 0 })
      assert.isUndefined(gates.keptGate(run, "drop"))
      assert.isTrue(Either.isRight(yield* Effect.either(kept!.checkJsonWithCaptures(good))))
      // A store without a cache identity: its Gates are never kept, so there is none to take.
      const other = yield* setup({ withoutIdentity: true })
      assert.isTrue(Either.isRight(yield* other.verify("r1", "reject", good)))
      assert.isUndefined(other.gates.keptGate(yield* other.runs.get("r1"), "reject"))
    }))

  it.scoped("the answer route's Answers: built once per (run, mode) for any number of answers, never stale about its run", () =>
    Effect.gen(function*() {
      const { gates, opened, runRoot, verifyAnswer } = yield* setup()
      const onSales = [{ id: "a", text: "Net sales were 4,210 units.", citations: [{ source: 1, quote: "4,210 units" }] }]
      const wrong = [...onSales, { id: "b", text: "Sales tripled.", citations: [{ source: 1, quote: "tripled overnight" }] }]
      for (let i = 0; i < 10; i++) {
        const outcome = yield* verifyAnswer("r1", "reject", onSales)
        assert.isTrue(Either.isRight(outcome), JSON.stringify(outcome))
      }
      assert.strictEqual(opened(), 1)
      assert.deepStrictEqual(yield* gates.answerStats, { builds: 1, hits: 9, entries: 1, evictions: 0 })
      // The mode is part of the key: rejected whole under reject, the failing claim retracted under drop.
      const rejected = yield* verifyAnswer("r1", "reject", wrong)
      assert.isTrue(Either.isLeft(rejected) && rejected.left._tag === "AnswerRejected")
      const dropped = yield* verifyAnswer("r1", "drop", wrong)
      assert.isTrue(Either.isRight(dropped))
      if (Either.isRight(dropped)) assert.strictEqual(dropped.right.answer.mode, "drop")
      assert.strictEqual(opened(), 2)
      assert.deepStrictEqual(yield* gates.answerStats, { builds: 2, hits: 10, entries: 2, evictions: 0 })
      // Report Gates are counted apart: none was built.
      assert.deepStrictEqual(yield* gates.stats, { builds: 0, hits: 0, entries: 0, evictions: 0 })

      // A capture added to the run later is verified by the kept Answers (source 2: the inventory).
      const onInventory = [{ id: "c", text: "Inventory was 1,180 units.", citations: [{ source: 2, quote: "1,180 units" }] }]
      const before = yield* verifyAnswer("r1", "reject", onInventory)
      assert.isTrue(Either.isLeft(before))
      yield* writeRecords(path.join(runRoot, "r1"), [inventoryRecord])
      const after = yield* verifyAnswer("r1", "reject", onInventory)
      assert.isTrue(Either.isRight(after), JSON.stringify(after))
      assert.strictEqual(opened(), 2)
    }))
})
