/**
 * One contract, three stores: the filesystem store, the in-memory store and
 * the PostgreSQL store pass the same tests. PostgreSQL runs on a throwaway
 * cluster (test/support/postgresCluster.ts); without its binaries that part is
 * skipped with the reason printed, unless CI is set.
 *
 * Verification never lists: a report's sources are the configuration's approved
 * sources, each read through `read`. `list` (bounded, for exports) returns a
 * run's sources, sorted, and fails `CaptureListTooLarge` past its limit.
 */
import { assert, describe, it } from "@effect/vitest"
import { Context, Effect, Either, Layer, type Scope } from "effect"
import * as fsp from "node:fs/promises"
import * as path from "node:path"
import { beforeAll } from "vitest"
import * as CaptureStore from "../src/store/CaptureStore.js"
import {
  type CaptureRecord,
  captureFormatV2,
  type CaptureRecordV2,
  makeCaptureRecord,
  sha256Of,
  type SourceUrl
} from "../src/Domain.js"
import {
  CaptureExists,
  CaptureListTooLarge,
  CaptureWriteFailed,
  CorruptCapture,
  DigestMismatch,
  MissingCapture,
  ReportRejected
} from "../src/Errors.js"
import * as Gate from "../src/verify/Gate.js"
import * as Manifest from "../src/Manifest.js"
import * as MemoryStore from "../src/store/Memory.js"
import * as PostgresStore from "../src/store/Postgres.js"
import type { Cluster } from "./support/postgresCluster.js"
import { migratedDatabase, skipPostgres } from "./support/postgresDatabase.js"
import {
  accessedAt,
  cited,
  INVENTORY,
  inventoryRecord,
  pipelineConfig,
  recordPath,
  SALES,
  salesRecord,
  tempDirectory
} from "./support.js"

type Store = CaptureStore.CaptureStoreShape

/** One fresh, empty run of a store. */
interface Run {
  /** Rewrites the stored body with this digest to `bytes`, behind the store's back. */
  readonly tamperBody?: (sha256: string, bytes: Uint8Array) => Effect.Effect<void>
  /** Opens a store on this run: for the filesystem and PostgreSQL a new handle (as another process would). */
  readonly open: Effect.Effect<Store, unknown, Scope.Scope>
  /** Rewrites `from` to `to` inside the stored serialisation of `source`, behind the store's back. */
  readonly tamper?: (source: SourceUrl, from: string, to: string) => Effect.Effect<void>
}

interface StoreUnderTest {
  readonly name: string
  readonly skip: boolean
  readonly freshRun: Effect.Effect<Run, unknown, Scope.Scope>
  /** What a verification of a capture altered after the fact fails with, in this store. */
  readonly tampered?: "DigestMismatch" | "CorruptCapture"
}

const storeOf = (layer: Layer.Layer<CaptureStore.CaptureStore, unknown>) =>
  Effect.map(Layer.build(layer), (context) => Context.get(context, CaptureStore.CaptureStore))

const filesystem: StoreUnderTest = {
  name: "filesystem",
  skip: false,
  tampered: "DigestMismatch",
  freshRun: Effect.map(tempDirectory, (directory): Run => ({
    open: CaptureStore.makeFileSystem({ directory }),
    tamperBody: (sha256, bytes) =>
      Effect.promise(async () => {
        const file = path.join(directory, CaptureStore.bodyFileName(sha256))
        await fsp.rm(file)
        await fsp.writeFile(file, bytes)
      }),
    tamper: (source, from, to) =>
      Effect.promise(async () => {
        const file = recordPath(directory, source)
        const text = await fsp.readFile(file, "utf8")
        await fsp.rm(file)
        await fsp.writeFile(file, text.replace(from, to))
      })
  }))
}

const memory: StoreUnderTest = {
  name: "memory",
  skip: false,
  // One store is one run, and nothing outside the process can reach it: there is nothing to tamper with.
  freshRun: Effect.map(MemoryStore.make(), (store): Run => ({ open: Effect.succeed(store) }))
}

let cluster: Cluster | undefined
let database = ""
let runs = 0

const postgres: StoreUnderTest = {
  name: "postgres",
  skip: skipPostgres,
  tampered: "CorruptCapture",
  freshRun: Effect.gen(function*() {
    const url = cluster!.url(database)
    const run = `contract-${++runs}`
    // The run is created once (as `capture` does); every handle after that opens the existing run.
    yield* storeOf(PostgresStore.layerUrl({ url, run, create: true }))
    return {
      open: storeOf(PostgresStore.layerUrl({ url, run, maxConnections: 2 })),
      tamperBody: (sha256, bytes) =>
        Effect.sync(() => {
          cluster!.psql(
            database,
            `BEGIN;
             ALTER TABLE citegate_bodies DISABLE TRIGGER citegate_bodies_append_only;
             UPDATE citegate_bodies SET bytes = '\\x${Buffer.from(bytes).toString("hex")}'::bytea WHERE sha256 = '${sha256}';
             ALTER TABLE citegate_bodies ENABLE TRIGGER citegate_bodies_append_only;
             COMMIT;`
          )
        }),
      tamper: (source, from, to) =>
        Effect.sync(() => {
          const quote = (s: string) => `'${s.replaceAll("'", "''")}'`
          // What a superuser can do: switch the trigger off and rewrite the row.
          cluster!.psql(
            database,
            `BEGIN;
             ALTER TABLE citegate_captures DISABLE TRIGGER citegate_captures_append_only;
             UPDATE citegate_captures
               SET record = convert_to(replace(convert_from(record, 'UTF8'), ${quote(from)}, ${quote(to)}), 'UTF8')
               WHERE run = ${quote(run)} AND source = ${quote(source)};
             ALTER TABLE citegate_captures ENABLE TRIGGER citegate_captures_append_only;
             COMMIT;`
          )
        })
    } satisfies Run
  })
}

const pg = migratedDatabase("contract")
beforeAll(() => {
  if (!skipPostgres) ({ cluster, database } = pg.current)
})

/** A record whose text exercises the serialisation: escapes, surrogate pairs, NUL, separators, many chunks. */
const awkwardRecord = makeCaptureRecord({
  source: "https://awkward.test/a?b=c&d=%C3%A9" as SourceUrl,
  text: `"quoted" \\ back\u0000slash\u0001\b\f\n\r\t \u2028\u2029 é 😀 ${"🌍x".repeat(40_000)} end`,
  accessedAt,
  contentType: "text/plain; charset=utf-8"
})

/** A v2 record and the body it was extracted from (an HTML page), as capture makes them. */
const htmlBody = Buffer.from("<html><body><h1>Q3</h1><p>Net sales for Q3 2026 were 4,210 units.</p></body></html>")
const v2Text = "Q3\n\nNet sales for Q3 2026 were 4,210 units."
const v2Record: CaptureRecordV2 = {
  format: captureFormatV2,
  source: "https://reports.northwind.test/q3-page.html" as SourceUrl,
  sha256: sha256Of(v2Text),
  accessedAt,
  extraction: "html/1",
  body: { sha256: sha256Of(htmlBody), byteLength: htmlBody.byteLength, contentType: "text/html; charset=utf-8" },
  headings: [{ level: 1, text: "Q3", path: ["Q3"], start: 0, end: v2Text.length }],
  text: v2Text
}

const gateOver = (store: Store) =>
  Effect.provide(Gate.Gate, Gate.layerWithStore(pipelineConfig).pipe(Layer.provide(Layer.succeed(CaptureStore.CaptureStore, store))))

for (const subject of [filesystem, memory, postgres]) {
  describe.skipIf(subject.skip)(`store contract: ${subject.name}`, () => {
    it.scopedLive("reads back exactly the record written, through a new handle", () =>
      Effect.gen(function*() {
        const run = yield* subject.freshRun
        const writer = yield* run.open
        yield* writer.write(salesRecord)
        yield* writer.write(awkwardRecord)
        const reader = yield* run.open
        assert.deepStrictEqual(yield* reader.read(SALES), salesRecord)
        assert.deepStrictEqual(yield* reader.readWithBody!(SALES), { record: salesRecord, body: undefined })
        const awkward = yield* reader.read(awkwardRecord.source)
        assert.deepStrictEqual(awkward, awkwardRecord)
        assert.strictEqual(awkward.text, awkwardRecord.text)
      }))

    it.scopedLive("list: the run's sources, sorted, through a new handle; an empty run lists none", () =>
      Effect.gen(function*() {
        const run = yield* subject.freshRun
        const writer = yield* run.open
        assert.deepStrictEqual(yield* writer.list(), [])
        yield* writer.write(salesRecord)
        yield* writer.write(v2Record, htmlBody)
        yield* writer.write(awkwardRecord)
        const reader = yield* run.open
        const listed = yield* reader.list()
        assert.deepStrictEqual(listed, [SALES, v2Record.source, awkwardRecord.source].sort())
        // Every source listed reads back as written.
        for (const source of listed) assert.strictEqual((yield* reader.read(source)).source, source)
        // Another run's captures are not listed.
        const other = yield* Effect.flatMap(subject.freshRun, (r) => r.open)
        assert.deepStrictEqual(yield* other.list(), [])
      }))

    it.scopedLive("list past its limit is CaptureListTooLarge with the count; at the limit it lists", () =>
      Effect.gen(function*() {
        const run = yield* subject.freshRun
        const store = yield* run.open
        yield* store.write(salesRecord)
        yield* store.write(inventoryRecord)
        yield* store.write(awkwardRecord)
        const error = yield* Effect.flip(store.list({ limit: 2 }))
        assert.instanceOf(error, CaptureListTooLarge)
        assert.deepInclude(error, { captures: 3, limit: 2 })
        assert.match(error.message, /holds 3 captures, more than the 2 one listing returns$/)
        assert.strictEqual((yield* store.list({ limit: 3 })).length, 3)
        const none = yield* Effect.flip(store.list({ limit: 0 }))
        assert.instanceOf(none, CaptureListTooLarge)
        assert.strictEqual(CaptureStore.defaultMaxListedCaptures, 10_000)
      }))

    it.scopedLive("a missing capture is MissingCapture, and another run's capture is not this run's", () =>
      Effect.gen(function*() {
        const run = yield* subject.freshRun
        const store = yield* run.open
        yield* store.write(salesRecord)
        const missing = yield* Effect.flip(store.read(INVENTORY))
        assert.instanceOf(missing, MissingCapture)
        assert.strictEqual(missing.source, INVENTORY)
        const other = yield* Effect.flatMap(subject.freshRun, (r) => r.open)
        const elsewhere = yield* Effect.flip(other.read(SALES))
        assert.instanceOf(elsewhere, MissingCapture)
        assert.strictEqual(elsewhere.source, SALES)
      }))

    it.scopedLive("exclusive create: a second write of a source is CaptureExists and the first record stays", () =>
      Effect.gen(function*() {
        const run = yield* subject.freshRun
        const store = yield* run.open
        yield* store.write(salesRecord)
        const later = makeCaptureRecord({ ...salesRecord, text: "a different text", accessedAt: "2026-10-02T00:00:00.000Z" as typeof accessedAt })
        const error = yield* Effect.flip(store.write(later))
        assert.instanceOf(error, CaptureExists)
        assert.strictEqual(error.source, SALES)
        assert.deepStrictEqual(yield* (yield* run.open).read(SALES), salesRecord)
      }))

    it.scopedLive("concurrent writers of one source on separate handles: exactly one wins, the rest are CaptureExists", () =>
      Effect.gen(function*() {
        const run = yield* subject.freshRun
        const writers = yield* Effect.forEach(Array.from({ length: 8 }), () => run.open)
        const records = writers.map((_, i) => makeCaptureRecord({ ...inventoryRecord, text: `${inventoryRecord.text} #${i}` }))
        const results = yield* Effect.forEach(
          writers,
          (writer, i) => Effect.either(writer.write(records[i]!)),
          { concurrency: "unbounded" }
        )
        const winners = results.flatMap((r, i) => (Either.isRight(r) ? [i] : []))
        assert.strictEqual(winners.length, 1)
        for (const r of results) {
          if (Either.isLeft(r)) {
            assert.instanceOf(r.left, CaptureExists)
            assert.strictEqual(r.left.source, INVENTORY)
          }
        }
        assert.deepStrictEqual(yield* (yield* run.open).read(INVENTORY), records[winners[0]!]!)
      }))

    it.scopedLive("a record that is not a valid v1 record of its source reads back as CorruptCapture", () =>
      Effect.gen(function*() {
        const store = yield* Effect.flatMap(subject.freshRun, (r) => r.open)
        // Written by buggy trusted code: the declared length disagrees with the text, or a field is invalid.
        yield* store.write({ ...salesRecord, byteLength: salesRecord.byteLength + 1 })
        const length = yield* Effect.flip(store.read(SALES))
        assert.instanceOf(length, CorruptCapture)
        assert.strictEqual(length.reason, "byte-length-mismatch")
        assert.strictEqual(length.source, SALES)
        yield* store.write({ ...inventoryRecord, accessedAt: "yesterday" } as unknown as CaptureRecord)
        const invalid = yield* Effect.flip(store.read(INVENTORY))
        assert.instanceOf(invalid, CorruptCapture)
        assert.strictEqual(invalid.reason, "not-a-v1-record")
        assert.include(invalid.detail, "accessedAt")
      }))

    it.scopedLive("verification through the Gate: a grounded report, and a rejected snippet that is not in the capture", () =>
      Effect.gen(function*() {
        const store = yield* Effect.flatMap(subject.freshRun, (r) => r.open)
        yield* store.write(salesRecord)
        const gate = yield* gateOver(store)
        const report = yield* gate.check({ facts: [cited("q3_net_sales", salesRecord, "Net sales for Q3 2026 were 4,210")] })
        assert.strictEqual(report.outcome, "grounded")
        const rejected = yield* Effect.flip(gate.check({ facts: [cited("q3_net_sales", salesRecord, "were 9,210")] }))
        assert.instanceOf(rejected, ReportRejected)
        assert.strictEqual(rejected.failures[0]!.error._tag, "SnippetAbsent")
      }))

    it.scopedLive("listing: the manifest names the captured source with its digest and the missing one as missing", () =>
      Effect.gen(function*() {
        const store = yield* Effect.flatMap(subject.freshRun, (r) => r.open)
        yield* store.write(salesRecord)
        const manifest = yield* Manifest.make({ sources: [SALES, INVENTORY], labels: ["q3_net_sales"] } as never).pipe(
          Effect.provideService(CaptureStore.CaptureStore, store)
        )
        assert.deepStrictEqual(manifest.sources.map((s) => [s.number, s.source, s.status]), [
          [1, SALES, "captured"],
          [2, INVENTORY, "missing"]
        ])
        const first = manifest.sources[0]!
        assert.strictEqual(first.status === "captured" ? first.captureSha256 : "", salesRecord.sha256)
      }))

    it.scopedLive("v2: the record and its body read back exactly; a body is required, and a changed body is refused", () =>
      Effect.gen(function*() {
        const run = yield* subject.freshRun
        const store = yield* run.open
        const without = yield* Effect.flip(store.write(v2Record))
        assert.strictEqual(without._tag, "CaptureWriteFailed")
        assert.instanceOf(yield* Effect.flip(store.read(v2Record.source)), MissingCapture)
        yield* store.write(v2Record, htmlBody)
        // A second source with the same body bytes shares the stored body.
        const twin = { ...v2Record, source: "https://reports.northwind.test/q3-copy.html" as SourceUrl }
        yield* store.write(twin, htmlBody)
        const reader = yield* run.open
        assert.deepStrictEqual(yield* reader.read(v2Record.source), v2Record)
        assert.deepStrictEqual(yield* reader.read(twin.source), twin)
        assert.deepStrictEqual(Buffer.from(yield* reader.readBody(v2Record.body.sha256)), htmlBody)
        // readWithBody: the same record, with its body (none for a v1 record); a missing source as read.
        assert.isDefined(reader.readWithBody)
        const both = yield* reader.readWithBody!(v2Record.source)
        assert.deepStrictEqual(both.record, v2Record)
        assert.deepStrictEqual(Buffer.from(both.body!), htmlBody)
        assert.instanceOf(yield* Effect.flip(reader.readWithBody!("https://reports.northwind.test/none" as SourceUrl)), MissingCapture)
        const unknown = sha256Of("no such body")
        const missing = yield* Effect.flip(reader.readBody(unknown))
        assert.instanceOf(missing, MissingCapture)
        assert.strictEqual(missing.source, `body ${unknown}`)
        if (run.tamperBody !== undefined) {
          const altered = Buffer.from(htmlBody.toString("latin1").replace("4,210", "9,210"), "latin1")
          yield* run.tamperBody(v2Record.body.sha256, altered)
          const changed = yield* Effect.flip((yield* run.open).read(v2Record.source))
          assert.instanceOf(changed, CorruptCapture)
          assert.strictEqual(changed.reason, "body-mismatch")
          assert.strictEqual(changed.source, v2Record.source)
          const body = yield* Effect.flip((yield* run.open).readBody(v2Record.body.sha256))
          assert.instanceOf(body, CorruptCapture)
          assert.strictEqual(body.reason, "body-mismatch")
          const withBody = yield* Effect.flip((yield* run.open).readWithBody!(v2Record.source))
          assert.deepStrictEqual([withBody._tag, withBody._tag === "CorruptCapture" ? withBody.reason : ""], ["CorruptCapture", "body-mismatch"])
        }
      }))

    it.scopedLive("v2: a body of the right length but other bytes is refused at write; the right one is then stored", () =>
      Effect.gen(function*() {
        const run = yield* subject.freshRun
        const store = yield* run.open
        // A body of its own: PostgreSQL keeps bodies for all runs, and the test above alters the shared one.
        const body = Buffer.from(`${htmlBody.toString("latin1")}<!-- own body -->`, "latin1")
        const record: CaptureRecordV2 = { ...v2Record, body: { ...v2Record.body, sha256: sha256Of(body), byteLength: body.byteLength } }
        const other = Buffer.from(body.toString("latin1").replace("4,210", "9,210"), "latin1")
        assert.strictEqual(other.byteLength, body.byteLength)
        const refused = yield* Effect.flip(store.write(record, other))
        assert.instanceOf(refused, CaptureWriteFailed)
        assert.strictEqual(refused.source, record.source)
        assert.strictEqual(refused.detail, `the body hashes to ${sha256Of(other)}, the record says ${record.body.sha256}`)
        // Nothing was kept: neither the record nor a body under the record's digest.
        const reader = yield* run.open
        assert.instanceOf(yield* Effect.flip(reader.read(record.source)), MissingCapture)
        assert.instanceOf(yield* Effect.flip(reader.readBody(record.body.sha256)), MissingCapture)
        yield* store.write(record, body)
        assert.deepStrictEqual(yield* (yield* run.open).read(record.source), record)
        assert.deepStrictEqual(Buffer.from(yield* (yield* run.open).readBody(record.body.sha256)), body)
      }))

    const tampered = subject.tampered
    if (tampered !== undefined) {
      it.scopedLive(`a capture altered after the fact never verifies (${tampered})`, () =>
        Effect.gen(function*() {
          const run = yield* subject.freshRun
          const store = yield* run.open
          yield* store.write(salesRecord)
          yield* run.tamper!(SALES, "4,210", "9,210")
          const gate = yield* gateOver(yield* run.open)
          const rejected = yield* Effect.flip(
            gate.check({ facts: [cited("q3_net_sales", salesRecord, "Net sales for Q3 2026 were 9,210")] })
          )
          assert.instanceOf(rejected, ReportRejected)
          const error = rejected.failures[0]!.error
          if (tampered === "DigestMismatch") {
            assert.instanceOf(error, DigestMismatch)
            assert.strictEqual(error.kind, "stored")
            assert.strictEqual(error.stored, salesRecord.sha256)
          } else {
            assert.instanceOf(error, CorruptCapture)
            assert.strictEqual(error.reason, "record-digest-mismatch")
            assert.strictEqual(error.source, SALES)
          }
        }))
    }
  })
}
