import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import * as Config from "../src/Config.js"
import { InvalidConfig, NotApproved, ReportRejected, SnippetAbsent } from "../src/Errors.js"
import * as Gate from "../src/verify/Gate.js"
import { cited, gateFor, inventoryRecord, pipelineConfig, runDirectoryWith, salesRecord, unavailable, withMode } from "./support.js"

describe("Gate", () => {
  it.scoped("reject mode (the default) rejects the whole report when any fact fails", () =>
    Effect.gen(function*() {
      const directory = yield* runDirectoryWith([salesRecord])
      const gate = yield* gateFor(directory)
      assert.strictEqual(gate.policy.mode, "reject")
      const error = yield* Effect.flip(gate.check({
        facts: [cited("q3_net_sales", salesRecord, "4,210 units"), cited("q3_returns", salesRecord, "3.5%")]
      }))
      assert.instanceOf(error, ReportRejected)
      // Only the failing fact is listed, with its index, label and the typed failure's fields.
      assert.deepStrictEqual(error.failures.map((f) => [f.index, f.label, f.error._tag]), [[1, "q3_returns", "SnippetAbsent"]])
      const failure = error.failures[0]!.error
      assert.instanceOf(failure, SnippetAbsent)
      assert.strictEqual(failure.snippet, "3.5%")
      assert.strictEqual(failure.source, salesRecord.source)
      assert.strictEqual(failure.captureSha256, salesRecord.sha256)
    }))

  it.scoped("drop mode removes failed cited facts and returns them as typed retractions", () =>
    Effect.gen(function*() {
      const directory = yield* runDirectoryWith([salesRecord])
      const gate = yield* gateFor(directory, withMode("drop"))
      const report = yield* gate.check({
        facts: [
          cited("q3_net_sales", salesRecord, "4,210 units"),
          cited("q3_returns", salesRecord, "3.5%"),
          unavailable("q4_forecast", "not published")
        ]
      })
      assert.strictEqual(report.outcome, "grounded")
      assert.strictEqual(report.mode, "drop")
      assert.deepStrictEqual(report.facts.map((f) => f.index), [0, 2])
      assert.deepStrictEqual(report.retractions.map((r) => [r.index, r.label, r.error._tag]), [
        [1, "q3_returns", "SnippetAbsent"]
      ])
      assert.instanceOf(report.retractions[0]!.error, SnippetAbsent)
    }))

  it.scoped("drop mode with every cited fact failing is no_evidence, even with unavailable facts left", () =>
    Effect.gen(function*() {
      const directory = yield* runDirectoryWith([salesRecord])
      const gate = yield* gateFor(directory, withMode("drop"))
      const report = yield* gate.check({
        facts: [
          cited("q3_net_sales", salesRecord, "5,000 units"),
          { ...cited("q3_inventory", inventoryRecord, "1,180 units"), source: "https://elsewhere.test/x" },
          unavailable("q4_forecast", "not published")
        ]
      })
      assert.strictEqual(report.outcome, "no_evidence")
      assert.deepStrictEqual(report.facts.map((f) => f.fact.state), ["unavailable"])
      assert.strictEqual(report.retractions.length, 2)
      assert.instanceOf(report.retractions[1]!.error, NotApproved)
    }))

  it.effect("InvalidConfig: unknown keys, non-canonical sources and repeats are all reported with paths", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(Config.decode({
        sources: ["https://a.test/x", "HTTPS://a.test/y", "https://a.test/x"],
        labels: ["ok", " "],
        verify: { mode: "lenient", maxFacts: 0 },
        approveEverything: true
      }))
      assert.instanceOf(error, InvalidConfig)
      const paths = error.issues.map((i) => i.path.join("."))
      for (const expected of ["sources.1", "labels.1", "verify.mode", "verify.maxFacts", "approveEverything"]) {
        assert.include(paths, expected)
      }
      const messageAt = (path: string) => error.issues.filter((i) => i.path.join(".") === path).map((i) => i.message)
      assert.include(messageAt("labels.1"), "must not be empty or blank")
      assert.include(messageAt("verify.maxFacts"), "must be an integer from 1 to 10000")
      assert.isTrue(messageAt("approveEverything").some((m) => /is unexpected/.test(m)), JSON.stringify(error.issues))
    }))

  it.effect("InvalidConfig: a repeated key in configuration JSON is rejected", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(Config.decodeText(`{"sources":["https://a.test/x"],"labels":["a"],"labels":["b"]}`))
      assert.instanceOf(error, InvalidConfig)
      assert.match(error.message, /repeated key "labels"/)
    }))

  it.scoped("the Gate layer fails with InvalidConfig when its configuration does not decode", () =>
    Effect.gen(function*() {
      const directory = yield* runDirectoryWith([])
      const error = yield* Effect.flip(
        Layer.build(Gate.layer({ runDirectory: directory, config: { ...(pipelineConfig as object), extra: 1 } }))
      )
      assert.instanceOf(error, InvalidConfig)
      assert.deepStrictEqual(error.issues.map((i) => i.path.join(".")), ["extra"])
      assert.match(error.issues[0]!.message, /is unexpected/)
    }))
})
