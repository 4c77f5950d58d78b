/**
 * Golden fixtures pin each extraction id: the same bytes, served by a real
 * server on 127.0.0.1 and captured, give exactly the text, digest and anchors
 * in fixtures/extraction/*.expected.json. A change in what an id produces
 * (a parser upgrade, an edit of the rule) fails here; it needs a new id.
 * `CITEGATE_UPDATE_GOLDEN=1` rewrites the expected files (review the diff).
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import * as fs from "node:fs"
import * as Capture from "../src/capture/Capture.js"
import * as CaptureStore from "../src/store/CaptureStore.js"
import { type CaptureRecord, recordBody, recordExtraction, sha256Of, type SourceUrl } from "../src/Domain.js"
import * as Html from "../src/extract/Html.js"
import * as Markdown from "../src/extract/Markdown.js"
import * as Pdf from "../src/extract/Pdf.js"
import { testServer } from "./httpServer.js"
import { fixturePath, tempDirectory } from "./support.js"

/** Captured now: the ids a new capture of each type gets. `expected` names the golden file. */
const fixtures = [
  { file: "report.txt", contentType: "text/plain; charset=utf-8", extraction: "text/1", expected: "report.txt" },
  { file: "report.md", contentType: "text/markdown; charset=utf-8", extraction: "markdown/2", expected: "report.md.markdown-2" },
  { file: "report.html", contentType: "text/html; charset=utf-8", extraction: "html/2", expected: "report.html.html-2" },
  { file: "drafting.md", contentType: "text/markdown; charset=utf-8", extraction: "markdown/2", expected: "drafting.md.markdown-2" },
  { file: "drafting.html", contentType: "text/html; charset=utf-8", extraction: "html/2", expected: "drafting.html.html-2" },
  { file: "report.pdf", contentType: "application/pdf", extraction: "pdf/2", expected: "report.pdf.pdf-2" }
] as const

/**
 * The ids no new capture gets, pinned on their extractors: records made by them stay readable
 * and verifiable (verification never extracts), and the algorithm an id names never changes.
 */
const retired = [
  { file: "report.md", contentType: "text/markdown", extraction: "markdown/1", expected: "report.md" },
  { file: "report.html", contentType: "text/html", extraction: "html/1", expected: "report.html" },
  { file: "report.pdf", contentType: "application/pdf", extraction: "pdf/1", expected: "report.pdf" }
] as const

const extractionLimits = { maxPages: 2_000, maxCharacters: 16 * 1024 * 1024, maxDepth: 512 }

const decodeUtf8 = (bytes: Uint8Array, ignoreBOM: boolean) => new TextDecoder("utf-8", { fatal: true, ignoreBOM }).decode(bytes)

const allTypes = ["text/plain", "text/markdown", "text/html", "application/xhtml+xml", "application/pdf"] as const

/** What a golden file pins: everything about the record except where and when it was fetched. */
const pinned = (record: CaptureRecord) => ({
  extraction: recordExtraction(record),
  sha256: record.sha256,
  body: recordBody(record),
  pages: record.format === "citegate.capture/2" ? record.pages ?? null : null,
  headings: record.format === "citegate.capture/2" ? record.headings ?? null : null,
  ...(record.format === "citegate.capture/2" && record.bodyMap !== undefined ? { bodyMap: record.bodyMap } : {}),
  ...(record.format === "citegate.capture/2" && record.hidden !== undefined ? { hidden: record.hidden } : {}),
  text: record.text
})

describe("golden extraction fixtures", () => {
  for (const fixture of fixtures) {
    it.scopedLive(`${fixture.extraction}: ${fixture.file}`, () =>
      Effect.gen(function*() {
        const bytes = fs.readFileSync(fixturePath("extraction", fixture.file))
        const server = yield* testServer((_req, res) => {
          res.writeHead(200, { "content-type": fixture.contentType })
          res.end(bytes)
        })
        const source = server.url(`/${fixture.file}`) as SourceUrl
        const directory = yield* tempDirectory
        const record = yield* Effect.gen(function*() {
          yield* (yield* Capture.Capture).capture(source)
          return yield* (yield* CaptureStore.CaptureStore).read(source)
        }).pipe(
          Effect.provide(Layer.provideMerge(
            Capture.layer({ approved: [source], allowLoopbackHttp: true, contentTypes: [...allTypes] }),
            CaptureStore.layerFileSystem({ directory })
          ))
        )
        const expectedFile = fixturePath("extraction", `${fixture.expected}.expected.json`)
        const actual = pinned(record)
        if (process.env["CITEGATE_UPDATE_GOLDEN"] === "1") {
          fs.writeFileSync(expectedFile, JSON.stringify(actual, null, 2) + "\n")
        }
        const expected = JSON.parse(fs.readFileSync(expectedFile, "utf8"))
        assert.deepStrictEqual(actual, expected)
        assert.strictEqual(actual.extraction, fixture.extraction)
        // The body digest proves what was fetched; for extracted types it differs from the text digest.
        assert.strictEqual(actual.body.sha256, sha256Of(bytes))
        assert.strictEqual(actual.sha256, sha256Of(actual.text))
        // text/1 keeps the body as is, so its two digests agree; the other extractions do not.
        if (fixture.extraction === "text/1") {
          assert.strictEqual(actual.sha256, actual.body.sha256)
        }
        else assert.notStrictEqual(actual.sha256, actual.body.sha256)
      }))
  }
})

describe("golden fixtures of the ids no new capture gets", () => {
  for (const fixture of retired) {
    it.effect(`${fixture.extraction}: ${fixture.file}`, () =>
      Effect.gen(function*() {
        const bytes = fs.readFileSync(fixturePath("extraction", fixture.file))
        const extracted = fixture.extraction === "pdf/1"
          ? yield* Pdf.extract("https://example.test/", bytes, extractionLimits, "pdf/1")
          : fixture.extraction === "markdown/1"
          ? yield* Markdown.extract("https://example.test/", decodeUtf8(bytes, true), extractionLimits)
          : yield* Html.extract("https://example.test/", decodeUtf8(bytes, false), extractionLimits, "utf-8")
        const actual = {
          extraction: extracted.extraction,
          sha256: sha256Of(extracted.text),
          body: {
            sha256: sha256Of(bytes),
            byteLength: bytes.byteLength,
            contentType: fixture.extraction === "pdf/1" ? fixture.contentType : `${fixture.contentType}; charset=utf-8`
          },
          pages: extracted.pages ?? null,
          headings: extracted.headings ?? null,
          text: extracted.text
        }
        const expected = JSON.parse(fs.readFileSync(fixturePath("extraction", `${fixture.expected}.expected.json`), "utf8"))
        assert.deepStrictEqual(actual, expected)
        assert.strictEqual(actual.extraction, fixture.extraction)
      }))
  }
})
