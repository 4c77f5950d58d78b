/**
 * Follow-up tests for the mutation run of `myers` in `src/audit/WordDiff.ts` (docs/testing.md): the
 * diff of seeded random token sequences compared whole with a reference written here: the common
 * prefix and suffix stripped, then the greedy algorithm as Myers' paper states it (each diagonal's
 * furthest point carries its own list of edits, no back-walk through saved frontiers), with the
 * same tie rule (`V[k-1] < V[k+1]`: an insertion only when it reaches strictly further). The kept
 * tokens are also checked against a longest common subsequence computed by a plain table, so the
 * reference itself is held to the definition.
 */
import { assert, describe, it } from "@effect/vitest"
import { diffLimits, type Piece, wordDiff } from "../src/audit/WordDiff.js"
import { seededRandom } from "./mutants.support.js"

/** Each of these characters is a token of its own (no letter, digit or white space), so a string's tokens are its characters. */
const alphabet = [".", ",", ";", "!"] as const

const randomTokens = (next: () => number, length: number, symbols: number): Array<string> =>
  Array.from({ length }, () => alphabet[Math.floor(next() * symbols)]!)

const lcsLength = (a: ReadonlyArray<string>, b: ReadonlyArray<string>): number => {
  const table = Array.from({ length: a.length + 1 }, () => new Array<number>(b.length + 1).fill(0))
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      table[i]![j] = a[i - 1] === b[j - 1] ? table[i - 1]![j - 1]! + 1 : Math.max(table[i - 1]![j]!, table[i]![j - 1]!)
    }
  }
  return table[a.length]![b.length]!
}

type Edit = { readonly kind: "del"; readonly at: number } | { readonly kind: "ins"; readonly at: number }
/** A path's edits, last first, sharing the tail with the path it extends. */
type Path = { readonly edit: Edit; readonly before: Path } | undefined

const editsOf = (path: Path): Array<Edit> => {
  const out: Array<Edit> = []
  for (let p = path; p !== undefined; p = p.before) out.push(p.edit)
  return out.reverse()
}

/**
 * Myers' greedy forward search, each frontier point with the edits of its path; `undefined` past
 * `cap` edits. Points outside the grid are kept, as in the paper (they never reach the end first).
 */
const textbook = (a: ReadonlyArray<string>, b: ReadonlyArray<string>, cap: number): ReadonlyArray<Edit> | undefined => {
  const n = a.length
  const m = b.length
  let frontier = new Map<number, { x: number; path: Path }>()
  for (let d = 0; d <= Math.min(n + m, cap); d++) {
    const next = new Map<number, { x: number; path: Path }>()
    for (let k = -d; k <= d; k += 2) {
      let x: number
      let path: Path
      if (d === 0) {
        x = 0
        path = undefined
      } else if (k === -d || (k !== d && frontier.get(k - 1)!.x < frontier.get(k + 1)!.x)) {
        // Down from diagonal k + 1: the new side's token at the old y is inserted.
        const from = frontier.get(k + 1)!
        x = from.x
        path = { edit: { kind: "ins", at: from.x - (k + 1) }, before: from.path }
      } else {
        // Right from diagonal k - 1: the old side's token at the old x is deleted.
        const from = frontier.get(k - 1)!
        x = from.x + 1
        path = { edit: { kind: "del", at: from.x }, before: from.path }
      }
      let y = x - k
      while (x < n && y < m && a[x] === b[y]) {
        x++
        y++
      }
      if (x >= n && y >= m) return editsOf(path)
      next.set(k, { x, path })
    }
    frontier = next
  }
  return undefined
}

/** Adjacent tokens with the same flag joined. */
const join = (tokens: ReadonlyArray<string>, changed: ReadonlyArray<boolean>): Array<Piece> => {
  const out: Array<{ text: string; changed: boolean }> = []
  tokens.forEach((text, i) => {
    if (out.length > 0 && out[out.length - 1]!.changed === changed[i]) out[out.length - 1]!.text += text
    else out.push({ text, changed: changed[i]! })
  })
  return out
}

/** The expected diff of two token sequences: prefix and suffix kept, the middle by `textbook`, whole when over the cap. */
const expected = (a: ReadonlyArray<string>, b: ReadonlyArray<string>, cap: number) => {
  let start = 0
  while (start < a.length && start < b.length && a[start] === b[start]) start++
  let endA = a.length
  let endB = b.length
  while (endA > start && endB > start && a[endA - 1] === b[endB - 1]) {
    endA--
    endB--
  }
  const edits = textbook(a.slice(start, endA), b.slice(start, endB), cap)
  const del = a.map((_, i) => i >= start && i < endA && edits === undefined)
  const ins = b.map((_, j) => j >= start && j < endB && edits === undefined)
  for (const edit of edits ?? []) {
    if (edit.kind === "del") del[start + edit.at] = true
    else ins[start + edit.at] = true
  }
  return { old: join(a, del), new: join(b, ins), exact: edits !== undefined, oldCut: undefined, newCut: undefined, del, ins }
}

const check = (a: ReadonlyArray<string>, b: ReadonlyArray<string>) => {
  const want = expected(a, b, diffLimits.maxEdits)
  const got = wordDiff(a.join(""), b.join(""))
  const context = JSON.stringify([a.join(""), b.join("")])
  assert.deepStrictEqual(got, { old: want.old, new: want.new, exact: want.exact, oldCut: undefined, newCut: undefined }, context)
  if (want.exact) {
    // The reference against the definition: the kept tokens are one common subsequence, of the longest length.
    const keptA = a.filter((_, i) => !want.del[i])
    const keptB = b.filter((_, j) => !want.ins[j])
    assert.deepStrictEqual(keptA, keptB, context)
    assert.strictEqual(keptA.length, lcsLength(a, b), context)
  }
  return want
}

describe("myers against the textbook algorithm", () => {
  it("hand-checked diffs of the middle", () => {
    // ".," against ",.": keeping either token takes 2 edits; the search reaches the end first along
    // the deletion of "." (diagonal 1, which the snake over "," carries further), so "," is kept.
    assert.deepStrictEqual(wordDiff(".,", ",."), {
      old: [{ text: ".", changed: true }, { text: ",", changed: false }],
      new: [{ text: ",", changed: false }, { text: ".", changed: true }],
      exact: true,
      oldCut: undefined,
      newCut: undefined
    })
    // "." against ",": nothing in common, a deletion and an insertion (the middle is every token).
    assert.deepStrictEqual(wordDiff(".", ","), {
      old: [{ text: ".", changed: true }],
      new: [{ text: ",", changed: true }],
      exact: true,
      oldCut: undefined,
      newCut: undefined
    })
    // ".;," against ",.;": keeping ".;" (2 edits) beats keeping "," (4 edits).
    assert.deepStrictEqual(wordDiff(".;,", ",.;"), {
      old: [{ text: ".;", changed: false }, { text: ",", changed: true }],
      new: [{ text: ",", changed: true }, { text: ".;", changed: false }],
      exact: true,
      oldCut: undefined,
      newCut: undefined
    })
    // Only insertions, only deletions, between common tokens.
    assert.deepStrictEqual(wordDiff(".;", ".,!;"), {
      old: [{ text: ".;", changed: false }],
      new: [{ text: ".", changed: false }, { text: ",!", changed: true }, { text: ";", changed: false }],
      exact: true,
      oldCut: undefined,
      newCut: undefined
    })
    assert.deepStrictEqual(wordDiff(".,!;", ".;"), {
      old: [{ text: ".", changed: false }, { text: ",!", changed: true }, { text: ";", changed: false }],
      new: [{ text: ".;", changed: false }],
      exact: true,
      oldCut: undefined,
      newCut: undefined
    })
  })

  it("the reference agrees with the hand-checked cases", () => {
    assert.deepStrictEqual(expected([".", ","], [",", "."], 256).old, [{ text: ".", changed: true }, { text: ",", changed: false }])
    assert.deepStrictEqual(expected([".", ";", ","], [",", ".", ";"], 256).new, [{ text: ",", changed: true }, { text: ".;", changed: false }])
    assert.strictEqual(textbook(["."], [","], 1), undefined)
    assert.deepStrictEqual(textbook(["."], [","], 2), [{ kind: "del", at: 0 }, { kind: "ins", at: 0 }])
  })

  it("seeded random sequences of 0 to 12 tokens over 2, 3 and 4 symbols: the same pieces as the reference", () => {
    const next = seededRandom(16)
    for (let i = 0; i < 400; i++) {
      const symbols = 2 + (i % 3)
      check(randomTokens(next, Math.floor(next() * 13), symbols), randomTokens(next, Math.floor(next() * 13), symbols))
    }
  })

  it("edits near the cap: random middles of 180 to 440 tokens, exact up to maxEdits edits and whole past it", () => {
    const next = seededRandom(61)
    const outcomes = new Set<boolean>()
    for (let i = 0; i < 10; i++) {
      const a = randomTokens(next, 180 + Math.floor(next() * 260), 4)
      const b = randomTokens(next, 180 + Math.floor(next() * 260), 4)
      outcomes.add(check(a, b).exact)
    }
    // Both sides of the cap were reached.
    assert.deepStrictEqual([...outcomes].sort(), [false, true])
  })

  it("exactly at the cap: all of one side deleted and all of the other inserted", () => {
    // 128 + 128 tokens with nothing in common: 256 edits, the cap, still exact.
    const a = new Array<string>(128).fill(".")
    const b = new Array<string>(128).fill(",")
    const d = check(a, b)
    assert.strictEqual(d.exact, true)
    // One token more: 257 edits, over the cap.
    assert.strictEqual(check([...a, "."], b).exact, false)
    assert.strictEqual(check(a, [...b, ","]).exact, false)
  })
})
