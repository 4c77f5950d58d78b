/**
 * The digest check by a loop (internal/recordDecode.ts `isSha256Hex`, used by the record and report
 * hand checks) against the regular expression it replaced, `/^[0-9a-f]{64}$/`: every code unit
 * around the edges of the ranges put at every position of a valid digest, seeded strings of lengths
 * 0 to 66 from those characters, and a trailing line break (which `$` does not accept either).
 */
import { assert, describe, it } from "@effect/vitest"
import { sha256Of } from "../src/Domain.js"
import { isSha256Hex } from "../src/internal/recordDecode.js"
import { random } from "./searchSupport.js"

const reference = (value: string): boolean => /^[0-9a-f]{64}$/.test(value)

/** Code units at and around the edges of 0-9 and a-f, capitals, white space, look-alikes and surrogates. */
const edges = ["/", "0", "5", "9", ":", "`", "a", "c", "f", "g", "A", "F", "G", " ", "\n", "\u0000", "\u0660", "\uff10", "\ud83d", "\ude00", "é"]

describe("isSha256Hex: what /^[0-9a-f]{64}$/ accepts", () => {
  it("every edge code unit at every position of a digest", () => {
    const digest = sha256Of("a capture")
    assert.isTrue(isSha256Hex(digest))
    for (let i = 0; i < 64; i++) {
      for (const c of edges) {
        const changed = digest.slice(0, i) + c + digest.slice(i + 1)
        assert.strictEqual(isSha256Hex(changed), reference(changed), JSON.stringify(changed))
      }
    }
    for (const changed of [digest + "\n", digest + "0", digest.slice(1), "", digest.toUpperCase(), `${digest.slice(0, 32)}\ud83d\ude00${digest.slice(34)}`]) {
      assert.strictEqual(isSha256Hex(changed), reference(changed), JSON.stringify(changed))
    }
  })

  it("seeded strings of lengths 0 to 66, mostly hex", () => {
    const next = random(64)
    let accepted = 0
    for (let n = 0; n < 20_000; n++) {
      const length = next() % 3 === 0 ? 64 : next() % 67
      let value = ""
      for (let i = 0; i < length; i++) value += next() % 200 === 0 ? edges[next() % edges.length]! : "0123456789abcdef"[next() % 16]!
      const expected = reference(value)
      if (expected) accepted++
      assert.strictEqual(isSha256Hex(value), expected, JSON.stringify(value))
    }
    assert.isAbove(accepted, 1_000)
    assert.isBelow(accepted, 19_000)
  })
})
