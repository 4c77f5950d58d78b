/**
 * The extraction worker: interrupting a job (the capture's deadline) ends its
 * thread, not just the wait for it. Threads are counted in /proc/self/task
 * (Linux), the OS's own list of this process's threads.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Fiber } from "effect"
import * as fs from "node:fs"
import { markdownHeadings } from "../src/extract/Worker.js"

const taskDirectory = "/proc/self/task"
const threads = () => fs.readdirSync(taskDirectory).length

describe.skipIf(!fs.existsSync(taskDirectory))("extraction worker", () => {
  it.live("interrupting a job terminates its worker thread", () =>
    Effect.gen(function*() {
      // A first job creates whatever threads the process keeps (thread pool and the like).
      assert.deepStrictEqual(yield* markdownHeadings("# warm"), {
        _tag: "headings",
        headings: [{ level: 1, text: "warm", start: 0, end: 6 }]
      })
      // That job's worker is terminated without waiting: give its thread time to end before counting.
      yield* Effect.sleep("500 millis")
      const before = threads()
      // Deeply nested block quotes: micromark needs far longer than this test waits.
      const slow = ("> ".repeat(64) + "x\n").repeat(20_000)
      const fiber = yield* Effect.fork(markdownHeadings(slow))
      yield* Effect.sleep("200 millis")
      assert.strictEqual(threads(), before + 1, "the job runs on one more thread")
      yield* Fiber.interrupt(fiber)
      assert.strictEqual(threads(), before, "the interruption ended that thread")
    }))
})
