/**
 * The WARC export from a PostgreSQL run: the same captures (a v2 HTML page with its body, a v1 text)
 * in a run directory and in a PostgreSQL run, exported from each (the library's `exportRun`, and the
 * built CLI's `export --format warc --store`), read back with warcio: every record's block, payload
 * and digests agree between the two files and with the stored bodies. Past `maxCaptures` the export
 * stops before writing anything (`ExportTooLarge`).
 */
import { assert, describe, it } from "@effect/vitest"
import { Context, Effect, Layer } from "effect"
import { createHash } from "node:crypto"
import * as fs from "node:fs"
import * as fsp from "node:fs/promises"
import * as path from "node:path"
import { WARCParser } from "warcio"
import * as Capture from "../src/capture/Capture.js"
import { captureFormat, recordBody, type SourceUrl } from "../src/Domain.js"
import { ExportTooLarge } from "../src/Errors.js"
import * as Warc from "../src/evidence/Warc.js"
import * as CaptureStore from "../src/store/CaptureStore.js"
import * as PostgresStore from "../src/store/Postgres.js"
import { cli } from "./cliProcess.js"
import { testServer } from "./httpServer.js"
import { migratedDatabase, skipPostgres } from "./support/postgresDatabase.js"
import { snapshotDirectory, tempDirectory } from "./support.js"

const pg = migratedDatabase("warc", { auditor: [PostgresStore.verifierRole] })

const hex = (bytes: Uint8Array) => createHash("sha256").update(bytes).digest("hex")

const html = "<!doctype html><html><body><h1>Caf\u00e9 \u{1F600}</h1><p>Revenue rose 12% to \u20ac4.2m in Q3.</p></body></html>"
const text = "Plain notes: \u{1F4C8} up 3%.\nSecond line.\n"

interface ReadRecord {
  readonly type: string
  readonly headers: ReadonlyMap<string, string>
  readonly payload: Uint8Array
  readonly block: Uint8Array
}

const headerNames = ["WARC-Record-ID", "WARC-Target-URI", "WARC-Date", "WARC-Payload-Digest", "WARC-Block-Digest"]

/** Every record of a WARC file, read by warcio twice: parsed as HTTP (the payload) and raw (the block). */
const readWarc = (file: string) =>
  Effect.promise(async () => {
    const parsed: Array<Omit<ReadRecord, "block">> = []
    for await (const record of new WARCParser(fs.createReadStream(file))) {
      const headers = new Map<string, string>()
      for (const name of headerNames) {
        const value = record.warcHeader(name)
        if (value !== undefined && value !== null) headers.set(name, value)
      }
      parsed.push({ type: record.warcType ?? "", headers, payload: await record.readFully(false) })
    }
    const blocks: Array<Uint8Array> = []
    for await (const record of new WARCParser(fs.createReadStream(file), { parseHttp: false })) blocks.push(await record.readFully(false))
    assert.strictEqual(blocks.length, parsed.length)
    return parsed.map((r, i): ReadRecord => ({ ...r, block: blocks[i]! }))
  })

/** The same two captures in a run directory (captured from a loopback server) and in a new PostgreSQL run. */
const bothRuns = Effect.gen(function*() {
  const server = yield* testServer((req, res) => {
    res.writeHead(200, { "content-type": req.url === "/page.html" ? "text/html; charset=utf-8" : "text/plain; charset=utf-8" })
    res.end(req.url === "/page.html" ? html : text)
  })
  const sources = [server.url("/page.html") as SourceUrl, server.url("/notes.txt") as SourceUrl]
  const directory = yield* tempDirectory
  const context = yield* Layer.build(
    Capture.layer({ approved: sources, allowLoopbackHttp: true, timeoutMs: 60_000, contentTypes: ["text/plain", "text/html"] }).pipe(
      Layer.provide(CaptureStore.layerFileSystem({ directory }))
    )
  )
  for (const source of sources) yield* Context.get(context, Capture.Capture).capture(source)
  const files = yield* CaptureStore.makeFileSystem({ directory })
  const run = `warc-${path.basename(directory)}`
  const owner = Context.get(
    yield* Layer.build(PostgresStore.layerUrl({ url: pg.current.url(), run, create: true, maxConnections: 2 })),
    CaptureStore.CaptureStore
  )
  for (const source of sources) {
    const record = yield* files.read(source)
    yield* owner.write(record, record.format === captureFormat ? undefined : yield* files.readBody(recordBody(record).sha256))
  }
  // Read as a verifier reads: SELECT only.
  const database = Context.get(
    yield* Layer.build(PostgresStore.layerUrl({ url: pg.current.url("auditor"), run, maxConnections: 2 })),
    CaptureStore.CaptureStore
  )
  return { directory, files, database, run, sources }
}).pipe(Effect.orDie)

describe.skipIf(skipPostgres)("WARC export from a PostgreSQL run", () => {
  it.scopedLive("the same run exported from the filesystem and from PostgreSQL: warcio reads the same records back", () =>
    Effect.gen(function*() {
      const { database, directory, files, run, sources } = yield* bothRuns
      const outDir = yield* tempDirectory
      yield* Effect.promise(() => Promise.all(["fs", "pg", "cli"].map((d) => fsp.mkdir(path.join(outDir, d)))))
      const fromFiles = yield* Warc.exportRun({ out: path.join(outDir, "fs", "run.warc") }).pipe(
        Effect.provideService(CaptureStore.CaptureStore, files)
      )
      const fromDatabase = yield* Warc.exportRun({ out: path.join(outDir, "pg", "run.warc") }).pipe(
        Effect.provideService(CaptureStore.CaptureStore, database)
      )
      assert.deepStrictEqual([fromFiles.captures, fromFiles.records], [2, 6])
      assert.deepStrictEqual([fromDatabase.captures, fromDatabase.records], [2, 6])
      // The built CLI, as an operator runs it: --store names the database, --run-dir the run.
      const ran = yield* cli([
        "export",
        "--format",
        "warc",
        "--store",
        pg.current.url("auditor"),
        "--run-dir",
        run,
        "--out",
        path.join(outDir, "cli", "run.warc")
      ])
      assert.strictEqual(ran.code, 0, ran.stderr)
      assert.include(ran.stderr, "export: 2 capture(s) as 6 WARC record(s)")
      assert.notInclude(ran.stderr, directory)

      const a = yield* readWarc(path.join(outDir, "fs", "run.warc"))
      for (const other of ["pg", "cli"]) {
        const b = yield* readWarc(path.join(outDir, other, "run.warc"))
        assert.strictEqual(b.length, a.length)
        // After the warcinfo record (its date is the export's), every record is the same, byte for byte.
        for (const [i, left] of a.entries()) {
          const right = b[i]!
          assert.strictEqual(right.type, left.type)
          assert.strictEqual(hex(right.block), right.headers.get("WARC-Block-Digest")?.slice("sha256:".length), `${other} block digest`)
          if (left.type === "warcinfo") continue
          for (const name of headerNames) {
            assert.strictEqual(right.headers.get(name), left.headers.get(name), `${other}: ${left.type} ${name}`)
          }
          assert.deepStrictEqual(Buffer.from(right.block), Buffer.from(left.block))
          assert.deepStrictEqual(Buffer.from(right.payload), Buffer.from(left.payload))
        }
      }
      // And with the stores: each response's payload is the stored body, its digest the body's.
      for (const source of sources) {
        const record = yield* database.read(source)
        const response = a.find((r) => r.type === "response" && r.headers.get("WARC-Target-URI") === source)!
        const body = record.format === captureFormat ? Buffer.from(record.text, "utf8") : yield* database.readBody(recordBody(record).sha256)
        assert.deepStrictEqual(Buffer.from(response.payload), Buffer.from(body))
        assert.strictEqual(response.headers.get("WARC-Payload-Digest"), `sha256:${hex(body)}`)
        assert.strictEqual(response.headers.get("WARC-Payload-Digest"), `sha256:${recordBody(record).sha256}`)
      }
      assert.deepStrictEqual(a.map((r) => r.type), ["warcinfo", "response", "metadata", "response", "metadata", "conversion"])
    }))

  it.scopedLive("past maxCaptures nothing is written (ExportTooLarge); a run the database lacks is a usage error", () =>
    Effect.gen(function*() {
      const { database } = yield* bothRuns
      const outDir = yield* tempDirectory
      const tooMany = yield* Effect.flip(
        Warc.exportRun({ out: path.join(outDir, "x.warc"), maxCaptures: 1 }).pipe(Effect.provideService(CaptureStore.CaptureStore, database))
      )
      assert.instanceOf(tooMany, ExportTooLarge)
      assert.deepInclude(tooMany, { captures: 2, limit: 1 })
      const missing = yield* cli([
        "export",
        "--format",
        "warc",
        "--store",
        pg.current.url("auditor"),
        "--run-dir",
        "no-such-run",
        "--out",
        path.join(outDir, "y.warc")
      ])
      assert.strictEqual(missing.code, 2, missing.stderr)
      assert.include(missing.stderr, "StoreUnavailable")
      assert.include(missing.stderr, "no such run in this database")
      assert.deepStrictEqual(yield* snapshotDirectory(outDir), [])
    }))
})
