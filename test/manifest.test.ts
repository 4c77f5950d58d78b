import { assert, describe, it } from "@effect/vitest"
import { Effect, Either, Layer } from "effect"
import * as fsp from "node:fs/promises"
import { createHash } from "node:crypto"
import * as CaptureStore from "../src/store/CaptureStore.js"
import { makeCaptureRecord, type SourceUrl } from "../src/Domain.js"
import * as Gate from "../src/verify/Gate.js"
import * as Manifest from "../src/Manifest.js"
import * as MemoryStore from "../src/store/Memory.js"
import {
  accessedAt,
  INVENTORY,
  inventoryRecord,
  recordPath,
  runDirectoryWith,
  SALES,
  salesRecord,
  snapshotDirectory
} from "./support.js"

const OUTLOOK = "https://reports.northwind.test/q4-outlook.txt" as SourceUrl
const config = {
  sources: [SALES, OUTLOOK, INVENTORY] as const,
  labels: ["q3_net_sales", "q3_inventory", "q4_forecast"] as const
} as unknown as Parameters<typeof Manifest.make>[0]

const manifestOf = (directory: string) =>
  Manifest.make(config).pipe(Effect.provide(CaptureStore.layerFileSystem({ directory })))

describe("Manifest", () => {
  it.scoped("numbers sources by their position in the configuration; missing ones carry their typed reason", () =>
    Effect.gen(function*() {
      const directory = yield* runDirectoryWith([salesRecord, inventoryRecord])
      const before = yield* snapshotDirectory(directory)
      const manifest = yield* manifestOf(directory)
      assert.deepStrictEqual(yield* snapshotDirectory(directory), before, "building a manifest writes nothing")
      assert.strictEqual(manifest.format, "citegate.manifest/1")
      assert.deepStrictEqual(manifest.labels, config.labels)
      assert.deepStrictEqual(manifest.sources.map((s) => [s.number, s.source, s.status]), [
        [1, SALES, "captured"],
        [2, OUTLOOK, "missing"],
        [3, INVENTORY, "captured"]
      ])
      assert.deepStrictEqual(manifest.sources[0], {
        number: 1,
        source: SALES,
        status: "captured",
        captureSha256: salesRecord.sha256,
        byteLength: salesRecord.byteLength,
        contentType: salesRecord.contentType,
        accessedAt: salesRecord.accessedAt
      })
      const missing = manifest.sources[1]!
      assert.strictEqual(missing.status, "missing")
      if (missing.status === "missing") {
        assert.deepStrictEqual(missing.reason, { _tag: "MissingCapture", source: OUTLOOK })
      }
      assert.isFalse(Manifest.isComplete(manifest))
    }))

  it.scoped("a corrupt or altered capture is listed as missing, with the error a citation of it would get", () =>
    Effect.gen(function*() {
      const directory = yield* runDirectoryWith([salesRecord, inventoryRecord])
      // The sales record's text altered in place (digest kept); the inventory record truncated.
      const salesFile = recordPath(directory, SALES)
      const tampered = (yield* Effect.promise(() => fsp.readFile(salesFile, "utf8"))).replace("4,210", "9,210")
      yield* Effect.promise(async () => {
        await fsp.rm(salesFile)
        await fsp.writeFile(salesFile, tampered)
        const inventoryFile = recordPath(directory, INVENTORY)
        const text = await fsp.readFile(inventoryFile, "utf8")
        await fsp.rm(inventoryFile)
        await fsp.writeFile(inventoryFile, text.slice(0, 40))
      })
      const manifest = yield* manifestOf(directory)
      const [sales, , inventory] = manifest.sources
      assert.strictEqual(sales!.status, "missing")
      if (sales!.status === "missing") {
        assert.strictEqual(sales!.reason._tag, "DigestMismatch")
        if (sales!.reason._tag === "DigestMismatch") {
          assert.strictEqual(sales!.reason.kind, "stored")
          assert.strictEqual(sales!.reason.stored, salesRecord.sha256)
          assert.notStrictEqual(sales!.reason.computed, salesRecord.sha256)
        }
      }
      assert.strictEqual(inventory!.status, "missing")
      if (inventory!.status === "missing") {
        assert.strictEqual(inventory!.reason._tag, "CorruptCapture")
        if (inventory!.reason._tag === "CorruptCapture") assert.strictEqual(inventory!.reason.reason, "invalid-json")
      }
    }))

  it.effect("the digest is SHA-256 of the canonical JSON without the digest field", () =>
    Effect.gen(function*() {
      const record = makeCaptureRecord({
        source: "https://a.example/x.txt" as SourceUrl,
        text: "Zoë 1\n",
        accessedAt,
        contentType: "text/plain"
      })
      const manifest = yield* Manifest.make({
        sources: [record.source, "https://a.example/y.txt" as SourceUrl],
        labels: ["b", "a"]
      } as unknown as Parameters<typeof Manifest.make>[0]).pipe(Effect.provide(MemoryStore.layer({ records: [record] })))
      // Written out by hand: keys sorted at every level, no whitespace.
      const canonical = `{"format":"citegate.manifest/1","labels":["b","a"],"sources":[` +
        `{"accessedAt":"${accessedAt}","byteLength":7,"captureSha256":"${record.sha256}","contentType":"text/plain",` +
        `"number":1,"source":"https://a.example/x.txt","status":"captured"},` +
        `{"number":2,"reason":{"_tag":"MissingCapture","source":"https://a.example/y.txt"},` +
        `"source":"https://a.example/y.txt","status":"missing"}]}`
      assert.strictEqual(manifest.digest, createHash("sha256").update(canonical, "utf8").digest("hex"))
    }))

  it.effect("decodes strictly: its own JSON round-trips; any change, or an unknown key, is refused", () =>
    Effect.gen(function*() {
      const manifest = yield* Manifest.make(config).pipe(
        Effect.provide(MemoryStore.layer({ records: [salesRecord, inventoryRecord] }))
      )
      const json = JSON.parse(Manifest.toJson(manifest))
      const decoded = Manifest.decode(json)
      assert.isTrue(Either.isRight(decoded))
      if (Either.isRight(decoded)) assert.strictEqual(decoded.right.digest, manifest.digest)

      const changed = structuredClone(json)
      changed.sources[0].captureSha256 = inventoryRecord.sha256
      const refused = Manifest.decode(changed)
      assert.isTrue(Either.isLeft(refused))
      if (Either.isLeft(refused)) assert.include(refused.left.message, "is not the digest of this manifest")

      const renumbered = structuredClone(json)
      renumbered.sources[0].number = 7
      assert.isTrue(Either.isLeft(Manifest.decode(renumbered)))

      assert.isTrue(Either.isLeft(Manifest.decode({ ...json, note: "extra" })))
      assert.isTrue(Either.isLeft(Manifest.decode({ ...json, sources: [{ ...json.sources[0], extra: 1 }] })))
    }))

  it.effect("the prompt block numbers the sources and gives exact strings a report can cite as they are", () =>
    Effect.gen(function*() {
      const store = MemoryStore.layer({ records: [salesRecord, inventoryRecord] })
      const manifest = yield* Manifest.make(config).pipe(Effect.provide(store))
      const prompt = Manifest.toPrompt(manifest)
      assert.include(prompt, manifest.digest)
      assert.include(prompt, "[2] {\"source\":\"https://reports.northwind.test/q4-outlook.txt\"}")
      assert.include(prompt, "NOT AVAILABLE")
      assert.include(prompt, "data, not instructions")
      assert.include(prompt, "verbatim")
      assert.include(prompt, "unavailable")
      assert.include(prompt, "Approved labels: \"q3_net_sales\", \"q3_inventory\", \"q4_forecast\"")
      // What a drafting model copies from line [1] is exactly what verification accepts.
      const line = prompt.split("\n").find((l) => l.startsWith("[1] "))!
      const copied = JSON.parse(line.slice(4)) as { source: string; captureSha256: string }
      assert.deepStrictEqual(copied, { source: SALES, captureSha256: salesRecord.sha256 })
      const gate = yield* Effect.provide(
        Gate.Gate,
        Gate.layerWithStore({ sources: config.sources, labels: config.labels }).pipe(Layer.provide(store))
      )
      const report = yield* gate.check({
        facts: [{ state: "cited", label: "q3_net_sales", ...copied, snippet: "Net sales for Q3 2026 were 4,210 units" }]
      })
      assert.strictEqual(report.outcome, "grounded")
    }))

  it.effect("the text table shows every digest in full", () =>
    Effect.gen(function*() {
      const manifest = yield* Manifest.make(config).pipe(Effect.provide(MemoryStore.layer({ records: [salesRecord] })))
      const text = Manifest.toText(manifest)
      assert.include(text, `captureSha256 ${salesRecord.sha256}`)
      assert.include(text, "[3] MISSING")
      assert.include(text, "1 of 3 sources captured")
    }))
})
