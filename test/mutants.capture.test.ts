/**
 * The capture stage's own logic, pinned exactly: budget and cap validation at
 * their bounds, the request headers, the exact v1 and v2 records and references
 * written, captureAll's events in order, and the span names of its operations.
 * Expected values are written out by hand (digests by node:crypto), never taken
 * from the code under test.
 */
import { assert, describe, it } from "@effect/vitest"
import { Context, Effect, Either, Layer } from "effect"
import { createHash } from "node:crypto"
import * as fsp from "node:fs/promises"
import * as path from "node:path"
import * as Capture from "../src/capture/Capture.js"
import * as CaptureStore from "../src/store/CaptureStore.js"
import type { ContentType } from "../src/Config.js"
import { ExtractionTooLarge, InvalidBudget, NotApproved, UnexpectedStatus } from "../src/Errors.js"
import { testServer } from "./httpServer.js"
import { expectedRecordName, failureOf, spanNames } from "./mutants.support.js"
import { makePdf } from "./pdfWriter.js"
import { tempDirectory } from "./support.js"

const sha256Hex = (bytes: string | Uint8Array) => createHash("sha256").update(bytes).digest("hex")

const captureService = (options: Capture.CaptureOptions) =>
  Effect.gen(function*() {
    const directory = yield* tempDirectory
    const context = yield* Layer.build(
      Capture.layer({ allowLoopbackHttp: true, timeoutMs: 5_000, ...options }).pipe(
        Layer.provide(CaptureStore.layerFileSystem({ directory }))
      )
    )
    return { capture: Context.get(context, Capture.Capture), directory }
  })

const listDirectory = (directory: string) => Effect.promise(async () => (await fsp.readdir(directory)).sort())

const readJson = (file: string) => Effect.promise(async () => JSON.parse(await fsp.readFile(file, "utf8")))

describe("validateBudgets", () => {
  it.effect("defaults: 15 s, 8 MiB, 4 at once", () =>
    Effect.gen(function*() {
      assert.deepStrictEqual(yield* Capture.validateBudgets({}), { timeoutMs: 15_000, maxBytes: 8_388_608, concurrency: 4 })
    }))

  it.effect("each bound is inclusive: 1 and the maximum are accepted", () =>
    Effect.gen(function*() {
      assert.deepStrictEqual(yield* Capture.validateBudgets({ timeoutMs: 1, maxBytes: 1, concurrency: 1 }), {
        timeoutMs: 1,
        maxBytes: 1,
        concurrency: 1
      })
      assert.deepStrictEqual(yield* Capture.validateBudgets({ timeoutMs: 600_000, maxBytes: 67_108_864, concurrency: 64 }), {
        timeoutMs: 600_000,
        maxBytes: 67_108_864,
        concurrency: 64
      })
    }))

  it.effect("one past each bound, or not an integer, is InvalidBudget with its range", () =>
    Effect.gen(function*() {
      const cases = [
        ["timeoutMs", 0, "must be an integer from 1 to 600000"],
        ["timeoutMs", 600_001, "must be an integer from 1 to 600000"],
        ["maxBytes", 0, "must be an integer from 1 to 67108864"],
        ["maxBytes", 67_108_865, "must be an integer from 1 to 67108864"],
        ["maxBytes", 2.5, "must be an integer from 1 to 67108864"],
        ["concurrency", 0, "must be an integer from 1 to 64"],
        ["concurrency", 65, "must be an integer from 1 to 64"]
      ] as const
      for (const [budget, value, detail] of cases) {
        const error = yield* failureOf(Capture.validateBudgets({ [budget]: value }))
        assert.instanceOf(error, InvalidBudget)
        assert.deepStrictEqual([error.budget, error.value, error.detail], [budget, value, detail])
      }
    }))
})

describe("validateCaps", () => {
  it.effect("defaults: 2,000 pages, 16 Mi characters, depth 512", () =>
    Effect.gen(function*() {
      assert.deepStrictEqual(yield* Capture.validateCaps({}), { maxPages: 2_000, maxCharacters: 16_777_216, maxDepth: 512 })
    }))

  it.effect("each bound is inclusive", () =>
    Effect.gen(function*() {
      assert.deepStrictEqual(yield* Capture.validateCaps({ maxPages: 1, maxCharacters: 1, maxDepth: 16 }), {
        maxPages: 1,
        maxCharacters: 1,
        maxDepth: 16
      })
      assert.deepStrictEqual(yield* Capture.validateCaps({ maxPages: 100_000, maxCharacters: 67_108_864, maxDepth: 10_000 }), {
        maxPages: 100_000,
        maxCharacters: 67_108_864,
        maxDepth: 10_000
      })
    }))

  it.effect("one past each bound, or not an integer, is InvalidBudget with its range", () =>
    Effect.gen(function*() {
      const cases = [
        ["maxPages", 0, "must be an integer from 1 to 100000"],
        ["maxPages", 100_001, "must be an integer from 1 to 100000"],
        ["maxCharacters", 0, "must be an integer from 1 to 67108864"],
        ["maxCharacters", 67_108_865, "must be an integer from 1 to 67108864"],
        ["maxDepth", 15, "must be an integer from 16 to 10000"],
        ["maxDepth", 10_001, "must be an integer from 16 to 10000"],
        ["maxDepth", 100.5, "must be an integer from 16 to 10000"]
      ] as const
      for (const [cap, value, detail] of cases) {
        const error = yield* failureOf(Capture.validateCaps({ [cap]: value }))
        assert.instanceOf(error, InvalidBudget)
        assert.deepStrictEqual([error.budget, error.value, error.detail], [cap, value, detail])
      }
    }))

  it.scoped("the stage refuses to start with an invalid cap", () =>
    Effect.gen(function*() {
      const error = yield* failureOf(captureService({ approved: [], maxDepth: 15 }))
      assert.instanceOf(error, InvalidBudget)
      assert.deepStrictEqual([error.budget, error.value], ["maxDepth", 15])
    }))

  it.scopedLive("the caps given reach the extraction", () =>
    Effect.gen(function*() {
      const server = yield* testServer((_req, res) => {
        res.writeHead(200, { "content-type": "text/html" })
        res.end("<p>0123456789</p>")
      })
      const source = server.url("/page.html")
      const { capture } = yield* captureService({ approved: [source], contentTypes: ["text/html"], maxCharacters: 5 })
      const error = yield* failureOf(capture.capture(source))
      assert.instanceOf(error, ExtractionTooLarge)
      assert.deepStrictEqual([error.source, error.format, error.cap, error.limit], [source, "html", "maxCharacters", 5])
    }))
})

describe("the request", () => {
  for (
    const [types, accept] of [
      [undefined, "text/plain"],
      [["text/html", "text/plain"], "text/html, text/plain"]
    ] as const
  ) {
    it.scopedLive(`Accept lists the allowed types: ${accept}`, () =>
      Effect.gen(function*() {
        const server = yield* testServer((_req, res) => {
          res.writeHead(200, { "content-type": "text/plain" })
          res.end("ok")
        })
        const source = server.url("/a.txt")
        const { capture } = yield* captureService({
          approved: [source],
          ...(types === undefined ? {} : { contentTypes: types as ReadonlyArray<ContentType> })
        })
        yield* capture.capture(source)
        const headers = server.requests[0]!.headers
        assert.strictEqual(headers["accept"], accept)
        assert.strictEqual(headers["accept-encoding"], "identity")
        assert.match(headers["user-agent"] ?? "", /^citegate\/\d+\.\d+\.\d+/)
      }))
  }
})

describe("the records written", () => {
  it.scopedLive("text/plain: the exact v1 record, and a reference that agrees with it", () =>
    Effect.gen(function*() {
      const body = "Net sales: 4,210 units — “final”.\n"
      const server = yield* testServer((_req, res) => {
        res.writeHead(200, { "content-type": "text/plain; charset=UTF-8" })
        res.end(body)
      })
      const source = server.url("/sales.txt")
      const { capture, directory } = yield* captureService({ approved: [source] })
      const before = Date.now()
      const ref = yield* capture.capture(source)
      const after = Date.now()
      const accessed = Date.parse(ref.accessedAt)
      assert.isTrue(accessed >= before && accessed <= after, ref.accessedAt)
      assert.match(ref.accessedAt, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/)
      const bytes = Buffer.from(body, "utf8")
      assert.deepStrictEqual(ref, { source, sha256: sha256Hex(bytes), accessedAt: ref.accessedAt, byteLength: 40 })
      assert.deepStrictEqual(yield* listDirectory(directory), [expectedRecordName(source)])
      assert.deepStrictEqual(yield* readJson(path.join(directory, expectedRecordName(source))), {
        format: "citegate.capture/1",
        source,
        sha256: sha256Hex(bytes),
        accessedAt: ref.accessedAt,
        contentType: "text/plain; charset=UTF-8",
        byteLength: 40,
        text: body
      })
    }))

  it.scopedLive("HTML: the exact v2 record (text digest, body beside it, headings, no pages)", () =>
    Effect.gen(function*() {
      const html = "<!doctype html><h1>Q3</h1><p>Net sales were 4,210 units.</p>"
      const server = yield* testServer((_req, res) => {
        res.writeHead(200, { "content-type": "text/html; charset=utf-8" })
        res.end(html)
      })
      const source = server.url("/q3.html")
      const { capture, directory } = yield* captureService({ approved: [source], contentTypes: ["text/plain", "text/html"] })
      const ref = yield* capture.capture(source)
      const text = "Q3\nNet sales were 4,210 units."
      const bodyDigest = sha256Hex(Buffer.from(html, "utf8"))
      assert.deepStrictEqual(ref, { source, sha256: sha256Hex(text), accessedAt: ref.accessedAt, byteLength: 60 })
      assert.deepStrictEqual(yield* listDirectory(directory), [`${bodyDigest}.body`, expectedRecordName(source)].sort())
      const record = yield* readJson(path.join(directory, expectedRecordName(source)))
      assert.deepStrictEqual(record, {
        format: "citegate.capture/2",
        source,
        sha256: sha256Hex(text),
        accessedAt: ref.accessedAt,
        extraction: "html/2",
        body: { sha256: bodyDigest, byteLength: 60, contentType: "text/html; charset=utf-8" },
        headings: record.headings,
        text
      })
      assert.isTrue(Array.isArray(record.headings) && record.headings.length === 1, JSON.stringify(record.headings))
      assert.strictEqual(yield* Effect.promise(() => fsp.readFile(path.join(directory, `${bodyDigest}.body`), "utf8")), html)
    }))

  it.scopedLive("PDF: the v2 record carries its pages and no headings", () =>
    Effect.gen(function*() {
      const pdf = makePdf([["First page."], ["Second page."]])
      const server = yield* testServer((_req, res) => {
        res.writeHead(200, { "content-type": "application/pdf" })
        res.end(pdf)
      })
      const source = server.url("/q3.pdf")
      const { capture, directory } = yield* captureService({ approved: [source], contentTypes: ["application/pdf"] })
      const ref = yield* capture.capture(source)
      const text = "First page.\fSecond page."
      assert.deepStrictEqual(ref, { source, sha256: sha256Hex(text), accessedAt: ref.accessedAt, byteLength: pdf.length })
      const record = yield* readJson(path.join(directory, expectedRecordName(source)))
      assert.deepStrictEqual(Object.keys(record).sort(), ["accessedAt", "body", "extraction", "format", "pages", "sha256", "source", "text"])
      assert.strictEqual(record.extraction, "pdf/2")
      assert.strictEqual(record.text, text)
      assert.deepStrictEqual(record.pages, [{ number: 1, start: 0, end: 11 }, { number: 2, start: 12, end: 24 }])
      assert.deepStrictEqual(record.body, { sha256: sha256Hex(pdf), byteLength: pdf.length, contentType: "application/pdf" })
    }))
})

describe("captureAll", () => {
  it.scopedLive("one at a time: every event in order, with its reference or error; sources in input order", () =>
    Effect.gen(function*() {
      const server = yield* testServer((req, res) => {
        if (req.url === "/b.txt") {
          res.writeHead(404, { "content-type": "text/plain" })
          return res.end("no")
        }
        res.writeHead(200, { "content-type": "text/plain" })
        res.end(`body of ${req.url}`)
      })
      const [a, b, c] = ["/a.txt", "/b.txt", "/c.txt"].map(server.url) as [string, string, string]
      const { capture } = yield* captureService({ approved: [a, b, c], concurrency: 1 })
      const events: Array<Capture.CaptureEvent> = []
      const results = yield* capture.captureAll([a, b, c], { onEvent: (event) => Effect.sync(() => events.push(event)) })
      assert.deepStrictEqual(results.map((r) => r.source), [a, b, c])
      const refA = Either.getOrThrow(results[0]!.result)
      const refC = Either.getOrThrow(results[2]!.result)
      assert.strictEqual(refA.sha256, sha256Hex(`body of /a.txt`))
      assert.strictEqual(refC.sha256, sha256Hex(`body of /c.txt`))
      const failed = results[1]!.result
      assert.isTrue(Either.isLeft(failed))
      const error = Either.isLeft(failed) ? failed.left : undefined
      assert.instanceOf(error, UnexpectedStatus)
      assert.deepStrictEqual([error.source, error.status], [b, 404])
      assert.deepStrictEqual(events, [
        Capture.CaptureEvent.Started({ source: a }),
        Capture.CaptureEvent.Captured({ source: a, ref: refA }),
        Capture.CaptureEvent.Started({ source: b }),
        Capture.CaptureEvent.Failed({ source: b, error }),
        Capture.CaptureEvent.Started({ source: c }),
        Capture.CaptureEvent.Captured({ source: c, ref: refC })
      ])
    }))

  it.scopedLive("without an event handler every source still gets its result", () =>
    Effect.gen(function*() {
      const server = yield* testServer((_req, res) => {
        res.writeHead(200, { "content-type": "text/plain" })
        res.end("ok")
      })
      const a = server.url("/a.txt")
      const { capture } = yield* captureService({ approved: [a] })
      const results = yield* capture.captureAll([a, "https://elsewhere.test/x"])
      assert.strictEqual(results.length, 2)
      assert.isTrue(Either.isRight(results[0]!.result))
      const refused = results[1]!.result
      assert.isTrue(Either.isLeft(refused) && refused.left instanceof NotApproved)
    }))
})

describe("tracing", () => {
  it.scopedLive("make, capture and captureAll each open their named span", () =>
    Effect.gen(function*() {
      const server = yield* testServer((_req, res) => {
        res.writeHead(200, { "content-type": "text/plain" })
        res.end("ok")
      })
      const a = server.url("/a.txt")
      const names = yield* spanNames(Effect.gen(function*() {
        const { capture } = yield* captureService({ approved: [a] })
        yield* capture.captureAll([a])
      }))
      for (const name of ["Capture.make", "Capture.captureAll", "Capture.capture"]) {
        assert.include(names, name)
      }
    }))
})
