/**
 * The capture stage's one deadline (capture/Deadline.ts) and its per-stage URL check
 * (UrlPolicy.checker): the same answers as `Effect.timeoutFail` and `UrlPolicy.check`, made
 * cheaper. Real time (`it.live`): the deadline runs on the process's clock.
 */
import { assert, describe, it } from "@effect/vitest"
import { Data, Effect, Exit, Fiber } from "effect"
import * as Deadline from "../src/capture/Deadline.js"
import * as UrlPolicy from "../src/capture/UrlPolicy.js"

class Late extends Data.TaggedError("Late")<{ readonly after: number }> {}
class Refused extends Data.TaggedError("Refused")<{}> {}

/** Work that takes `ms` and records whether it finished or was interrupted (and when its cleanup ended). */
const work = (ms: number, seen: Array<string>) =>
  Effect.async<string>((resume) => {
    const timer = setTimeout(() => {
      seen.push("finished")
      resume(Effect.succeed("done"))
    }, ms)
    return Effect.sync(() => {
      clearTimeout(timer)
      seen.push("interrupted")
    })
  })

/**
 * Runs `effect` noting the long timers (a minute or more: the deadlines below) started meanwhile
 * and not cleared or run by its end.
 */
const longTimersLeft = <A, E>(effect: Effect.Effect<A, E>) =>
  Effect.acquireUseRelease(
    Effect.sync(() => {
      const started = new Set<unknown>()
      const original = { setTimeout: globalThis.setTimeout, clearTimeout: globalThis.clearTimeout }
      globalThis.setTimeout = ((callback: () => void, ms?: number) => {
        const handle = original.setTimeout(() => {
          started.delete(handle)
          callback()
        }, ms)
        if ((ms ?? 0) >= 60_000) started.add(handle)
        return handle
      }) as typeof setTimeout
      globalThis.clearTimeout = ((handle: Parameters<typeof clearTimeout>[0]) => {
        started.delete(handle)
        original.clearTimeout(handle)
      }) as typeof clearTimeout
      return { started, original }
    }),
    ({ started }) => Effect.map(effect, (value) => ({ value, left: started.size })),
    ({ original }) => Effect.sync(() => Object.assign(globalThis, original))
  )

describe("Deadline.within", () => {
  it.live("work done in time: its value, and no timer is left behind", () =>
    Effect.gen(function*() {
      const seen: Array<string> = []
      const { left, value } = yield* longTimersLeft(Deadline.within(work(5, seen), 60_000, () => new Late({ after: 60_000 })))
      assert.strictEqual(value, "done")
      assert.deepStrictEqual(seen, ["finished"])
      assert.strictEqual(left, 0)
    }))

  it.live("work past the deadline: interrupted, its interruption waited for, then the typed failure", () =>
    Effect.gen(function*() {
      const seen: Array<string> = []
      const started = Date.now()
      const error = yield* Effect.flip(Deadline.within(work(5_000, seen), 50, () => new Late({ after: 50 })))
      assert.deepStrictEqual(error, new Late({ after: 50 }))
      // The cleanup ran before the failure was handed back.
      assert.deepStrictEqual(seen, ["interrupted"])
      assert.isBelow(Date.now() - started, 2_000)
    }))

  it.live("a typed failure of the work in time is passed on as it is", () =>
    Effect.gen(function*() {
      const { left, value: error } = yield* longTimersLeft(
        Effect.flip(Deadline.within(Effect.fail(new Refused()), 60_000, () => new Late({ after: 1 })))
      )
      assert.instanceOf(error, Refused)
      assert.strictEqual(left, 0)
    }))

  it.live("a defect of the work stays a defect", () =>
    Effect.gen(function*() {
      const exit = yield* Effect.exit(Deadline.within(Effect.die("boom"), 60_000, () => new Late({ after: 1 })))
      assert.isTrue(Exit.isFailure(exit) && exit.cause._tag === "Die")
    }))

  it.live("interrupting the caller interrupts the work and clears the timer", () =>
    Effect.gen(function*() {
      const seen: Array<string> = []
      const { left } = yield* longTimersLeft(Effect.gen(function*() {
        const fiber = yield* Effect.fork(Deadline.within(work(5_000, seen), 60_000, () => new Late({ after: 60_000 })))
        yield* Effect.sleep("20 millis")
        yield* Fiber.interrupt(fiber)
      }))
      assert.deepStrictEqual(seen, ["interrupted"])
      assert.strictEqual(left, 0)
    }))
})

describe("UrlPolicy.checker", () => {
  const approved = new Set([
    "https://example.com/a.txt",
    "https://example.com/report.txt?quarter=3",
    "http://127.0.0.1:8080/x.txt",
    "http://example.com/plain.txt",
    "https://user@example.com/u.txt",
    "https://example.com/b.txt#part",
    "HTTPS://example.com/C.txt"
  ])
  const inputs = [...approved, "https://example.com/other.txt", "not a url", "ftp://example.com/a.txt", ""]

  for (const allowLoopbackHttp of [false, true]) {
    it(`answers as UrlPolicy.check on every input, asked twice (test mode ${allowLoopbackHttp ? "on" : "off"})`, () => {
      const options = { approved, allowLoopbackHttp }
      const check = UrlPolicy.checker(options)
      for (const round of [1, 2]) {
        for (const input of inputs) {
          const expected = UrlPolicy.check(input, options)
          const actual = check(input)
          if (typeof expected === "string") {
            assert.notInstanceOf(actual, Error, `${input} (round ${round})`)
            const url = new URL(expected)
            assert.deepStrictEqual(actual, { source: expected, origin: url.origin, path: url.pathname + url.search })
          } else {
            assert.deepStrictEqual(actual, expected, `${input} (round ${round})`)
          }
        }
      }
    })
  }

  it("the request target keeps the query string", () => {
    const check = UrlPolicy.checker({ approved, allowLoopbackHttp: false })
    assert.deepStrictEqual(check("https://example.com/report.txt?quarter=3"), {
      source: "https://example.com/report.txt?quarter=3",
      origin: "https://example.com",
      path: "/report.txt?quarter=3"
    } as never)
  })
})
