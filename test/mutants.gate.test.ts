/**
 * The Gate's JSON-text entry points in both modes, the captures it hands back
 * with a verified report, and a configuration given as JSON text.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import * as CaptureStore from "../src/store/CaptureStore.js"
import { InvalidConfig, ReportRejected } from "../src/Errors.js"
import * as Gate from "../src/verify/Gate.js"
import * as MemoryStore from "../src/store/Memory.js"
import { failureOf, spanNames } from "./mutants.support.js"
import { cited, inventoryRecord, pipelineConfig, salesRecord, withMode } from "./support.js"

const gateOver = (config: unknown) =>
  Effect.provide(
    Gate.Gate,
    Gate.layerWithStore(config).pipe(Layer.provide(MemoryStore.layer({ records: [salesRecord, inventoryRecord] })))
  )

const report = JSON.stringify({
  facts: [cited("q3_net_sales", salesRecord, "4,210 units"), cited("q3_returns", salesRecord, "3.5%")]
})

describe("Gate: JSON text", () => {
  it.effect("reject mode: checkJson and checkJsonWithCaptures reject with the failing fact", () =>
    Effect.gen(function*() {
      const gate = yield* gateOver(JSON.stringify(pipelineConfig))
      assert.strictEqual(gate.policy.mode, "reject")
      for (const run of [gate.checkJson(report), Effect.map(gate.checkJsonWithCaptures(report), (c) => c.report)]) {
        const error = yield* failureOf(run)
        assert.instanceOf(error, ReportRejected)
        assert.deepStrictEqual(error.failures.map((f) => [f.index, f.label, f.error._tag]), [[1, "q3_returns", "SnippetAbsent"]])
      }
      const ok = JSON.stringify({ facts: [cited("q3_net_sales", salesRecord, "4,210 units")] })
      const checked = yield* gate.checkJsonWithCaptures(ok)
      assert.strictEqual(checked.report.outcome, "grounded")
      assert.deepStrictEqual([...checked.captures.keys()], [salesRecord.source])
      assert.deepStrictEqual(checked.captures.get(salesRecord.source), salesRecord)
      assert.deepStrictEqual(yield* gate.checkJson(ok), checked.report)
      assert.deepStrictEqual(yield* gate.check(JSON.parse(ok)), checked.report)
    }))

  it.effect("drop mode: checkJson keeps the verified fact and retracts the other", () =>
    Effect.gen(function*() {
      const gate = yield* gateOver(JSON.stringify(withMode("drop")))
      assert.strictEqual(gate.policy.mode, "drop")
      const verified = yield* gate.checkJson(report)
      assert.strictEqual(verified.outcome, "grounded")
      assert.deepStrictEqual(verified.facts.map((f) => f.index), [0])
      assert.deepStrictEqual(verified.retractions.map((r) => [r.index, r.label, r.error._tag]), [[1, "q3_returns", "SnippetAbsent"]])
      const checked = yield* gate.checkJsonWithCaptures(report)
      assert.deepStrictEqual(checked.report, verified)
      assert.deepStrictEqual([...checked.captures.keys()], [salesRecord.source])
    }))

  it.effect("configuration text with a repeated key is InvalidConfig; the deprecated name is the same layer", () =>
    Effect.gen(function*() {
      const text = JSON.stringify(pipelineConfig).replace("{", "{\"verify\":{\"maxFacts\":1},")
      const error = yield* failureOf(Effect.provide(
        Gate.Gate,
        Gate.layerWithStore(text).pipe(Layer.provide(Layer.succeed(CaptureStore.CaptureStore, yield* MemoryStore.make())))
      ))
      assert.instanceOf(error, InvalidConfig)
      assert.strictEqual(Gate.layerConfig, Gate.layerWithStore)
    }))
})

describe("Gate: service identity", () => {
  it.effect("the tag is citegate/Gate, and each entry point opens its named span", () =>
    Effect.gen(function*() {
      assert.strictEqual(Gate.Gate.key, "citegate/Gate")
      const gate = yield* gateOver(JSON.stringify(withMode("drop")))
      assert.include(yield* spanNames(gate.check(JSON.parse(report))), "Gate.check")
      assert.include(yield* spanNames(gate.checkJson(report)), "Gate.checkJson")
      assert.include(yield* spanNames(gate.checkJsonWithCaptures(report)), "Gate.checkJsonWithCaptures")
    }))
})

