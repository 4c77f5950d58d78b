import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import * as Config from "../src/Config.js"
import { InvalidConfig, InvalidMigrationMap } from "../src/Errors.js"
import * as Migrate from "../src/store/Migrate.js"

const base = { sources: ["https://reports.example.com/a.txt"], labels: ["a"] }

describe("configuration errors", () => {
  it.effect("a bad optional budget is one issue at its path, without 'Expected undefined' noise", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(Config.decode({ ...base, capture: { maxBytes: 0 } }))
      assert.instanceOf(error, InvalidConfig)
      assert.deepStrictEqual(error.issues, [{ path: ["capture", "maxBytes"], message: "must be an integer from 1 to 67108864" }])
      assert.isUndefined(error.omitted)
    }))

  it.effect("an optional field holding null: issues about the field's values only", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(Config.decodeText(JSON.stringify({ ...base, verify: { mode: null } })))
      assert.deepStrictEqual(error.issues, [
        { path: ["verify", "mode"], message: "Expected \"reject\", actual null" },
        { path: ["verify", "mode"], message: "Expected \"drop\", actual null" }
      ])
    }))

  it.effect("an optional object of the wrong type is still reported (the only issue at its path)", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(Config.decode({ ...base, capture: 5 }))
      assert.strictEqual(error.issues.length, 1)
      assert.deepStrictEqual(error.issues[0]!.path, ["capture"])
    }))

  it.effect("more than 1,000 sources: refused before parsing, at its path", () =>
    Effect.gen(function*() {
      const sources = Array.from({ length: 1_001 }, (_, i) => `https://reports.example.com/${i}.txt`)
      const fromText = yield* Effect.flip(Config.decodeText(JSON.stringify({ ...base, sources })))
      assert.strictEqual(fromText.issues.length, 1)
      assert.deepStrictEqual(fromText.issues[0]!.path, ["sources"])
      const fromValue = yield* Effect.flip(Config.decode({ ...base, sources }))
      assert.deepStrictEqual(fromValue.issues, [{ path: ["sources"], message: "must hold at most 1000 sources, got 1001" }])
    }))

  it.effect("10,001 labels are refused; 10,000 are accepted", () =>
    Effect.gen(function*() {
      const labels = (n: number) => Array.from({ length: n }, (_, i) => `label_${i}`)
      const error = yield* Effect.flip(Config.decode({ ...base, labels: labels(10_001) }))
      assert.deepStrictEqual(error.issues, [{ path: ["labels"], message: "must hold at most 10000 labels, got 10001" }])
      const config = yield* Config.decodeText(JSON.stringify({ ...base, labels: labels(10_000) }))
      assert.strictEqual(config.labels.length, 10_000)
    }))
})

describe("migration map errors", () => {
  it.effect("InvalidMigrationMap, not InvalidConfig, with the path of the problem", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(
        Migrate.decodeMap(JSON.stringify({ entries: [{ file: "a.json", source: "https://a.example/x", extra: 1 }] }))
      )
      assert.instanceOf(error, InvalidMigrationMap)
      assert.deepStrictEqual(error.issues.map((i) => i.path), [["entries", 0, "extra"]])
      assert.include(error.message, "migration map")
    }))
})
