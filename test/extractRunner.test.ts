/**
 * The extraction runner (`extract/Runner.ts`): extraction in separate
 * processes. Interrupting a job (the capture's deadline) kills its process;
 * a body that passes the memory limit kills that process only and is
 * `ExtractionTooLarge` (`memory`), and the next job runs in a new one; typed
 * errors arrive as the same classes an in-process extraction fails with;
 * `text/plain` starts no process. Processes are counted in /proc (Linux).
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Exit, Fiber } from "effect"
import * as fs from "node:fs"
import { ExtractionTooLarge, UnsupportedEncoding } from "../src/Errors.js"
import * as Extraction from "../src/extract/Extraction.js"
import * as Runner from "../src/extract/Runner.js"
import { hasProc, processTree } from "./processMemory.js"

const limits = { maxPages: 2_000, maxCharacters: 16 * 1024 * 1024, maxDepth: 512 }
const children = () => processTree(process.pid).slice(1).filter((pid) => /extract-child|Child\.ts/.test(fs.readFileSync(`/proc/${pid}/cmdline`, "latin1")))
const page = Buffer.from("<!doctype html><h1>Report</h1><p>Net sales were 4,210 units.</p>")

describe.skipIf(!hasProc)("extraction runner", () => {
  it.scoped("the memory limit grows with maxBytes: 256 MiB + 64 x maxBytes; the heap limit 64 MiB below", () =>
    Effect.sync(() => {
      assert.strictEqual(Runner.memoryLimit(8 * 1024 * 1024), 768 * 1024 * 1024)
      assert.strictEqual(Runner.heapLimitMb(8 * 1024 * 1024), 704)
    }))

  it.live("interrupting a job kills its extraction process", () =>
    Effect.scoped(Effect.gen(function*() {
      const runner = yield* Runner.make({ maxBytes: 8 * 1024 * 1024, size: 1 })
      // Deeply nested block quotes: micromark needs far longer than this test waits.
      const slow = Buffer.from(("> ".repeat(64) + "x\n").repeat(20_000))
      const fiber = yield* Effect.fork(runner.extract("https://example.com/a.md", "text/markdown", slow, limits))
      const deadline = Date.now() + 60_000
      while (children().length === 0 && Date.now() < deadline) yield* Effect.sleep("50 millis")
      const [pid] = children()
      assert.isDefined(pid, "the job runs in a process of its own")
      yield* Effect.sleep("300 millis")
      const exit = yield* Fiber.interrupt(fiber)
      assert.isTrue(Exit.isInterrupted(exit))
      const gone = Date.now() + 5_000
      while (fs.existsSync(`/proc/${pid}`) && Date.now() < gone) yield* Effect.sleep("20 millis")
      assert.isFalse(fs.existsSync(`/proc/${pid}`), "the interruption killed the process")
    })), 90_000)

  it.live("a body past the memory limit is ExtractionTooLarge (memory); the next job runs in a new process", () =>
    Effect.scoped(Effect.gen(function*() {
      // A smaller limit than 256 MiB + 64 x maxBytes, reached sooner: the same mechanism.
      const limit = 192 * 1024 * 1024
      const runner = yield* Runner.make({ maxBytes: 64 * 1024, size: 1, memoryLimit: limit })
      const first = yield* runner.extract("https://example.com/ok", "text/html", page, limits)
      const [before] = children()
      // 300,000 nested elements: parse5's tree alone needs about 200 MB.
      const bomb = Buffer.from("<!doctype html><body>" + "<b>".repeat(300_000))
      const error = yield* Effect.flip(runner.extract("https://example.com/bomb", "text/html", bomb, limits))
      assert.instanceOf(error, ExtractionTooLarge)
      assert.deepStrictEqual(
        [error.source, error.format, error.cap, error.limit],
        ["https://example.com/bomb", "html", "memory", limit]
      )
      assert.include(error.message, "memory limit")
      const again = yield* runner.extract("https://example.com/ok", "text/html", page, limits)
      assert.deepStrictEqual(again, first)
      assert.notStrictEqual(children()[0], before, "a new process")
    })), 120_000)

  it.live("typed errors arrive as the same classes, with the same fields, as in-process; text/plain starts no process", () =>
    Effect.scoped(Effect.gen(function*() {
      const runner = yield* Runner.make({ maxBytes: 8 * 1024 * 1024, size: 1 })
      const deep = Buffer.from("<div>".repeat(40))
      const shallow = { ...limits, maxDepth: 16 }
      const remote = yield* Effect.flip(runner.extract("https://example.com/d", "text/html", deep, shallow))
      const local = yield* Effect.flip(Extraction.extract("https://example.com/d", "text/html", deep, shallow))
      assert.instanceOf(remote, ExtractionTooLarge)
      assert.deepStrictEqual(remote, local)
      const meta = Buffer.from("<meta charset=latin1><p>x</p>")
      const encoding = yield* Effect.flip(runner.extract("https://example.com/m", "text/html", meta, limits))
      assert.instanceOf(encoding, UnsupportedEncoding)
      assert.deepStrictEqual([encoding.charset, encoding.declaredIn], ["latin1", "meta"])
      // The same process answered both (a typed error leaves it usable).
      assert.strictEqual(children().length, 1)

      const plain = yield* Effect.scoped(Effect.gen(function*() {
        const fresh = yield* Runner.make({ maxBytes: 8 * 1024 * 1024, size: 1 })
        const count = children().length
        const text = yield* fresh.extract("https://example.com/t", "text/plain", Buffer.from("plain text"), limits)
        return { text, started: children().length - count }
      }))
      assert.deepStrictEqual(plain, { text: { extraction: "text/1", text: "plain text" }, started: 0 })
    })), 90_000)
})
