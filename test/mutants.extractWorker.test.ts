/**
 * The extraction worker: interrupting a job (the capture's deadline) ends its
 * thread, not just the wait for it (threads are counted in /proc/self/task,
 * Linux, the OS's own list of this process's threads); a worker that crashes or
 * exits without an answer is a WorkerFailed with the reason; the resource
 * limits reach the worker. Faults are injected by replacing the worker's script.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Fiber } from "effect"
import * as fs from "node:fs"
import { markdownHeadings, runJob, WorkerFailed, workerResourceLimits } from "../src/extract/Worker.js"
import { failureOf } from "./mutants.support.js"

const taskDirectory = "/proc/self/task"
const threads = () => fs.readdirSync(taskDirectory).length

describe.skipIf(!fs.existsSync(taskDirectory))("extraction worker", () => {
  it.live("interrupting a job terminates its worker thread", () =>
    Effect.gen(function*() {
      // A first job creates whatever threads the process keeps (thread pool and the like).
      assert.deepStrictEqual(yield* markdownHeadings("# warm"), [{ level: 1, text: "warm", start: 0, end: 6 }])
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

describe("extraction worker faults", () => {
  it.live("a worker that exits without an answer, or throws, is WorkerFailed with the reason", () =>
    Effect.gen(function*() {
      const exited = yield* failureOf(runJob({}, [], "process.exit(3)"))
      assert.instanceOf(exited, WorkerFailed)
      assert.deepStrictEqual([exited._tag, exited.detail], ["WorkerFailed", "the worker exited with code 3"])
      const thrown = yield* failureOf(runJob({}, [], "throw new RangeError(\"boom\")"))
      assert.instanceOf(thrown, WorkerFailed)
      assert.strictEqual(thrown.detail, "RangeError: boom")
      const coded = yield* failureOf(runJob({}, [], "const e = new Error(\"coded\"); e.code = \"E_TEST\"; throw e"))
      assert.strictEqual(coded.detail, "E_TEST: coded")
      // A job that cannot be sent to a worker: no worker starts.
      const unsendable = yield* failureOf(runJob({ f: () => 1 }))
      assert.instanceOf(unsendable, WorkerFailed)
      assert.strictEqual(unsendable.detail, "DataCloneError: () => 1 could not be cloned.")
    }))

  it.live("a Markdown parser that throws is WorkerFailed with its error, not a list of headings", () =>
    Effect.gen(function*() {
      // The real script, given a text the parser cannot take (a number): its catch-all answers.
      const failed = yield* failureOf(markdownHeadings(42 as unknown as string))
      assert.instanceOf(failed, WorkerFailed)
      assert.match(failed.detail, /^TypeError: /)
    }))

  it.live("the worker runs with the resource limits, and gets the job's data", () =>
    Effect.gen(function*() {
      const seen = yield* runJob<unknown>(
        { kind: "probe", n: 7 },
        [],
        "const wt = require(\"node:worker_threads\"); wt.parentPort.postMessage({ limits: wt.resourceLimits, n: wt.workerData.n })"
      )
      assert.deepStrictEqual(seen, {
        limits: { maxYoungGenerationSizeMb: 64, maxOldGenerationSizeMb: 512, codeRangeSizeMb: 0, stackSizeMb: 4 },
        n: 7
      })
      assert.deepStrictEqual({ ...workerResourceLimits }, { maxOldGenerationSizeMb: 512, maxYoungGenerationSizeMb: 64, stackSizeMb: 4 })
    }))
})

describe("extraction worker: what leaves the worker", () => {
  it.live("the buffers given to transfer are moved into the worker, not copied (the caller's is detached)", () =>
    Effect.gen(function*() {
      const bytes = new Uint8Array([1, 2, 3, 4])
      const received = yield* runJob<number>(
        { bytes },
        [bytes.buffer],
        "const { parentPort, workerData } = require(\"node:worker_threads\"); parentPort.postMessage(workerData.bytes.reduce((a, b) => a + b, 0))"
      )
      assert.strictEqual(received, 10)
      assert.strictEqual(bytes.buffer.byteLength, 0, "moved: a large PDF is not held twice")
    }))

  it.live("what the worker prints (pdf.js warnings) never reaches this process's stdout or stderr", () =>
    Effect.gen(function*() {
      const marker = "worker-output-that-must-stay-in-the-worker"
      const seen: Array<string> = []
      const originalOut = process.stdout.write
      const originalErr = process.stderr.write
      const record = (original: typeof process.stdout.write) =>
        function(this: NodeJS.WriteStream, chunk: unknown, ...rest: Array<unknown>) {
          seen.push(String(chunk))
          return (original as (...args: Array<unknown>) => boolean).call(this, chunk, ...rest)
        } as typeof process.stdout.write
      process.stdout.write = record(originalOut)
      process.stderr.write = record(originalErr)
      try {
        const answer = yield* runJob<string>(
          {},
          [],
          `const { parentPort } = require("node:worker_threads")
           process.stdout.write("${marker}\\n", () => process.stderr.write("${marker}\\n", () => parentPort.postMessage("done")))`
        )
        assert.strictEqual(answer, "done")
        // Piped output would arrive soon after the answer: wait well past that before looking.
        yield* Effect.sleep("300 millis")
      } finally {
        process.stdout.write = originalOut
        process.stderr.write = originalErr
      }
      assert.deepStrictEqual(seen.filter((chunk) => chunk.includes(marker)), [])
    }))
})
