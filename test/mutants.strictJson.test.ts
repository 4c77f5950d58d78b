/**
 * Boundaries and messages of the strict JSON scanner, pinned to values worked out by hand (not computed with the
 * code under test), so that off-by-one and dropped-branch mutants of `internal/strictJson.ts` fail.
 */
import { assert, describe, it } from "@effect/vitest"
import * as StrictJson from "../src/internal/strictJson.js"

const issue = (text: string, options?: StrictJson.Options) => {
  const result = StrictJson.parse(text, options)
  if (result._tag === "Right") return assert.fail(`expected ${text.slice(0, 80)} to be rejected`)
  return result.issue
}

const value = (text: string, options?: StrictJson.Options) => {
  const result = StrictJson.parse(text, options)
  if (result._tag === "Left") return assert.fail(`expected ${text.slice(0, 80)} to be accepted: ${result.issue.message}`)
  return result.value
}

/** An object with keys k0 … k(n-1), each holding its index. */
const objectOf = (n: number) => `{${Array.from({ length: n }, (_, i) => `"k${i}":${i}`).join(",")}}`

describe("strict JSON limits (mutants)", () => {
  it("nesting: 64 levels accepted, the 65th refused with the path to the 64th container", () => {
    assert.deepStrictEqual(value("[".repeat(64) + "]".repeat(64)), JSON.parse("[".repeat(64) + "]".repeat(64)))
    const found = issue("[".repeat(65) + "]".repeat(65))
    assert.strictEqual(found.message, "nesting deeper than 64 levels of arrays and objects")
    // Every enclosing array is at index 0: the path names 64 containers.
    assert.deepStrictEqual(found.path, Array.from({ length: 64 }, () => 0))
    // Through objects, the path is the keys.
    const deepObject = `{"a":`.repeat(65) + "1" + "}".repeat(65)
    assert.deepStrictEqual(issue(deepObject).path, Array.from({ length: 64 }, () => "a"))
  })

  it("keys: 64 accepted, the 65th distinct key refused as 'got 65 or more' with the object's path", () => {
    assert.deepStrictEqual(value(objectOf(64)), Object.fromEntries(Array.from({ length: 64 }, (_, i) => [`k${i}`, i])))
    const found = issue(`{"x":[0,${objectOf(65)}]}`)
    assert.strictEqual(found.message, "must hold at most 64 keys, got 65 or more")
    assert.deepStrictEqual(found.path, ["x", 1])
    // A 65th key that repeats one of the 64 is a repeated key, not a 65th key.
    const repeated = issue(objectOf(64).slice(0, -1) + `,"k3":9}`)
    assert.strictEqual(repeated.message, `repeated key "k3"`)
    assert.deepStrictEqual(repeated.path, [])
  })

  it("array length: exactly the maximum accepted, one more refused with the default message and the path", () => {
    const options = { maxArrayLength: 3 }
    assert.deepStrictEqual(value(`{"a":[1,2,3]}`, options), { a: [1, 2, 3] })
    assert.deepStrictEqual(value(`{"a":[]}`, { maxArrayLength: 0 }), { a: [] })
    const found = issue(`{"a":[1,2,3,4]}`, options)
    assert.strictEqual(found.message, "must hold at most 3 elements, got 4")
    assert.deepStrictEqual(found.path, ["a"])
    // Two elements are one more than one comma.
    assert.strictEqual(issue(`[7,8]`, { maxArrayLength: 1 }).message, "must hold at most 1 elements, got 2")
    // Commas inside strings and nested containers are not elements of the outer array.
    assert.deepStrictEqual(value(`[",,,",[1,2,3],{"b":1,"c":2}]`, options), [",,,", [1, 2, 3], { b: 1, c: 2 }])
    // Objects are not arrays: four keys under an array limit of 3.
    assert.deepStrictEqual(value(`{"a":1,"b":2,"c":3,"d":4}`, options), { a: 1, b: 2, c: 3, d: 4 })
  })

  it("array length: the caller's message is given the path and the length", () => {
    const calls: Array<[ReadonlyArray<string | number>, number]> = []
    const found = issue(`[[0],[1,2,3,4,5]]`, {
      maxArrayLength: 2,
      arrayTooLong: (path, length) => {
        calls.push([path, length])
        return `too long at ${JSON.stringify(path)}: ${length}`
      }
    })
    // The inner array closes first.
    assert.strictEqual(found.message, "too long at [1]: 5")
    assert.deepStrictEqual(found.path, [1])
    assert.deepStrictEqual(calls, [[[1], 5]])
  })

  it("the first over-long array is reported, also when nesting or keys go over later", () => {
    const options = { maxArrayLength: 1 }
    assert.strictEqual(issue(`[[1,2],` + "[".repeat(70) + "]".repeat(70) + `]`, options).message, "must hold at most 1 elements, got 2")
    assert.strictEqual(issue(`[[1,2],${objectOf(65)}]`, options).message, "must hold at most 1 elements, got 2")
    assert.strictEqual(issue(`[[1,2],[3,4,5]]`, options).message, "must hold at most 1 elements, got 2")
  })

  it("a syntax error is reported before a key issue; a limit before a syntax error", () => {
    assert.match(issue(`{"a":1,"a":2`).message, /^not valid JSON: /)
    assert.deepStrictEqual(issue(`{"a":1,"a":2`).path, [])
    assert.strictEqual(issue(`{"a":1,"a":2}`).message, `repeated key "a"`)
    assert.strictEqual(issue("[".repeat(65)).message, "nesting deeper than 64 levels of arrays and objects")
    // An unterminated string ends the scan: JSON.parse gives the reason.
    assert.match(issue(`{"a":"x`).message, /^not valid JSON: /)
  })

  it("the first key issue wins; forbidden and repeated are told apart", () => {
    assert.strictEqual(issue(`{"a":1,"a":2,"__proto__":3}`).message, `repeated key "a"`)
    const forbidden = issue(`{"b":{"constructor":1},"b":2}`)
    assert.strictEqual(forbidden.message, `forbidden key "constructor"`)
    assert.deepStrictEqual(forbidden.path, ["b"])
    assert.strictEqual(issue(`{"prototype":1}`).message, `forbidden key "prototype"`)
  })

  it("a value after a key is not a key; a key after a comma is", () => {
    // "a" as a value, then "a" as a key: not repeated.
    assert.deepStrictEqual(value(`{"k":"a","a":"k"}`), { k: "a", a: "k" })
    // In an array, strings are never keys.
    assert.deepStrictEqual(value(`["a","a",{"a":1}]`), ["a", "a", { a: 1 }])
    // The path of a nested issue uses the key current in each enclosing object, escapes decoded.
    assert.deepStrictEqual(issue(`{"x":1,"\\u0079":[0,{"z":1,"z":2}]}`).path, ["y", 1])
  })
})
