/**
 * The open jobs of a verification thread (src/internal/OpenJobs.ts): each job's value by id until it
 * is taken, a cell still held skipped, and answered jobs left to the young generation's collections
 * (a `Map` kept them reachable until a full collection).
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import * as path from "node:path"
import { OpenJobs } from "../src/internal/OpenJobs.js"
import { gcChildJson } from "./support/gcChild.js"

const churn = (table: "OpenJobs" | "retained") =>
  gcChildJson<{ table: string; grewMiB: number; kept: number }>(path.join(import.meta.dirname, "support", "openJobsChurn.ts"), [table])

describe("OpenJobs", () => {
  it("gives each open job's value back once, by the id it gave", () => {
    const jobs = new OpenJobs<string>(8)
    assert.strictEqual(jobs.open("a"), 0)
    assert.strictEqual(jobs.open("b"), 1)
    assert.strictEqual(jobs.size, 2)
    assert.strictEqual(jobs.take(1), "b")
    assert.isUndefined(jobs.take(1))
    assert.isUndefined(jobs.take(2))
    assert.strictEqual(jobs.take(0), "a")
    assert.strictEqual(jobs.size, 0)
  })

  it("skips an id whose cell a job still open holds, and never refuses while a cell is free", () => {
    const jobs = new OpenJobs<string>(8)
    assert.strictEqual(jobs.open("slow"), 0)
    // 2,000 jobs opened and answered one after another while job 0 stays open: each is taken.
    for (let n = 0; n < 2_000; n++) {
      const id = jobs.open(`job ${n}`)
      assert.notStrictEqual(id & 7, 0, `id ${id} in the slow job's cell`)
      assert.strictEqual(jobs.take(id), `job ${n}`)
    }
    // An answer for an id whose cell holds another job is not that job's.
    assert.isUndefined(jobs.take(8))
    assert.strictEqual(jobs.take(0), "slow")
    assert.strictEqual(jobs.size, 0)
  })

  it("refuses a job only when every cell is held", () => {
    const jobs = new OpenJobs<number>(4)
    for (let n = 0; n < 4; n++) assert.strictEqual(jobs.open(n), n)
    assert.strictEqual(jobs.open(4), -1)
    assert.strictEqual(jobs.take(2), 2)
    assert.strictEqual(jobs.open(5), 6)
  })

  it("gives every open job back at once, oldest first, and none after", () => {
    const jobs = new OpenJobs<string>(4)
    for (const value of ["a", "b", "c", "d"]) jobs.open(value)
    jobs.take(0)
    jobs.take(1)
    // Ids 4 and 5 take cells 0 and 1, before the older jobs 2 and 3 in cell order.
    jobs.open("e")
    jobs.open("f")
    assert.deepStrictEqual(jobs.takeAll(), ["c", "d", "e", "f"])
    assert.strictEqual(jobs.size, 0)
    assert.isUndefined(jobs.take(2))
    assert.strictEqual(jobs.open("g"), 6)
  })

  it("ids past 2^32 keep their cells apart", () => {
    const jobs = new OpenJobs<string>(16, 2 ** 40 + 3)
    const big = jobs.open("big")
    assert.strictEqual(big, 2 ** 40 + 3)
    for (let n = 0; n < 15; n++) jobs.open(`job ${n}`)
    assert.strictEqual(jobs.open("full"), -1)
    assert.isUndefined(jobs.take(3))
    assert.strictEqual(jobs.take(big), "big")
    assert.strictEqual(jobs.open("next"), big + 16)
  })

  it("takes a power of two cells only, and a first id that is a safe integer of 0 or more", () => {
    assert.throws(() => new OpenJobs(0), RangeError)
    assert.throws(() => new OpenJobs(500), RangeError)
    assert.throws(() => new OpenJobs(8, -1), RangeError)
    assert.throws(() => new OpenJobs(8, 0.5), RangeError)
    assert.throws(() => new OpenJobs(8, 2 ** 53), RangeError)
  })

  it("gives no id that would not be exact", () => {
    const jobs = new OpenJobs<string>(8, Number.MAX_SAFE_INTEGER - 9)
    assert.strictEqual(jobs.open("a"), Number.MAX_SAFE_INTEGER - 9)
    assert.strictEqual(jobs.open("b"), Number.MAX_SAFE_INTEGER - 8)
    assert.strictEqual(jobs.open("c"), -1)
  })

  it.live("answered jobs do not pile up in the old generation while young collections run (6,000 jobs of 16 KiB, 64 open)", () =>
    Effect.gen(function*() {
      const control = yield* churn("retained")
      // The control: jobs kept after their answer show as growth (6,000 × 16 KiB).
      assert.strictEqual(control.kept, 6_000)
      assert.isAbove(control.grewMiB, 50, JSON.stringify(control))
      // With a Map in its place the old generation grew by 29–62 MiB (docs/performance.md, 2026-12-03, sixth round).
      const jobs = yield* churn("OpenJobs")
      assert.isBelow(jobs.grewMiB, 6, JSON.stringify(jobs))
    }), 60_000)
})
