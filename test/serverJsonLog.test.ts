/**
 * The service's JSON log lines (src/server/JsonLog.ts) are Effect's `Logger.jsonLogger` lines, byte
 * for byte: the cheap path (a string message, plain annotations) and every fallback (a cause, an
 * object annotation, several messages, a non-string message).
 */
import { assert, describe, it } from "@effect/vitest"
import { Cause, Effect, Logger } from "effect"
import * as JsonLog from "../src/server/JsonLog.js"

/** Logs `log` through both formatters at once; every pair of lines they made. */
const both = (log: Effect.Effect<void>) =>
  Effect.gen(function*() {
    const pairs: Array<readonly [string, string]> = []
    const recorder = Logger.map(Logger.zip(JsonLog.format, Logger.jsonLogger), (pair) => {
      pairs.push(pair)
    })
    yield* log.pipe(Effect.provide(Logger.replace(Logger.defaultLogger, recorder)))
    return pairs
  })

/** Runs `effect` with every write to stderr appended to `writes` instead, the real write put back after. */
const withStderrTo = <A, E>(writes: Array<string>, effect: Effect.Effect<A, E>) =>
  Effect.acquireUseRelease(
    Effect.sync(() => {
      const original = process.stderr.write
      process.stderr.write = ((chunk: string) => {
        writes.push(String(chunk))
        return true
      }) as typeof process.stderr.write
      return original
    }),
    () => effect,
    (original) => Effect.sync(() => (process.stderr.write = original))
  )

describe("JsonLog: Effect's JSON log line, made cheaply", () => {
  it.live("the access-log line and its fallbacks are the same text as Logger.jsonLogger", () =>
    Effect.gen(function*() {
      const pairs = yield* both(Effect.gen(function*() {
        yield* Effect.logInfo("request").pipe(
          Effect.annotateLogs({ method: "POST", path: "/v1/verify/report", status: 200, ms: 3 }),
          Effect.annotateLogs("requestId", "0c6f1d52-4c1e-4b43-9d0e-0a3c8a7e7f11"),
          Effect.withLogSpan("request")
        )
        yield* Effect.logWarning("quotes \" and \\ and \n and \u2028 and ☃").pipe(Effect.annotateLogs({ ok: true, n: Number.NaN }))
        yield* Effect.logError("request failed", Cause.fail(new Error("boom")))
        yield* Effect.logInfo("object").pipe(Effect.annotateLogs({ error: { _tag: "X", detail: [1, 2] } }))
        yield* Effect.logInfo("two", "messages")
        yield* Effect.logInfo({ structured: "message" })
        yield* Effect.logInfo(12)
      }))
      assert.strictEqual(pairs.length, 7)
      for (const [cheap, effect] of pairs) assert.strictEqual(cheap, effect)
      const access = JSON.parse(pairs[0]![0])
      assert.deepStrictEqual(Object.keys(access), ["message", "logLevel", "timestamp", "annotations", "spans", "fiberId"])
      assert.deepStrictEqual(access.annotations, {
        method: "POST",
        path: "/v1/verify/report",
        status: 200,
        ms: 3,
        requestId: "0c6f1d52-4c1e-4b43-9d0e-0a3c8a7e7f11"
      })
      assert.include(pairs[2]![0], "boom")
    }))

  it.live("the lines logged within flushMs are written by one write to stderr, in order, after it", () =>
    Effect.gen(function*() {
      const writes: Array<string> = []
      const expected: Array<string> = []
      const lines = Logger.map(JsonLog.format, (line) => {
        expected.push(line)
      })
      yield* withStderrTo(writes, Effect.gen(function*() {
        const logged = Effect.forEach(["one", "two", "three"], (message) =>
          Effect.logInfo(message).pipe(Effect.annotateLogs({ status: 200 })), { discard: true })
        yield* logged.pipe(Effect.provide(Logger.replace(Logger.defaultLogger, Logger.zip(JsonLog.stderr, lines))))
        // Not yet: the write comes once the first line has waited flushMs, not at the end of this turn.
        assert.deepStrictEqual(writes, [])
        yield* Effect.promise(() => new Promise((resolve) => setImmediate(resolve)))
        assert.deepStrictEqual(writes, [])
        yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, JsonLog.flushMs + 20)))
      }))
      assert.strictEqual(expected.length, 3)
      assert.deepStrictEqual(writes, [expected.map((line) => line + "\n").join("")])
      assert.deepStrictEqual(writes[0]!.split("\n").slice(0, 3).map((line) => JSON.parse(line).message), ["one", "two", "three"])
    }))
  it.live("pending lines past flushBytes are written at once, in order, none lost or repeated", () =>
    Effect.gen(function*() {
      const writes: Array<string> = []
      const expected: Array<string> = []
      const lines = Logger.map(JsonLog.format, (line) => {
        expected.push(line)
      })
      // Enough lines of about 200 bytes to pass flushBytes twice within one turn.
      const count = Math.ceil((2.5 * JsonLog.flushBytes) / 200)
      let early = 0
      yield* withStderrTo(writes, Effect.gen(function*() {
        const logged = Effect.forEach(Array.from({ length: count }, (_, i) => `line ${i} ${"x".repeat(120)}`), (message) =>
          Effect.logInfo(message).pipe(Effect.annotateLogs({ status: 200 })), { discard: true })
        yield* logged.pipe(Effect.provide(Logger.replace(Logger.defaultLogger, Logger.zip(JsonLog.stderr, lines))))
        // Writes already, each of at least flushBytes, before any timer ran.
        early = writes.length
        assert.isAtLeast(early, 2)
        for (const write of writes) assert.isAtLeast(write.length, JsonLog.flushBytes)
        yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, JsonLog.flushMs + 20)))
      }))
      // The rest in one write, once the timer ran.
      assert.strictEqual(writes.length, early + 1)
      assert.strictEqual(writes.join(""), expected.map((line) => line + "\n").join(""))
    }))
  it.live("flush writes the pending lines at once, so a message written after it comes after them", () =>
    Effect.gen(function*() {
      const writes: Array<string> = []
      yield* withStderrTo(writes, Effect.gen(function*() {
        yield* Effect.logInfo("before the last message").pipe(Effect.provide(Logger.replace(Logger.defaultLogger, JsonLog.stderr)))
        // As the CLI does before its last message (src/cli/main.ts).
        JsonLog.flush()
        process.stderr.write("last message\n")
        yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, JsonLog.flushMs + 20)))
      }))
      assert.strictEqual(writes.length, 2, JSON.stringify(writes))
      assert.strictEqual(JSON.parse(writes[0]!).message, "before the last message")
      assert.strictEqual(writes[1], "last message\n")
    }))
})
