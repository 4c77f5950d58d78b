/**
 * The open jobs of a verification thread (src/internal/OpenJobs.ts): each job's value by id until it
 * is taken, a cell still held refusing a new job, and answered jobs left to the young generation's
 * collections (a `Map` kept them reachable until a full collection).
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import * as path from "node:path"
import { OpenJobs } from "../src/internal/OpenJobs.js"
import { gcChildJson } from "./support/gcChild.js"

const churn = (table: "OpenJobs" | "retained") =>
  gcChildJson<{ table: string; grewMiB: number; kept: number }>(path.join(import.meta.dirname, "support", "openJobsChurn.ts"), [table])

describe("OpenJobs", () => {
  it("gives each open job's value back once, by its id", () => {
    const jobs = new OpenJobs<string>(8)
    assert.isTrue(jobs.add(0, "a"))
    assert.isTrue(jobs.add(1, "b"))
    assert.strictEqual(jobs.size, 2)
    assert.strictEqual(jobs.take(1), "b")
    assert.isUndefined(jobs.take(1))
    assert.isUndefined(jobs.take(2))
    assert.strictEqual(jobs.take(0), "a")
    assert.strictEqual(jobs.size, 0)
  })

  it("refuses a job whose cell an open one holds, and takes it once that one is answered", () => {
    const jobs = new OpenJobs<string>(8)
    assert.isTrue(jobs.add(3, "slow"))
    for (let id = 4; id < 11; id++) assert.isTrue(jobs.add(id, `job ${id}`))
    // Id 11 shares cell 3 with the open job 3.
    assert.isFalse(jobs.add(11, "refused"))
    assert.strictEqual(jobs.size, 8)
    // An answer for an id whose cell holds another job is not that job's.
    assert.isUndefined(jobs.take(11))
    assert.strictEqual(jobs.take(3), "slow")
    assert.isTrue(jobs.add(11, "now"))
    assert.strictEqual(jobs.take(11), "now")
  })

  it("gives every open job back at once, and none after", () => {
    const jobs = new OpenJobs<number>(4)
    for (const id of [5, 6, 8]) jobs.add(id, id * 10)
    assert.deepStrictEqual(jobs.takeAll().sort((a, b) => a - b), [50, 60, 80])
    assert.strictEqual(jobs.size, 0)
    assert.isUndefined(jobs.take(5))
    assert.isTrue(jobs.add(9, 90))
  })

  it("ids past 2^32 keep their cells apart", () => {
    const jobs = new OpenJobs<string>(16)
    const big = 2 ** 40 + 3
    assert.isTrue(jobs.add(big, "big"))
    assert.isFalse(jobs.add(big + 16, "same cell"))
    assert.isUndefined(jobs.take(3))
    assert.strictEqual(jobs.take(big), "big")
  })

  it("takes a power of two cells only", () => {
    assert.throws(() => new OpenJobs(0), RangeError)
    assert.throws(() => new OpenJobs(500), RangeError)
  })

  it.live("answered jobs do not pile up in the old generation while young collections run (6,000 jobs of 16 KiB, 64 open)", () =>
    Effect.gen(function*() {
      const control = yield* churn("retained")
      // The control: jobs kept after their answer show as growth (6,000 × 16 KiB).
      assert.strictEqual(control.kept, 6_000)
      assert.isAbove(control.grewMiB, 50, JSON.stringify(control))
      // With a Map in its place this grew by 14–33 MiB (docs/performance.md, 2026-12-03, sixth round).
      const jobs = yield* churn("OpenJobs")
      assert.isBelow(jobs.grewMiB, 6, JSON.stringify(jobs))
    }), 60_000)
})
