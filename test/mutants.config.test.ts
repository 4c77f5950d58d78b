/**
 * The operator's configuration is decoded strictly: repeated sources or labels,
 * unknown keys in nested objects, and budgets one past their documented limits
 * are refused with the issue at its path; the limits themselves are accepted.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Either, ParseResult, Schema } from "effect"
import * as Capture from "../src/capture/Capture.js"
import * as Config from "../src/Config.js"
import { InvalidBudget, InvalidConfig } from "../src/Errors.js"
import { failureOf } from "./mutants.support.js"

const A = "https://a.test/x"
const B = "https://a.test/y"
const base = { sources: [A, B], labels: ["one", "two"] }

const MiB = 1024 * 1024

/**
 * The issues of a configuration that must not decode, as [path, message]. (An
 * optional member also reports "Expected undefined" at its own path: the
 * assertions below look for the issue that matters among them.)
 */
const issuesOf = (input: unknown) =>
  Effect.map(failureOf(Config.decode(input)), (error) => {
    assert.instanceOf(error, InvalidConfig)
    return error.issues.map((issue) => [issue.path.join("."), issue.message] as const)
  })

const assertHas = (issues: ReadonlyArray<readonly [string, string]>, path: string, message: string | RegExp) =>
  assert.isTrue(
    issues.some(([p, m]) => p === path && (typeof message === "string" ? m === message : message.test(m))),
    `no issue at ${path} matching ${String(message)} in ${JSON.stringify(issues)}`
  )

describe("Config: uniqueness", () => {
  it.effect("a source listed twice is refused, naming it", () =>
    Effect.gen(function*() {
      const issues = yield* issuesOf({ ...base, sources: [A, B, A] })
      assert.deepStrictEqual(issues, [["sources", `sources must be unique: "${A}" appears more than once`]])
    }))

  it.effect("a label listed twice is refused, naming it", () =>
    Effect.gen(function*() {
      const issues = yield* issuesOf({ ...base, labels: ["one", "two", "two"] })
      assert.deepStrictEqual(issues, [["labels", `labels must be unique: "two" appears more than once`]])
    }))

  it.effect("distinct sources and labels decode as given, in order", () =>
    Effect.gen(function*() {
      const config = yield* Config.decode(base)
      assert.deepStrictEqual([...config.sources], [A, B])
      assert.deepStrictEqual([...config.labels], ["one", "two"])
      assert.strictEqual(Config.resolvedMode(config), "reject")
      assert.strictEqual(Config.resolvedMaxFacts(config), 100)
    }))
})

describe("Config: nested objects are strict", () => {
  it.effect("an unknown key inside capture is refused, not stripped", () =>
    Effect.gen(function*() {
      const issues = yield* issuesOf({ ...base, capture: { timeoutMs: 1_000, followRedirects: true } })
      assertHas(issues, "capture.followRedirects", /is unexpected/)
    }))

  it.effect("an unknown key inside verify is refused, not stripped", () =>
    Effect.gen(function*() {
      const issues = yield* issuesOf({ ...base, verify: { mode: "drop", normalise: "NFC" } })
      assertHas(issues, "verify.normalise", /is unexpected/)
    }))

  it.effect("the same keys through configuration JSON text", () =>
    Effect.gen(function*() {
      const error = yield* failureOf(Config.decodeText(JSON.stringify({ ...base, capture: { extra: 1 }, verify: { extra: 2 } })))
      assert.instanceOf(error, InvalidConfig)
      const issues = error.issues.map((i) => [i.path.join("."), i.message] as const)
      assertHas(issues, "capture.extra", /is unexpected/)
      assertHas(issues, "verify.extra", /is unexpected/)
    }))
})

describe("Config: issues name the expected shape", () => {
  it.effect("a value of the wrong type is reported with the Schema's name", () =>
    Effect.gen(function*() {
      assert.deepStrictEqual(yield* issuesOf(null), [["", "Expected PipelineConfig, actual null"]])
      const nested = yield* issuesOf({ ...base, capture: 5, verify: "x" })
      assertHas(nested, "capture", "Expected CaptureBudgets, actual 5")
      assertHas(nested, "verify", `Expected VerifyOptions, actual "x"`)
    }))
})

describe("Config: the exported Schemas are strict by themselves", () => {
  // Consumers may decode with the exported Schema and default options; the strictness must not
  // depend on the options that citegate's own decode passes.
  for (const [what, input, path] of [
    ["top level", { ...base, approveEverything: true }, "approveEverything"],
    ["capture", { ...base, capture: { followRedirects: true } }, "capture.followRedirects"],
    ["verify", { ...base, verify: { normalise: "NFC" } }, "verify.normalise"]
  ] as const) {
    it(`an unknown key at ${what} fails a default-options decode`, () => {
      const result = Schema.decodeUnknownEither(Config.PipelineConfig)(input)
      if (Either.isRight(result)) return assert.fail(`decoded (key stripped): ${JSON.stringify(result.right)}`)
      const paths = ParseResult.ArrayFormatter.formatErrorSync(result.left).map((i) => i.path.join("."))
      assert.include(paths, path)
    })
  }
})

describe("Config: budget limits, exactly at and one past each bound", () => {
  const cases = [
    ["capture", "maxBytes", 1, 64 * MiB],
    ["capture", "timeoutMs", 1, 600_000],
    ["capture", "concurrency", 1, 64],
    ["verify", "maxFacts", 1, 10_000]
  ] as const

  for (const [group, key, min, max] of cases) {
    it.effect(`${group}.${key}: ${min} and ${max} are accepted, ${min - 1} and ${max + 1} refused`, () =>
      Effect.gen(function*() {
        for (const ok of [min, max]) {
          const config = yield* Config.decode({ ...base, [group]: { [key]: ok } })
          assert.strictEqual((config[group] as Record<string, number>)[key], ok)
        }
        for (const bad of [min - 1, max + 1]) {
          const issues = yield* issuesOf({ ...base, [group]: { [key]: bad } })
          assertHas(issues, `${group}.${key}`, `must be an integer from ${min} to ${max}`)
        }
        const fraction = yield* issuesOf({ ...base, [group]: { [key]: min + 0.5 } })
        assertHas(fraction, `${group}.${key}`, /Expected an integer/)
      }))
  }

  it("the documented limits are these numbers (64 MiB, 10 min, 64 at once)", () => {
    assert.deepStrictEqual(Config.captureLimits, {
      timeoutMs: { min: 1, max: 600_000, default: 15_000 },
      maxBytes: { min: 1, max: 67_108_864, default: 8_388_608 },
      concurrency: { min: 1, max: 64, default: 4 }
    })
    assert.strictEqual(Config.maxFactsLimit, 10_000)
  })

  it.effect("the capture stage applies the same bounds: 64 MiB accepted, 64 MiB + 1 refused as InvalidBudget", () =>
    Effect.gen(function*() {
      const budgets = yield* Capture.validateBudgets({ maxBytes: 64 * MiB })
      assert.deepStrictEqual(budgets, { timeoutMs: 15_000, maxBytes: 64 * MiB, concurrency: 4 })
      const error = yield* failureOf(Capture.validateBudgets({ maxBytes: 64 * MiB + 1 }))
      assert.instanceOf(error, InvalidBudget)
      assert.strictEqual(error.budget, "maxBytes")
      assert.strictEqual(error.value, 64 * MiB + 1)
      assert.strictEqual(error.detail, "must be an integer from 1 to 67108864")
      for (const [budget, value] of [["timeoutMs", 600_001], ["concurrency", 65], ["concurrency", 0], ["timeoutMs", 0.5]] as const) {
        const e = yield* failureOf(Capture.validateBudgets({ [budget]: value }))
        assert.instanceOf(e, InvalidBudget)
        assert.deepStrictEqual([e.budget, e.value], [budget, value])
      }
      const edges = yield* Capture.validateBudgets({ timeoutMs: 600_000, concurrency: 64, maxBytes: 1 })
      assert.deepStrictEqual(edges, { timeoutMs: 600_000, maxBytes: 1, concurrency: 64 })
    }))
})
