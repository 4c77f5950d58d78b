/**
 * Edges of the strict JSON scanner that a Stryker run of `internal/strictJson.ts` showed untested: text
 * outside any container, more than one over-long array, a limit followed by text that is not JSON, keys
 * that are not valid JSON strings, and the `_tag` of every kind of result.
 */
import { assert, describe, it } from "@effect/vitest"
import * as StrictJson from "../src/internal/strictJson.js"

/** The issue of a rejected text; fails the test if the text was accepted. Never catches a throw. */
const issue = (text: string, options?: StrictJson.Options) => {
  const result = StrictJson.parse(text, options)
  assert.strictEqual(result._tag, "Left")
  if (result._tag !== "Left") return assert.fail("accepted")
  return result.issue
}

const keys64 = Array.from({ length: 64 }, (_, i) => `"k${i}":${i}`).join(",")

describe("strict JSON edges (mutants)", () => {
  it("a top-level string is a value, not a key; results are tagged Right", () => {
    assert.deepStrictEqual(StrictJson.parse('"abc"'), { _tag: "Right", value: "abc" })
    assert.deepStrictEqual(StrictJson.parse('"a\\"b"'), { _tag: "Right", value: 'a"b' })
    assert.deepStrictEqual(StrictJson.parse("7"), { _tag: "Right", value: 7 })
  })

  it("a comma or closing bracket outside any container is a syntax error, not a throw", () => {
    for (const text of ["1,2", ",", "]", "}", "[1]]", '"a",'] as const) {
      const found = issue(text)
      assert.deepStrictEqual(found.path, [])
      assert.isTrue(found.message.startsWith("not valid JSON: "), found.message)
    }
  })

  it("of two over-long arrays the first is reported, with its own length", () => {
    const options = { maxArrayLength: 2 }
    assert.deepStrictEqual(issue(`{"a":[1,2,3],"b":[1,2,3,4,5]}`, options), {
      path: ["a"],
      message: "must hold at most 2 elements, got 3"
    })
    assert.deepStrictEqual(issue(`[[1,2,3,4],[5,6,7,8,9]]`, { maxArrayLength: 3 }), {
      path: [0],
      message: "must hold at most 3 elements, got 4"
    })
  })

  it("a limit found before an unterminated string is still reported (not the syntax error)", () => {
    assert.deepStrictEqual(issue(`[1,2,3] "abc`, { maxArrayLength: 2 }), {
      path: [],
      message: "must hold at most 2 elements, got 3"
    })
  })

  it("a key that is not a valid JSON string is not counted: 64 keys and a bad escape is a syntax error", () => {
    const found = issue(`{${keys64},"\\x":1}`)
    assert.deepStrictEqual(found.path, [])
    assert.isTrue(found.message.startsWith("not valid JSON: "), found.message)
    // The same 65th key spelled validly is the key limit.
    assert.deepStrictEqual(issue(`{${keys64},"\\u0078":1}`), { path: [], message: "must hold at most 64 keys, got 65 or more" })
  })

  it("a container opened where a key belongs (not JSON) is named by the empty key in a depth issue", () => {
    assert.deepStrictEqual(issue("{" + "[".repeat(64)), {
      path: ["", ...Array.from({ length: 63 }, () => 0)],
      message: "nesting deeper than 64 levels of arrays and objects"
    })
  })

  it("limit, syntax and key issues are all tagged Left", () => {
    assert.deepStrictEqual(StrictJson.parse("[1,2]", { maxArrayLength: 1 }), {
      _tag: "Left",
      issue: { path: [], message: "must hold at most 1 elements, got 2" }
    })
    assert.deepStrictEqual(StrictJson.parse(`{"a":1,"a":2}`), { _tag: "Left", issue: { path: [], message: `repeated key "a"` } })
    assert.strictEqual(StrictJson.parse("{")._tag, "Left")
  })
})
