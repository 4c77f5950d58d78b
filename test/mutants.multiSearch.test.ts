/**
 * A real collision of the one-pass search's prefix hash: two different
 * snippets whose first code units hash alike. The hash below restates the one
 * in src/internal/multiSearch.ts (polynomial, base 0x01000193, 32-bit); the
 * pair is found by a birthday search. Should the search change its hash, the
 * pair may no longer collide, but the assertions (exact results, checked
 * against indexOf) still hold for any correct search.
 */
import { assert, describe, it } from "@effect/vitest"
import { searchAll } from "../src/internal/multiSearch.js"

const window = 8
const prefixHash = (s: string) => {
  let h = 0
  for (let j = 0; j < window; j++) h = (Math.imul(h, 0x01000193) + s.charCodeAt(j)) | 0
  return h
}

/** Two different 8-letter strings with the same prefix hash (deterministic birthday search). */
const collidingPair = (): readonly [string, string] => {
  const seen = new Map<number, string>()
  let state = 12345
  for (let n = 0; n < 2_000_000; n++) {
    let s = ""
    for (let j = 0; j < window; j++) {
      state = (Math.imul(state, 1664525) + 1013904223) >>> 0
      s += String.fromCharCode(97 + (state >>> 8) % 26)
    }
    const h = prefixHash(s)
    const other = seen.get(h)
    if (other !== undefined && other !== s) return [other, s]
    seen.set(h, s)
  }
  throw new Error("no collision found")
}

const reference = (text: string, snippet: string) => {
  const start = text.indexOf(snippet)
  if (start === -1) return undefined
  let occurrences = 1
  for (let at = text.indexOf(snippet, start + 1); at !== -1; at = text.indexOf(snippet, at + 1)) occurrences++
  return { start, occurrences }
}

describe("multi-snippet search: a constructed hash collision", () => {
  it("a snippet whose prefix hash collides with text that is there is not reported as found", () => {
    const [present, absent] = collidingPair()
    assert.notStrictEqual(present, absent)
    assert.strictEqual(prefixHash(present), prefixHash(absent))

    // Large enough, with enough snippets, for the one-pass path; `present` occurs three times, `absent` never.
    const filler = "0123456789 ".repeat(7_000)
    const text = `${filler}${present}${filler}${present}${present}${filler}`
    assert.isFalse(text.includes(absent))
    const others = Array.from({ length: 40 }, (_, i) => `#${String(i).padStart(7, "0")}`)
    const snippets = [absent, present, ...others, `${absent}!`, `${present}0`]
    assert.isAtLeast(text.length, 64 * 1024)
    const found = searchAll(text, snippets)
    assert.isUndefined(found[0])
    assert.deepStrictEqual(found[1], { start: filler.length, occurrences: 3 })
    snippets.forEach((snippet, i) => assert.deepStrictEqual(found[i], reference(text, snippet), JSON.stringify(snippet)))
  })
})
