/**
 * internal/Deadline.ts: `timeoutFail` made with one fiber and a Node timer gives what
 * `Effect.timeoutFail` gives, case by case, under the live clock; under a TestClock it is
 * `Effect.timeoutFail` itself.
 */
import { assert, describe, it } from "@effect/vitest"
import { Cause, Effect, Exit, Fiber, TestClock } from "effect"
import { performance } from "node:perf_hooks"
import * as Deadline from "../src/internal/Deadline.js"

const onTimeout = () => "timed out" as const

/** The exit of `make(f)` for both implementations, and what each left behind (finalizers run, in order). */
const both = <A, E>(make: (log: Array<string>) => Effect.Effect<A, E>, duration: number) =>
  Effect.gen(function*() {
    const oursLog: Array<string> = []
    const ours = yield* Effect.exit(Effect.tap(Deadline.timeoutFail(make(oursLog), { duration, onTimeout }), () => oursLog.push("done")))
    oursLog.push("after")
    const effectLog: Array<string> = []
    const theirs = yield* Effect.exit(Effect.tap(Effect.timeoutFail(make(effectLog), { duration, onTimeout }), () => effectLog.push("done")))
    effectLog.push("after")
    return { ours, theirs, oursLog, effectLog }
  })

const same = <A, E>(result: { ours: Exit.Exit<A, E>; theirs: Exit.Exit<A, E>; oursLog: Array<string>; effectLog: Array<string> }) => {
  assert.deepStrictEqual(result.oursLog, result.effectLog)
  assert.strictEqual(result.ours._tag, result.theirs._tag)
  if (Exit.isSuccess(result.ours) && Exit.isSuccess(result.theirs)) assert.deepStrictEqual(result.ours.value, result.theirs.value)
  if (Exit.isFailure(result.ours) && Exit.isFailure(result.theirs)) {
    assert.deepStrictEqual(Array.from(Cause.failures(result.ours.cause)), Array.from(Cause.failures(result.theirs.cause)))
    assert.deepStrictEqual(Array.from(Cause.defects(result.ours.cause)), Array.from(Cause.defects(result.theirs.cause)))
  }
}

describe("Deadline.timeoutFail", () => {
  it.live("the same exits as Effect.timeoutFail: success, failure, defect, and a timeout after the work was interrupted", () =>
    Effect.gen(function*() {
      same(yield* both(() => Effect.succeed(42), 1_000))
      same(yield* both(() => Effect.fail("boom" as const), 1_000))
      same(yield* both(() => Effect.die("defect"), 1_000))
      same(yield* both(() => Effect.as(Effect.sleep(5), "late but in time"), 1_000))
      const slow = (log: Array<string>) =>
        Effect.sleep(60_000).pipe(Effect.onInterrupt(() => Effect.sync(() => log.push("interrupted"))))
      const timedOut = yield* both(slow, 20)
      same(timedOut)
      assert.deepStrictEqual(timedOut.oursLog, ["interrupted", "after"])
      assert.deepStrictEqual(Exit.isFailure(timedOut.ours) ? Array.from(Cause.failures(timedOut.ours.cause)) : [], ["timed out"])
    }))

  it.live("interrupting the caller interrupts the work and clears the deadline", () =>
    Effect.gen(function*() {
      const log: Array<string> = []
      const fiber = yield* Effect.fork(Deadline.timeoutFail(
        Effect.never.pipe(Effect.onInterrupt(() => Effect.sync(() => log.push("interrupted")))),
        { duration: 60_000, onTimeout }
      ))
      yield* Effect.sleep(5)
      const exit = yield* Fiber.interrupt(fiber)
      assert.isTrue(Exit.isInterrupted(exit))
      assert.deepStrictEqual(log, ["interrupted"])
    }))

  it("work that needs no wait has ended when the deadline returns: the caller does not wait", () => {
    // Under the default scheduler (not runSync's, which runs every scheduled task at once): the
    // caller's fiber has ended when runFork returns, so neither it nor the work's fiber waited.
    const endedAtOnce = <A, E>(effect: Effect.Effect<A, E>) => {
      const exit = Effect.runFork(effect).unsafePoll()
      if (exit === null) return assert.fail("the caller waited")
      return exit
    }
    const succeeded = endedAtOnce(Deadline.timeoutFail(Effect.succeed(42), { duration: 1_000, onTimeout }))
    assert.deepStrictEqual(Exit.isSuccess(succeeded) ? succeeded.value : undefined, 42)
    const failed = endedAtOnce(Deadline.timeoutFail(Effect.fail("boom" as const), { duration: 1_000, onTimeout }))
    assert.deepStrictEqual(Exit.isFailure(failed) ? Array.from(Cause.failures(failed.cause)) : [], ["boom"])
    const died = endedAtOnce(Deadline.timeoutFail(Effect.die("defect"), { duration: 1_000, onTimeout }))
    assert.deepStrictEqual(Exit.isFailure(died) ? Array.from(Cause.defects(died.cause)) : [], ["defect"])
  })

  it.live("deadlines nested thousands deep do not overflow the stack (work started at once nests on it)", () =>
    Effect.gen(function*() {
      let nested: Effect.Effect<number, "timed out"> = Effect.succeed(7)
      for (let i = 0; i < 3_000; i++) nested = Deadline.timeoutFail(nested, { duration: 10_000, onTimeout })
      const exit = yield* Effect.exit(nested)
      assert.deepStrictEqual(Exit.isSuccess(exit) ? exit.value : Cause.pretty(exit.cause).slice(0, 200), 7)
    }))

  it.live("the deadline counts from the start of the work, its first synchronous part included", () =>
    Effect.gen(function*() {
      const busyMs = 300
      const duration = 200
      const busy = Effect.sync(() => {
        const until = performance.now() + busyMs
        while (performance.now() < until) { /* the work's synchronous part */ }
      })
      const started = performance.now()
      const exit = yield* Effect.exit(Deadline.timeoutFail(Effect.zipRight(busy, Effect.sleep(60_000)), { duration, onTimeout }))
      const elapsedMs = performance.now() - started
      assert.deepStrictEqual(Exit.isFailure(exit) ? Array.from(Cause.failures(exit.cause)) : [], ["timed out"])
      // Counted from the end of the synchronous part, it would end at busyMs + duration.
      assert.isBelow(elapsedMs, busyMs + duration - 50)
    }))

  it.effect("under a TestClock the test's clock decides (Effect.timeoutFail itself)", () =>
    Effect.gen(function*() {
      const fiber = yield* Effect.fork(Deadline.timeoutFail(Effect.never, { duration: 1_000, onTimeout }))
      yield* TestClock.adjust(999)
      assert.isNull(fiber.unsafePoll())
      yield* TestClock.adjust(1)
      const exit = yield* Fiber.await(fiber)
      assert.deepStrictEqual(Exit.isFailure(exit) ? Array.from(Cause.failures(exit.cause)) : [], ["timed out"])
    }))
})
