/**
 * Reads shared by the callers waiting for them (src/internal/NextFlight.ts): a caller that arrives
 * while a read is in flight waits for the next read, so it is answered by a read that began after
 * it arrived and sees every change made before it arrived. The read here is a value read when the
 * read starts, then held open until the test lets it finish (what a query's snapshot does).
 */
import { assert, describe, it } from "@effect/vitest"
import { Deferred, Effect, Exit, Fiber, Runtime } from "effect"
import * as NextFlight from "../src/internal/NextFlight.js"

/** A store of one value per key whose reads the test finishes one by one. */
const setup = Effect.gen(function*() {
  const values = new Map<string, number>()
  /** One gate per read started, in order: the read answers when its gate opens. */
  const gates: Array<Deferred.Deferred<void, string>> = []
  const started: Array<string> = []
  const runtime = yield* Effect.runtime<never>()
  const flights = NextFlight.make((key: string) =>
    Effect.gen(function*() {
      // The snapshot: the value as it is when the read starts.
      const seen = values.get(key) ?? 0
      started.push(key)
      const gate = yield* Deferred.make<void, string>()
      gates.push(gate)
      yield* Deferred.await(gate)
      return seen
    }), (effect) => void Runtime.runFork(runtime)(effect))
  /** Lets the n-th read (0-based) finish, once it has started. */
  const finish = (n: number, fail?: string) =>
    Effect.gen(function*() {
      for (let turns = 0; gates.length <= n; turns++) {
        if (turns > 1_000) return assert.fail(`read ${n} never started`)
        yield* Effect.yieldNow()
      }
      yield* fail === undefined ? Deferred.succeed(gates[n]!, undefined) : Deferred.fail(gates[n]!, fail)
    })
  /** Lets the scheduler run every fiber that can run (the forked callers reach their wait). */
  const settle = Effect.repeatN(Effect.yieldNow(), 20)
  return { values, started, flights, finish, settle }
})

describe("NextFlight: reads that start after their callers arrived", () => {
  it.live("a caller arriving during a read waits for the next read, and sees a change made before it arrived", () =>
    Effect.gen(function*() {
      const { finish, flights, settle, started, values } = yield* setup
      values.set("run", 1)
      const first = yield* Effect.fork(flights.call("run"))
      yield* settle
      assert.deepStrictEqual(started, ["run"])
      // Changed while the first read is in flight (after its snapshot), then three callers arrive.
      values.set("run", 2)
      const later = yield* Effect.forkAll([flights.call("run"), flights.call("run"), flights.call("run")])
      yield* settle
      // None of them joined the read in flight, and the next read waits for it to end.
      assert.deepStrictEqual(started, ["run"])
      yield* finish(0)
      assert.strictEqual(yield* Fiber.join(first), 1)
      yield* finish(1)
      // One read for the three, begun after they arrived: they see the change.
      assert.deepStrictEqual(yield* Fiber.join(later), [2, 2, 2])
      assert.deepStrictEqual(started, ["run", "run"])
      assert.deepStrictEqual(flights.counts, { reads: 2, calls: 4, later: 3 })
      assert.strictEqual(flights.inFlight(), 0)
    }))

  it.live("other keys have reads of their own, at once", () =>
    Effect.gen(function*() {
      const { finish, flights, settle, started, values } = yield* setup
      values.set("a", 5)
      values.set("b", 7)
      const both = yield* Effect.fork(Effect.all([flights.call("a"), flights.call("b")], { concurrency: "unbounded" }))
      yield* settle
      assert.deepStrictEqual(started, ["a", "b"])
      yield* finish(0)
      yield* finish(1)
      assert.deepStrictEqual(yield* Fiber.join(both), [5, 7])
      assert.deepStrictEqual(flights.counts, { reads: 2, calls: 2, later: 0 })
    }))

  it.live("a caller without a fiber (callThen) waits for the next read like the others, and is told its answer", () =>
    Effect.gen(function*() {
      const { finish, flights, settle, values } = yield* setup
      values.set("run", 1)
      const told: Array<Exit.Exit<number, string>> = []
      flights.callThen("run", (exit) => told.push(exit))
      yield* settle
      values.set("run", 2)
      const waiting = yield* Effect.fork(flights.call("run"))
      flights.callThen("run", (exit) => told.push(exit))
      // A listener that throws keeps no one else from the answer.
      flights.callThen("run", () => {
        throw new Error("listener")
      })
      yield* settle
      yield* finish(0)
      yield* finish(1)
      assert.strictEqual(yield* Fiber.join(waiting), 2)
      assert.deepStrictEqual(told, [Exit.succeed(1), Exit.succeed(2)])
      assert.deepStrictEqual(flights.counts, { reads: 2, calls: 4, later: 3 })
      assert.strictEqual(flights.inFlight(), 0)
    }))

  it.live("a failed read fails its own callers only; the next read is made afresh", () =>
    Effect.gen(function*() {
      const { finish, flights, settle, values } = yield* setup
      values.set("run", 1)
      const first = yield* Effect.fork(flights.call("run"))
      yield* settle
      const second = yield* Effect.fork(flights.call("run"))
      yield* settle
      yield* finish(0)
      yield* finish(1, "gone")
      assert.strictEqual(yield* Fiber.join(first), 1)
      assert.deepStrictEqual(yield* Fiber.await(second), Exit.fail("gone"))
      assert.strictEqual(flights.inFlight(), 0)
      const third = yield* Effect.fork(flights.call("run"))
      yield* finish(2)
      assert.strictEqual(yield* Fiber.join(third), 1)
    }))

  it.live("a caller that stops waiting (interrupted) does not stop the read the others wait for", () =>
    Effect.gen(function*() {
      const { finish, flights, settle, values } = yield* setup
      values.set("run", 3)
      const leaving = yield* Effect.fork(flights.call("run"))
      yield* settle
      const staying = yield* Effect.fork(flights.call("run"))
      yield* settle
      yield* Fiber.interrupt(leaving)
      yield* finish(0)
      yield* finish(1)
      assert.strictEqual(yield* Fiber.join(staying), 3)
      assert.deepStrictEqual(flights.counts, { reads: 2, calls: 2, later: 1 })
      assert.strictEqual(flights.inFlight(), 0)
    }))
})
