/**
 * Follow-up tests for the mutation run of `src/anchor/Differences.ts` (docs/testing.md): the
 * word-level diff is compared with a plain reference written from its definition (tokens found
 * code point by code point, a longest common subsequence from a full table, changed runs grouped
 * as removed-then-added), on seeded random texts, plus hand-counted edges: the cut at
 * `maxDiffUnits` tokens, the stop once the output passes `maxDifferencesLength`, every visible
 * form of white space and invisible characters.
 */
import { assert, describe, it } from "@effect/vitest"
import { differences, maxDifferencesLength, maxDiffUnits, visible } from "../src/anchor/Differences.js"
import { seededRandom as random } from "./mutants.support.js"

const wordChar = /^[\p{L}\p{N}\p{M}]$/u

/** Tokens by definition: a run of letters, digits and marks, or one other code point. */
const tokensReference = (s: string): Array<string> => {
  const out: Array<string> = []
  let word = ""
  for (const c of Array.from(s)) {
    if (wordChar.test(c)) {
      word += c
      continue
    }
    if (word !== "") out.push(word)
    word = ""
    out.push(c)
  }
  if (word !== "") out.push(word)
  return out
}

/** The diff of two short token lists (no cut, no stop) from a full LCS table. */
const diffReference = (snippet: string, passage: string): string => {
  const a = tokensReference(snippet)
  const b = tokensReference(passage)
  const lcs: Array<Array<number>> = Array.from({ length: a.length + 1 }, () => new Array<number>(b.length + 1).fill(0))
  for (let i = a.length - 1; i >= 0; i--) {
    for (let j = b.length - 1; j >= 0; j--) {
      lcs[i]![j] = a[i] === b[j] ? lcs[i + 1]![j + 1]! + 1 : Math.max(lcs[i + 1]![j]!, lcs[i]![j + 1]!)
    }
  }
  // Walk: a common token when both agree; else the passage's token when skipping it keeps the
  // longest common subsequence (ties go to the passage), else the snippet's.
  const pieces: Array<readonly ["=" | "-" | "+", string]> = []
  let i = 0
  let j = 0
  while (i < a.length || j < b.length) {
    if (i < a.length && j < b.length && a[i] === b[j]) pieces.push(["=", a[i++]!]), j++
    else if (j < b.length && (i === a.length || lcs[i]![j + 1]! >= lcs[i + 1]![j]!)) pieces.push(["+", b[j++]!])
    else pieces.push(["-", a[i++]!])
  }
  let out = ""
  let k = 0
  while (k < pieces.length) {
    if (pieces[k]![0] === "=") {
      out += pieces[k++]![1]
      continue
    }
    let removed = ""
    let added = ""
    for (; k < pieces.length && pieces[k]![0] !== "="; k++) {
      if (pieces[k]![0] === "-") removed += pieces[k]![1]
      else added += pieces[k]![1]
    }
    if (removed !== "") out += `[-${visibleReference(removed)}-]`
    if (added !== "") out += `{+${visibleReference(added)}+}`
  }
  return out
}

const visibleReference = (s: string): string =>
  Array.from(s).map((c) => {
    const named: Record<string, string> = { " ": "\u2420", "\t": "\\t", "\n": "\\n", "\r": "\\r" }
    if (named[c] !== undefined) return named[c]
    return /^[\s\p{Cf}\p{Cc}]$/u.test(c) ? `\\u{${c.codePointAt(0)!.toString(16)}}` : c
  }).join("")

describe("Differences: agreement with a plain reference", () => {
  it("random snippets and passages over words, spaces, marks, invisible and astral characters", () => {
    const next = random(16)
    const pieces = ["net", "sales", "4", "210", "4,210", " ", " ", "\u00a0", "\t", "\n", "\u00ad", "e\u0301", "\u{1F600}", ".", "not", "units", "\u200b"]
    const text = () => {
      let s = ""
      const count = Math.floor(next() * 14)
      for (let k = 0; k < count; k++) s += pieces[Math.floor(next() * pieces.length)]!
      return s
    }
    for (let round = 0; round < 400; round++) {
      const a = text()
      const b = round % 3 === 0 ? a : round % 3 === 1 ? text() : a.replace(/\d/, "9")
      assert.strictEqual(differences(a, b), diffReference(a, b), JSON.stringify([a, b]))
    }
  })

  it("hand-counted: equal texts, a word added, removed, changed, and both ends", () => {
    assert.strictEqual(differences("", ""), "")
    assert.strictEqual(differences("net sales", "net sales"), "net sales")
    assert.strictEqual(differences("", "net"), "{+net+}")
    assert.strictEqual(differences("net", ""), "[-net-]")
    assert.strictEqual(differences("a b", "a c"), "a [-b-]{+c+}")
    assert.strictEqual(differences("x a", "a"), "[-x\u2420-]a")
    assert.strictEqual(differences("a", "a y"), "a{+\u2420y+}")
    // A tie (b c against c b): the passage's token is taken first.
    assert.strictEqual(differences("b c", "c b"), "{+c\u2420+}b[-\u2420c-]")
    // Marks belong to their word; an astral character is one token.
    assert.strictEqual(differences("cafe\u0301 \u{1F600}", "cafe \u{1F600}"), "[-cafe\u0301-]{+cafe+} \u{1F600}")
  })
})

describe("Differences: visible forms", () => {
  it("every kind of white space and invisible character, one by one", () => {
    assert.strictEqual(visible(" "), "\u2420")
    assert.strictEqual(visible("\t"), "\\t")
    assert.strictEqual(visible("\n"), "\\n")
    assert.strictEqual(visible("\r"), "\\r")
    assert.strictEqual(visible("\u00a0"), "\\u{a0}")
    assert.strictEqual(visible("\u00ad"), "\\u{ad}")
    assert.strictEqual(visible("\u200b"), "\\u{200b}")
    assert.strictEqual(visible("\u0000"), "\\u{0}")
    assert.strictEqual(visible("\u{e0001}"), "\\u{e0001}")
    assert.strictEqual(visible("\u2028"), "\\u{2028}")
    assert.strictEqual(visible("a\u{1F600}\u0301b"), "a\u{1F600}\u0301b")
    assert.strictEqual(visible(""), "")
  })
})

describe("Differences: bounds", () => {
  it("each side is cut to maxDiffUnits tokens; the larger rest is counted", () => {
    assert.strictEqual(maxDiffUnits, 600)
    // 601 tokens against 600: the 601st is not compared (each "-" is a token of its own).
    const words = (count: number) => Array.from({ length: count }, () => "-")
    const a = words(601).join("")
    assert.strictEqual(tokensReference(a).length, 601)
    const b = words(600).join("")
    assert.strictEqual(differences(a, b), `${b} … (1 more tokens not compared)`)
    assert.strictEqual(differences(b, a), `${b} … (1 more tokens not compared)`)
    // Exactly 600 tokens each: nothing left over.
    assert.strictEqual(differences(b, b), b)
    // 603 against 601: the rest is the larger of 3 and 1.
    const c = words(603).join("")
    assert.strictEqual(differences(c, a), `${b} … (3 more tokens not compared)`)
    assert.strictEqual(differences(a, c), `${b} … (3 more tokens not compared)`)
    // A token past the cut that differs is not shown.
    assert.strictEqual(differences(`${b}x`, `${b}y`), `${b} … (1 more tokens not compared)`)
  })

  it("stops once the output passes maxDifferencesLength, then cuts it with its length", () => {
    assert.strictEqual(maxDifferencesLength, 2_000)
    // 9-letter words and spaces: the output is exactly 2,000 code units after the 200th space, and
    // passes it with the 201st word (2,009): the walk stops there.
    const word = "abcdefghi"
    const text = Array.from({ length: 300 }, () => word).join(" ")
    assert.strictEqual(tokensReference(text).length, 599)
    const out = differences(text, text)
    assert.strictEqual(out, `${text.slice(0, 2_000)}… (2009 characters)`)
    // An output of exactly 2,000 code units is kept whole.
    const exact = text.slice(0, 1_999) + " "
    assert.strictEqual(exact.length, 2_000)
    assert.strictEqual(differences(exact, exact), exact)
  })
})
