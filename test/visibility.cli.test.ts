/**
 * Hidden PDF text through the command line as a user runs it (a spawned
 * `run-pipeline`): `capture` from a 127.0.0.1 server writes a `pdf/2` record
 * with its hidden runs; `verify` marks each hidden or OCR excerpt in every
 * format, and under `verify.hidden: "reject"` refuses the hidden ones.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { cli } from "./cliProcess.js"
import { testServer } from "./httpServer.js"
import { cases, casesPage, makeLayeredPdf } from "./pdfLayers.js"
import { tempDirectory } from "./support.js"

const labels = Object.keys(cases) as Array<keyof typeof cases>

describe("run-pipeline capture and verify: hidden PDF text", () => {
  it.scopedLive("marks in text, JSON, Markdown and HTML; reject refuses the hidden excerpts with HiddenEvidence", () =>
    Effect.gen(function*() {
      const pdf = makeLayeredPdf([casesPage], { image: true })
      const server = yield* testServer((_req, res) => {
        res.writeHead(200, { "content-type": "application/pdf" })
        res.end(pdf)
      })
      const source = server.url("/scan.pdf")
      const work = yield* tempDirectory
      const config = path.join(work, "pipeline.json")
      fs.writeFileSync(config, JSON.stringify({ sources: [source], labels, capture: { contentTypes: ["application/pdf"] } }))
      const runDir = path.join(work, "run")
      const captured = yield* cli(["capture", "--config", config, "--run-dir", runDir, "--allow-loopback-http"])
      assert.strictEqual(captured.code, 0, captured.stderr)
      const recordFile = fs.readdirSync(runDir).find((name) => name.endsWith(".json"))!
      const record = JSON.parse(fs.readFileSync(path.join(runDir, recordFile), "utf8"))
      assert.strictEqual(record.extraction, "pdf/2")
      assert.deepStrictEqual(record.hidden.map((run: [number, number, string]) => run[2]), ["ocr", "invisible", "background", "tiny", "invisible"])
      const report = path.join(work, "report.json")
      fs.writeFileSync(report, JSON.stringify({
        facts: labels.map((label) => ({ state: "cited", label, source, captureSha256: record.sha256, snippet: cases[label] }))
      }))
      const verify = (format: string, configFile = config) =>
        cli(["verify", "--config", configFile, "--run-dir", runDir, "--report", report, "--format", format])

      const text = yield* verify("text")
      assert.strictEqual(text.code, 0, text.stderr)
      assert.strictEqual(text.stdout.match(/VISIBILITY HIDDEN TEXT: the excerpt is text no reader sees on the page/g)?.length, 4)
      assert.strictEqual(text.stdout.match(/VISIBILITY OCR: the excerpt is the recognised text of a scanned page/g)?.length, 1)
      const json = JSON.parse((yield* verify("json")).stdout)
      assert.deepStrictEqual(
        json.report.facts.map((entry: any) => [entry.fact.label, entry.evidence.visibility ?? "visible", entry.evidence.hiddenBy ?? []]),
        [
          ["ocr", "ocr", ["ocr"]],
          ["invisible", "hidden", ["invisible"]],
          ["white", "hidden", ["background"]],
          ["tiny", "hidden", ["tiny"]],
          ["normal", "visible", []],
          ["clear", "hidden", ["invisible"]]
        ]
      )
      const markdown = (yield* verify("markdown")).stdout
      assert.strictEqual(markdown.match(/\*\*Visibility: HIDDEN TEXT/g)?.length, 4)
      const html = (yield* verify("html")).stdout
      assert.strictEqual(html.match(/<div class="visibility hidden">HIDDEN TEXT: the excerpt is text no reader sees on the page \(text in the colour of what lies beneath it\)/g)?.length, 1)
      assert.strictEqual(html.match(/<div class="visibility ocr">OCR:/g)?.length, 1)

      const strict = path.join(work, "strict.json")
      fs.writeFileSync(strict, JSON.stringify({ sources: [source], labels, verify: { hidden: "reject" } }))
      const rejected = yield* verify("json", strict)
      assert.strictEqual(rejected.code, 1, rejected.stderr)
      const tags = JSON.stringify(JSON.parse(rejected.stdout)).match(/"_tag":"HiddenEvidence"/g)?.length
      assert.strictEqual(tags, 4, rejected.stdout)
      const rejectedText = yield* verify("text", strict)
      assert.strictEqual(rejectedText.code, 1)
      assert.include(rejectedText.stdout, "Snippet is text no reader sees")
    }))
})
