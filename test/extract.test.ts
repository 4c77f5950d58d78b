/**
 * Extraction against real servers on 127.0.0.1: the operator's content-type
 * policy, hostile HTML, hostile and broken PDFs, anchors that do not hold,
 * and a stored body that no longer matches its record.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import * as fs from "node:fs"
import * as fsp from "node:fs/promises"
import * as path from "node:path"
import * as Capture from "../src/capture/Capture.js"
import * as CaptureStore from "../src/store/CaptureStore.js"
import type { ContentType } from "../src/Config.js"
import { type CaptureRef, sha256Of, type SourceUrl } from "../src/Domain.js"
import {
  AnchorMismatch,
  CorruptCapture,
  ExtractionFailed,
  ExtractionTooLarge,
  SnippetAbsent,
  UnsupportedContentType,
  UnsupportedEncoding
} from "../src/Errors.js"
import * as Gate from "../src/verify/Gate.js"
import * as MemoryStore from "../src/store/Memory.js"
import { testServer } from "./httpServer.js"
import { makePdf } from "./pdfWriter.js"
import { fixturePath, tempDirectory } from "./support.js"

const allTypes: Array<ContentType> = ["text/plain", "text/markdown", "text/html", "application/xhtml+xml", "application/pdf"]

/** Serves one body with one content type; captures it into a new run directory. */
const captureOne = (
  body: string | Buffer,
  contentType: string,
  options: Partial<Capture.CaptureOptions> = {}
) =>
  Effect.gen(function*() {
    const server = yield* testServer((_req, res) => {
      res.writeHead(200, { "content-type": contentType })
      res.end(body)
    })
    const source = server.url("/doc") as SourceUrl
    const directory = yield* tempDirectory
    const result = yield* Effect.flatMap(Capture.Capture, (capture) => Effect.either(capture.capture(source))).pipe(
      Effect.provide(Layer.provideMerge(
        Capture.layer({ approved: [source], allowLoopbackHttp: true, contentTypes: allTypes, ...options }),
        CaptureStore.layerFileSystem({ directory })
      ))
    )
    return { source, directory, result }
  })

const captured = (body: string | Buffer, contentType: string, options: Partial<Capture.CaptureOptions> = {}) =>
  Effect.gen(function*() {
    const { directory, result, source } = yield* captureOne(body, contentType, options)
    if (result._tag === "Left") return yield* Effect.die(result.left)
    const record = yield* Effect.flatMap(CaptureStore.CaptureStore, (store) => store.read(source)).pipe(
      Effect.provide(CaptureStore.layerFileSystem({ directory }))
    )
    return { source, directory, ref: result.right, record }
  })

const failure = (body: string | Buffer, contentType: string, options: Partial<Capture.CaptureOptions> = {}) =>
  Effect.gen(function*() {
    const { directory, result } = yield* captureOne(body, contentType, options)
    assert.strictEqual(result._tag, "Left", "the capture should have failed")
    // A failed capture writes nothing: no record, no body, no leftover.
    assert.deepStrictEqual(fs.readdirSync(directory), [])
    return (result as any).left
  })

/** Verifies one cited fact against a run directory. */
const verifyOne = (directory: string, ref: CaptureRef, snippet: string, anchor: { page?: number; heading?: Array<string> } = {}) =>
  Effect.flatMap(Gate.Gate, (gate) =>
    Effect.either(gate.check({
      facts: [{ state: "cited", label: "fact", source: ref.source, captureSha256: ref.sha256, snippet, ...anchor }]
    }))).pipe(Effect.provide(Gate.layer({ runDirectory: directory, config: { sources: [ref.source], labels: ["fact"] } })))

const firstFailure = (outcome: Effect.Effect.Success<ReturnType<typeof verifyOne>>) => {
  assert.strictEqual(outcome._tag, "Left")
  const error = (outcome as any).left
  assert.strictEqual(error._tag, "ReportRejected")
  return error.failures[0].error
}

describe("content-type policy", () => {
  it.scopedLive("by default only text/plain is captured: HTML, Markdown and PDF are refused before extraction", () =>
    Effect.gen(function*() {
      for (const contentType of ["text/html; charset=utf-8", "text/markdown", "application/pdf"]) {
        const error = yield* failure("<p>x</p>", contentType, { contentTypes: undefined })
        assert.instanceOf(error, UnsupportedContentType, contentType)
        assert.strictEqual(error.contentType, contentType)
      }
    }))

  it.scopedLive("a charset other than UTF-8, in the header or a meta element, is UnsupportedEncoding", () =>
    Effect.gen(function*() {
      const header = yield* failure("<p>x</p>", "text/html; charset=iso-8859-1")
      assert.instanceOf(header, UnsupportedEncoding)
      assert.deepStrictEqual([header.charset, header.declaredIn], ["iso-8859-1", "content-type"])
      const meta = yield* failure("<html><head><meta charset=\"windows-1252\"></head><body>x</body></html>", "text/html")
      assert.instanceOf(meta, UnsupportedEncoding)
      assert.deepStrictEqual([meta.charset, meta.declaredIn], ["windows-1252", "meta"])
      const markdown = yield* failure("# x", "text/markdown; charset=latin1")
      assert.instanceOf(markdown, UnsupportedEncoding)
    }))
})

describe("hostile HTML", () => {
  it.scopedLive("100,000 nested elements: ExtractionTooLarge at the depth cap, quickly, nothing written", () =>
    Effect.gen(function*() {
      const html = "<!doctype html><body>" + "<div>".repeat(100_000) + "deep" + "</div>".repeat(100_000)
      const started = Date.now()
      const error = yield* failure(html, "text/html")
      assert.instanceOf(error, ExtractionTooLarge)
      assert.deepStrictEqual([error.format, error.cap, error.limit], ["html", "maxDepth", 512])
      assert.isBelow(Date.now() - started, 10_000)
    }))

  it.scopedLive("a 10 MB attribute costs parsing time only: the text is the visible text", () =>
    Effect.gen(function*() {
      const html = `<!doctype html><p title="${"a".repeat(10 * 1024 * 1024)}">Net sales were 4,210 units.</p>`
      const { record } = yield* captured(html, "text/html", { maxBytes: 16 * 1024 * 1024 })
      assert.strictEqual(record.text, "Net sales were 4,210 units.")
    }))

  it.scopedLive("`</script>` inside a script string ends the script, as in a browser; the script itself is never text", () =>
    Effect.gen(function*() {
      const html = `<!doctype html><body><script>var s = "</script>"; tail text<p>Visible</p></body>`
      const { record } = yield* captured(html, "text/html")
      assert.strictEqual(record.text, "\"; tail text\nVisible")
      assert.notInclude(record.text, "var s")
    }))

  it.scopedLive("hidden text is not citable: SnippetAbsent", () =>
    Effect.gen(function*() {
      const html = `<!doctype html><body><p>Public figure 1.</p><p hidden>Secret figure 999.</p>` +
        `<div hidden><p>Nested secret 998.</p></div><template>Template 997.</template><noscript>Noscript 996.</noscript></body>`
      const { directory, record, ref } = yield* captured(html, "text/html")
      assert.strictEqual(record.text, "Public figure 1.")
      for (const snippet of ["Secret figure 999.", "Nested secret 998.", "Template 997.", "Noscript 996."]) {
        const error = firstFailure(yield* verifyOne(directory, ref, snippet))
        assert.instanceOf(error, SnippetAbsent, snippet)
        assert.strictEqual(error.snippet, snippet)
      }
      assert.strictEqual((yield* verifyOne(directory, ref, "Public figure 1."))._tag, "Right")
    }))

  it.scopedLive("extracted characters are capped", () =>
    Effect.gen(function*() {
      const error = yield* failure(`<p>${"word ".repeat(10_000)}</p>`, "text/html", { maxCharacters: 1_000 })
      assert.instanceOf(error, ExtractionTooLarge)
      assert.deepStrictEqual([error.cap, error.limit], ["maxCharacters", 1_000])
    }))
})

describe("hostile and broken PDFs", () => {
  const report = fs.readFileSync(fixturePath("extraction", "report.pdf"))

  it.scopedLive("malformed, truncated and encrypted files fail with ExtractionFailed and write nothing", () =>
    Effect.gen(function*() {
      const cases = [
        ["malformed", Buffer.from("%PDF-1.4\nthis is not a PDF body\n%%EOF\n")],
        ["malformed", Buffer.from("<html>not a pdf</html>")],
        ["truncated", report.subarray(0, Math.floor(report.byteLength / 2))],
        ["encrypted", makePdf([["Secret page"]], { encrypted: true })]
      ] as const
      for (const [reason, bytes] of cases) {
        const error = yield* failure(bytes, "application/pdf")
        assert.instanceOf(error, ExtractionFailed, reason)
        assert.deepStrictEqual([error.format, error.reason], ["pdf", reason])
      }
    }))

  it.scopedLive("a JavaScript-carrying PDF is captured as text; its script never runs", () =>
    Effect.gen(function*() {
      const marker = path.join(yield* tempDirectory, "script-ran")
      const script = `require("fs").writeFileSync(${JSON.stringify(marker)}, "ran")`
      const pdf = makePdf([["Plain page text."]], { javascript: script })
      const { record } = yield* captured(pdf, "application/pdf")
      assert.strictEqual(record.text, "Plain page text.")
      assert.isFalse(fs.existsSync(marker))
    }))

  it.scopedLive("more pages than maxPages: ExtractionTooLarge", () =>
    Effect.gen(function*() {
      const error = yield* failure(report, "application/pdf", { maxPages: 2 })
      assert.instanceOf(error, ExtractionTooLarge)
      assert.deepStrictEqual([error.format, error.cap, error.limit], ["pdf", "maxPages", 2])
    }))
})

describe("the capture deadline covers extraction", () => {
  it.scopedLive("a PDF whose extraction outlasts timeoutMs: Timeout, the worker terminated at the deadline", () =>
    Effect.gen(function*() {
      const pdf = makePdf(Array.from({ length: 3_000 }, (_, p) => Array.from({ length: 40 }, (_, l) => `Page ${p} line ${l}`)))
      const started = Date.now()
      const error = yield* failure(pdf, "application/pdf", { timeoutMs: 1_000, maxPages: 5_000 })
      assert.strictEqual(error._tag, "Timeout")
      assert.strictEqual(error.timeoutMs, 1_000)
      assert.isBelow(Date.now() - started, 4_000)
    }))

  it.scopedLive("deeply nested Markdown containers (super-linear in micromark) stop at the deadline", () =>
    Effect.gen(function*() {
      const markdown = ("> ".repeat(64) + "x\n").repeat(20_000)
      const started = Date.now()
      const error = yield* failure(markdown, "text/markdown", { timeoutMs: 1_000 })
      assert.strictEqual(error._tag, "Timeout")
      assert.isBelow(Date.now() - started, 4_000)
    }))
})

describe("anchors", () => {
  it.scopedLive("a v1 (text/plain) capture has no pages: a page anchor is AnchorMismatch no-such-anchor", () =>
    Effect.gen(function*() {
      const { directory, ref } = yield* captured("Net sales were 4,210 units.", "text/plain; charset=utf-8")
      const error = firstFailure(yield* verifyOne(directory, ref, "Net sales", { page: 1 }))
      assert.instanceOf(error, AnchorMismatch)
      assert.deepStrictEqual([error.anchor, error.reason], ["page 1", "no-such-anchor"])
    }))

  const report = fs.readFileSync(fixturePath("extraction", "report.pdf"))

  it.scopedLive("a page anchor holds only on its page; the occurrence on the named page is the evidence", () =>
    Effect.gen(function*() {
      const { directory, ref } = yield* captured(report, "application/pdf")
      const inventory = "Inventory on hand at 30 September 2026 was 1,180 units."
      const wrongPage = firstFailure(yield* verifyOne(directory, ref, inventory, { page: 2 }))
      assert.instanceOf(wrongPage, AnchorMismatch)
      assert.deepStrictEqual([wrongPage.anchor, wrongPage.reason, wrongPage.snippet], ["page 2", "outside", inventory])
      const noPage = firstFailure(yield* verifyOne(directory, ref, inventory, { page: 9 }))
      assert.instanceOf(noPage, AnchorMismatch)
      assert.deepStrictEqual([noPage.anchor, noPage.reason], ["page 9", "no-such-anchor"])

      // The sales sentence is on page 2 and again on page 3: naming page 3 verifies the second occurrence.
      const sales = "Net sales for Q3 2026 were 4,210 units"
      const onThree = yield* verifyOne(directory, ref, sales, { page: 3 })
      assert.strictEqual(onThree._tag, "Right")
      const evidence = (onThree as any).right.facts[0].evidence
      assert.strictEqual(evidence.page, 3)
      assert.strictEqual(evidence.occurrences, 2)
      const plain: any = yield* verifyOne(directory, ref, sales)
      const unanchored = plain.right.facts[0].evidence
      assert.strictEqual(unanchored.page, 2)
      assert.isBelow(unanchored.span.start, evidence.span.start)
    }))

  it.scopedLive("a heading anchor holds only inside its section", () =>
    Effect.gen(function*() {
      const markdown = fs.readFileSync(fixturePath("extraction", "report.md"))
      const { directory, ref } = yield* captured(markdown, "text/markdown")
      const online = "Online orders made up 61% of Q3 2026 unit sales."
      const path = ["Northwind Outfitters Q3 2026", "Sales", "Online"]
      const ok = yield* verifyOne(directory, ref, online, { heading: path })
      assert.strictEqual(ok._tag, "Right")
      assert.deepStrictEqual((ok as any).right.facts[0].evidence.heading, path)
      const outside = firstFailure(yield* verifyOne(directory, ref, online, { heading: ["Northwind Outfitters Q3 2026", "Returns"] }))
      assert.instanceOf(outside, AnchorMismatch)
      assert.deepStrictEqual([outside.anchor, outside.reason], ["heading Northwind Outfitters Q3 2026 > Returns", "outside"])
    }))
})

describe("stored bodies", () => {
  const html = fs.readFileSync(fixturePath("extraction", "report.html"))

  it.scopedLive("a body digest that does not match its stored body: CorruptCapture body-mismatch; a missing body: body-missing", () =>
    Effect.gen(function*() {
      const { directory, record, ref } = yield* captured(html, "text/html")
      assert.strictEqual(record.format, "citegate.capture/2")
      const bodyFile = path.join(directory, CaptureStore.bodyFileName(sha256Of(html)))
      // Stored read-only, byte for byte the body the server sent.
      assert.strictEqual(fs.statSync(bodyFile).mode & 0o777, 0o444)
      assert.isTrue(fs.readFileSync(bodyFile).equals(html))
      assert.strictEqual((yield* verifyOne(directory, ref, "Net sales for Q3 2026 were"))._tag, "Right")

      const altered = Buffer.from(html)
      altered[altered.length - 10] = altered[altered.length - 10]! ^ 1
      yield* Effect.promise(async () => {
        await fsp.chmod(bodyFile, 0o644)
        await fsp.writeFile(bodyFile, altered)
      })
      const mismatch = firstFailure(yield* verifyOne(directory, ref, "Net sales for Q3 2026 were"))
      assert.instanceOf(mismatch, CorruptCapture)
      assert.deepStrictEqual([mismatch.source, mismatch.reason], [ref.source, "body-mismatch"])

      yield* Effect.promise(() => fsp.unlink(bodyFile))
      const missing = firstFailure(yield* verifyOne(directory, ref, "Net sales for Q3 2026 were"))
      assert.instanceOf(missing, CorruptCapture)
      assert.strictEqual(missing.reason, "body-missing")

      const inspection = yield* CaptureStore.inspect({ directory })
      assert.deepStrictEqual(inspection.problems.map((p) => p.reason), ["body-missing"])
    }))

  it.scopedLive("two sources that sent the same bytes share one body file; a symlink planted as a body is refused", () =>
    Effect.gen(function*() {
      const server = yield* testServer((_req, res) => {
        res.writeHead(200, { "content-type": "text/html" })
        res.end(html)
      })
      const sources = [server.url("/a"), server.url("/b")] as Array<SourceUrl>
      const directory = yield* tempDirectory
      const layer = Layer.provideMerge(
        Capture.layer({ approved: sources, allowLoopbackHttp: true, contentTypes: allTypes }),
        CaptureStore.layerFileSystem({ directory })
      )
      const results = yield* Effect.flatMap(Capture.Capture, (c) => c.captureAll(sources)).pipe(Effect.provide(layer))
      assert.deepStrictEqual(results.map((r) => r.result._tag), ["Right", "Right"])
      const names = fs.readdirSync(directory)
      assert.deepStrictEqual(names.filter((n) => n.endsWith(".body")), [CaptureStore.bodyFileName(sha256Of(html))])
      assert.strictEqual(names.filter((n) => n.endsWith(".json")).length, 2)
      assert.isFalse(names.some((n) => n.startsWith(".partial-")))

      // Replace the body by a symlink to an identical copy: never followed.
      const bodyFile = path.join(directory, CaptureStore.bodyFileName(sha256Of(html)))
      const copy = path.join(yield* tempDirectory, "copy")
      fs.writeFileSync(copy, html)
      fs.unlinkSync(bodyFile)
      fs.symlinkSync(copy, bodyFile)
      const error = yield* Effect.flip(
        Effect.flatMap(CaptureStore.CaptureStore, (store) => store.read(sources[0]!)).pipe(
          Effect.provide(CaptureStore.layerFileSystem({ directory }))
        )
      )
      assert.instanceOf(error, CorruptCapture)
      assert.strictEqual(error.reason, "symlink")
    }))

  it.scoped("a write that dies after the body and before the record leaves no record, only an unused body that doctor lists", () =>
    Effect.gen(function*() {
      const directory = yield* tempDirectory
      // Fault injected at the record's link: the body (written first) is complete, the record never appears.
      const io: CaptureStore.FileIo = {
        ...CaptureStore.nodeIo,
        link: (existing, name) => name.endsWith(".json") ? Promise.reject(new Error("injected: disk full")) : CaptureStore.nodeIo.link(existing, name)
      }
      const store = yield* CaptureStore.makeFileSystem({ directory, io })
      const text = "Extracted text."
      const body = Buffer.from("<p>Extracted text.</p>")
      const record = {
        format: "citegate.capture/2" as const,
        source: "https://example.com/doc" as SourceUrl,
        sha256: sha256Of(text),
        accessedAt: "2026-11-30T09:00:00.000Z" as any,
        extraction: "html/1" as const,
        body: { sha256: sha256Of(body), byteLength: body.byteLength, contentType: "text/html" },
        text
      }
      const failed = yield* Effect.flip(store.write(record, body))
      assert.strictEqual(failed._tag, "CaptureWriteFailed")
      assert.deepStrictEqual(fs.readdirSync(directory), [CaptureStore.bodyFileName(sha256Of(body))])
      const missing = yield* Effect.flip(store.read(record.source))
      assert.strictEqual(missing._tag, "MissingCapture")
      const inspection = yield* CaptureStore.inspect({ directory })
      assert.strictEqual(inspection.records, 0)
      assert.deepStrictEqual(inspection.bodies.map((b) => [b.referenced, b.problem]), [[false, null]])
      // The same write again, without the fault, keeps the stored body and adds the record.
      const healthy = yield* CaptureStore.makeFileSystem({ directory })
      yield* healthy.write(record, body)
      assert.deepStrictEqual(yield* healthy.read(record.source), record)
      assert.strictEqual((yield* CaptureStore.inspect({ directory })).bodies[0]!.referenced, true)
    }))

  it.effect("the in-memory store keeps the body and refuses a v2 record without it", () =>
    Effect.gen(function*() {
      const store = yield* MemoryStore.make()
      const text = "Extracted text."
      const body = new TextEncoder().encode("<p>Extracted text.</p>")
      const record = {
        format: "citegate.capture/2" as const,
        source: "https://example.com/doc" as SourceUrl,
        sha256: sha256Of(text),
        accessedAt: "2026-11-30T09:00:00.000Z" as any,
        extraction: "html/1" as const,
        body: { sha256: sha256Of(body), byteLength: body.byteLength, contentType: "text/html" },
        headings: [],
        text
      }
      const refused = yield* Effect.flip(store.write(record))
      assert.strictEqual(refused._tag, "CaptureWriteFailed")
      yield* store.write(record, body)
      body[0] = 0 // the caller's buffer changing does not change the evidence
      const read = yield* store.read(record.source)
      assert.deepStrictEqual(read, record)
      const stored = yield* store.readBody(record.body.sha256)
      assert.strictEqual(sha256Of(stored), record.body.sha256)
    }))
})
