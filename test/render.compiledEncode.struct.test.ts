/**
 * The compiled encoder's generated struct steps (src/internal/compiledEncode.ts `generatedStruct`)
 * against `Schema.encodeSync`: property names that could break generated source or change what the
 * step reads and writes (quotes, backslashes, line and paragraph separators, `__proto__`, index-like
 * and numeric names, empty names), optional properties absent, present and `undefined`, excess keys,
 * nested and strict structs. And the remembered timestamps of `Rfc3339Utc`: a valid string is still
 * the only kind accepted, after the memory fills and is cleared.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as D from "../src/Domain.js"
import * as CompiledEncode from "../src/internal/compiledEncode.js"

/** Own keys with `undefined` values, prototypes and order all shown. */
const shape = (value: unknown): string =>
  JSON.stringify(value, (_key, v) => {
    if (v === undefined) return "<undefined>"
    if (typeof v === "object" && v !== null && !Array.isArray(v)) {
      const proto = Object.getPrototypeOf(v)
      return { "<keys>": Reflect.ownKeys(v).map(String), "<proto>": proto === Object.prototype ? "Object" : proto === null ? "null" : JSON.stringify(proto), ...v }
    }
    return v
  })

const same = <A, I>(schema: Schema.Schema<A, I>, value: unknown, what: string) => {
  const general = Schema.encodeEither(schema)(value as A)
  const compiled = CompiledEncode.compiled(schema)(value as A)
  if (Either.isLeft(general)) {
    assert.isTrue(Option.isNone(compiled), `${what}: compiled answered where the general encoder fails`)
    return
  }
  assert.isTrue(Option.isSome(compiled), `${what}: compiled gave up`)
  if (Option.isSome(compiled)) {
    assert.strictEqual(shape(compiled.value), shape(general.right), what)
    assert.strictEqual(JSON.stringify(compiled.value, null, 2), JSON.stringify(general.right, null, 2), what)
  }
}

const names = ["a", "\"", "\\", "\"); throw new Error(\"injected\"); (\"", "line\nbreak", "\u2028\u2029", "__proto__", "constructor", "0", "1", "10", "-1", "1.5", "", " ", "`${x}`", "*/ //", "\ud800"]

describe("compiled encoder: generated struct steps", () => {
  it("hostile property names: the same value as Schema.encodeSync (keys, order, prototype)", () => {
    const fields = Object.fromEntries(names.map((name, i) => [name, i % 3 === 0 ? Schema.optional(Schema.String) : Schema.NumberFromString]))
    const schema = Schema.Struct(fields as Record<string, typeof Schema.NumberFromString>)
    const full = Object.fromEntries(names.map((name, i) => [name, i % 3 === 0 ? `v${i}\u2028` : i]))
    // `__proto__` as an own key (a literal `{ __proto__: … }` would set the prototype).
    Object.defineProperty(full, "__proto__", { value: "own", enumerable: true, writable: true, configurable: true })
    same(schema, full, "every property present")
    const absent = { ...full }
    for (const [i, name] of names.entries()) if (i % 3 === 0) delete (absent as Record<string, unknown>)[name]
    same(schema, absent, "optional properties absent")
    same(schema, { ...full, a: undefined }, "an optional property present as undefined")
    same(schema, { ...full, extra: 1, [Symbol("s")]: 2 }, "excess keys")
    same(schema, { ...full, "1": "x" }, "a wrong value")
    same(schema, [], "an array")
    same(schema, null, "null")
  })

  it("nested, strict and symbol-keyed structs", () => {
    const inner = Schema.Struct({ "x\"y": Schema.Number, z: Schema.optional(Schema.Array(Schema.String)) })
    const outer = Schema.Struct({ inner, list: Schema.Array(inner) }).annotations({ parseOptions: { onExcessProperty: "error" } })
    same(outer, { inner: { "x\"y": 1 }, list: [{ "x\"y": 2, z: ["a"] }, { "x\"y": -0 }] }, "nested")
    same(outer, { inner: { "x\"y": 1 }, list: [], extra: 1 }, "strict: an excess key fails")
    const sym = Symbol.for("citegate/test")
    const symbolic = Schema.Struct({ [sym]: Schema.String, plain: Schema.String })
    same(symbolic, { [sym]: "s", plain: "p" }, "a symbol-named property (the loop step)")
  })
})

describe("Rfc3339Utc: remembered timestamps", () => {
  it("valid strings only, before and after the memory is cleared", () => {
    const is = Schema.is(D.Rfc3339Utc)
    for (let round = 0; round < 3; round++) {
      // More distinct valid timestamps than are remembered: the memory fills and starts again.
      for (let i = 0; i < 1_500; i++) {
        const valid = new Date(Date.UTC(2026, 0, 1) + i * 1_000).toISOString()
        assert.isTrue(is(valid), valid)
        assert.isTrue(is(valid), `${valid} again`)
      }
      for (const invalid of ["2026-02-30T00:00:00.000Z", "2026-01-01T24:00:00Z", "2026-01-01T00:00:00.000", "2026-01-01T00:00:00.000Z ", ""]) {
        assert.isFalse(is(invalid), invalid)
      }
    }
  })
})
