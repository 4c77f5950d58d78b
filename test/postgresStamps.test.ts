/**
 * Stamps taken ahead (src/store/PostgresStamps.ts), without a database: which sources a run's look-up
 * stamps (bounded per run and in runs), and when a store may take the stamps a look-up took.
 * The database side (the same stamp text, statements counted, changes seen) is in
 * test/serverPostgresKept.test.ts.
 */
import { assert, describe, it } from "@effect/vitest"
import type { SourceUrl } from "../src/Domain.js"
import * as PostgresStamps from "../src/store/PostgresStamps.js"

const source = (i: number) => `https://example.test/s-${i}.txt` as SourceUrl
const sources = (from: number, to: number) => Array.from({ length: to - from }, (_, i) => source(from + i))

describe("PostgresStamps: the sources stamped ahead", () => {
  it("none before a store stamps; then the union of what its stores asked, within maxAhead", () => {
    const ahead = PostgresStamps.attach({})
    assert.deepStrictEqual(ahead.wanted("r"), [])
    ahead.remember("r", sources(0, 3))
    ahead.remember("r", sources(2, 5))
    assert.deepStrictEqual(ahead.wanted("r"), sources(0, 5))
    assert.deepStrictEqual(ahead.wanted("other"), [])
  })

  it("past maxAhead, the last asked alone; more than maxAhead asked at once, nothing", () => {
    const ahead = PostgresStamps.attach({})
    ahead.remember("r", sources(0, PostgresStamps.maxAhead))
    assert.strictEqual(ahead.wanted("r").length, PostgresStamps.maxAhead)
    ahead.remember("r", sources(1000, 1002))
    assert.deepStrictEqual(ahead.wanted("r"), sources(1000, 1002))
    ahead.remember("r", sources(0, PostgresStamps.maxAhead + 1))
    assert.deepStrictEqual(ahead.wanted("r"), [])
  })

  it("at most maxRuns runs, the one remembered longest ago first out; one Ahead per client", () => {
    const client = {}
    const ahead = PostgresStamps.attach(client)
    assert.strictEqual(PostgresStamps.attach(client), ahead)
    assert.strictEqual(PostgresStamps.aheadOf(client), ahead)
    assert.strictEqual(PostgresStamps.aheadOf({}), undefined)
    for (let i = 0; i <= PostgresStamps.maxRuns; i++) ahead.remember(`run-${i}`, [source(i)])
    assert.deepStrictEqual(ahead.wanted("run-0"), [])
    assert.deepStrictEqual(ahead.wanted("run-1"), [source(1)])
    assert.deepStrictEqual(ahead.wanted(`run-${PostgresStamps.maxRuns}`), [source(PostgresStamps.maxRuns)])
  })
})

describe("PostgresStamps: when a store takes a look-up's stamps", () => {
  const client = {}
  const stamps = new Map([[source(0), "s0"]])
  const taken: PostgresStamps.Taken = { client, run: "r", asked: new Set([source(0), source(1)]), stamps, at: 10_000 }

  it("same client and run, every source asked (absent: no row), fresh", () => {
    assert.strictEqual(PostgresStamps.usable(taken, client, "r", [source(0), source(1)], 10_000), stamps)
    assert.strictEqual(PostgresStamps.usable(taken, client, "r", [source(1)], 10_000 + PostgresStamps.freshMs), stamps)
  })

  it("never for another client, another run, a source not asked, stale or future stamps, or none", () => {
    assert.strictEqual(PostgresStamps.usable(undefined, client, "r", [source(0)], 10_000), undefined)
    assert.strictEqual(PostgresStamps.usable(taken, {}, "r", [source(0)], 10_000), undefined)
    assert.strictEqual(PostgresStamps.usable(taken, client, "r2", [source(0)], 10_000), undefined)
    assert.strictEqual(PostgresStamps.usable(taken, client, "r", [source(0), source(2)], 10_000), undefined)
    assert.strictEqual(PostgresStamps.usable(taken, client, "r", [source(0)], 10_000 + PostgresStamps.freshMs + 1), undefined)
    assert.strictEqual(PostgresStamps.usable(taken, client, "r", [source(0)], 9_999), undefined)
  })
})
