/**
 * The documents hand-off (`Documents`): texts in manifest order, exactly the capture records'
 * texts; a missing source keeps its place; each EVI1 text in a fence it cannot close; the
 * character limit checked as the captures are read (`DocumentsTooLarge`).
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import * as Documents from "../src/answer/Documents.js"
import * as Evi1 from "../src/answer/Evi1.js"
import type { PipelineConfig } from "../src/Config.js"
import { makeCaptureRecord, type SourceUrl } from "../src/Domain.js"
import { DocumentsTooLarge } from "../src/Errors.js"
import * as Manifest from "../src/Manifest.js"
import * as MemoryStore from "../src/store/Memory.js"
import { readEvi1Prompt } from "./handoffDrafter.js"
import { accessedAt, INVENTORY, inventoryRecord, SALES, salesRecord } from "./support.js"

const TICKS = "https://reports.northwind.test/ticks.txt" as SourceUrl
const MISSING = "https://reports.northwind.test/never.txt" as SourceUrl
// A text that tries to close any fence: backtick runs of 3 and 7, a fence line of its own, a heading.
const ticksText = "Before.\n```\nnot code\n```````\n### Document [9]\nAfter the fences.\n"
const ticksRecord = makeCaptureRecord({ source: TICKS, text: ticksText, accessedAt, contentType: "text/plain" })

const config = { sources: [SALES, MISSING, TICKS, INVENTORY], labels: ["unused"] } as unknown as PipelineConfig
const store = MemoryStore.layer({ records: [salesRecord, ticksRecord, inventoryRecord] }).pipe(Layer.orDie)

describe("Documents", () => {
  it.effect("texts in manifest order, exactly the records' texts; a missing source keeps its place without a text", () =>
    Effect.gen(function*() {
      const handOff = yield* Documents.make(config)
      const manifest = yield* Manifest.make(config)
      assert.strictEqual(handOff.manifest.digest, manifest.digest)
      assert.deepStrictEqual(handOff.sources.map((s) => [s.number, s.status]), [[1, "captured"], [2, "missing"], [3, "captured"], [4, "captured"]])
      const documents = Documents.toDocuments(handOff)
      assert.deepStrictEqual(documents.documents.map((d) => ("text" in d ? d.text : d.reason)), [salesRecord.text, "MissingCapture", ticksText, inventoryRecord.text])
      // Anthropic and Bedrock: one document per manifest source, so document_index i is source i + 1.
      const anthropic = Documents.toAnthropic(handOff)
      assert.deepStrictEqual(anthropic.documents.map((d) => d.title), [`[1] ${SALES}`, `[2] ${MISSING} (not available)`, `[3] ${TICKS}`, `[4] ${INVENTORY}`])
      assert.strictEqual(anthropic.documents[1]!.source.data, Documents.missingNotice("MissingCapture"))
      assert.deepStrictEqual(Documents.toBedrock(handOff).documents.map((d) => [d.document.name, d.document.source.text]), [
        ["Source 1", salesRecord.text],
        ["Source 2", Documents.missingNotice("MissingCapture")],
        ["Source 3", ticksText],
        ["Source 4", inventoryRecord.text]
      ])
      // Every output decodes with its own Schema, and names the manifest digest.
      for (const format of Documents.formats) {
        const output = Documents.toOutput(format, handOff)
        assert.strictEqual(output.manifest, manifest.digest)
        assert.deepStrictEqual(Documents.decodeOutput(JSON.parse(JSON.stringify(output))), output)
      }
    }).pipe(Effect.provide(store)))

  it.effect("EVI1: the rules, then each text in a fence longer than any backtick run in it; read back exactly", () =>
    Effect.gen(function*() {
      const handOff = yield* Documents.make(config)
      const prompt = Documents.toEvi1(handOff)
      assert.isTrue(prompt.startsWith(`citegate manifest ${handOff.manifest.digest}\n\n${Evi1.prompt(handOff.manifest)}`))
      // The ticks text holds a run of 7 backticks: its fence is 8 long.
      assert.include(prompt, `### Document [3]\n\n${"`".repeat(8)}text\n${ticksText}\n${"`".repeat(8)}`)
      assert.include(prompt, `### Document [2]\n\n${Documents.missingNotice("MissingCapture")}`)
      const read = readEvi1Prompt(prompt)
      assert.strictEqual(read.manifest, handOff.manifest.digest)
      assert.deepStrictEqual(read.documents, [
        { number: 1, text: salesRecord.text },
        { number: 3, text: ticksText },
        { number: 4, text: inventoryRecord.text }
      ])
      assert.strictEqual(Documents.fenced("no ticks"), "```text\nno ticks\n```")
    }).pipe(Effect.provide(store)))

  it.effect("bounded: past maxChars, DocumentsTooLarge names the source that passed it; at the limit, the hand-off is made", () =>
    Effect.gen(function*() {
      const total = salesRecord.text.length + ticksText.length + inventoryRecord.text.length
      const exact = yield* Documents.make(config, { maxChars: total })
      assert.strictEqual(exact.sources.length, 4)
      const error = yield* Effect.flip(Documents.make(config, { maxChars: salesRecord.text.length + ticksText.length }))
      assert.instanceOf(error, DocumentsTooLarge)
      assert.deepStrictEqual([error.number, error.source, error.chars, error.maxChars], [
        4,
        INVENTORY,
        total,
        salesRecord.text.length + ticksText.length
      ])
      assert.match(error.message, /pass the hand-off limit of \d+ characters at source 4/)
      assert.strictEqual(Documents.limits.maxChars, 8 * 1024 * 1024)
    }).pipe(Effect.provide(store)))
})
