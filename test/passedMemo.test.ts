/**
 * The memory in front of a pure string check (src/internal/passedMemo.ts, used by `Rfc3339Utc` and
 * the record check's canonical sources): it answers as the check does, keeps only strings that
 * passed, at most `maxEntries` of them and none longer than `maxLength`.
 */
import { assert, describe, it } from "@effect/vitest"
import { passedMemo } from "../src/internal/passedMemo.js"

/** A check that counts its calls: a string passes when it starts with "ok". */
const counted = () => {
  const calls: Array<string> = []
  return { calls, check: (s: string) => (calls.push(s), s.startsWith("ok")) }
}

describe("passedMemo", () => {
  it("answers as the check does; a string that passed is checked once, one that failed every time", () => {
    const { calls, check } = counted()
    const memo = passedMemo(check, { maxEntries: 4 })
    assert.isTrue(memo("ok-1"))
    assert.isTrue(memo("ok-1"))
    assert.isFalse(memo("no-1"))
    assert.isFalse(memo("no-1"))
    assert.deepStrictEqual(calls, ["ok-1", "no-1", "no-1"])
    assert.strictEqual(memo.size(), 1)
  })

  it("keeps at most maxEntries strings: when full it forgets them and starts again", () => {
    const { calls, check } = counted()
    const memo = passedMemo(check, { maxEntries: 3 })
    for (const s of ["ok-1", "ok-2", "ok-3"]) assert.isTrue(memo(s))
    assert.strictEqual(memo.size(), 3)
    assert.isTrue(memo("ok-4"))
    assert.strictEqual(memo.size(), 1)
    calls.length = 0
    assert.isTrue(memo("ok-1"))
    assert.isTrue(memo("ok-4"))
    assert.deepStrictEqual(calls, ["ok-1"], "forgotten strings are checked again; the newest is kept")
    for (let i = 0; i < 1_000; i++) {
      memo(`ok-many-${i}`)
      assert.isAtMost(memo.size(), 3)
    }
  })

  it("keeps no string longer than maxLength: a long one that passes is checked each time", () => {
    const { calls, check } = counted()
    const memo = passedMemo(check, { maxEntries: 8, maxLength: 10 })
    const long = "ok" + "x".repeat(9)
    const edge = "ok" + "x".repeat(8)
    assert.isTrue(memo(long))
    assert.isTrue(memo(long))
    assert.strictEqual(memo.size(), 0)
    assert.isTrue(memo(edge))
    assert.isTrue(memo(edge))
    assert.strictEqual(memo.size(), 1)
    assert.deepStrictEqual(calls, [long, long, edge])
  })

  it("memories are separate", () => {
    const a = passedMemo((s) => s === "x", { maxEntries: 2 })
    const b = passedMemo((s) => s === "y", { maxEntries: 2 })
    assert.isTrue(a("x"))
    assert.isFalse(b("x"))
    assert.strictEqual(b.size(), 0)
  })
})
