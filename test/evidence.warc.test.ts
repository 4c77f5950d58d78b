import { assert, describe, it } from "@effect/vitest"
import { Context, Effect, Layer } from "effect"
import { createHash } from "node:crypto"
import * as fs from "node:fs"
import * as fsp from "node:fs/promises"
import * as path from "node:path"
import { CDXIndexer, WARCParser } from "warcio"
import * as Capture from "../src/capture/Capture.js"
import { type CaptureRecord, captureFormat, makeCaptureRecord, recordBody, type Rfc3339Utc, type SourceUrl } from "../src/Domain.js"
import { CorruptCapture, ExportOutputExists, ExportTooLarge, WarcFieldInvalid } from "../src/Errors.js"
import * as Warc from "../src/evidence/Warc.js"
import * as CaptureStore from "../src/store/CaptureStore.js"
import { testServer } from "./httpServer.js"
import { countOpensOf, isRecordFile } from "./support/countOpens.js"
import { snapshotDirectory, tempDirectory, writeRecords } from "./support.js"

const hex = (bytes: Uint8Array) => createHash("sha256").update(bytes).digest("hex")

const html = "<!doctype html><html><head><title>Caf\u00e9</title></head><body><h1>Na\u00efve \u{1F600} results</h1>" +
  "<p>Revenue rose 12% to \u20ac4.2m in Q3.</p><p>Line one\r\nline two.</p></body></html>"
const text = "Plain notes: \u{1F4C8} up 3%.\nSecond line.\n"

/** Captures an HTML page (a v2 record with its body) and a text file (v1) from a loopback server. */
const capturedRun = Effect.gen(function*() {
  const server = yield* testServer((req, res) => {
    if (req.url === "/page.html") {
      res.writeHead(200, { "content-type": "text/html; charset=utf-8", "x-extra": "not kept" })
      res.end(html)
    } else {
      res.writeHead(200, { "content-type": "text/plain; charset=utf-8" })
      res.end(text)
    }
  })
  const sources = [server.url("/page.html"), server.url("/notes.txt")]
  const directory = yield* tempDirectory
  const context = yield* Layer.build(
    Capture.layer({ approved: sources, allowLoopbackHttp: true, timeoutMs: 5_000, contentTypes: ["text/plain", "text/html"] }).pipe(
      Layer.provide(CaptureStore.layerFileSystem({ directory }))
    )
  )
  const capture = Context.get(context, Capture.Capture)
  for (const source of sources) yield* capture.capture(source)
  const store = yield* CaptureStore.makeFileSystem({ directory })
  const records = new Map<string, CaptureRecord>()
  for (const source of sources) records.set(source, yield* store.read(source as SourceUrl))
  return { directory, records, store }
}).pipe(Effect.orDie)

interface ReadRecord {
  readonly type: string
  readonly header: (name: string) => string | null
  readonly status: number | null
  readonly httpHeaders: ReadonlyArray<[string, string]>
  readonly payload: Uint8Array
  readonly block: Uint8Array
}

/** Every record, read by warcio twice: with its HTTP parser (status, headers, payload) and raw (the block). */
const readWarc = (file: string) =>
  Effect.promise(async () => {
    const parsed: Array<Omit<ReadRecord, "block">> = []
    for await (const record of new WARCParser(fs.createReadStream(file))) {
      const http = record.httpHeaders
      parsed.push({
        type: record.warcType ?? "",
        header: (name) => record.warcHeader(name) ?? null,
        status: http === null || http === undefined ? null : Number(http.statusCode),
        httpHeaders: http === null || http === undefined ? [] : [...(http.headers as Headers).entries()],
        payload: await record.readFully(false)
      })
    }
    const blocks: Array<Uint8Array> = []
    for await (const record of new WARCParser(fs.createReadStream(file), { parseHttp: false })) {
      blocks.push(await record.readFully(false))
    }
    assert.strictEqual(blocks.length, parsed.length)
    return parsed.map((r, i): ReadRecord => ({ ...r, block: blocks[i]! }))
  })

describe("WARC export", () => {
  it.scopedLive("warcio reads every record back: bodies, digests and links agree with the store", () =>
    Effect.gen(function*() {
      const { directory, records, store } = yield* capturedRun
      const outDir = yield* tempDirectory
      const out = path.join(outDir, "run.warc")
      const summary = yield* Warc.exportWarc({ directory, out })
      const read = yield* readWarc(out)
      assert.strictEqual(read[0]!.type, "warcinfo")
      assert.deepStrictEqual(read.map((r) => r.type).slice(1).sort(), ["conversion", "metadata", "metadata", "response", "response"])
      const written = yield* Effect.promise(() => fsp.readFile(out))
      assert.deepStrictEqual(summary, { captures: 2, records: read.length, bytes: written.byteLength, sha256: hex(written) })
      for (const r of read) {
        assert.strictEqual(r.header("WARC-Block-Digest"), `sha256:${hex(r.block)}`, `block digest of a ${r.type} record`)
        assert.match(r.header("WARC-Record-ID")!, /^<urn:uuid:[0-9a-f]{8}-[0-9a-f]{4}-8[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}>$/)
      }
      const ids = new Set(read.map((r) => r.header("WARC-Record-ID")))
      assert.strictEqual(ids.size, read.length, "record ids are unique")
      for (const [source, record] of records) {
        const response = read.find((r) => r.type === "response" && r.header("WARC-Target-URI") === source)!
        const body = record.format === captureFormat ? Buffer.from(record.text, "utf8") : yield* store.readBody(recordBody(record).sha256)
        // The payload is exactly the stored body, and its digest is the store's.
        assert.deepStrictEqual(Buffer.from(response.payload), Buffer.from(body))
        assert.strictEqual(response.header("WARC-Payload-Digest"), `sha256:${hex(response.payload)}`)
        assert.strictEqual(response.header("WARC-Payload-Digest"), `sha256:${recordBody(record).sha256}`)
        assert.strictEqual(response.header("WARC-Date"), record.accessedAt)
        // Only what was kept at capture: the status every stored capture had, and its Content-Type.
        assert.strictEqual(response.status, 200)
        assert.deepStrictEqual(response.httpHeaders, [["content-type", recordBody(record).contentType]])
        const id = response.header("WARC-Record-ID")
        const metadata = read.find((r) => r.type === "metadata" && r.header("WARC-Concurrent-To") === id)!
        const fields = Object.fromEntries(
          Buffer.from(metadata.block).toString("utf8").split("\r\n").filter((l) => l !== "").map((l) => {
            const colon = l.indexOf(": ")
            return [l.slice(0, colon), l.slice(colon + 2)]
          })
        )
        assert.deepStrictEqual(fields, {
          "citegate-record-format": record.format,
          "citegate-source": source,
          "citegate-capture-sha256": record.sha256,
          "citegate-body-sha256": recordBody(record).sha256,
          "citegate-body-length": String(recordBody(record).byteLength),
          "citegate-accessed-at": record.accessedAt,
          "citegate-content-type": recordBody(record).contentType,
          "citegate-extraction": record.format === captureFormat ? "text/1" : record.extraction,
          "citegate-http-headers": "content-type-only"
        })
        const conversion = read.find((r) => r.type === "conversion" && r.header("WARC-Refers-To") === id)
        if (record.format === captureFormat) {
          assert.isUndefined(conversion, "a v1 record's text is its body: no conversion record")
        } else {
          // The cited text, whose digest is the capture digest reports name.
          assert.strictEqual(Buffer.from(conversion!.payload).toString("utf8"), record.text)
          assert.strictEqual(hex(conversion!.payload), record.sha256)
        }
      }
      // warcio's CDX indexer (what replay tools index by) sees both responses with their digests.
      const cdx = yield* Effect.promise(async () => {
        const entries: Array<Record<string, unknown>> = []
        for await (const entry of new CDXIndexer({}).iterRecords(new WARCParser(fs.createReadStream(out)), "run.warc")) entries.push(entry)
        return entries
      })
      assert.deepStrictEqual(
        // (It indexes the conversion record too, without a status.)
        cdx.filter((e) => e["status"] === 200).map((e) => [e["url"], e["status"], e["digest"]]).sort(),
        [...records.values()].map((r) => [r.source, 200, recordBody(r).sha256]).sort()
      )
      // Record ids are derived from the captures: a second export of the run differs only in its warcinfo.
      const again = path.join(outDir, "again.warc")
      yield* Warc.exportWarc({ directory, out: again })
      const second = yield* readWarc(again)
      assert.deepStrictEqual(second.slice(1).map((r) => r.header("WARC-Record-ID")), read.slice(1).map((r) => r.header("WARC-Record-ID")))
    }))

  it.scopedLive("never replaces an existing file, and a capture that does not read back intact leaves nothing", () =>
    Effect.gen(function*() {
      const { directory, records } = yield* capturedRun
      const outDir = yield* tempDirectory
      const out = path.join(outDir, "run.warc")
      yield* Effect.promise(() => fsp.writeFile(out, "earlier evidence"))
      const exists = yield* Effect.flip(Warc.exportWarc({ directory, out }))
      assert.instanceOf(exists, ExportOutputExists)
      assert.strictEqual(yield* Effect.promise(() => fsp.readFile(out, "utf8")), "earlier evidence")
      // A stored body altered after capture: the export stops with the store's typed error.
      const v2 = [...records.values()].find((r) => r.format !== captureFormat)!
      const bodyFile = path.join(directory, CaptureStore.bodyFileName(recordBody(v2).sha256))
      yield* Effect.promise(async () => {
        await fsp.chmod(bodyFile, 0o644)
        await fsp.writeFile(bodyFile, html.replace("12%", "21%"))
      })
      const fresh = path.join(outDir, "fresh.warc")
      const corrupt = yield* Effect.flip(Warc.exportWarc({ directory, out: fresh }))
      assert.instanceOf(corrupt, CorruptCapture)
      assert.strictEqual(corrupt._tag === "CorruptCapture" ? corrupt.reason : "", "body-mismatch")
      assert.deepStrictEqual((yield* snapshotDirectory(outDir)).map((e) => e.name), ["run.warc"])
    }))

  it.scopedLive("each capture's body is read once: one open of its body file and of its record file, the body still checked", () =>
    Effect.gen(function*() {
      const { directory, records } = yield* capturedRun
      const v2 = [...records.values()].find((r) => r.format !== captureFormat)!
      const bodyFile = path.join(directory, CaptureStore.bodyFileName(recordBody(v2).sha256))
      const outDir = yield* tempDirectory
      const opens = yield* countOpensOf((file) => file.endsWith(".body") || isRecordFile(file))
      const summary = yield* Warc.exportWarc({ directory, out: path.join(outDir, "run.warc") })
      assert.strictEqual(summary.captures, 2)
      // Two records (v2 and v1) and the one body: each read whole once (the listing reads only a
      // record's opening, through its own handle, for the source it names).
      assert.deepStrictEqual(opens.opened.filter((f) => f.endsWith(".body")), [bodyFile])
      assert.strictEqual(opens.opened.filter(isRecordFile).length, 2)
      // Read once, still checked against the record: the same length, another digest, refused.
      yield* Effect.promise(async () => {
        await fsp.chmod(bodyFile, 0o644)
        await fsp.writeFile(bodyFile, html.replace("12%", "21%"))
      })
      const corrupt = yield* Effect.flip(Warc.exportWarc({ directory, out: path.join(outDir, "again.warc") }))
      assert.strictEqual(corrupt._tag === "CorruptCapture" ? corrupt.reason : corrupt._tag, "body-mismatch")
      assert.strictEqual(corrupt._tag === "CorruptCapture" ? corrupt.source : "", v2.source)
    }))

  it.scopedLive("a stored value that would forge WARC header lines stops the export; too many captures too", () =>
    Effect.gen(function*() {
      const directory = yield* tempDirectory
      const forged = makeCaptureRecord({
        source: "https://example.test/a.txt" as SourceUrl,
        text: "harmless",
        accessedAt: "2026-10-01T09:30:00.000Z" as Rfc3339Utc,
        contentType: "text/plain\r\nWARC-Type: revisit"
      })
      const plain = makeCaptureRecord({
        source: "https://example.test/b.txt" as SourceUrl,
        text: "plain",
        accessedAt: "2026-10-01T09:30:00.000Z" as Rfc3339Utc,
        contentType: "text/plain"
      })
      yield* writeRecords(directory, [forged, plain])
      const outDir = yield* tempDirectory
      const error = yield* Effect.flip(Warc.exportWarc({ directory, out: path.join(outDir, "x.warc") }))
      assert.instanceOf(error, WarcFieldInvalid)
      assert.strictEqual(error._tag === "WarcFieldInvalid" ? error.field : "", "Content-Type")
      const tooMany = yield* Effect.flip(Warc.exportWarc({ directory, out: path.join(outDir, "y.warc"), maxCaptures: 1 }))
      assert.instanceOf(tooMany, ExportTooLarge)
      assert.deepStrictEqual(yield* snapshotDirectory(outDir), [])
    }))
})
