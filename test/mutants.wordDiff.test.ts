/**
 * Follow-up tests for the mutation run of `src/audit/WordDiff.ts` (docs/testing.md): the diff of
 * seeded random word sequences checked against its definition (each side's pieces spell that side;
 * the unchanged tokens of both sides are the same sequence, as long as a longest common
 * subsequence computed by a plain table; neighbouring pieces differ in flag), and the edges of the
 * edit cap and the character cut.
 */
import { assert, describe, it } from "@effect/vitest"
import { diffLimits, head, tokenize, wordDiff } from "../src/audit/WordDiff.js"
import { seededRandom as random } from "./mutants.support.js"

const lcsLength = (a: ReadonlyArray<string>, b: ReadonlyArray<string>): number => {
  const table = Array.from({ length: a.length + 1 }, () => new Array<number>(b.length + 1).fill(0))
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      table[i]![j] = a[i - 1] === b[j - 1] ? table[i - 1]![j - 1]! + 1 : Math.max(table[i - 1]![j]!, table[i]![j - 1]!)
    }
  }
  return table[a.length]![b.length]!
}

/** Words from a small vocabulary separated by one space or a comma and a space: re-tokenising a piece gives its tokens back. */
const sentence = (next: () => number, words: number): string => {
  const vocabulary = ["a", "b", "c", "30", "4,210"]
  const parts: Array<string> = []
  for (let i = 0; i < words; i++) parts.push(vocabulary[Math.floor(next() * vocabulary.length)]!)
  return parts.join(next() < 0.5 ? " " : ", ")
}

describe("wordDiff against its definition", () => {
  it("random sentences: pieces spell each side, unchanged tokens are a longest common subsequence", () => {
    const next = random(31)
    for (let k = 0; k < 300; k++) {
      const before = sentence(next, Math.floor(next() * 9))
      const after = k % 7 === 0 ? before : sentence(next, Math.floor(next() * 9))
      const diff = wordDiff(before, after)
      const context = JSON.stringify([before, after, diff])
      assert.strictEqual(diff.exact, true, context)
      assert.strictEqual(diff.oldCut, undefined)
      assert.strictEqual(diff.newCut, undefined)
      assert.strictEqual(diff.old.map((p) => p.text).join(""), before, context)
      assert.strictEqual(diff.new.map((p) => p.text).join(""), after, context)
      for (const side of [diff.old, diff.new]) {
        for (let i = 1; i < side.length; i++) assert.notStrictEqual(side[i]!.changed, side[i - 1]!.changed, context)
        for (const p of side) assert.isAbove(p.text.length, 0, context)
      }
      const keptOld = diff.old.filter((p) => !p.changed).flatMap((p) => tokenize(p.text))
      const keptNew = diff.new.filter((p) => !p.changed).flatMap((p) => tokenize(p.text))
      assert.deepStrictEqual(keptOld, keptNew, context)
      assert.strictEqual(keptOld.length, lcsLength(tokenize(before), tokenize(after)), context)
    }
  })

  it("hand-checked diffs", () => {
    assert.deepStrictEqual(wordDiff("refunds within 30 days", "refunds within 14 days"), {
      old: [{ text: "refunds within ", changed: false }, { text: "30", changed: true }, { text: " days", changed: false }],
      new: [{ text: "refunds within ", changed: false }, { text: "14", changed: true }, { text: " days", changed: false }],
      exact: true,
      oldCut: undefined,
      newCut: undefined
    })
    assert.deepStrictEqual(wordDiff("", "new"), {
      old: [],
      new: [{ text: "new", changed: true }],
      exact: true,
      oldCut: undefined,
      newCut: undefined
    })
    assert.deepStrictEqual(wordDiff("same", "same"), {
      old: [{ text: "same", changed: false }],
      new: [{ text: "same", changed: false }],
      exact: true,
      oldCut: undefined,
      newCut: undefined
    })
    assert.deepStrictEqual(tokenize("4,210 and 1.5 at 10:30, 7% x,y  "), [
      "4,210", " ", "and", " ", "1.5", " ", "at", " ", "10:30", ",", " ", "7%", " ", "x", ",", "y", "  "
    ])
    assert.deepStrictEqual(tokenize(""), [])
  })

  it("the edit cap: exactly maxEdits edits are diffed, more mark the middle changed whole", () => {
    assert.strictEqual(diffLimits.maxEdits, 256)
    // k words replaced: 2k edits (a deletion and an insertion each); the spaces and ends are common.
    const sides = (k: number, extra: string) => ["q " + "x ".repeat(k) + "q", "q " + "y ".repeat(k) + extra + "q"]
    const [a1, b1] = sides(128, "")
    const atCap = wordDiff(a1!, b1!)
    assert.strictEqual(atCap.exact, true)
    assert.deepStrictEqual(atCap.old.slice(0, 3), [
      { text: "q ", changed: false },
      { text: "x", changed: true },
      { text: " ", changed: false }
    ])
    // One more edit (an inserted word) passes the cap.
    const [a2, b2] = sides(128, "z ")
    const past = wordDiff(a2!, b2!)
    assert.strictEqual(past.exact, false)
    // The common prefix and suffix stay unchanged; the middle is one changed piece on each side.
    assert.deepStrictEqual(past.old, [
      { text: "q ", changed: false },
      { text: "x ".repeat(128).slice(0, -1), changed: true },
      { text: " q", changed: false }
    ])
    assert.deepStrictEqual(past.new, [
      { text: "q ", changed: false },
      { text: "y ".repeat(128) + "z", changed: true },
      { text: " q", changed: false }
    ])
  })

  it("the character cut: at most maxChars code units per side, never half a surrogate pair", () => {
    assert.strictEqual(diffLimits.maxChars, 4000)
    const exact = "a".repeat(4000)
    const over = "a".repeat(4001)
    const d1 = wordDiff(exact, over)
    assert.strictEqual(d1.oldCut, undefined)
    assert.strictEqual(d1.newCut, 4001)
    assert.deepStrictEqual(d1.new, [{ text: exact, changed: false }])
    const d2 = wordDiff(over, exact)
    assert.strictEqual(d2.oldCut, 4001)
    assert.strictEqual(d2.newCut, undefined)
    assert.deepStrictEqual(d2.old, [{ text: exact, changed: false }])
    // A pair across the cut is left out whole.
    const pair = " ".repeat(3999) + "\ud83d\ude00"
    assert.strictEqual(head(pair, 4000), " ".repeat(3999))
    assert.strictEqual(wordDiff(pair, "").old.map((p) => p.text).join(""), " ".repeat(3999))
    assert.strictEqual(head("ab\ud83d\ude00", 4), "ab\ud83d\ude00")
    assert.strictEqual(head("abc", 2), "ab")
  })

  it("edges of the prefix and suffix scan, the middle's flags, and the surrogate range", () => {
    // The shorter side is all prefix: the suffix scan must not run back into it.
    assert.deepStrictEqual(wordDiff("x", "x x"), {
      old: [{ text: "x", changed: false }],
      new: [{ text: "x", changed: false }, { text: " x", changed: true }],
      exact: true,
      oldCut: undefined,
      newCut: undefined
    })
    assert.deepStrictEqual(wordDiff("x x", "x"), {
      old: [{ text: "x", changed: false }, { text: " x", changed: true }],
      new: [{ text: "x", changed: false }],
      exact: true,
      oldCut: undefined,
      newCut: undefined
    })
    // A common token inside the differing middle is flagged false on both sides, not left unset.
    assert.deepStrictEqual(wordDiff("a b c", "a x b y c"), {
      old: [{ text: "a b c", changed: false }],
      new: [{ text: "a ", changed: false }, { text: "x ", changed: true }, { text: "b", changed: false }, {
        text: " y",
        changed: true
      }, { text: " c", changed: false }],
      exact: true,
      oldCut: undefined,
      newCut: undefined
    })
    // The first and last high surrogates (U+D800, U+DBFF) at the cut move it before the pair.
    assert.strictEqual(head("abc\ud800\udc00", 4), "abc")
    assert.strictEqual(head("abc\udbff\udfff", 4), "abc")
    // A side of exactly maxChars is not cut, even when it ends in a lone high surrogate.
    const lone = "a".repeat(3_999) + "\ud800"
    const d = wordDiff(lone, lone + "b")
    assert.strictEqual(d.oldCut, undefined)
    assert.strictEqual(d.old.map((p) => p.text).join(""), lone)
    const e = wordDiff(lone + "b", lone)
    assert.strictEqual(e.newCut, undefined)
    assert.strictEqual(e.new.map((p) => p.text).join(""), lone)
  })
})
