/**
 * Reads shared by the callers waiting for them (src/internal/NextFlight.ts): a caller that arrives
 * while a read is in flight waits for the next read, so it is answered by a read that began after
 * it arrived and sees every change made before it arrived. The read here is a value read when the
 * read starts, then held open until the test lets it finish (what a query's snapshot does).
 */
import { assert, describe, it } from "@effect/vitest"
import { Deferred, Effect, Exit, Fiber, Runtime } from "effect"
import * as NextFlight from "../src/internal/NextFlight.js"

/** A store of one value per key whose reads the test finishes one by one; a read in flight holds the next back for `overtakeMs`. */
const setupWith = (overtakeMs: number) => Effect.gen(function*() {
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
    }), (effect) => void Runtime.runFork(runtime)(effect), undefined, { overtakeMs })
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
/** Reads that are never overtaken within a test (each test finishes them itself). */
const setup = setupWith(60_000)

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

  it.live("a read that hangs holds the next back for overtakeMs only: the callers after it are answered by a read of their own", () =>
    Effect.gen(function*() {
      const { finish, flights, settle, started, values } = yield* setupWith(50)
      values.set("run", 1)
      const hung = yield* Effect.fork(flights.call("run"))
      yield* settle
      values.set("run", 2)
      const after = yield* Effect.fork(flights.call("run"))
      yield* settle
      // Still held back: the read in flight is younger than 50 ms.
      assert.deepStrictEqual(started, ["run"])
      yield* Effect.sleep("80 millis")
      yield* finish(1)
      // The next read started beside the hung one, after the caller arrived: it sees the change.
      assert.strictEqual(yield* Fiber.join(after), 2)
      assert.deepStrictEqual(started, ["run", "run"])
      assert.strictEqual(flights.counts.overtaken, 1)
      // The hung read's own caller still waits for it, as it would have alone; nothing else is read.
      assert.isNull(hung.unsafePoll())
      const later = yield* Effect.fork(flights.call("run"))
      yield* finish(2)
      assert.strictEqual(yield* Fiber.join(later), 2)
      yield* finish(0)
      assert.strictEqual(yield* Fiber.join(hung), 1)
      assert.strictEqual(flights.counts.reads, 3)
      assert.strictEqual(flights.inFlight(), 0)
    }))

  it.live("a caller without a fiber that stops waiting is not told, and holds nothing", () =>
    Effect.gen(function*() {
      const { finish, flights, settle, values } = yield* setup
      values.set("run", 4)
      const told: Array<string> = []
      const stop = flights.callThen("run", () => told.push("gone"))
      flights.callThen("run", () => told.push("stayed"))
      yield* settle
      stop()
      stop()
      yield* finish(0)
      yield* finish(1)
      yield* settle
      assert.deepStrictEqual(told, ["stayed"])
      assert.strictEqual(flights.inFlight(), 0)
    }))
})
