import { assert, describe, it } from "@effect/vitest"
import { Either, Schema } from "effect"
import { decodeJson, decodeUnknown, maxIssues, plainDataIssue } from "../src/internal/decode.js"

// Exact issues (path AND message) of the structural check and the strict decode, at each limit's edge.

const nested = (levels: number): unknown => {
  let value: unknown = 1
  for (let i = 0; i < levels; i++) value = [value]
  return value
}

const left = <A, E>(either: Either.Either<A, E>): E => {
  if (Either.isRight(either)) return assert.fail(`expected a failure, got ${JSON.stringify(either.right)}`)
  return either.left
}

describe("decode: plainDataIssue", () => {
  it("plain data, null prototypes and frozen values are fine", () => {
    assert.isUndefined(plainDataIssue({ a: [1, "x", true, null], b: { c: undefined } }))
    assert.isUndefined(plainDataIssue(Object.freeze(Object.assign(Object.create(null), { a: 1 }))))
    assert.isUndefined(plainDataIssue("text"))
    assert.isUndefined(plainDataIssue(null))
  })

  it("64 levels of arrays accepted; the 65th refused at the path of 64 indices", () => {
    assert.isUndefined(plainDataIssue(nested(64)))
    assert.deepStrictEqual(plainDataIssue(nested(65)), {
      path: Array.from({ length: 64 }, () => 0),
      message: "nesting deeper than 64 levels of arrays and objects"
    })
  })

  it("functions, symbols and bigints are named at their path", () => {
    assert.deepStrictEqual(plainDataIssue({ a: { b: () => 1 } }), {
      path: ["a", "b"],
      message: "must be plain JSON data, not a function"
    })
    assert.deepStrictEqual(plainDataIssue([1, Symbol("s")]), { path: [1], message: "must be plain JSON data, not a symbol" })
    assert.deepStrictEqual(plainDataIssue({ n: 1n }), { path: ["n"], message: "must be plain JSON data, not a bigint" })
  })

  it("Proxies, class instances, array subclasses and symbol keys are refused with their own message", () => {
    assert.deepStrictEqual(plainDataIssue({ p: new Proxy({}, {}) }), {
      path: ["p"],
      message: "must be plain JSON data, not a Proxy"
    })
    assert.deepStrictEqual(plainDataIssue({ p: new Proxy([], {}) }), {
      path: ["p"],
      message: "must be plain JSON data, not a Proxy"
    })
    class Point {
      x = 1
    }
    assert.deepStrictEqual(plainDataIssue([new Point()]), {
      path: [0],
      message: "must be a plain object (its prototype is not Object.prototype: inherited keys do not count)"
    })
    class List extends Array<number> {}
    assert.deepStrictEqual(plainDataIssue({ l: List.from([1]) }), { path: ["l"], message: "must be a plain array" })
    assert.deepStrictEqual(plainDataIssue({ s: { [Symbol("k")]: 1 } }), {
      path: ["s"],
      message: "must be plain JSON data, not an object with symbol keys"
    })
  })

  it("holes, extra properties, getters and non-enumerable properties, and no getter runs", () => {
    assert.deepStrictEqual(plainDataIssue({ a: [1, , 3] }), {
      path: ["a"],
      message: "must be a plain array (no holes, no extra properties)"
    })
    const extra = Object.assign([1, 2], { x: 1 })
    assert.deepStrictEqual(plainDataIssue(extra), { path: [], message: "must be a plain array (no holes, no extra properties)" })
    // As many own keys as elements, yet index 1 is a hole.
    const holeAndExtra = Object.assign([1, , 3], { x: 1 })
    assert.deepStrictEqual(plainDataIssue(holeAndExtra), { path: [1], message: "must be plain JSON data, not a hole" })
    let ran = false
    const getter = Object.defineProperty({}, "g", {
      enumerable: true,
      get: () => {
        ran = true
        return 1
      }
    })
    assert.deepStrictEqual(plainDataIssue({ o: getter }), { path: ["o", "g"], message: "must be plain JSON data, not a getter" })
    const arrayGetter = Object.defineProperty([0], 0, { enumerable: true, get: () => (ran = true) })
    assert.deepStrictEqual(plainDataIssue(arrayGetter), { path: [0], message: "must be plain JSON data, not a getter" })
    assert.isFalse(ran)
    const hidden = Object.defineProperty({}, "h", { value: 1, enumerable: false })
    assert.deepStrictEqual(plainDataIssue({ o: hidden }), {
      path: ["o", "h"],
      message: "must be plain JSON data, not a non-enumerable property"
    })
  })

  it("array length: the maximum accepted, one more refused with the default or the caller's message", () => {
    assert.isUndefined(plainDataIssue({ a: [1, 2, 3] }, { maxArrayLength: 3 }))
    assert.deepStrictEqual(plainDataIssue({ a: [1, 2, 3, 4] }, { maxArrayLength: 3 }), {
      path: ["a"],
      message: "must hold at most 3 elements, got 4"
    })
    const seen: Array<unknown> = []
    const issue = plainDataIssue({ a: [[1, 2, 3, 4]] }, {
      maxArrayLength: 3,
      arrayTooLong: (path, length) => {
        seen.push([path, length])
        return `too long: ${length}`
      }
    })
    assert.deepStrictEqual(issue, { path: ["a", 0], message: "too long: 4" })
    assert.deepStrictEqual(seen, [[["a", 0], 4]])
    // The length is checked before any element: a bad element past the limit is not what is reported.
    assert.deepStrictEqual(plainDataIssue([1, 2, () => 1, 4], { maxArrayLength: 3 }), {
      path: [],
      message: "must hold at most 3 elements, got 4"
    })
  })

  it("keys: 64 accepted, 65 refused at the object's path", () => {
    const keys = (n: number) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`k${i}`, i]))
    assert.isUndefined(plainDataIssue({ o: keys(64) }))
    assert.deepStrictEqual(plainDataIssue({ o: keys(65) }), { path: ["o"], message: "must hold at most 64 keys, got 65 or more" })
  })

  it("long keys in the path are cut", () => {
    const key = "k".repeat(300)
    assert.deepStrictEqual(plainDataIssue({ [key]: () => 1 }), {
      path: [`${"k".repeat(200)}… (300 characters)`],
      message: "must be plain JSON data, not a function"
    })
  })
})

const Pair = Schema.Struct({ a: Schema.Number, b: Schema.optional(Schema.Number) })

describe("decode: decodeUnknown", () => {
  it("decodes strictly: an unknown key is an issue at its path", () => {
    assert.deepStrictEqual(Either.getOrThrow(decodeUnknown(Pair)({ a: 1 })), { a: 1 })
    assert.deepStrictEqual(left(decodeUnknown(Pair)({ a: 1, c: 2 })), {
      issues: [{ path: ["c"], message: "is unexpected, expected: \"a\" | \"b\"" }]
    })
  })

  it("a bad optional value is one issue, without the 'Expected undefined' alternative", () => {
    assert.deepStrictEqual(left(decodeUnknown(Pair)({ a: 1, b: "x" })), {
      issues: [{ path: ["b"], message: "Expected number, actual \"x\"" }]
    })
  })

  it("the noise is dropped under array indices too: index and key segments are told apart the same way", () => {
    const Listed = Schema.Struct({ list: Schema.Array(Schema.Struct({ b: Schema.optional(Schema.Number) })) })
    assert.deepStrictEqual(left(decodeUnknown(Listed)({ list: [{ b: 1 }, { b: "x" }] })), {
      issues: [{ path: ["list", 1, "b"], message: "Expected number, actual \"x\"" }]
    })
  })

  it("an 'Expected undefined' issue with no real issue at or under its path is kept", () => {
    const OnlyUndefined = Schema.Struct({ u: Schema.Undefined, n: Schema.Number })
    assert.deepStrictEqual(left(decodeUnknown(OnlyUndefined)({ u: 1, n: "x" })), {
      issues: [
        { path: ["u"], message: "Expected undefined, actual 1" },
        { path: ["n"], message: "Expected number, actual \"x\"" }
      ]
    })
  })

  it(`${maxIssues} issues listed without a count; one more listed ${maxIssues} and counted`, () => {
    const fields = (n: number) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`f${i}`, Schema.Number]))
    const bad = (n: number) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`f${i}`, "x"]))
    const exact = left(decodeUnknown(Schema.Struct(fields(20)))(bad(20)))
    assert.strictEqual(exact.issues.length, 20)
    assert.isFalse("omitted" in exact)
    const over = left(decodeUnknown(Schema.Struct(fields(23)))(bad(23)))
    assert.strictEqual(over.issues.length, 20)
    assert.strictEqual(over.omitted, 3)
    assert.deepStrictEqual(over.issues[19], { path: ["f19"], message: "Expected number, actual \"x\"" })
  })

  it("the structural check comes before the precheck, the precheck before the Schema", () => {
    const calls: Array<unknown> = []
    const limits = {
      precheck: (input: unknown) => {
        calls.push(input)
        return { path: ["pre"], message: "too big" }
      }
    }
    assert.deepStrictEqual(left(decodeUnknown(Pair, limits)({ a: () => 1 })), {
      issues: [{ path: ["a"], message: "must be plain JSON data, not a function" }]
    })
    assert.deepStrictEqual(calls, [])
    assert.deepStrictEqual(left(decodeUnknown(Pair, limits)({ a: "not a number" })), {
      issues: [{ path: ["pre"], message: "too big" }]
    })
    assert.strictEqual(calls.length, 1)
  })

  it("a precheck that throws does not decide: the Schema does", () => {
    const limits = {
      precheck: () => {
        throw new Error("boom")
      }
    }
    assert.deepStrictEqual(Either.getOrThrow(decodeUnknown(Pair, limits)({ a: 2 })), { a: 2 })
    assert.deepStrictEqual(left(decodeUnknown(Pair, limits)({ a: "x" })), {
      issues: [{ path: ["a"], message: "Expected number, actual \"x\"" }]
    })
  })

  it("array limits given to decodeUnknown apply to the value", () => {
    const List = Schema.Array(Schema.Number)
    assert.deepStrictEqual(Either.getOrThrow(decodeUnknown(List, { maxArrayLength: 2 })([1, 2])), [1, 2])
    assert.deepStrictEqual(left(decodeUnknown(List, { maxArrayLength: 2 })([1, 2, 3])), {
      issues: [{ path: [], message: "must hold at most 2 elements, got 3" }]
    })
  })

  it("long values quoted in Schema messages are cut", () => {
    const value = "v".repeat(500)
    assert.deepStrictEqual(left(decodeUnknown(Pair)({ a: value })), {
      issues: [{ path: ["a"], message: `Expected number, actual "${"v".repeat(200)}"… (500 characters)` }]
    })
  })
})

describe("decode: decodeJson", () => {
  it("text: the strict JSON issue, then the precheck, then the Schema", () => {
    assert.deepStrictEqual(Either.getOrThrow(decodeJson(Pair)('{"a":1}')), { a: 1 })
    assert.deepStrictEqual(left(decodeJson(Pair)('{"a":1,"a":2}')), {
      issues: [{ path: [], message: "repeated key \"a\"" }]
    })
    assert.deepStrictEqual(left(decodeJson(Schema.Array(Schema.Number), { maxArrayLength: 1 })("[1,2]")), {
      issues: [{ path: [], message: "must hold at most 1 elements, got 2" }]
    })
    const limits = { precheck: (input: unknown) => (Array.isArray(input) ? { path: [], message: "no arrays" } : undefined) }
    assert.deepStrictEqual(left(decodeJson(Schema.Unknown, limits)("[]")), { issues: [{ path: [], message: "no arrays" }] })
    assert.deepStrictEqual(left(decodeJson(Pair, limits)('{"a":"x"}')), {
      issues: [{ path: ["a"], message: "Expected number, actual \"x\"" }]
    })
  })
})
