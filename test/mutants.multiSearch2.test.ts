/**
 * Follow-up tests for the mutation run of `src/internal/multiSearch.ts` (docs/testing.md): the
 * units of work a search reports, hand-counted on tiny inputs. Results alone cannot tell a search
 * that charges its work correctly from one that does not, yet the work drives everything a
 * caller relies on: a step returns after about `budget` units (so a verification yields to timers
 * and meets its deadline), and the fast paths hand over to Knuth-Morris-Pratt once their budget
 * is spent (so the worst case stays linear).
 *
 * The cost model, from the module's documentation: a native `indexOf` call costs the code units
 * it skips, plus the probe's length, plus 8 (`callCost`); a confirmation with `startsWith` costs
 * the snippet's length; a search that finds nothing more costs the code units left; preparing
 * Knuth-Morris-Pratt costs twice the snippet's length, and each text code unit it reads costs 1.
 */
import { assert, describe, it } from "@effect/vitest"
import { probeLength, type SearchOptions, start } from "../src/internal/multiSearch.js"

/** Every step's reported work, stepping by `budget` until done, and the results. */
const steps = (text: string, snippets: ReadonlyArray<string>, budget: number, options?: SearchOptions) => {
  const search = start(text, snippets, options)
  const work: Array<number> = []
  while (!search.done) work.push(search.step(budget))
  return { work, results: search.results() }
}

const all = Number.MAX_SAFE_INTEGER

describe("multiSearch: work, hand-counted", () => {
  it("the native path: each indexOf call and the scan to the end", () => {
    // "bc" in "abcabc": a call finds 1 (1 skipped + 2 + 8 = 11), a call finds 4 (2 skipped + 10 = 12),
    // a last call finds nothing (1 code unit left).
    assert.deepStrictEqual(steps("abcabc", ["bc"], all), { work: [24], results: [{ start: 1, occurrences: 2 }] })
    // Stepped by 1: one call per step, and one more step to learn that every snippet is done.
    assert.deepStrictEqual(steps("abcabc", ["bc"], 1).work, [11, 12, 1, 1])
    // Nothing found at all: the whole text.
    assert.deepStrictEqual(steps("abcabc", ["x"], all), { work: [6], results: [undefined] })
    // A step always reports at least one unit, also for a text with nothing left to read.
    assert.deepStrictEqual(steps("", ["x"], all), { work: [1], results: [undefined] })
  })

  it("a snippet longer than the probe: each candidate also costs its confirmation", () => {
    assert.strictEqual(probeLength, 64)
    // 65 a's in 66: candidates at 0, 1 (both confirmed) and 2 (not: 64 left); each costs
    // 64 + 8 + 65 = 137; then 63 code units left are scanned.
    const snippet = "a".repeat(65)
    const text = "a".repeat(66)
    assert.deepStrictEqual(steps(text, [snippet], all), { work: [3 * 137 + 63], results: [{ start: 0, occurrences: 2 }] })
    // A snippet of exactly the probe's length is not confirmed: 64 + 8 per candidate.
    const exact = "a".repeat(64)
    assert.deepStrictEqual(steps(text, [exact], all), { work: [3 * 72 + 63], results: [{ start: 0, occurrences: 3 }] })
  })

  it("Knuth-Morris-Pratt only: the table (2 per snippet code unit), then 1 per text code unit", () => {
    assert.deepStrictEqual(steps("abcabc", ["bc"], all, { fastPathFactor: 0 }), { work: [4 + 6], results: [{ start: 1, occurrences: 2 }] })
    // Stepped by 1: the table and one code unit, then one code unit per step.
    assert.deepStrictEqual(steps("abcabc", ["bc"], 1, { fastPathFactor: 0 }).work, [5, 1, 1, 1, 1, 1, 1])
    // Stepped by 3: the table (4) already passes the budget, so one code unit; then 3 at a time; the
    // last step reads 2, under its budget, so it also learns that every snippet is done.
    assert.deepStrictEqual(steps("abcabc", ["bc"], 3, { fastPathFactor: 0 }).work, [5, 3, 2])
  })

  it("the native path hands over to Knuth-Morris-Pratt once its budget is spent", () => {
    // factor 0.001: the budget is 0.001 × (6 + 2 + 4096) ≈ 4.1 units, spent by the first call (10).
    // The first call finds 1 (11 units); Knuth-Morris-Pratt goes on from 2: its table (4) and 4 code units.
    assert.deepStrictEqual(steps("abcabc", ["bc"], all, { fastPathFactor: 0.001 }), { work: [11 + 4 + 4], results: [{ start: 1, occurrences: 2 }] })
    assert.deepStrictEqual(steps("abcabc", ["bc"], 1, { fastPathFactor: 0.001 }).work, [11, 5, 1, 1, 1, 1])
    // factor 0.003: about 12.3 units, so a second call (20 units charged) before the hand-over, which
    // then reads the 1 code unit after the second occurrence.
    assert.deepStrictEqual(steps("abcabc", ["bc"], all, { fastPathFactor: 0.003 }), { work: [11 + 12 + 4 + 1], results: [{ start: 1, occurrences: 2 }] })
  })

  it("several snippets: each searched in turn within one step's budget", () => {
    // "bc" (24, as above) then "ca": found at 2 (2 skipped + 10), then nothing in the 3 left.
    assert.deepStrictEqual(steps("abcabc", ["bc", "ca"], all), {
      work: [24 + 12 + 3],
      results: [{ start: 1, occurrences: 2 }, { start: 2, occurrences: 1 }]
    })
    // Stepped by 30: "bc" is done after 24, and "ca" gets what is left of the step (6): one call
    // (12). The next step finishes "ca" (3).
    assert.deepStrictEqual(steps("abcabc", ["bc", "ca"], 30).work, [36, 3])
    // The same snippet twice is searched once.
    assert.deepStrictEqual(steps("abcabc", ["bc", "bc"], all).work, [24])
    // The empty snippet occurs at every position and costs nothing.
    assert.deepStrictEqual(steps("abcabc", ["", "bc"], all), { work: [24], results: [{ start: 0, occurrences: 7 }, { start: 1, occurrences: 2 }] })
  })

  it("the one pass: each window, each probe of an occupied slot, each confirmation", () => {
    // 20 a's; snippets of 8 and 9 a's share one prefix hash (the window is 8, the shorter length).
    // Each of the 13 windows: the occupied slot probed (1), both snippets confirmed (8 + 8 and
    // 9 + 8), the window itself (1): 35 units.
    const text = "a".repeat(20)
    const snippets = ["a".repeat(8), "a".repeat(9)]
    assert.deepStrictEqual(steps(text, snippets, all, { onePass: true }), {
      work: [13 * 35],
      results: [{ start: 0, occurrences: 13 }, { start: 0, occurrences: 12 }]
    })
    // Stepped by 35: one window per step; the last one also ends the pass, and a last step learns
    // that every snippet is done.
    assert.deepStrictEqual(steps(text, snippets, 35, { onePass: true }).work, [...new Array(13).fill(35), 1])
  })

  it("the one pass abandoned once its confirmations pass their budget: each snippet on its own", () => {
    // factor 0.001: the budget is 0.001 × (20 + 17 + 4096) ≈ 4.1, passed by the first window's
    // confirmations (34): that window's 35 units, then each snippet alone, also with factor 0.001:
    // "a" × 8 one indexOf call (8 + 8 = 16 units), then Knuth-Morris-Pratt from 1 (16 + 19);
    // "a" × 9 one call (9 + 8 = 17), then Knuth-Morris-Pratt from 1 (18 + 19).
    const text = "a".repeat(20)
    const snippets = ["a".repeat(8), "a".repeat(9)]
    assert.deepStrictEqual(steps(text, snippets, all, { onePass: true, fastPathFactor: 0.001 }), {
      work: [35 + 16 + 35 + 17 + 37],
      results: [{ start: 0, occurrences: 13 }, { start: 0, occurrences: 12 }]
    })
  })

  it("a text shorter than the one pass's window: done at once, nothing found", () => {
    assert.deepStrictEqual(steps("a".repeat(7), ["a".repeat(8), "a".repeat(9)], all, { onePass: true }), {
      work: [1],
      results: [undefined, undefined]
    })
  })

  it("the budgets' edges: what they are made of decides where a fast path hands over", () => {
    const text = "a".repeat(20)
    const snippets = ["a".repeat(8), "a".repeat(9)]
    // The native path's budget is factor × (text + snippet + 4096): 0.00776 × 4124 ≈ 32.002, so two
    // calls (16 units each) stay under it and a third is made (48), then Knuth-Morris-Pratt from 3
    // (16 + 17). Without the snippet's length in it (≈ 31.94) it would hand over after two.
    assert.deepStrictEqual(steps(text, [snippets[0]!], all, { fastPathFactor: 0.00776 }), {
      work: [48 + 33],
      results: [{ start: 0, occurrences: 13 }]
    })
    // The one pass's budget is factor × (text + all snippets + 4096): 0.00824 × 4133 ≈ 34.06. The
    // first window's confirmations (34, counting the probed slot and 8 per call) stay under it, the
    // second's pass it: two windows (70). Then "a" × 8 alone: three calls (48; its own budget is
    // ≈ 33.98), Knuth-Morris-Pratt from 3 (16 + 17); "a" × 9: two calls (34), then from 2 (18 + 18).
    assert.deepStrictEqual(steps(text, snippets, all, { onePass: true, fastPathFactor: 0.00824 }), {
      work: [70 + 48 + 33 + 34 + 36],
      results: [{ start: 0, occurrences: 13 }, { start: 0, occurrences: 12 }]
    })
    // 0.0404 × 4133 ≈ 166.97: passed by the fifth window (5 × 34 = 170): 175 units. Then "a" × 8:
    // eleven calls (176; budget ≈ 166.6), from 11 (16 + 9); "a" × 9: ten calls (170; ≈ 166.65), from
    // 10 (18 + 10).
    assert.deepStrictEqual(steps(text, snippets, all, { onePass: true, fastPathFactor: 0.0404 }), {
      work: [175 + 176 + 25 + 170 + 28],
      results: [{ start: 0, occurrences: 13 }, { start: 0, occurrences: 12 }]
    })
  })

  it("the one pass is abandoned only once its confirmations pass their budget, not when they reach it", () => {
    // 4,591 a's and the two snippets: the budget is factor × (4,591 + 17 + 4,096) = 8,704 / 256 = 34
    // exactly, which the first window's confirmations (34) reach and the second's (68) pass: two
    // windows (70). Then "a" × 8 alone: three calls (48; its budget 8,695 / 256 ≈ 33.96), from 3
    // (16 + 4,588); "a" × 9: two calls (34; ≈ 33.97), from 2 (18 + 4,589).
    const text = "a".repeat(4_591)
    assert.deepStrictEqual(steps(text, ["a".repeat(8), "a".repeat(9)], all, { onePass: true, fastPathFactor: 1 / 256 }), {
      work: [70 + 48 + 4_604 + 34 + 4_607],
      results: [{ start: 0, occurrences: 4_584 }, { start: 0, occurrences: 4_583 }]
    })
  })

  it("the one pass reads a text exactly as long as its window", () => {
    assert.deepStrictEqual(steps("abcdefgh", ["abcdefgh", "abcdefghi"], all, { onePass: true }).results, [{ start: 0, occurrences: 1 }, undefined])
  })
})

describe("multiSearch: when the one pass is chosen", () => {
  // 32 absent snippets of 8 code units: searched one by one, each costs one indexOf call that finds
  // nothing, the whole text; one pass costs about one unit per window instead.
  const absent = (count: number) => Array.from({ length: count }, (_, i) => `#${String(i).padStart(7, "0")}`)
  const text = "x".repeat(64 * 1024)

  it("from 32 snippets and 64 KiB of text on", () => {
    const [work] = steps(text, absent(32), all).work
    assert.isBelow(work!, 4 * text.length)
  })

  it("not for 31 snippets, nor for a text one code unit shorter", () => {
    assert.deepStrictEqual(steps(text, absent(31), all).work, [31 * text.length])
    const shorter = text.slice(1)
    assert.deepStrictEqual(steps(shorter, absent(32), all).work, [32 * shorter.length])
  })
})

describe("multiSearch: Knuth-Morris-Pratt's table", () => {
  it("a border that is itself reached through a shorter border (aabaaa: the last border is 2, via 1)", () => {
    // Occurrences at 0 and 4: after the first match the search falls back to the border "aa".
    // A table that falls back to 0 instead of the next shorter border says the last border is 1
    // and misses the second occurrence.
    for (const budget of [1, 3, all]) {
      assert.deepStrictEqual(steps("aabaaabaaa", ["aabaaa"], budget, { fastPathFactor: 0 }).results, [{ start: 0, occurrences: 2 }])
    }
  })
})

describe("multiSearch: the one pass's table of prefix hashes", () => {
  // Restated from src/internal/multiSearch.ts (like the collision test): the prefix hash and the
  // slot of a hash in the open-addressing table. Should either change, the precondition below
  // fails first and says so.
  const prefixHash = (s: string, window: number) => {
    let h = 0
    for (let j = 0; j < window; j++) h = (Math.imul(h, 0x01000193) + s.charCodeAt(j)) | 0
    return h
  }
  const slotOf = (h: number, mask: number) => (h ^ (h >>> 15)) & mask

  it("a probe stops at the slot that holds its hash, also inside a cluster of occupied slots", () => {
    const a = "aaaaaaaa"
    const b = "aaaaaaab"
    // Two snippets: a table of 16 slots; b sits in the slot right after a's.
    assert.strictEqual(slotOf(prefixHash(b, 8), 15), (slotOf(prefixHash(a, 8), 15) + 1) & 15, "precondition: adjacent slots")
    // One window: a's slot probed (1), a confirmed (8 + 8), the window (1). Probing on past the
    // slot that matched would also charge b's slot.
    assert.deepStrictEqual(steps(a, [a, b], all, { onePass: true }), { work: [18], results: [{ start: 0, occurrences: 1 }, undefined] })
  })
})
