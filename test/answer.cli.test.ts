import { assert, describe, it } from "@effect/vitest"
import { Effect, Either, Schema } from "effect"
import * as fsp from "node:fs/promises"
import * as path from "node:path"
import { RenderedAnswer } from "../src/answer/Render.js"
import * as CaptureStore from "../src/store/CaptureStore.js"
import { decodeOptions } from "../src/Domain.js"
import * as Manifest from "../src/Manifest.js"
import { config, configJson, emojiRecord } from "./answerSupport.js"
import { inventoryRecord, runDirectoryWith, salesRecord, snapshotDirectory, tempDirectory } from "./support.js"
import { cli } from "./cliProcess.js"


const decodeResult = Schema.decodeUnknownEither(RenderedAnswer, decodeOptions)

const evi1 = [
  "Net sales for Q3 2026 were 4,210 units.[1]{c1} The Leeds warehouse held 640 units.[2]{c2}",
  "EVI1",
  "c1|1|\"Net sales for Q3 2026 were 4,210 units\"",
  "c2|2|\"The Leeds warehouse held 640 of those units.\"",
  "END_EVI1",
  ""
].join("\n")

/** A run with sources 1-3 captured, its manifest digest, and a config file. */
const setup = Effect.gen(function*() {
  const runDir = yield* runDirectoryWith([salesRecord, inventoryRecord, emojiRecord])
  const work = yield* tempDirectory
  const configFile = path.join(work, "pipeline.json")
  yield* Effect.promise(() => fsp.writeFile(configFile, JSON.stringify(configJson)))
  const manifest = yield* Manifest.make(config).pipe(Effect.provide(CaptureStore.layerFileSystem({ directory: runDir })))
  const write = (name: string, text: string) =>
    Effect.promise(async () => {
      const file = path.join(work, name)
      await fsp.writeFile(file, text)
      return file
    })
  return { runDir, work, configFile, manifest, write }
})

describe("run-pipeline verify-answer", () => {
  it.scopedLive("evi1: grounded, exit 0, read-only; the JSON rendering decodes", () =>
    Effect.gen(function*() {
      const s = yield* setup
      const answer = yield* s.write("answer.evi1", evi1)
      const before = yield* snapshotDirectory(s.runDir)
      const ran = yield* cli([
        "verify-answer", "--answer", answer, "--format-in", "evi1", "--config", s.configFile, "--run-dir", s.runDir,
        "--manifest-digest", s.manifest.digest, "--format", "json"
      ])
      assert.strictEqual(ran.code, 0, ran.stderr)
      assert.deepStrictEqual(yield* snapshotDirectory(s.runDir), before)
      assert.match(ran.stderr, /verify-answer: GROUNDED \(reject mode, 2 of 2 claims, 0 removed\)/)
      const decoded = decodeResult(JSON.parse(ran.stdout))
      assert.isTrue(Either.isRight(decoded), ran.stdout)
      if (Either.isLeft(decoded) || decoded.right.status !== "verified") return
      assert.deepStrictEqual(decoded.right.answer.summary, { claims: 2, claimsGrounded: 2, claimsRemoved: 0, citations: 2, citationsVerified: 2 })
    }))

  it.scopedLive("evi1 drafted against another manifest: StaleManifest, exit 1", () =>
    Effect.gen(function*() {
      const s = yield* setup
      const answer = yield* s.write("answer.evi1", evi1.replace("EVI1\nc1", `EVI1\nMANIFEST ${"c".repeat(64)}\nc1`))
      const ran = yield* cli([
        "verify-answer", "--answer", answer, "--format-in", "evi1", "--config", s.configFile, "--run-dir", s.runDir, "--format", "json"
      ])
      assert.strictEqual(ran.code, 1)
      assert.match(ran.stderr, /REJECTED \(StaleManifest\)/)
      assert.deepStrictEqual(JSON.parse(ran.stdout).error, { _tag: "StaleManifest", named: "c".repeat(64), current: s.manifest.digest })
      // Naming none at all is stale too: stale-manifest protection cannot be skipped.
      const unnamed = yield* s.write("unnamed.evi1", evi1)
      const ran2 = yield* cli(["verify-answer", "--answer", unnamed, "--format-in", "evi1", "--config", s.configFile, "--run-dir", s.runDir])
      assert.strictEqual(ran2.code, 1)
      assert.match(ran2.stdout, /StaleManifest: Answer names no manifest/)
    }))

  it.scopedLive("evi1 line issues: exit 1 with every issue and its line in the text rendering", () =>
    Effect.gen(function*() {
      const s = yield* setup
      const answer = yield* s.write("bad.evi1", "A.[1]{c1} B{c2}\nEVI1\nc1|1|\"Net\nEND_EVI1\n")
      const ran = yield* cli([
        "verify-answer", "--answer", answer, "--format-in", "evi1", "--config", s.configFile, "--run-dir", s.runDir,
        "--manifest-digest", s.manifest.digest
      ])
      assert.strictEqual(ran.code, 1)
      assert.include(ran.stdout, "line 1: Evi1OrphanMarker")
      assert.include(ran.stdout, "line 3: Evi1MalformedLine")
      // The malformed line meant c1's evidence for source 1: not reported as missing as well.
      assert.notInclude(ran.stdout, "Evi1MissingEvidence")
    }))

  it.scopedLive("json in drop mode to --out html: the removed claim struck out, exit 0 while a claim survives", () =>
    Effect.gen(function*() {
      const s = yield* setup
      const answer = yield* s.write("answer.json", JSON.stringify({
        format: "citegate.answer/1",
        manifest: s.manifest.digest,
        claims: [
          { id: "a", text: "Net sales were 4,210 units.", citations: [{ source: 1, quote: "4,210 units" }] },
          { id: "b", text: "Sales <em>tripled</em>.", citations: [{ source: 1, quote: "tripled" }] }
        ]
      }))
      const out = path.join(s.work, "answer.html")
      const ran = yield* cli([
        "verify-answer", "--answer", answer, "--config", s.configFile, "--run-dir", s.runDir, "--mode", "drop",
        "--format", "html", "--out", out
      ])
      assert.strictEqual(ran.code, 0, ran.stderr)
      assert.strictEqual(ran.stdout, "")
      const html = yield* Effect.promise(() => fsp.readFile(out, "utf8"))
      assert.include(html, "<del>Sales &lt;em&gt;tripled&lt;/em&gt;.</del>")
      assert.include(html, 'data-tag="SnippetAbsent"')
    }))

  it.scopedLive("anthropic: indices pointing at the wrong place are a SpanMismatch; reject mode exits 1", () =>
    Effect.gen(function*() {
      const s = yield* setup
      const quote = "4,210 units"
      const start = salesRecord.text.indexOf(quote) // the fixture is ASCII: code points = UTF-16 units
      const response = (at: number) =>
        JSON.stringify({
          id: "msg",
          type: "message",
          content: [{
            type: "text",
            text: "Net sales were 4,210 units.",
            citations: [{ type: "char_location", cited_text: quote, document_index: 0, document_title: null, start_char_index: at, end_char_index: at + quote.length }]
          }]
        })
      const good = yield* s.write("good.json", response(start))
      const ok = yield* cli([
        "verify-answer", "--answer", good, "--format-in", "anthropic", "--config", s.configFile, "--run-dir", s.runDir,
        "--manifest-digest", s.manifest.digest
      ])
      assert.strictEqual(ok.code, 0, ok.stderr)
      const bad = yield* s.write("bad.json", response(start + 1))
      const ran = yield* cli([
        "verify-answer", "--answer", bad, "--format-in", "anthropic", "--config", s.configFile, "--run-dir", s.runDir,
        "--manifest-digest", s.manifest.digest, "--format", "json"
      ])
      assert.strictEqual(ran.code, 1)
      const error = JSON.parse(ran.stdout).error
      assert.strictEqual(error._tag, "AnswerRejected")
      assert.deepStrictEqual(error.citations[0].error, {
        _tag: "SpanMismatch",
        source: salesRecord.source,
        captureSha256: salesRecord.sha256,
        quote,
        claimedStart: start + 1,
        claimedEnd: start + 1 + quote.length,
        foundStart: start,
        occurrences: 1
      })
    }))

  it.scopedLive("--out over the answer file or inside the run directory is refused before anything is read (exit 2)", () =>
    Effect.gen(function*() {
      const s = yield* setup
      const answer = yield* s.write("answer.evi1", evi1)
      const before = yield* snapshotDirectory(s.runDir)
      const over = yield* cli([
        "verify-answer", "--answer", answer, "--format-in", "evi1", "--config", s.configFile, "--run-dir", s.runDir,
        "--manifest-digest", s.manifest.digest, "--out", answer, "--force"
      ])
      assert.strictEqual(over.code, 2)
      assert.include(over.stderr, "OutputRefused")
      assert.strictEqual(yield* Effect.promise(() => fsp.readFile(answer, "utf8")), evi1)
      const inside = yield* cli([
        "verify-answer", "--answer", answer, "--format-in", "evi1", "--config", s.configFile, "--run-dir", s.runDir,
        "--manifest-digest", s.manifest.digest, "--out", path.join(s.runDir, "out.txt")
      ])
      assert.strictEqual(inside.code, 2)
      assert.deepStrictEqual(yield* snapshotDirectory(s.runDir), before)
    }))

  it.scopedLive("usage errors exit 2: an unknown --format-in, an invalid answers.uncited in the config", () =>
    Effect.gen(function*() {
      const s = yield* setup
      const answer = yield* s.write("answer.evi1", evi1)
      const ran = yield* cli(["verify-answer", "--answer", answer, "--format-in", "yaml", "--config", s.configFile, "--run-dir", s.runDir])
      assert.strictEqual(ran.code, 2)
      assert.include(ran.stderr, "--format-in must be one of json, evi1, anthropic")
      const badConfig = yield* s.write("bad.json", JSON.stringify({ ...configJson, answers: { uncited: "warn" } }))
      const ran2 = yield* cli(["verify-answer", "--answer", answer, "--format-in", "evi1", "--config", badConfig, "--run-dir", s.runDir])
      assert.strictEqual(ran2.code, 2)
      assert.include(ran2.stderr, "answers.uncited")
    }))

  it.scopedLive("answers.uncited: \"reject\" in the config rejects an answer with an uncited factual sentence", () =>
    Effect.gen(function*() {
      const s = yield* setup
      const strict = yield* s.write("strict.json", JSON.stringify({ ...configJson, answers: { uncited: "reject" } }))
      const answer = yield* s.write("answer.evi1", evi1.replace("\nEVI1", " Revenue doubled in every region during the quarter.\nEVI1"))
      const ran = yield* cli([
        "verify-answer", "--answer", answer, "--format-in", "evi1", "--config", strict, "--run-dir", s.runDir,
        "--manifest-digest", s.manifest.digest, "--format", "json"
      ])
      assert.strictEqual(ran.code, 1)
      const error = JSON.parse(ran.stdout).error
      assert.deepStrictEqual(error.uncited, [
        { _tag: "UncitedSentence", sentence: "Revenue doubled in every region during the quarter.", line: 1 }
      ])
      const report = yield* cli([
        "verify-answer", "--answer", answer, "--format-in", "evi1", "--config", s.configFile, "--run-dir", s.runDir,
        "--manifest-digest", s.manifest.digest
      ])
      assert.strictEqual(report.code, 0, report.stderr)
      assert.include(report.stdout, "Uncited factual-looking sentences (1)")
    }))
})
