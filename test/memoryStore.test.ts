import { assert, describe, it } from "@effect/vitest"
import { Effect, Either, Layer } from "effect"
import * as CaptureStore from "../src/store/CaptureStore.js"
import type { CaptureRecord } from "../src/Domain.js"
import {
  CaptureExists,
  CorruptCapture,
  DigestMismatch,
  factErrorTags,
  groupFailures,
  InvalidConfig,
  MissingCapture,
  ReportRejected
} from "../src/Errors.js"
import * as Gate from "../src/verify/Gate.js"
import * as MemoryStore from "../src/store/Memory.js"
import { cited, INVENTORY, inventoryRecord, pipelineConfig, SALES, salesRecord, tempDirectory } from "./support.js"

/** The same contract, run against each store. */
const stores: ReadonlyArray<readonly [string, Effect.Effect<CaptureStore.CaptureStoreShape, never, import("effect/Scope").Scope>]> = [
  ["filesystem", Effect.flatMap(tempDirectory, (directory) => Effect.orDie(CaptureStore.makeFileSystem({ directory })))],
  ["memory", Effect.orDie(MemoryStore.make())]
]

for (const [name, makeStore] of stores) {
  describe(`CaptureStore contract (${name})`, () => {
    it.scoped("write then read returns the record, decoded", () =>
      Effect.gen(function*() {
        const store = yield* makeStore
        yield* store.write(salesRecord)
        yield* store.write(inventoryRecord)
        assert.deepStrictEqual(yield* store.read(SALES), salesRecord)
        assert.deepStrictEqual(yield* store.read(INVENTORY), inventoryRecord)
      }))

    it.scoped("a second write of one source fails with CaptureExists and leaves the first record as it was", () =>
      Effect.gen(function*() {
        const store = yield* makeStore
        yield* store.write(salesRecord)
        const second = { ...salesRecord, text: "replacement", byteLength: 11 } as CaptureRecord
        const error = yield* Effect.flip(store.write(second))
        assert.instanceOf(error, CaptureExists)
        assert.strictEqual(error.source, SALES)
        assert.deepStrictEqual(yield* store.read(SALES), salesRecord)
      }))

    it.scoped("concurrent writes of one source: exactly one succeeds", () =>
      Effect.gen(function*() {
        const store = yield* makeStore
        const results = yield* Effect.all(
          Array.from({ length: 8 }, () => Effect.either(store.write(salesRecord))),
          { concurrency: "unbounded" }
        )
        assert.strictEqual(results.filter(Either.isRight).length, 1)
        for (const r of results.filter(Either.isLeft)) assert.instanceOf(r.left, CaptureExists)
      }))

    it.scoped("reading a source never written fails with MissingCapture", () =>
      Effect.gen(function*() {
        const store = yield* makeStore
        yield* store.write(salesRecord)
        const error = yield* Effect.flip(store.read(INVENTORY))
        assert.instanceOf(error, MissingCapture)
        assert.strictEqual(error.source, INVENTORY)
      }))

    it.scoped("a record that is not a valid v1 record of its source reads back as CorruptCapture, never as a record", () =>
      Effect.gen(function*() {
        const store = yield* makeStore
        // Written by buggy trusted code: the declared length disagrees with the text.
        yield* store.write({ ...salesRecord, byteLength: salesRecord.byteLength + 1 })
        const error = yield* Effect.flip(store.read(SALES))
        assert.instanceOf(error, CorruptCapture)
        assert.strictEqual(error.reason, "byte-length-mismatch")
        yield* store.write({ ...inventoryRecord, accessedAt: "yesterday" } as unknown as CaptureRecord)
        const invalid = yield* Effect.flip(store.read(INVENTORY))
        assert.instanceOf(invalid, CorruptCapture)
        assert.strictEqual(invalid.reason, "not-a-v1-record")
        assert.include(invalid.detail, "accessedAt")
      }))
  })
}

describe("MemoryStore", () => {
  it.effect("each store is its own run: nothing is shared between two stores", () =>
    Effect.gen(function*() {
      const first = yield* MemoryStore.make({ records: [salesRecord] })
      const second = yield* MemoryStore.make()
      assert.deepStrictEqual(yield* first.read(SALES), salesRecord)
      assert.instanceOf(yield* Effect.flip(second.read(SALES)), MissingCapture)
    }))

  it.effect("seeding with the same source twice fails the layer with CaptureExists", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(Layer.build(MemoryStore.layer({ records: [salesRecord, salesRecord] })).pipe(Effect.scoped))
      assert.instanceOf(error, CaptureExists)
    }))

  it.effect("the Gate over the memory store verifies and rejects exactly as over a run directory", () =>
    Effect.gen(function*() {
      const gate = yield* Effect.provide(
        Gate.Gate,
        Gate.layerWithStore(pipelineConfig).pipe(Layer.provide(MemoryStore.layer({ records: [salesRecord] })))
      )
      const report = yield* gate.checkJson(JSON.stringify({
        facts: [cited("q3_net_sales", salesRecord, "Net sales for Q3 2026 were 4,210 units")]
      }))
      assert.strictEqual(report.outcome, "grounded")
      const rejected = yield* Effect.flip(gate.checkJson(JSON.stringify({
        facts: [{ ...cited("q3_net_sales", salesRecord, "Net sales"), captureSha256: inventoryRecord.sha256 }]
      })))
      assert.instanceOf(rejected, ReportRejected)
      const error = rejected.failures[0].error
      assert.instanceOf(error, DigestMismatch)
      assert.strictEqual(error.kind, "report")
      assert.strictEqual(error.reported, inventoryRecord.sha256)
      assert.strictEqual(error.stored, salesRecord.sha256)
    }))

  it.effect("a capture altered in memory after it was written is a stored DigestMismatch, as on disk", () =>
    Effect.gen(function*() {
      // A store that hands back a record whose text no longer matches its digest.
      const altered = { ...salesRecord, text: salesRecord.text.replace("4,210", "9,210") }
      const gate = yield* Effect.provide(
        Gate.Gate,
        Gate.layerWithStore(pipelineConfig).pipe(Layer.provide(MemoryStore.layer({ records: [altered] })))
      )
      const rejected = yield* Effect.flip(gate.checkJson(JSON.stringify({
        facts: [cited("q3_net_sales", salesRecord, "Net sales for Q3 2026 were 9,210 units")]
      })))
      assert.instanceOf(rejected, ReportRejected)
      const error = rejected.failures[0].error
      assert.instanceOf(error, DigestMismatch)
      assert.strictEqual(error.kind, "stored")
      assert.strictEqual(error.stored, salesRecord.sha256)
      assert.notStrictEqual(error.computed, salesRecord.sha256)
    }))
})

describe("Gate configuration input", () => {
  const configText = JSON.stringify(pipelineConfig)
  const gateOver = (config: unknown) =>
    Effect.provide(Gate.Gate, Gate.layerWithStore(config).pipe(Layer.provide(MemoryStore.layer({ records: [salesRecord] }))))

  it.effect("config JSON text is decoded with the strict JSON path: a repeated key is InvalidConfig", () =>
    Effect.gen(function*() {
      // The second "sources" would silently win under JSON.parse.
      const repeated = configText.replace(/^\{/, `{"sources":["https://evil.test/x.txt"],`)
      const error = yield* Effect.flip(gateOver(repeated))
      assert.instanceOf(error, InvalidConfig)
      assert.match(error.issues[0].message, /sources/)
      assert.include(error.issues[0].message.toLowerCase(), "repeated")
    }))

  it.effect("config JSON text and the parsed value give the same Gate; the deprecated alias still works", () =>
    Effect.gen(function*() {
      const draft = JSON.stringify({ facts: [cited("q3_net_sales", salesRecord, "Net sales for Q3 2026 were 4,210 units")] })
      const fromText = yield* gateOver(configText)
      const fromValue = yield* gateOver(pipelineConfig)
      const fromAlias = yield* Effect.provide(
        Gate.Gate,
        Gate.layerConfig(configText).pipe(Layer.provide(MemoryStore.layer({ records: [salesRecord] })))
      )
      assert.deepStrictEqual(fromText.policy, fromValue.policy)
      for (const gate of [fromText, fromValue, fromAlias]) {
        assert.strictEqual((yield* gate.checkJson(draft)).outcome, "grounded")
      }
      const invalid = yield* Effect.flip(gateOver("{\"sources\": "))
      assert.strictEqual(invalid._tag, "InvalidConfig")
    }))
})

describe("Errors.groupFailures", () => {
  it.effect("groups drop-mode retractions and rejections by tag, every tag a key, report order kept", () =>
    Effect.gen(function*() {
      const store = MemoryStore.layer({ records: [salesRecord] })
      const draft = JSON.stringify({
        facts: [
          cited("q3_net_sales", salesRecord, "absent one"),
          { ...cited("q3_returns", salesRecord, "Net sales"), captureSha256: inventoryRecord.sha256 },
          cited("q3_inventory", salesRecord, "absent two")
        ]
      })
      const dropGate = yield* Effect.provide(
        Gate.Gate,
        Gate.layerWithStore({ ...(pipelineConfig as object), verify: { mode: "drop" } }).pipe(Layer.provide(store))
      )
      const report = yield* dropGate.checkJson(draft)
      const groups = groupFailures(report.retractions)
      assert.deepStrictEqual(Object.keys(groups), [...factErrorTags])
      assert.deepStrictEqual(groups.SnippetAbsent.map((f) => [f.index, f.error.snippet]), [[0, "absent one"], [2, "absent two"]])
      assert.deepStrictEqual(groups.DigestMismatch.map((f) => f.error.reported), [inventoryRecord.sha256])
      assert.deepStrictEqual(groups.MissingCapture, [])
      const rejectGate = yield* Effect.provide(Gate.Gate, Gate.layerWithStore(pipelineConfig).pipe(Layer.provide(store)))
      const rejected = yield* Effect.flip(rejectGate.checkJson(draft))
      assert.instanceOf(rejected, ReportRejected)
      if (rejected instanceof ReportRejected) assert.deepStrictEqual(groupFailures(rejected), groups)
    }))
})
