/**
 * Hidden text in PDFs (`pdf/2`): a real PDF served from 127.0.0.1 is captured,
 * its record carries the hidden runs, and verification marks each excerpt
 * drawn from them in the evidence and in every rendering (reports, answers,
 * streamed citation events); `verify.hidden: "reject"` refuses them.
 */
import { assert, describe, it } from "@effect/vitest"
import { Chunk, Effect, Either, Layer, Stream } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import * as Answer from "../src/answer/Answer.js"
import * as AnswerRender from "../src/answer/Render.js"
import * as Capture from "../src/capture/Capture.js"
import type { PipelineConfig } from "../src/Config.js"
import { type CaptureRecord, type CaptureRecordV2, type Evidence, type SourceUrl } from "../src/Domain.js"
import { CorruptCapture, HiddenEvidence } from "../src/Errors.js"
import * as Pdf from "../src/extract/Pdf.js"
import { alignPage, appendRuns, pageRuns } from "../src/extract/PdfVisibility.js"
import * as Manifest from "../src/Manifest.js"
import * as Render from "../src/render/Render.js"
import * as AnswerStream from "../src/server/AnswerStream.js"
import * as CaptureStore from "../src/store/CaptureStore.js"
import * as MemoryStore from "../src/store/Memory.js"
import * as Gate from "../src/verify/Gate.js"
import * as Policy from "../src/verify/Policy.js"
import * as Verifier from "../src/verify/Verifier.js"
import { testServer } from "./httpServer.js"
import { cases, casesPage, makeLayeredPdf } from "./pdfLayers.js"
import { tempDirectory } from "./support.js"

const pdf = makeLayeredPdf([casesPage], { image: true })

/** The fixture served on 127.0.0.1 and captured into a new run directory. */
const captured = Effect.gen(function*() {
  const server = yield* testServer((_req, res) => {
    res.writeHead(200, { "content-type": "application/pdf" })
    res.end(pdf)
  })
  const source = server.url("/scan.pdf") as SourceUrl
  const directory = yield* tempDirectory
  const record = yield* Effect.gen(function*() {
    yield* (yield* Capture.Capture).capture(source)
    return yield* (yield* CaptureStore.CaptureStore).read(source)
  }).pipe(Effect.provide(Layer.provideMerge(
    Capture.layer({ approved: [source], allowLoopbackHttp: true, contentTypes: ["application/pdf"] }),
    CaptureStore.layerFileSystem({ directory })
  )))
  return { source, directory, record: record as CaptureRecordV2 }
})

const labels = Object.keys(cases) as Array<keyof typeof cases>

/** Every case cited once, against the captured record. */
const reportOf = (record: CaptureRecord) => ({
  facts: labels.map((label) => ({ state: "cited", label, source: record.source, captureSha256: record.sha256, snippet: cases[label] }))
})

/** The Gate in drop mode (failed facts listed as retractions), under the given `verify.hidden`. */
const gateCheck = (directory: string, record: CaptureRecord, hidden?: "mark" | "reject") =>
  Effect.flatMap(Gate.Gate, (gate) => gate.checkJsonWithCaptures(JSON.stringify(reportOf(record)))).pipe(
    Effect.provide(Gate.layer({
      runDirectory: directory,
      config: { sources: [record.source], labels, verify: { mode: "drop", ...(hidden === undefined ? {} : { hidden }) } }
    }))
  )

const hiddenNote = "HIDDEN TEXT: the excerpt is text no reader sees on the page"
const ocrNote = "OCR: the excerpt is the recognised text of a scanned page"

describe("pdf/2: the hidden runs of a capture", () => {
  it.scopedLive("the text is pdf/1's; each case's run has its kind; the normal line has none", () =>
    Effect.gen(function*() {
      const { record } = yield* captured
      assert.strictEqual(record.extraction, "pdf/2")
      const old = yield* Pdf.extract(record.source, pdf, { maxPages: 10, maxCharacters: 100_000, maxDepth: 64 }, "pdf/1")
      assert.strictEqual(record.text, old.text)
      assert.deepStrictEqual(record.pages, old.pages)
      const runs = (record.hidden ?? []).map(([start, end, kind]) => [record.text.slice(start, end), kind])
      assert.deepStrictEqual(runs, [
        [cases.ocr, "ocr"],
        [cases.invisible, "invisible"],
        [cases.white, "background"],
        [cases.tiny, "tiny"],
        [cases.clear, "invisible"]
      ])
    }))
})

describe("verification marks evidence from hidden text", () => {
  it.scopedLive("mark (default): each hidden case accepted with visibility and hiddenBy; OCR marked ocr; the normal line unmarked", () =>
    Effect.gen(function*() {
      const { directory, record } = yield* captured
      const { captures, report } = yield* gateCheck(directory, record)
      assert.strictEqual(report.retractions.length, 0)
      const evidence = new Map<string, Evidence>(report.facts.map((entry) => [entry.fact.label, (entry as { evidence: Evidence }).evidence]))
      const marks = labels.map((label) => [label, evidence.get(label)!.visibility, evidence.get(label)!.hiddenBy])
      assert.deepStrictEqual(marks, [
        ["ocr", "ocr", ["ocr"]],
        ["invisible", "hidden", ["invisible"]],
        ["white", "hidden", ["background"]],
        ["tiny", "hidden", ["tiny"]],
        ["normal", undefined, undefined],
        ["clear", "hidden", ["invisible"]]
      ])
      assert.notProperty(evidence.get("normal")!, "visibility")
      // Every rendering says so, next to the excerpt it concerns.
      const rendering = Render.Rendering.Verified({ report, captures })
      const text = Render.render("text", rendering)
      assert.strictEqual(text.split(`VISIBILITY ${hiddenNote}`).length - 1, 4)
      assert.strictEqual(text.split(`VISIBILITY ${ocrNote}`).length - 1, 1)
      assert.include(text, "text in the colour of what lies beneath it")
      assert.include(text, "text smaller than 1 pt")
      const markdown = Render.render("markdown", rendering)
      assert.strictEqual(markdown.split("**Visibility: HIDDEN TEXT").length - 1, 4)
      assert.strictEqual(markdown.split("**Visibility: OCR").length - 1, 1)
      const html = Render.render("html", rendering)
      assert.strictEqual(html.split(`<div class="visibility hidden">HIDDEN TEXT`).length - 1, 4)
      assert.strictEqual(html.split(`<div class="visibility ocr">OCR`).length - 1, 1)
      const json = JSON.parse(Render.render("json", rendering))
      const jsonMarks = json.report.facts.map((entry: any) => entry.evidence.visibility ?? "visible")
      assert.deepStrictEqual(jsonMarks, ["ocr", "hidden", "hidden", "hidden", "visible", "hidden"])
    }))

  it.scopedLive("reject: the hidden cases fail with HiddenEvidence (page, span, kinds); OCR and the normal line pass", () =>
    Effect.gen(function*() {
      const { directory, record } = yield* captured
      const { report } = yield* gateCheck(directory, record, "reject")
      assert.deepStrictEqual(report.facts.map((entry) => entry.fact.label), ["ocr", "normal"])
      const failed = report.retractions.map((r) => r.error)
      assert.deepStrictEqual(report.retractions.map((r) => r.label), ["invisible", "white", "tiny", "clear"])
      for (const error of failed) assert.instanceOf(error, HiddenEvidence)
      const white = failed[1] as HiddenEvidence
      const at = record.text.indexOf(cases.white)
      assert.deepStrictEqual(
        { span: white.span, page: white.page, hiddenBy: white.hiddenBy, snippet: white.snippet },
        { span: { start: at, end: at + cases.white.length }, page: 1, hiddenBy: ["background"], snippet: cases.white }
      )
      assert.include(white.message, `verify.hidden: "reject"`)
    }))
})

describe("answers and streamed citations carry the mark", () => {
  const config = (record: CaptureRecord) => ({ sources: [record.source], labels: ["unused"] }) as unknown as PipelineConfig
  const layers = (record: CaptureRecordV2, body: Uint8Array) => {
    const store = Layer.effect(CaptureStore.CaptureStore, Effect.tap(MemoryStore.make(), (s) => s.write(record, body))).pipe(Layer.orDie)
    return Layer.effect(Verifier.Verifier, Verifier.make).pipe(Layer.provide(Policy.layer(config(record))), Layer.provideMerge(store))
  }

  it.scopedLive("verify an answer: text, Markdown, HTML and JSON renderings mark the hidden and the OCR quote", () =>
    Effect.gen(function*() {
      const { record } = yield* captured
      const result = yield* Effect.gen(function*() {
        const manifest = yield* Manifest.make(config(record))
        const answers = yield* Answer.Answers
        const bound = Answer.fromJson(
          JSON.stringify({
            format: "citegate.answer/1",
            manifest: manifest.digest,
            claims: [
              { id: "white", text: "Revenue tripled in Q3.", citations: [{ source: 1, quote: cases.white }] },
              { id: "ocr", text: "The invoice total was 7,420 EUR.", citations: [{ source: 1, quote: cases.ocr }] },
              { id: "normal", text: "Net sales were 4,210 units.", citations: [{ source: 1, quote: cases.normal }] }
            ]
          }),
          manifest
        )
        return yield* answers.verify(Either.getOrThrow(bound))
      }).pipe(Effect.provide(Answer.layer({ mode: "drop", uncited: "report" }).pipe(Layer.provideMerge(layers(record, pdf)))))
      const rendering = AnswerRender.AnswerRendering.Verified({ answer: result.answer, captures: result.captures })
      const text = AnswerRender.render("text", rendering)
      assert.strictEqual(text.split(`VISIBILITY ${hiddenNote}`).length - 1, 1)
      assert.strictEqual(text.split(`VISIBILITY ${ocrNote}`).length - 1, 1)
      assert.strictEqual(AnswerRender.render("markdown", rendering).split(hiddenNote).length - 1, 1)
      const html = AnswerRender.render("html", rendering)
      assert.strictEqual(html.split(hiddenNote).length - 1, 1)
      assert.strictEqual(html.split(ocrNote).length - 1, 1)
      const json = AnswerRender.render("json", rendering)
      assert.strictEqual(json.match(/"visibility":\s*"hidden"/g)?.length, 1)
      assert.strictEqual(json.match(/"visibility":\s*"ocr"/g)?.length, 1)
    }))

  it.scopedLive("a streamed citation event says visibility and hiddenBy; a visible quote's event has neither", () =>
    Effect.gen(function*() {
      const { record } = yield* captured
      const events = yield* Effect.gen(function*() {
        const manifest = yield* Manifest.make(config(record))
        const service = yield* AnswerStream.AnswerStream
        const text = `Revenue tripled.[1]{c1} Sales were 4,210 units.[1]{c2}\nEVI1\nMANIFEST ${manifest.digest}\n` +
          `c1|1|"${cases.white}"\nc2|1|"${cases.normal}"\nEND_EVI1\n`
        return Chunk.toArray(yield* Stream.runCollect(service.stream(Stream.make(JSON.stringify({ type: "delta", text })), { manifest })))
      }).pipe(Effect.provide(AnswerStream.layer().pipe(Layer.provideMerge(layers(record, pdf)))))
      const plain = events.map((e) => JSON.parse(JSON.stringify(e)))
      const citations = plain.filter((e) => e.type === "citation")
      assert.deepStrictEqual(citations.map((c) => [c.quote, c.visibility, c.hiddenBy]), [
        [cases.white, "hidden", ["background"]],
        [cases.normal, undefined, undefined]
      ])
    }))
})

describe("the hidden runs as data", () => {
  it("alignment skips the spaces and line feeds pdf.js adds; white space between two runs of one kind joins them", () => {
    const codes = alignPage("ab c\nde", [["ab", 2], ["c", 2], ["de", 0]])
    assert.deepStrictEqual(pageRuns(codes, 10), [[10, 14, "invisible"]])
    assert.deepStrictEqual(pageRuns(alignPage("ab cd", [["ab", 3], ["cd", 4]]), 0), [[0, 2, "background"], [3, 5, "tiny"]])
  })

  it("past the cap the last run is extended over later ones, hidden kinds over ocr: never under-marked", () => {
    const all: Array<readonly [number, number, "ocr" | "invisible"]> = []
    appendRuns(all as never, Array.from({ length: 10_000 }, (_, i) => [2 * i, 2 * i + 1, "ocr"] as const))
    appendRuns(all as never, [[20_001, 20_002, "invisible"], [20_003, 20_004, "ocr"]])
    assert.strictEqual(all.length, 10_000)
    assert.deepStrictEqual(all[9_999], [19_998, 20_004, "invisible"])
  })

  it.scopedLive("a record whose hidden runs overlap is corrupt, not trusted", () =>
    Effect.gen(function*() {
      const { directory, record } = yield* captured
      // The record file rewritten with overlapping runs (its text, and so its digest, unchanged).
      const name = fs.readdirSync(directory).find((n) => n.endsWith(".json"))!
      const file = path.join(directory, name)
      const stored = JSON.parse(fs.readFileSync(file, "utf8"))
      assert.deepStrictEqual(stored.hidden, record.hidden)
      fs.chmodSync(file, 0o600)
      fs.writeFileSync(file, JSON.stringify({ ...stored, hidden: [[0, 10, "ocr"], [5, 12, "tiny"]] }))
      const error = yield* Effect.flip(
        Effect.flatMap(CaptureStore.CaptureStore, (store) => store.read(record.source)).pipe(
          Effect.provide(CaptureStore.layerFileSystem({ directory }))
        )
      )
      assert.instanceOf(error, CorruptCapture)
      assert.strictEqual((error as CorruptCapture).reason, "invalid-anchor")
    }))
})
