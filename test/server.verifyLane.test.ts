/**
 * The verify lane (src/server/VerifyLane.ts) answers exactly as the general path: the same matrix of
 * requests to two services over one run root, one with the lane and one without, compared by
 * status, headers (all but `date`; `x-request-id` checked for shape and against the log line),
 * body bytes and access-log lines (all but time, fiber and request id).
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import * as fsp from "node:fs/promises"
import * as path from "node:path"
import * as VerifyLane from "../src/server/VerifyLane.js"
import { salesRecord, tempDirectory, writeRecords } from "./support.js"
import { comparable, matrix, send, startService } from "./support/laneCases.js"

describe("the verify lane", () => {
  it.live("answers every request of the matrix as the general path does", () =>
    Effect.gen(function*() {
      const work = yield* tempDirectory
      const runRoot = path.join(work, "runs")
      yield* Effect.promise(() => fsp.mkdir(path.join(runRoot, "r1"), { recursive: true }))
      yield* writeRecords(path.join(runRoot, "r1"), [salesRecord])
      const limits = { maxBodyBytes: 4096, requestTimeoutMs: 400 }
      const general = yield* startService(work, runRoot, limits, false)
      const lane = yield* startService(work, runRoot, limits, true)
      const takenBefore = VerifyLane.counts.taken
      for (const c of matrix) {
        const expected = comparable(yield* send(general, c))
        const started = Date.now()
        const actual = comparable(yield* send(lane, c))
        // The deadline (400 ms) answers a slow body, well before the client would end it.
        if (c.slow !== undefined) assert.isBelow(Date.now() - started, 3_000, c.name)
        if (c.name === "good") assert.strictEqual(JSON.parse(Buffer.from(actual.body, "base64").toString()).report.outcome, "grounded")
        assert.deepStrictEqual(actual, expected, c.name)
      }
      // The lane took the plain ones (not a comparison of the general path with itself): every case up to
      // `sign=0` and the unknown run (handed back) and the slow body.
      assert.strictEqual(VerifyLane.counts.taken - takenBefore, 16)
    }).pipe(Effect.scoped), 60_000)

  it.live("answers warm verifications without a fiber, as the general path does, and sees a changed capture", () =>
    Effect.gen(function*() {
      const work = yield* tempDirectory
      const runRoot = path.join(work, "runs")
      yield* Effect.promise(() => fsp.mkdir(path.join(runRoot, "r1"), { recursive: true }))
      yield* writeRecords(path.join(runRoot, "r1"), [salesRecord])
      const limits = { maxBodyBytes: 4096, requestTimeoutMs: 2_000 }
      const general = yield* startService(work, runRoot, limits, false)
      const lane = yield* startService(work, runRoot, limits, true)
      const byName = (name: string) => matrix.find((c) => c.name === name)!
      // Answered at once once warm: every well-formed report of the matrix (failures and modes included).
      const warm = ["good", "good, two facts", "good, reader listing the run", "good, mode=drop", "absent, mode=reject", "absent, mode=drop", "absent, default mode", "wrong capture digest", "sign=0"]
      // Decoding failures and the rest are the fiber's.
      const notWarm = ["malformed JSON", "not an object", "excess key", "unknown run"]
      // Warm-up: the Gates kept, the capture cached with its index built.
      for (const name of warm) yield* send(lane, byName(name))
      yield* Effect.sleep("200 millis")
      for (const name of [...warm, ...notWarm]) {
        const expected = comparable(yield* send(general, byName(name)))
        const before = VerifyLane.synchronous.answered
        const actual = comparable(yield* send(lane, byName(name)))
        assert.strictEqual(VerifyLane.synchronous.answered - before, warm.includes(name) ? 1 : 0, name)
        assert.deepStrictEqual(actual, expected, name)
      }
      const good = byName("good")
      const grounded = comparable(yield* send(lane, good))
      assert.strictEqual(JSON.parse(Buffer.from(grounded.body, "base64").toString()).report.outcome, "grounded")
      const [record] = (yield* Effect.promise(() => fsp.readdir(path.join(runRoot, "r1")))).filter((name) => name.endsWith(".json") && name !== "manifest.json")
      const file = path.join(runRoot, "r1", record!)
      // The same bytes with a new modification time: a new stamp, so the capture is loaded again (not at once).
      const later = new Date(Date.now() + 5_000)
      yield* Effect.promise(() => fsp.utimes(file, later, later))
      let before = VerifyLane.synchronous.answered
      assert.deepStrictEqual(comparable(yield* send(lane, good)), grounded)
      assert.strictEqual(VerifyLane.synchronous.answered - before, 0, "a changed stamp is not answered at once")
      // A capture changed on disk after it was cached: the next request sees it, on both paths.
      const text = yield* Effect.promise(() => fsp.readFile(file, "utf8"))
      assert.include(text, "4,210")
      yield* Effect.promise(() => fsp.chmod(file, 0o644))
      yield* Effect.promise(() => fsp.writeFile(file, text.replaceAll("4,210", "4,211")))
      before = VerifyLane.synchronous.answered
      const changed = comparable(yield* send(lane, good))
      assert.strictEqual(VerifyLane.synchronous.answered - before, 0, "a changed capture is not answered at once")
      assert.strictEqual(JSON.parse(Buffer.from(changed.body, "base64").toString()).status, "rejected")
      assert.deepStrictEqual(changed, comparable(yield* send(general, good)))
    }).pipe(Effect.scoped), 60_000)
})
