import { assert, describe, it } from "@effect/vitest"
import { Effect, Either } from "effect"
import { readFileSync } from "node:fs"
import * as path from "node:path"
import { captureRun, RunNotCreated } from "../docs/examples/embed-capture.js"
import { DraftNotPublishable, makeAppLayer, Publisher, summarise } from "../docs/examples/embed-gate.js"
import { ReportRejected } from "../src/Errors.js"
import { plainText, testServer } from "./httpServer.js"
import { cited, fixturePath, fixtureText, gateFor, inventoryRecord, runDirectoryWith, salesRecord, tempDirectory } from "./support.js"

const pipelineJson = readFileSync(fixturePath("pipeline.json"), "utf8")

describe("docs/examples/embed-gate.ts", () => {
  it.scoped("publishes a grounded draft and refuses a rejected one with its failures", () =>
    Effect.gen(function*() {
      const directory = yield* runDirectoryWith([salesRecord])
      const publisher = yield* Effect.provide(Publisher, makeAppLayer(directory, pipelineJson))
      const markdown = yield* publisher.publish(JSON.stringify({
        facts: [cited("q3_net_sales", salesRecord, "Net sales for Q3 2026 were 4,210 units")]
      }))
      assert.include(markdown, "**Outcome: grounded**")
      const refused = yield* Effect.flip(publisher.publish(JSON.stringify({
        facts: [cited("q3_net_sales", salesRecord, "Net sales rose")]
      })))
      assert.instanceOf(refused, DraftNotPublishable)
      assert.strictEqual(refused._tag, "DraftNotPublishable")
      assert.strictEqual(refused.reason, "ReportRejected")
      assert.include(refused.details, "SnippetAbsent")
    }))

  it.scoped("a repeated key in the configuration text fails the layer", () =>
    Effect.gen(function*() {
      const directory = yield* runDirectoryWith([salesRecord])
      const repeated = pipelineJson.replace("{", `{ "labels": ["other"],`)
      const error = yield* Effect.flip(Effect.provide(Publisher, makeAppLayer(directory, repeated)))
      assert.strictEqual(error._tag, "InvalidConfig")
    }))

  it.scoped("summarise: failures grouped by tag, typed per group", () =>
    Effect.gen(function*() {
      const directory = yield* runDirectoryWith([salesRecord, inventoryRecord])
      const gate = yield* gateFor(directory)
      const rejected = yield* Effect.flip(gate.checkJson(JSON.stringify({
        facts: [
          cited("q3_net_sales", salesRecord, "Net sales rose"),
          { ...cited("q3_inventory", inventoryRecord, "Inventory"), captureSha256: salesRecord.sha256 },
          { ...cited("q3_returns", salesRecord, "Net sales"), source: "https://elsewhere.test/q3.txt" }
        ]
      })))
      assert.instanceOf(rejected, ReportRejected)
      if (!(rejected instanceof ReportRejected)) return
      assert.deepStrictEqual(summarise(rejected), [
        `fact 1: quote ${salesRecord.source} exactly`,
        `fact 2: cite capture ${inventoryRecord.sha256}, not ${salesRecord.sha256}`,
        "facts 3: cite only approved sources"
      ])
    }))
})

describe("docs/examples/embed-capture.ts", () => {
  it.scopedLive("captures into a new run directory, hands back the manifest, and refuses an existing directory", () =>
    Effect.gen(function*() {
      const salesText = fixtureText("q3-sales.txt")
      const server = yield* testServer((req, res) => {
        if (req.url === "/q3-sales.txt") return plainText(salesText)(req, res, server)
        res.writeHead(404, { "content-type": "text/plain" })
        res.end("not published")
      })
      const work = yield* tempDirectory
      const sales = server.url("/q3-sales.txt")
      const missing = server.url("/q4-outlook.txt")
      const json = JSON.stringify({ sources: [sales, missing], labels: ["q3_net_sales"] })
      const runDirectory = path.join(work, "run-1")
      const run = yield* captureRun({ pipelineJson: json, runDirectory, allowLoopbackHttp: true })
      assert.deepStrictEqual(run.failed, [missing])
      assert.deepStrictEqual(run.manifest.sources.map((s) => [s.number, s.status]), [[1, "captured"], [2, "missing"]])
      assert.include(run.prompt, run.manifest.digest)
      const again = yield* Effect.either(captureRun({ pipelineJson: json, runDirectory, allowLoopbackHttp: true }))
      assert.isTrue(Either.isLeft(again))
      if (Either.isLeft(again)) assert.instanceOf(again.left, RunNotCreated)
      // Without test mode, plain http to 127.0.0.1 is refused before any connection.
      const strict = yield* captureRun({ pipelineJson: json, runDirectory: path.join(work, "run-2") })
      assert.deepStrictEqual(strict.failed, [sales, missing])
    }))
})
