/**
 * What the PostgreSQL store adds beyond the shared contract (test/storeContract.test.ts),
 * on a throwaway cluster: the database enforces append-only and the roles,
 * several processes race for one source, a killed writer leaves nothing, a row
 * rewritten by a superuser is caught, and opening a store fails typed.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { assert, describe, it } from "@effect/vitest"
import { Context, Effect, Layer, type Scope } from "effect"
import { spawn } from "node:child_process"
import * as path from "node:path"
import { beforeAll } from "vitest"
import * as CaptureStore from "../src/store/CaptureStore.js"
import { captureFormatV2, type CaptureRecordV2, makeCaptureRecord, sha256Of, type SourceUrl } from "../src/Domain.js"
import { CaptureExists, CorruptCapture, DigestMismatch, MissingCapture, ReportRejected, RunExists, StoreUnavailable } from "../src/Errors.js"
import * as Gate from "../src/verify/Gate.js"
import * as PostgresStore from "../src/store/Postgres.js"
import { type Cluster, createDatabase, skipPostgres } from "./support/postgresCluster.js"
import { migratedDatabase } from "./support/postgresDatabase.js"
import { childRecord } from "./support/postgresRecords.js"
import { cited, INVENTORY, inventoryRecord, pipelineConfig, SALES, salesRecord } from "./support.js"

// Login roles as an operator makes them: members of the group roles the migration created.
const pg = migratedDatabase("pgstore", {
  worker: [PostgresStore.captureRole],
  auditor: [PostgresStore.verifierRole],
  outsider: []
})
let cluster: Cluster
let database = ""
let runs = 0
const newRun = () => `pg-${++runs}`

beforeAll(() => {
  if (!skipPostgres) ({ cluster, database } = pg.current)
})

/** A client connected as `user` (the cluster trusts local connections: no password). */
const clientAs = (user: string) => PostgresStore.layerClient({ url: cluster.url(database, user), maxConnections: 2 })

const build = <A, I>(tag: Context.Tag<I, A>, layer: Layer.Layer<I, unknown>): Effect.Effect<A, unknown, Scope.Scope> =>
  Effect.map(Layer.build(layer), (context) => Context.get(context, tag))

const storeAs = (user: string, options: PostgresStore.PostgresOptions) =>
  build(CaptureStore.CaptureStore, PostgresStore.layer(options).pipe(Layer.provide(clientAs(user))))

const sqlAs = (user: string) => build(SqlClient.SqlClient, clientAs(user))

/** The SQLSTATE and message of a statement that must fail. */
const refused = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.map(Effect.flip(effect), (error) => {
    const cause = (error as { cause?: { code?: string; message?: string } }).cause
    return { code: cause?.code, message: cause?.message ?? "" }
  })

describe.skipIf(skipPostgres)("PostgreSQL store: the database enforces it", () => {
  it.scopedLive("the capture role stores v2 records with their bodies, a shared body once", () =>
    Effect.gen(function*() {
      const run = newRun()
      const worker = yield* storeAs("worker", { run, create: true })
      const body = Buffer.from("<p>Net sales for Q3 2026 were 4,210 units.</p>")
      const text = "Net sales for Q3 2026 were 4,210 units."
      const record: CaptureRecordV2 = {
        format: captureFormatV2,
        source: "https://reports.northwind.test/a.html" as SourceUrl,
        sha256: sha256Of(text),
        accessedAt: salesRecord.accessedAt,
        extraction: "html/1",
        body: { sha256: sha256Of(body), byteLength: body.byteLength, contentType: "text/html" },
        text
      }
      yield* worker.write(record, body)
      // The same body again (ON CONFLICT DO NOTHING needs no more than INSERT).
      yield* worker.write({ ...record, source: "https://reports.northwind.test/b.html" as SourceUrl }, body)
      const auditor = yield* storeAs("auditor", { run })
      assert.deepStrictEqual(yield* auditor.read(record.source), record)
      assert.strictEqual(cluster.psql(database, `SELECT count(*) FROM citegate_bodies WHERE sha256 = '${record.body.sha256}'`).trim(), "1")
    }))

  it.scopedLive("append-only: UPDATE, DELETE and TRUNCATE are refused by the trigger, even for the owner", () =>
    Effect.gen(function*() {
      const run = newRun()
      const store = yield* storeAs("postgres", { run, create: true })
      yield* store.write(salesRecord)
      const sql = yield* sqlAs("postgres")
      for (const statement of [
        sql`UPDATE citegate_captures SET sha256 = ${inventoryRecord.sha256} WHERE run = ${run}`,
        sql`DELETE FROM citegate_captures WHERE run = ${run}`,
        // CASCADE: since migration 4 the attestations reference the captures (plain TRUNCATE is refused below).
        sql`TRUNCATE citegate_captures CASCADE`,
        sql`UPDATE citegate_runs SET run = 'renamed' WHERE run = ${run}`,
        sql`DELETE FROM citegate_runs WHERE run = ${run}`
      ]) {
        const error = yield* refused(statement)
        assert.strictEqual(error.code, "42501")
        assert.include(error.message, "append-only")
      }
      // Without CASCADE the attestations' foreign key refuses it first (feature_not_supported).
      const plain = yield* refused(sql`TRUNCATE citegate_captures`)
      assert.strictEqual(plain.code, "0A000")
      assert.include(plain.message, "foreign key")
      assert.deepStrictEqual(yield* store.read(SALES), salesRecord)
    }))

  it.scopedLive("the capture role may create runs and insert captures, and nothing else", () =>
    Effect.gen(function*() {
      const run = newRun()
      const store = yield* storeAs("worker", { run, create: true })
      yield* store.write(salesRecord)
      const second = yield* Effect.flip(store.write(salesRecord))
      assert.instanceOf(second, CaptureExists)
      assert.strictEqual(second.source, SALES)
      // It cannot read captures back (a worker is not a verifier), nor change or remove them.
      const unreadable = yield* Effect.flip(store.read(SALES))
      assert.instanceOf(unreadable, CorruptCapture)
      assert.strictEqual(unreadable.reason, "unreadable")
      assert.include(unreadable.detail, "permission denied")
      const sql = yield* sqlAs("worker")
      for (const statement of [
        sql`SELECT record FROM citegate_captures`,
        sql`SELECT bytes FROM citegate_bodies`,
        sql`UPDATE citegate_captures SET sha256 = ${inventoryRecord.sha256}`,
        sql`DELETE FROM citegate_captures`,
        sql`DELETE FROM citegate_runs`,
        sql`ALTER TABLE citegate_captures DISABLE TRIGGER citegate_captures_append_only`
      ]) {
        const error = yield* refused(statement)
        assert.include(["42501"], error.code, error.message)
      }
      assert.deepStrictEqual(yield* (yield* storeAs("auditor", { run })).read(SALES), salesRecord)
    }))

  it.scopedLive("the verifier role may only read: no run, no capture, no change", () =>
    Effect.gen(function*() {
      const run = newRun()
      yield* Effect.flatMap(storeAs("worker", { run, create: true }), (s) => s.write(salesRecord))
      const verifier = yield* storeAs("auditor", { run })
      assert.deepStrictEqual(yield* verifier.read(SALES), salesRecord)
      const write = yield* Effect.flip(verifier.write(inventoryRecord))
      assert.instanceOf(write, Error)
      assert.strictEqual(write._tag, "CaptureWriteFailed")
      assert.include(write.message, "permission denied")
      const create = yield* Effect.flip(storeAs("auditor", { run: newRun(), create: true }))
      assert.instanceOf(create, StoreUnavailable)
      assert.include(create.detail, "permission denied")
      const sql = yield* sqlAs("auditor")
      for (const statement of [
        sql`UPDATE citegate_captures SET sha256 = ${inventoryRecord.sha256}`,
        sql`DELETE FROM citegate_captures`,
        sql`INSERT INTO citegate_bodies (sha256, bytes) VALUES (${salesRecord.sha256}, ${Buffer.from("x")})`
      ]) {
        assert.strictEqual((yield* refused(statement)).code, "42501")
      }
      // A login that is in neither role sees nothing at all.
      const outsider = yield* Effect.flip(storeAs("outsider", { run }))
      assert.instanceOf(outsider, StoreUnavailable)
      assert.include(outsider.detail, "permission denied")
    }))
})

/** Starts a writer process; resolves once it is ready, with a way to send `go`, kill it, and its output. */
const startWriter = (run: string, mode: "write" | "hold", index: number) =>
  Effect.acquireRelease(
    Effect.async<{ go: () => void; kill: () => void; line: (text: string) => Promise<void>; exited: Promise<string> }, Error>((resume) => {
      const child = spawn(
        process.execPath,
        ["--import", "tsx", path.join(import.meta.dirname, "postgresWriterChild.ts"), cluster.url(database, "worker"), run, mode, String(index)],
        { stdio: ["pipe", "pipe", "pipe"] }
      )
      let stdout = ""
      let stderr = ""
      const waiters: Array<[string, () => void]> = []
      const exited = new Promise<string>((done) => child.once("exit", () => done(stdout)))
      child.stderr.on("data", (chunk) => (stderr += String(chunk)))
      child.stdout.on("data", (chunk) => {
        stdout += String(chunk)
        for (const [text, done] of waiters) if (stdout.includes(text)) done()
      })
      const line = (text: string) =>
        new Promise<void>((done, fail) => {
          if (stdout.includes(text)) return done()
          waiters.push([text, done])
          child.once("exit", () => (stdout.includes(text) ? done() : fail(new Error(`writer exited: ${stderr}`))))
        })
      line("ready").then(
        () =>
          resume(Effect.succeed({
            go: () => child.stdin.write("go\n"),
            kill: () => child.kill("SIGKILL"),
            line,
            exited
          })),
        (error: Error) => resume(Effect.fail(error))
      )
    }),
    (writer) => Effect.sync(writer.kill)
  )

describe.skipIf(skipPostgres)("PostgreSQL store: several processes", () => {
  it.scopedLive("four worker processes race for one source: exactly one record, the others CaptureExists", () =>
    Effect.gen(function*() {
      const run = newRun()
      yield* storeAs("worker", { run, create: true })
      const writers = yield* Effect.forEach([0, 1, 2, 3], (i) => startWriter(run, "write", i), { concurrency: "unbounded" })
      for (const writer of writers) writer.go()
      const outputs = yield* Effect.promise(() => Promise.all(writers.map((w) => w.exited)))
      const outcomes = outputs.map((out) => out.split("\n").filter((l) => l !== "" && l !== "ready")[0])
      assert.strictEqual(outcomes.filter((o) => o === "written").length, 1, outcomes.join(","))
      assert.strictEqual(outcomes.filter((o) => o === "CaptureExists").length, 3, outcomes.join(","))
      const winner = outcomes.indexOf("written")
      const verifier = yield* storeAs("auditor", { run })
      assert.deepStrictEqual(yield* verifier.read(SALES), childRecord(String(winner)))
    }), 60_000)

  it.scopedLive("a writer killed inside its transaction leaves no visible record, and the source can be captured again", () =>
    Effect.gen(function*() {
      const run = newRun()
      yield* storeAs("worker", { run, create: true })
      const verifier = yield* storeAs("auditor", { run })
      const writer = yield* startWriter(run, "hold", 7)
      writer.go()
      yield* Effect.promise(() => writer.line("held"))
      // The row is inserted but not committed: no reader sees it.
      assert.instanceOf(yield* Effect.flip(verifier.read(SALES)), MissingCapture)
      writer.kill()
      yield* Effect.promise(() => writer.exited)
      assert.instanceOf(yield* Effect.flip(verifier.read(SALES)), MissingCapture)
      // The killed writer's claim on the source died with its connection.
      const worker = yield* storeAs("worker", { run })
      yield* worker.write(salesRecord)
      assert.deepStrictEqual(yield* verifier.read(SALES), salesRecord)
    }), 60_000)
})

describe.skipIf(skipPostgres)("PostgreSQL store: a superuser rewriting history is caught", () => {
  const rewrite = (run: string, recordSql: string, extra = "") =>
    cluster.psql(
      database,
      `BEGIN;
       ALTER TABLE citegate_captures DISABLE TRIGGER citegate_captures_append_only;
       UPDATE citegate_captures SET record = ${recordSql} ${extra} WHERE run = '${run}';
       ALTER TABLE citegate_captures ENABLE TRIGGER citegate_captures_append_only;
       COMMIT;`
    )
  const altered = "convert_to(replace(convert_from(record, 'UTF8'), '4,210', '9,210'), 'UTF8')"
  const fact = cited("q3_net_sales", salesRecord, "Net sales for Q3 2026 were 9,210")
  const checkAs = (run: string) =>
    Effect.flatMap(
      build(Gate.Gate, Gate.layerWithStore(pipelineConfig).pipe(Layer.provide(PostgresStore.layer({ run })), Layer.provide(clientAs("auditor")))),
      (gate) => Effect.flip(gate.check({ facts: [fact] }))
    )

  it.scopedLive("the text changed, the row's digest not: CorruptCapture (record-digest-mismatch)", () =>
    Effect.gen(function*() {
      const run = newRun()
      yield* Effect.flatMap(storeAs("worker", { run, create: true }), (s) => s.write(salesRecord))
      rewrite(run, altered)
      const rejected = yield* checkAs(run)
      assert.instanceOf(rejected, ReportRejected)
      const error = rejected.failures[0]!.error
      assert.instanceOf(error, CorruptCapture)
      assert.strictEqual(error.reason, "record-digest-mismatch")
      assert.strictEqual(error.source, SALES)
    }))

  it.scopedLive("the text changed and the row's digest recomputed: the Verifier's stored DigestMismatch", () =>
    Effect.gen(function*() {
      const run = newRun()
      yield* Effect.flatMap(storeAs("worker", { run, create: true }), (s) => s.write(salesRecord))
      rewrite(run, altered, `, record_sha256 = encode(sha256(${altered}), 'hex')`)
      const rejected = yield* checkAs(run)
      assert.instanceOf(rejected, ReportRejected)
      const error = rejected.failures[0]!.error
      assert.instanceOf(error, DigestMismatch)
      assert.strictEqual(error.kind, "stored")
      assert.strictEqual(error.stored, salesRecord.sha256)
      assert.strictEqual(error.computed, sha256Of(salesRecord.text.replace("4,210", "9,210")))
    }))
})

describe.skipIf(skipPostgres)("PostgreSQL store: bytes that are not a record", () => {
  it.scopedLive("a row rewritten to invalid UTF-8, digest recomputed: CorruptCapture (invalid-utf8), never text with U+FFFD", () =>
    Effect.gen(function*() {
      const run = newRun()
      yield* Effect.flatMap(storeAs("worker", { run, create: true }), (s) => s.write(salesRecord))
      const bad = `'\\x7b22ff22'::bytea`
      cluster.psql(
        database,
        `BEGIN;
         ALTER TABLE citegate_captures DISABLE TRIGGER citegate_captures_append_only;
         UPDATE citegate_captures SET record = ${bad}, record_sha256 = encode(sha256(${bad}), 'hex') WHERE run = '${run}';
         ALTER TABLE citegate_captures ENABLE TRIGGER citegate_captures_append_only;
         COMMIT;`
      )
      const error = yield* Effect.flip((yield* storeAs("auditor", { run })).read(SALES))
      assert.instanceOf(error, CorruptCapture)
      assert.strictEqual(error.reason, "invalid-utf8")
      assert.strictEqual(error.source, SALES)
    }))
})

describe.skipIf(skipPostgres)("PostgreSQL store: opening fails typed", () => {
  it.scopedLive("StoreUnavailable: a missing run, a bad name, no schema, no server; RunExists: an existing run to create", () =>
    Effect.gen(function*() {
      const run = newRun()
      const missing = yield* Effect.flip(storeAs("postgres", { run }))
      assert.instanceOf(missing, StoreUnavailable)
      assert.strictEqual(missing.run, run)
      assert.strictEqual(missing.detail, "no such run in this database")
      yield* storeAs("postgres", { run, create: true })
      const again = yield* Effect.flip(storeAs("postgres", { run, create: true }))
      assert.instanceOf(again, RunExists)
      assert.strictEqual(again.run, run)
      const blank = yield* Effect.flip(storeAs("postgres", { run: "", create: true }))
      assert.instanceOf(blank, StoreUnavailable)
      assert.include(blank.detail, "1 to 200 characters")
      const bare = createDatabase(cluster, "bare")
      const unmigrated = yield* Effect.flip(
        build(CaptureStore.CaptureStore, PostgresStore.layerUrl({ url: cluster.url(bare), run }))
      )
      assert.instanceOf(unmigrated, StoreUnavailable)
      assert.include(unmigrated.detail, "no citegate tables")
      // The migration refuses a database whose encoding would not check the records' UTF-8.
      cluster.psql("postgres", "CREATE DATABASE latin ENCODING 'SQL_ASCII' TEMPLATE template0")
      const latin = yield* Effect.flip(PostgresStore.migrate.pipe(Effect.provide(PostgresStore.layerClient({ url: cluster.url("latin") }))))
      if (latin._tag !== "MigrationError") return assert.fail(`expected a MigrationError, got ${latin._tag}`)
      assert.strictEqual(latin.reason, "failed")
      assert.include(PostgresStore.storeUnavailable("", latin).detail, "citegate needs a UTF8 database; this one is SQL_ASCII")
      const noServer = yield* Effect.flip(
        build(CaptureStore.CaptureStore, PostgresStore.layerUrl({ url: `postgres://postgres:secret-pw@127.0.0.1:1/x`, run }))
      )
      assert.instanceOf(noServer, StoreUnavailable)
      assert.notInclude(noServer.message, "secret-pw")
    }))

  it.scopedLive("too-large: a record over maxRecordBytes is refused before it is fetched", () =>
    Effect.gen(function*() {
      const run = newRun()
      const writer = yield* storeAs("postgres", { run, create: true })
      const big = makeCaptureRecord({ ...inventoryRecord, text: "x".repeat(10_000) })
      yield* writer.write(big)
      const reader = yield* storeAs("auditor", { run, maxRecordBytes: 5_000 })
      const error = yield* Effect.flip(reader.read(INVENTORY))
      assert.instanceOf(error, CorruptCapture)
      assert.strictEqual(error.reason, "too-large")
      assert.deepStrictEqual(yield* (yield* storeAs("auditor", { run })).read(INVENTORY), big)
    }))
})
