/**
 * Verification threads (`server.verifyThreads`, src/server/VerifyThreads.ts) answer exactly as the
 * main thread: the verify lane's matrix against two services over one run root, threads off and
 * on, compared by status, headers, body bytes and access-log lines; a capture changed on disk is
 * seen by the threads; a thread that dies leaves no request unanswered and is replaced; closing the
 * service ends the threads.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Exit, Scope } from "effect"
import * as fsp from "node:fs/promises"
import * as path from "node:path"
import * as Config from "../src/Config.js"
import * as VerifyLane from "../src/server/VerifyLane.js"
import * as VerifyThreads from "../src/server/VerifyThreads.js"
import { salesRecord, tempDirectory, writeRecords } from "./support.js"
import { comparable, matrix, send, startService, tokens } from "./support/laneCases.js"

const byName = (name: string) => matrix.find((c) => c.name === name)!

/** A run root with run `r1` holding the sales capture, and one record file's path. */
const salesRun = Effect.gen(function*() {
  const work = yield* tempDirectory
  const runRoot = path.join(work, "runs")
  yield* Effect.promise(() => fsp.mkdir(path.join(runRoot, "r1"), { recursive: true }))
  yield* writeRecords(path.join(runRoot, "r1"), [salesRecord])
  const [record] = (yield* Effect.promise(() => fsp.readdir(path.join(runRoot, "r1")))).filter((name) => name.endsWith(".json") && name !== "manifest.json")
  return { work, runRoot, file: path.join(runRoot, "r1", record!) }
})

/** The pool the last service started (its threads: `workers`). */
const lastPool = () => [...VerifyThreads.opened].at(-1)!

describe("verification threads", () => {
  it.live("answer every request of the matrix as the main thread does", () =>
    Effect.gen(function*() {
      const { runRoot, work } = yield* salesRun
      const limits = { maxBodyBytes: 4096, requestTimeoutMs: 2_000 }
      const off = yield* startService(work, runRoot, limits, true)
      const on = yield* startService(work, runRoot, { ...limits, verifyThreads: 2 }, true)
      assert.strictEqual(lastPool().workers().length, 2)
      // Twice: the first round fills each thread's cache (the general path in the thread), the second is warm.
      let threads = 0
      for (const round of [1, 2]) {
        for (const c of matrix) {
          const expected = comparable(yield* send(off, c))
          const before = VerifyLane.synchronous.threads
          const actual = comparable(yield* send(on, c))
          threads += VerifyLane.synchronous.threads - before
          assert.deepStrictEqual(actual, expected, `${c.name} (round ${round})`)
        }
      }
      // Every plain request with its body read was a thread's (the lane's 16 but the unknown run and the slow body), twice.
      assert.strictEqual(threads, 28)
    }).pipe(Effect.scoped), 60_000)

  it.live("see a capture changed on disk, as the main thread does", () =>
    Effect.gen(function*() {
      const { file, runRoot, work } = yield* salesRun
      const limits = { maxBodyBytes: 4096, requestTimeoutMs: 2_000 }
      const off = yield* startService(work, runRoot, limits, true)
      const on = yield* startService(work, runRoot, { ...limits, verifyThreads: 1 }, true)
      const good = byName("good")
      for (let i = 0; i < 3; i++) yield* send(on, good)
      const grounded = comparable(yield* send(on, good))
      assert.strictEqual(JSON.parse(Buffer.from(grounded.body, "base64").toString()).report.outcome, "grounded")
      const text = yield* Effect.promise(() => fsp.readFile(file, "utf8"))
      yield* Effect.promise(() => fsp.chmod(file, 0o644))
      yield* Effect.promise(() => fsp.writeFile(file, text.replaceAll("4,210", "4,211")))
      const before = VerifyLane.synchronous.threads
      const changed = comparable(yield* send(on, good))
      assert.strictEqual(VerifyLane.synchronous.threads - before, 1, "answered by the thread")
      assert.strictEqual(JSON.parse(Buffer.from(changed.body, "base64").toString()).status, "rejected")
      assert.deepStrictEqual(changed, comparable(yield* send(off, good)))
    }).pipe(Effect.scoped), 60_000)

  it.live("see a review decision recorded since, as the main thread does", () =>
    Effect.gen(function*() {
      const { runRoot, work } = yield* salesRun
      const limits = { maxBodyBytes: 4096, requestTimeoutMs: 2_000 }
      const off = yield* startService(work, runRoot, limits, true)
      const on = yield* startService(work, runRoot, { ...limits, verifyThreads: 1 }, true)
      const good = byName("good")
      const reviewOf = (body: Buffer) => JSON.parse(body.toString()).humanReview
      // Warm, and several requests in flight at once (they share the thread's stamps): none reviewed yet.
      for (let i = 0; i < 3; i++) yield* send(on, good)
      const together = yield* Effect.all(Array.from({ length: 8 }, () => send(on, good)), { concurrency: "unbounded" })
      // (Their log lines interleave: compared by body only.)
      for (const answer of together) assert.isUndefined(reviewOf(answer.body))
      const recorded = yield* send(on, {
        name: "review",
        path: "/v1/runs/r1/reviews",
        headers: [["authorization", `Bearer ${tokens.admin}`], ["content-type", "application/json"]],
        body: JSON.stringify({ report: good.body, fact: 0, decision: "wrong-period" })
      })
      assert.strictEqual(recorded.status, 201, recorded.body.toString())
      const before = VerifyLane.synchronous.threads
      const after = comparable(yield* send(on, good))
      assert.strictEqual(VerifyLane.synchronous.threads - before, 1, "answered by the thread")
      assert.strictEqual(reviewOf(Buffer.from(after.body, "base64")).facts[0].current.record.decision, "wrong-period")
      assert.deepStrictEqual(after, comparable(yield* send(off, good)))
    }).pipe(Effect.scoped), 60_000)

  it.live("share a stamp with the requests counted before it was taken", () =>
    Effect.gen(function*() {
      const { file, runRoot, work } = yield* salesRun
      const on = yield* startService(work, runRoot, { maxBodyBytes: 4096, requestTimeoutMs: 2_000, verifyThreads: 1 }, true)
      const good = byName("good")
      const statusOf = (answer: { body: Buffer }) => JSON.parse(answer.body.toString()).status
      for (let i = 0; i < 3; i++) yield* send(on, good)
      const [counter] = lastPool().arrivals()
      const text = yield* Effect.promise(() => fsp.readFile(file, "utf8"))
      yield* Effect.promise(() => fsp.chmod(file, 0o644))
      // The counter set back after a request, so that the next one is counted as if it had been queued
      // with it (as requests waiting for a busy thread are): it is served the stamp taken for the first,
      // which no longer matches the file changed in between. Only the counter's order makes this so.
      // A stamp serves for at most 1 s: on a machine slow enough to take longer between the two, again.
      let shared = false
      for (let attempt = 0; attempt < 3 && !shared; attempt++) {
        yield* Effect.promise(() => fsp.writeFile(file, text))
        const before = Atomics.load(counter!, 0)
        assert.strictEqual(statusOf(yield* send(on, good)), "verified")
        yield* Effect.promise(() => fsp.writeFile(file, text.replaceAll("4,210", "4,211")))
        Atomics.store(counter!, 0, before)
        const threads = VerifyLane.synchronous.threads
        shared = statusOf(yield* send(on, good)) === "verified"
        assert.strictEqual(VerifyLane.synchronous.threads - threads, 1, "answered by the thread")
      }
      assert.isTrue(shared, "served the shared stamp")
      // Counted after the stamp (as every request is, when nothing sets the counter back): the change is seen.
      assert.strictEqual(statusOf(yield* send(on, good)), "rejected")
    }).pipe(Effect.scoped), 60_000)

  it.live("answer the open requests of a thread that died on the main thread, and replace it", () =>
    Effect.gen(function*() {
      const { runRoot, work } = yield* salesRun
      const limits = { maxBodyBytes: 4096, requestTimeoutMs: 2_000 }
      const off = yield* startService(work, runRoot, limits, true)
      const on = yield* startService(work, runRoot, { ...limits, verifyThreads: 1 }, true)
      const pool = lastPool()
      const good = byName("good")
      const expected = comparable(yield* send(off, good))
      assert.deepStrictEqual(comparable(yield* send(on, good)), expected)
      const [thread] = pool.workers()
      // A request sent as the thread ends: answered (by the main thread), never left hanging.
      const pending = yield* Effect.fork(send(on, good))
      yield* Effect.promise(() => thread!.terminate())
      const answer = yield* pending
      // Its log lines: the thread's end (a warning of the pool), then the request's own.
      assert.deepStrictEqual(answer.logs.map((line: any) => line.message), ["verification thread ended", "request"])
      assert.deepStrictEqual(comparable({ ...answer, logs: answer.logs.slice(1) }), expected)
      // Replaced: the next requests are a new thread's again.
      yield* Effect.sleep("100 millis")
      const [replacement] = pool.workers()
      assert.isDefined(replacement)
      assert.notStrictEqual(replacement, thread)
      const before = VerifyLane.synchronous.threads
      assert.deepStrictEqual(comparable(yield* send(on, good)), expected)
      assert.strictEqual(VerifyLane.synchronous.threads - before, 1)
    }).pipe(Effect.scoped), 60_000)

  it.live("are ended when the service closes", () =>
    Effect.gen(function*() {
      const { runRoot, work } = yield* salesRun
      const scope = yield* Scope.make()
      const on = yield* startService(work, runRoot, { verifyThreads: 2 }, true).pipe(Scope.extend(scope))
      yield* send(on, byName("good"))
      const pool = lastPool()
      const threads = pool.workers()
      assert.strictEqual(threads.length, 2)
      const exited = threads.map((thread) => new Promise<number>((resolve) => thread.once("exit", resolve)))
      yield* Scope.close(scope, Exit.void)
      assert.strictEqual((yield* Effect.promise(() => Promise.all(exited))).length, 2)
      assert.isFalse(VerifyThreads.opened.has(pool))
    }).pipe(Effect.scoped), 60_000)

  it.effect("are bounded in the configuration: 0 to 16, default 0", () =>
    Effect.gen(function*() {
      const base = { sources: ["https://example.com/a.txt"], labels: ["a"], server: { tokens: [] } }
      const decoded = (verifyThreads: unknown) => Effect.either(Config.decode({ ...base, server: { tokens: [], verifyThreads } }))
      for (const bad of [-1, 17, 1.5, "2"]) assert.strictEqual((yield* decoded(bad))._tag, "Left", String(bad))
      for (const good of [0, 1, 16]) assert.strictEqual((yield* decoded(good))._tag, "Right", String(good))
      assert.strictEqual(Config.resolvedServer(yield* Config.decode(base)).verifyThreads, 0)
    }))
})
