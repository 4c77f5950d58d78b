/**
 * The PostgreSQL store and its migration, pinned to exact values on a real server: every typed
 * error with its fields, the bytes stored in each column, the privileges and constraints the
 * migration leaves, the client's connection. Nothing here spawns a process but psql-free SQL: the
 * tampering a superuser could do is done through a superuser client.
 *
 * The server: the one a mutation run shares (test/support/postgresMutationSetup.ts), else a
 * throwaway cluster of this file's own. Each file run makes fresh databases and migrates them, and
 * drops the group roles first, so the migration creates them (and, in a second database, finds them).
 */
import * as Migrator from "@effect/sql/Migrator"
import * as SqlClient from "@effect/sql/SqlClient"
import { SqlError } from "@effect/sql/SqlError"
import { assert, describe, it } from "@effect/vitest"
import { Context, Effect, Layer, Redacted, type Scope } from "effect"
import { createHash } from "node:crypto"
import { afterAll, beforeAll, inject } from "vitest"
import * as CaptureStore from "../src/store/CaptureStore.js"
import { type CaptureRecord, captureFormatV2, type CaptureRecordV2, type Sha256Hex, sha256Of, type SourceUrl } from "../src/Domain.js"
import { CaptureExists, CaptureWriteFailed, CorruptCapture, MissingCapture, type RunExists, type StorePackageMissing, StoreUnavailable } from "../src/Errors.js"
import * as PostgresStore from "../src/store/Postgres.js"
import { failureOf, spanNames } from "./mutants.support.js"
import { type Cluster, skipPostgres, startCluster } from "./support/postgresCluster.js"
import { accessedAt, INVENTORY, inventoryRecord, SALES, salesRecord } from "./support.js"

const hex = (bytes: Uint8Array | string) => createHash("sha256").update(bytes).digest("hex")

let own: Cluster | undefined
let port = 0
const prefix = `citegate_mut_${process.pid}`
const main = `${prefix}_main`
const second = `${prefix}_second`
const latin = `${prefix}_latin`
const url = (database: string, user = "postgres") => `postgres://${user}@127.0.0.1:${port}/${database}`

const clientAs = (user: string, database = main) =>
  PostgresStore.layerClient({ url: url(database, user), maxConnections: 2 })

/** Runs `use` with a superuser client on `database`, outside any test (setup and teardown). */
const asSuperuser = <A>(database: string, use: (sql: SqlClient.SqlClient) => Effect.Effect<A, unknown>) =>
  Effect.runPromise(
    Effect.flatMap(SqlClient.SqlClient, use).pipe(
      Effect.provide(PostgresStore.layerClient({ url: url(database), maxConnections: 1 }))
    )
  )

const migrateOn = (database: string) =>
  Effect.runPromise(Effect.either(PostgresStore.migrate.pipe(Effect.provide(clientAs("postgres", database)))))

let firstMigration: unknown
let secondMigration: unknown
let otherDatabase: unknown
let latinMigration: unknown

/**
 * A failure while setting up (a migration statement broken by a mutant, say) is kept and thrown by
 * every test: a failing hook would leave the tests without a result, which a mutation run does not
 * count as a failure.
 */
let setupError: unknown
const ready = Effect.suspend(() => (setupError === undefined ? Effect.void : Effect.die(setupError)))

beforeAll(async () => {
  if (skipPostgres) return
  try {
    await setup()
  } catch (error) {
    setupError = error
  }
}, 120_000)

const setup = async () => {
  const shared = inject("citegatePostgresPort") ?? 0
  if (shared > 0) {
    port = shared
  } else {
    own = await startCluster()
    port = own.port
  }
  await asSuperuser("postgres", (sql) =>
    Effect.gen(function*() {
      // A mutant that hung may have left databases of an earlier file run: they would hold the roles.
      const stale = yield* sql<{ datname: string }>`SELECT datname FROM pg_database WHERE datname LIKE 'citegate_mut_%'`
      for (const { datname } of stale) yield* sql.unsafe(`DROP DATABASE "${datname}" WITH (FORCE)`)
      for (const role of ["mut_worker", "mut_auditor", "mut_outsider", PostgresStore.captureRole, PostgresStore.verifierRole]) {
        yield* sql.unsafe(`DROP ROLE IF EXISTS ${role}`)
      }
      yield* sql.unsafe(`CREATE DATABASE ${main}`)
      yield* sql.unsafe(`CREATE DATABASE ${second}`)
      yield* sql.unsafe(`CREATE DATABASE ${latin} ENCODING 'SQL_ASCII' TEMPLATE template0`)
    }))
  firstMigration = await migrateOn(main)
  secondMigration = await migrateOn(main)
  // The group roles exist now (they belong to the cluster): the migration of another database keeps them.
  otherDatabase = await migrateOn(second)
  latinMigration = await migrateOn(latin)
  await asSuperuser(main, (sql) =>
    Effect.gen(function*() {
      yield* sql.unsafe(`CREATE ROLE mut_worker LOGIN IN ROLE ${PostgresStore.captureRole}`)
      yield* sql.unsafe(`CREATE ROLE mut_auditor LOGIN IN ROLE ${PostgresStore.verifierRole}`)
      yield* sql.unsafe(`CREATE ROLE mut_outsider LOGIN`)
    }))
}

afterAll(async () => {
  if (skipPostgres || port === 0) return
  await asSuperuser("postgres", (sql) =>
    Effect.forEach([main, second, latin], (name) => sql.unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)))
  own?.stop()
}, 60_000)

const build = <A, I>(tag: Context.Tag<I, A>, layer: Layer.Layer<I, unknown>): Effect.Effect<A, unknown, Scope.Scope> =>
  Effect.map(Layer.build(layer), (context) => Context.get(context, tag))

const storeAs = (user: string, options: PostgresStore.PostgresOptions, database = main) =>
  build(CaptureStore.CaptureStore, PostgresStore.layer(options).pipe(Layer.provide(clientAs(user, database))))

const openFailure = (user: string, options: PostgresStore.PostgresOptions, database = main) =>
  failureOf(Layer.build(PostgresStore.layer(options).pipe(Layer.provide(clientAs(user, database)))))

const sqlAs = (user: string, database = main) => build(SqlClient.SqlClient, clientAs(user, database))

/** What a superuser can do behind the store's back: statements with every trigger (and foreign key) off. */
const behindTheBack = (...statements: ReadonlyArray<string>) =>
  Effect.flatMap(sqlAs("postgres"), (sql) =>
    sql.withTransaction(
      Effect.forEach(["SET LOCAL session_replication_role = replica", ...statements], (s) => sql.unsafe(s), { discard: true })
    ))

/** The SQLSTATE and driver message of a statement that must fail. */
const refused = <A, R>(effect: Effect.Effect<A, SqlError, R>) =>
  Effect.map(failureOf(effect), (error) => {
    const cause = error.cause as { code?: string; message?: string }
    return [cause.code, cause.message]
  })

let runs = 0
const newRun = () => `mut-${++runs}`

const htmlBody = Buffer.from("<html><body><p>Net sales for Q3 2026 were 4,210 units.</p></body></html>")
const v2Text = "Net sales for Q3 2026 were 4,210 units."
const v2Record: CaptureRecordV2 = {
  format: captureFormatV2,
  source: "https://reports.northwind.test/q3-page.html" as SourceUrl,
  sha256: sha256Of(v2Text),
  accessedAt,
  extraction: "html/1",
  body: { sha256: sha256Of(htmlBody), byteLength: htmlBody.byteLength, contentType: "text/html" },
  text: v2Text
}

/** An error's own fields, `_tag` included, as a plain object. */
const plain = (error: object): Record<string, unknown> => ({ ...error })

const quote = (s: string) => `'${s.replaceAll("'", "''")}'`

describe.skipIf(skipPostgres)("PostgresMigrations: the schema", () => {
  it.scopedLive("migrate runs migrations 1 to 5 once, records them, and a second database on the cluster migrates too", () =>
    Effect.gen(function*() {
      yield* ready
      assert.deepStrictEqual(JSON.parse(JSON.stringify(firstMigration)), { _id: "Either", _tag: "Right", right: [[1, "citegate_store"], [2, "citegate_reviews"], [3, "citegate_replicas"], [4, "citegate_service_reviews"], [5, "citegate_attestations"]] })
      assert.deepStrictEqual(JSON.parse(JSON.stringify(secondMigration)), { _id: "Either", _tag: "Right", right: [] })
      assert.deepStrictEqual(JSON.parse(JSON.stringify(otherDatabase)), { _id: "Either", _tag: "Right", right: [[1, "citegate_store"], [2, "citegate_reviews"], [3, "citegate_replicas"], [4, "citegate_service_reviews"], [5, "citegate_attestations"]] })
      assert.strictEqual(PostgresStore.migrationsTable, "citegate_migrations")
      const sql = yield* sqlAs("postgres")
      const recorded = yield* sql<{ migration_id: number; name: string }>`SELECT migration_id, name FROM citegate_migrations`
      assert.deepStrictEqual(recorded.map((r) => [r.migration_id, r.name]), [[1, "citegate_store"], [2, "citegate_reviews"], [3, "citegate_replicas"], [4, "citegate_service_reviews"], [5, "citegate_attestations"]])
      const roles = yield* sql<{ rolname: string; rolcanlogin: boolean }>`
        SELECT rolname, rolcanlogin FROM pg_roles WHERE rolname LIKE 'citegate%' ORDER BY rolname`
      assert.deepStrictEqual(roles.map((r) => [r.rolname, r.rolcanlogin]), [["citegate_capture", false], ["citegate_reviewer", false], ["citegate_service", false], ["citegate_verifier", false]])
      assert.strictEqual(PostgresStore.captureRole, "citegate_capture")
      assert.strictEqual(PostgresStore.verifierRole, "citegate_verifier")
    }))

  it.scopedLive("a database that is not UTF8 is refused: MigrationError (failed), and no table is left", () =>
    Effect.gen(function*() {
      yield* ready
      const result = latinMigration as { _tag: string; left: Migrator.MigrationError }
      assert.strictEqual(result._tag, "Left")
      assert.instanceOf(result.left, Migrator.MigrationError)
      assert.strictEqual(result.left.reason, "failed")
      assert.strictEqual(
        PostgresStore.storeUnavailable("", result.left).detail,
        `Migration "1_citegate_store" failed: citegate needs a UTF8 database; this one is SQL_ASCII`
      )
      const unmigrated = yield* openFailure("postgres", { run: "r" }, latin)
      assert.deepStrictEqual(
        plain(unmigrated),
        {
          _tag: "StoreUnavailable",
          run: "r",
          detail: "the database has no citegate tables: run the migration first (run-pipeline store-init, or PostgresStore.migrate)"
        }
      )
      assert.instanceOf(unmigrated, StoreUnavailable)
    }))

  it.scopedLive("privileges: the capture role inserts (and sees run names and body digests), the verifier only reads", () =>
    Effect.gen(function*() {
      yield* ready
      const sql = yield* sqlAs("postgres")
      const matrix = yield* sql<{ role: string; tbl: string; privilege: string; granted: boolean }>`
        SELECT r AS role, t AS tbl, p AS privilege, has_table_privilege(r, t, p) AS granted
        FROM unnest(ARRAY['citegate_capture', 'citegate_verifier', 'public']) AS r,
             unnest(ARRAY['citegate_runs', 'citegate_bodies', 'citegate_captures']) AS t,
             unnest(ARRAY['SELECT', 'INSERT', 'UPDATE', 'DELETE', 'TRUNCATE', 'REFERENCES', 'TRIGGER']) AS p
        WHERE has_table_privilege(r, t, p)
        ORDER BY 1, 2, 3`
      assert.deepStrictEqual(matrix.map((m) => `${m.role} ${m.tbl} ${m.privilege}`), [
        "citegate_capture citegate_bodies INSERT",
        "citegate_capture citegate_captures INSERT",
        "citegate_capture citegate_runs INSERT",
        "citegate_capture citegate_runs SELECT",
        "citegate_verifier citegate_bodies SELECT",
        "citegate_verifier citegate_captures SELECT",
        "citegate_verifier citegate_runs SELECT"
      ])
      const columns = yield* sql<{ name: string; granted: boolean }>`
        SELECT c AS name, has_column_privilege('citegate_capture', 'citegate_bodies', c, 'SELECT') AS granted
        FROM unnest(ARRAY['sha256', 'bytes', 'created_at']) AS c`
      assert.deepStrictEqual(columns.map((c) => [c.name, c.granted]), [["sha256", true], ["bytes", false], ["created_at", false]])
    }))

  it.scopedLive("append-only: UPDATE, DELETE and TRUNCATE of each table are refused, for the owner too, with the trigger's message", () =>
    Effect.gen(function*() {
      yield* ready
      const run = newRun()
      const store = yield* storeAs("postgres", { run, create: true })
      yield* store.write(v2Record, htmlBody)
      const sql = yield* sqlAs("postgres")
      for (const table of ["citegate_runs", "citegate_bodies", "citegate_captures"]) {
        assert.deepStrictEqual(yield* refused(sql.unsafe(`UPDATE ${table} SET created_at = now()`)), [
          "42501",
          `citegate: UPDATE on ${table} refused: captures are append-only`
        ])
        assert.deepStrictEqual(yield* refused(sql.unsafe(`DELETE FROM ${table}`)), [
          "42501",
          `citegate: DELETE on ${table} refused: captures are append-only`
        ])
        assert.deepStrictEqual(yield* refused(sql.unsafe(`TRUNCATE ${table} CASCADE`)), [
          "42501",
          `citegate: TRUNCATE on ${table} refused: captures are append-only`
        ])
      }
      assert.deepStrictEqual(yield* store.read(v2Record.source), v2Record)
    }))

  it.scopedLive("constraints: digests are 64 lowercase hex digits, a run name 1 to 200 characters, a capture's run and body exist", () =>
    Effect.gen(function*() {
      yield* ready
      const sql = yield* sqlAs("postgres")
      const good = hex("x")
      const upper = good.toUpperCase()
      const run = newRun()
      yield* sql.unsafe(`INSERT INTO citegate_runs (run) VALUES ('${run}')`)
      const checks: ReadonlyArray<readonly [string, string]> = [
        [`INSERT INTO citegate_bodies (sha256, bytes) VALUES ('${upper}', '\\x00')`, "citegate_bodies_sha256_check"],
        [
          `INSERT INTO citegate_captures (run, source, record, record_sha256, sha256) VALUES ('${run}', 's', '\\x00', '${good}x', '${good}')`,
          "citegate_captures_record_sha256_check"
        ],
        [
          `INSERT INTO citegate_captures (run, source, record, record_sha256, sha256) VALUES ('${run}', 's', '\\x00', '${good}', 'abc')`,
          "citegate_captures_sha256_check"
        ],
        [`INSERT INTO citegate_runs (run) VALUES ('')`, "citegate_runs_run_check"],
        [`INSERT INTO citegate_runs (run) VALUES ('${"r".repeat(201)}')`, "citegate_runs_run_check"]
      ]
      for (const [statement, constraint] of checks) {
        const [code, message] = yield* refused(sql.unsafe(statement))
        assert.strictEqual(code, "23514", statement)
        assert.include(message, constraint)
      }
      yield* sql.unsafe(`INSERT INTO citegate_runs (run) VALUES ('${"r".repeat(200)}')`)
      const [fk] = yield* refused(sql.unsafe(
        `INSERT INTO citegate_captures (run, source, record, record_sha256, sha256, body_sha256) VALUES ('${run}', 's', '\\x00', '${good}', '${good}', '${good}')`
      ))
      assert.strictEqual(fk, "23503")
    }))
})

describe.skipIf(skipPostgres)("PostgresStore: opening", () => {
  it.scopedLive("StoreUnavailable with the exact detail: missing run, bad names, no right; RunExists for a run created twice", () =>
    Effect.scoped(Effect.gen(function*() {
      yield* ready
      const run = newRun()
      const fields = (e: StoreUnavailable | RunExists | StorePackageMissing) =>
        e._tag === "StorePackageMissing" ? [e._tag, e.missing] : [e._tag, e.run, e._tag === "StoreUnavailable" ? e.detail : e.message]
      assert.deepStrictEqual(fields(yield* openFailure("postgres", { run })), ["StoreUnavailable", run, "no such run in this database"])
      yield* storeAs("postgres", { run, create: true })
      assert.deepStrictEqual(fields(yield* openFailure("postgres", { run, create: true })), [
        "RunExists",
        run,
        `Run ${JSON.stringify(run)} already exists in the capture store; captures go into a new run so evidence is never mixed`
      ])
      yield* storeAs("postgres", { run, create: false })
      for (
        const [name, detail] of [
          ["", "a run name has 1 to 200 characters"],
          ["r".repeat(201), "a run name has 1 to 200 characters"],
          ["a\ud800b", "a run name must be well-formed Unicode"],
          ["a\u0000b", "a run name has no control characters"],
          ["a\u001fb", "a run name has no control characters"],
          ["a\nb", "a run name has no control characters"],
          ["a\u007fb", "a run name has no control characters"]
        ] as const
      ) {
        assert.deepStrictEqual(fields(yield* openFailure("postgres", { run: name, create: true })), ["StoreUnavailable", name, detail])
      }
      // The bounds and the neighbours of the control characters are fine.
      for (const name of ["s".repeat(200), "x", "a b~\u0080é😀"]) {
        yield* storeAs("postgres", { run: name, create: true })
        yield* storeAs("mut_auditor", { run: name })
      }
      assert.deepStrictEqual(fields(yield* openFailure("mut_auditor", { run: newRun(), create: true })), [
        "StoreUnavailable",
        `mut-${runs}`,
        "permission denied: permission denied for table citegate_runs"
      ])
      assert.deepStrictEqual(fields(yield* openFailure("mut_outsider", { run })), [
        "StoreUnavailable",
        run,
        "permission denied: permission denied for table citegate_runs"
      ])
    })))

  it.scopedLive("the client: named citegate on the server, a Redacted URL, and a connection failure without credentials", () =>
    Effect.scoped(Effect.gen(function*() {
      yield* ready
      const sql = yield* build(SqlClient.SqlClient, PostgresStore.layerClient({ url: Redacted.make(url(main)) }))
      const [me] = yield* sql<{ application_name: string; usename: string }>`
        SELECT application_name, usename FROM pg_stat_activity WHERE pid = pg_backend_pid()`
      assert.deepStrictEqual(plain(me!), { application_name: "citegate", usename: "postgres" })
      const fields = (e: StoreUnavailable | RunExists | StorePackageMissing) =>
        e._tag === "StorePackageMissing" ? [e._tag, e.missing] : [e._tag, e.run, e._tag === "StoreUnavailable" ? e.detail : e.message]
      const noServer = yield* failureOf(Layer.build(PostgresStore.layerClient({ url: "postgres://postgres:secret-pw@127.0.0.1:1/x", run: "r1" })))
      assert.instanceOf(noServer, StoreUnavailable)
      assert.deepStrictEqual([noServer.run, noServer.detail], ["r1", "connect ECONNREFUSED 127.0.0.1:1"])
      const anonymous = yield* failureOf(Layer.build(PostgresStore.layerClient({ url: "postgres://postgres:secret-pw@127.0.0.1:1/x" })))
      assert.deepStrictEqual(fields(anonymous), ["StoreUnavailable", "", "connect ECONNREFUSED 127.0.0.1:1"])
      const viaUrl = yield* failureOf(Layer.build(PostgresStore.layerUrl({ url: "postgres://postgres:secret-pw@127.0.0.1:1/x", run: "r2" })))
      assert.deepStrictEqual(fields(viaUrl), ["StoreUnavailable", "r2", "connect ECONNREFUSED 127.0.0.1:1"])
      assert.notInclude(viaUrl.message, "secret-pw")
      const store = yield* build(CaptureStore.CaptureStore, PostgresStore.layerUrl({ url: url(main), run: newRun(), create: true }))
      yield* store.write(salesRecord)
      assert.deepStrictEqual(yield* store.read(SALES), salesRecord)
    })))

  it.scopedLive("make opens the span PostgresStore.make", () =>
    Effect.scoped(Effect.gen(function*() {
      yield* ready
      const sql = yield* sqlAs("postgres")
      const names = yield* spanNames(PostgresStore.make({ run: newRun(), create: true }).pipe(Effect.provideService(SqlClient.SqlClient, sql)))
      assert.include(names, "PostgresStore.make")
    })))

  it.scopedLive("storeUnavailable: the SQLSTATEs it names, the driver's message otherwise, a migration's own message", () =>
    Effect.scoped(Effect.gen(function*() {
      yield* ready
      const sql = yield* sqlAs("postgres")
      const division = yield* failureOf(sql`SELECT 1 / 0`)
      assert.deepStrictEqual(plain(PostgresStore.storeUnavailable("r", division)), { _tag: "StoreUnavailable", run: "r", detail: "division by zero" })
      const bare = yield* sqlAs("postgres", latin)
      const missing = yield* failureOf(bare`SELECT run FROM citegate_runs`)
      assert.strictEqual(
        PostgresStore.storeUnavailable("", missing).detail,
        "the database has no citegate tables: run the migration first (run-pipeline store-init, or PostgresStore.migrate)"
      )
      const outsider = yield* sqlAs("mut_outsider")
      const denied = yield* failureOf(outsider`SELECT run FROM citegate_runs`)
      assert.strictEqual(PostgresStore.storeUnavailable("", denied).detail, "permission denied: permission denied for table citegate_runs")
      const locked = new Migrator.MigrationError({ reason: "locked", message: "Migrations already running" })
      assert.deepStrictEqual(plain(PostgresStore.storeUnavailable("r", locked)), { _tag: "StoreUnavailable", run: "r", detail: "Migrations already running" })
      const withCause = new Migrator.MigrationError({ reason: "failed", message: "Migration \"1_x\" failed", cause: division })
      assert.strictEqual(PostgresStore.storeUnavailable("", withCause).detail, "Migration \"1_x\" failed: division by zero")
      const otherCause = new Migrator.MigrationError({ reason: "failed", message: "m", cause: new Error("not sql") })
      assert.strictEqual(PostgresStore.storeUnavailable("", otherCause).detail, "m")
      const nullCause = new Migrator.MigrationError({ reason: "failed", message: "m", cause: null })
      assert.strictEqual(PostgresStore.storeUnavailable("", nullCause).detail, "m")
    })))
})

describe("PostgresStore: storeUnavailable on errors of any shape", () => {
  it("a driver error without a SQLSTATE, or not an Error, or with an empty message: the SqlError's own message", () => {
    const detail = (cause: unknown) => PostgresStore.storeUnavailable("r", new SqlError({ cause, message: "the client's message" })).detail
    assert.strictEqual(detail(Object.assign(new Error("relation is gone"), { code: "42P01" })), "the database has no citegate tables: run the migration first (run-pipeline store-init, or PostgresStore.migrate)")
    assert.strictEqual(detail(Object.assign(new Error("no"), { code: "42501" })), "permission denied: no")
    assert.strictEqual(detail(Object.assign(new Error("closed"), { code: 42501 })), "closed")
    assert.strictEqual(detail(new Error("terminated")), "terminated")
    assert.strictEqual(detail(new Error("")), "the client's message")
    assert.strictEqual(detail({ code: "42501", message: "a plain object" }), "permission denied: the client's message")
    assert.strictEqual(detail("42P01"), "the client's message")
    assert.strictEqual(detail(null), "the client's message")
    assert.strictEqual(detail(undefined), "the client's message")
  })

  it("a migration error: its message, with the driver's when its cause is a SqlError", () => {
    const detail = (cause: unknown) =>
      PostgresStore.storeUnavailable("", new Migrator.MigrationError({ reason: "failed", message: "Migration \"1_x\" failed", cause })).detail
    assert.strictEqual(detail(new SqlError({ cause: new Error("division by zero") })), "Migration \"1_x\" failed: division by zero")
    assert.strictEqual(detail(new Migrator.MigrationError({ reason: "locked", message: "inner" })), "Migration \"1_x\" failed")
    assert.strictEqual(detail({ _tag: "Other", message: "inner" }), "Migration \"1_x\" failed")
    assert.strictEqual(detail("SqlError"), "Migration \"1_x\" failed")
    assert.strictEqual(detail(null), "Migration \"1_x\" failed")
  })
})

describe.skipIf(skipPostgres)("PostgresStore: write", () => {
  it.scopedLive("the row holds the canonical bytes, their digest, the capture digest and the body's digest", () =>
    Effect.scoped(Effect.gen(function*() {
      yield* ready
      const run = newRun()
      const worker = yield* storeAs("mut_worker", { run, create: true })
      yield* worker.write(salesRecord, Buffer.from("ignored: a v1 record has no body"))
      // A body given as a view into a larger buffer: only its own bytes are stored.
      const larger = Buffer.concat([Buffer.from("xx"), htmlBody, Buffer.from("yy")])
      yield* worker.write(v2Record, larger.subarray(2, 2 + htmlBody.byteLength))
      yield* worker.write({ ...v2Record, source: "https://reports.northwind.test/twin.html" as SourceUrl }, htmlBody)
      const sql = yield* sqlAs("postgres")
      const rows = yield* sql<{ source: string; record: Uint8Array; record_sha256: string; sha256: string; body_sha256: string | null }>`
        SELECT source, record, record_sha256, sha256, body_sha256 FROM citegate_captures WHERE run = ${run} ORDER BY source`
      const expected = (record: CaptureRecord) => {
        const bytes = Buffer.from(CaptureStore.encodeRecord(record), "utf8")
        return {
          source: record.source,
          record: bytes.toString("utf8"),
          record_sha256: hex(bytes),
          sha256: record.sha256,
          body_sha256: record.format === captureFormatV2 ? record.body.sha256 : null
        }
      }
      assert.deepStrictEqual(
        rows.map((r) => ({ ...r, record: Buffer.from(r.record).toString("utf8") })),
        [
          expected(v2Record),
          expected(salesRecord),
          expected({ ...v2Record, source: "https://reports.northwind.test/twin.html" as SourceUrl })
        ]
      )
      const bodies = yield* sql<{ sha256: string; bytes: Uint8Array }>`SELECT sha256, bytes FROM citegate_bodies WHERE sha256 = ${v2Record.body.sha256}`
      assert.deepStrictEqual(bodies.map((b) => [b.sha256, Buffer.from(b.bytes).toString("utf8")]), [[hex(htmlBody), htmlBody.toString("utf8")]])
      const all = yield* sql<{ n: string }>`SELECT count(*) AS n FROM citegate_bodies WHERE sha256 = ${hex("ignored: a v1 record has no body")}`
      assert.strictEqual(Number(all[0]!.n), 0)
    })))

  it.scopedLive("refused writes: CaptureExists, a v2 record without its body, a broken record, a missing run, no right", () =>
    Effect.scoped(Effect.gen(function*() {
      yield* ready
      const run = newRun()
      const store = yield* storeAs("postgres", { run, create: true })
      yield* store.write(salesRecord)
      const again = yield* failureOf(store.write(salesRecord))
      assert.instanceOf(again, CaptureExists)
      assert.strictEqual(again.source, SALES)
      yield* store.write(v2Record, htmlBody)
      const twice = yield* failureOf(store.write(v2Record, htmlBody))
      assert.instanceOf(twice, CaptureExists)
      assert.strictEqual(twice.source, v2Record.source)
      const other = { ...v2Record, source: "https://reports.northwind.test/other.html" as SourceUrl }
      for (const body of [undefined, htmlBody.subarray(1), Buffer.concat([htmlBody, Buffer.from("!")])]) {
        const error = yield* failureOf(store.write(other, body))
        assert.instanceOf(error, CaptureWriteFailed)
        assert.deepStrictEqual([error.source, error.detail], [other.source, "a v2 record is written with the body it describes"])
      }
      assert.instanceOf(yield* failureOf(store.read(other.source)), MissingCapture)
      const broken = yield* failureOf(store.write({ ...inventoryRecord, text: undefined } as unknown as CaptureRecord))
      assert.instanceOf(broken, CaptureWriteFailed)
      assert.deepStrictEqual([broken.source, broken.detail], [INVENTORY, "TypeError: Cannot read properties of undefined (reading 'length')"])
      const auditor = yield* storeAs("mut_auditor", { run })
      const denied = yield* failureOf(auditor.write(inventoryRecord))
      assert.instanceOf(denied, CaptureWriteFailed)
      assert.deepStrictEqual([denied.source, denied.detail], [INVENTORY, "permission denied for table citegate_captures"])
      // The run removed behind the store's back after it was opened.
      const gone = newRun()
      const orphan = yield* storeAs("postgres", { run: gone, create: true })
      yield* behindTheBack(`DELETE FROM citegate_runs WHERE run = '${gone}'`)
      const missingRun = yield* failureOf(orphan.write(inventoryRecord))
      assert.instanceOf(missingRun, CaptureWriteFailed)
      assert.deepStrictEqual([missingRun.source, missingRun.detail], [INVENTORY, `the run "${gone}" does not exist`])
    })))
})

describe.skipIf(skipPostgres)("PostgresStore: read and readBody", () => {
  it.scopedLive("reads back what was written; limits are inclusive; the worker reads nothing", () =>
    Effect.scoped(Effect.gen(function*() {
      yield* ready
      const run = newRun()
      const worker = yield* storeAs("mut_worker", { run, create: true })
      yield* worker.write(salesRecord)
      yield* worker.write(v2Record, htmlBody)
      const recordSize = Buffer.byteLength(CaptureStore.encodeRecord(salesRecord), "utf8")
      const exact = yield* storeAs("mut_auditor", { run, maxRecordBytes: recordSize, maxBodyBytes: htmlBody.byteLength })
      assert.deepStrictEqual(yield* exact.read(SALES), salesRecord)
      assert.deepStrictEqual(yield* exact.read(v2Record.source), v2Record)
      assert.deepStrictEqual(Buffer.from(yield* exact.readBody(v2Record.body.sha256)), htmlBody)
      const small = yield* storeAs("mut_auditor", { run, maxRecordBytes: recordSize - 1, maxBodyBytes: htmlBody.byteLength - 1 })
      const record = yield* failureOf(small.read(SALES))
      assert.instanceOf(record, CorruptCapture)
      assert.deepStrictEqual(plain(record), {
        _tag: "CorruptCapture",
        source: SALES,
        reason: "too-large",
        detail: `the record is ${recordSize} bytes, over the limit of ${recordSize - 1}`
      })
      const body = yield* failureOf(small.read(v2Record.source))
      assert.deepStrictEqual(plain(body), {
        _tag: "CorruptCapture",
        source: v2Record.source,
        reason: "too-large",
        detail: `the body is ${htmlBody.byteLength} bytes, over the limit of ${htmlBody.byteLength - 1}`
      })
      const bodyOnly = yield* failureOf(small.readBody(v2Record.body.sha256))
      assert.deepStrictEqual(plain(bodyOnly), {
        _tag: "CorruptCapture",
        source: `body ${v2Record.body.sha256}`,
        reason: "too-large",
        detail: `the body is ${htmlBody.byteLength} bytes, over the limit of ${htmlBody.byteLength - 1}`
      })
      const unknown = hex("no such body") as Sha256Hex
      const missingBody = yield* failureOf(exact.readBody(unknown))
      assert.instanceOf(missingBody, MissingCapture)
      assert.strictEqual(missingBody.source, `body ${unknown}`)
      const missing = yield* failureOf(exact.read(INVENTORY))
      assert.instanceOf(missing, MissingCapture)
      assert.strictEqual(missing.source, INVENTORY)
      const workerRead = yield* failureOf(worker.read(SALES))
      assert.instanceOf(workerRead, CorruptCapture)
      assert.deepStrictEqual(plain(workerRead), {
        _tag: "CorruptCapture",
        source: SALES,
        reason: "unreadable",
        detail: "the database: permission denied for table citegate_captures"
      })
      const workerBody = yield* failureOf(worker.readBody(v2Record.body.sha256))
      assert.deepStrictEqual(plain(workerBody), {
        _tag: "CorruptCapture",
        source: `body ${v2Record.body.sha256}`,
        reason: "unreadable",
        detail: "the database: permission denied for table citegate_bodies"
      })
    })))

  it.scopedLive("rows changed behind the store's back: each is refused with its reason and exact detail", () =>
    Effect.scoped(Effect.gen(function*() {
      yield* ready
      const run = newRun()
      const writer = yield* storeAs("postgres", { run, create: true })
      const sources = {
        text: "https://t.test/text" as SourceUrl,
        digest: "https://t.test/digest" as SourceUrl,
        utf8: "https://t.test/utf8" as SourceUrl,
        body: "https://t.test/body" as SourceUrl,
        gone: "https://t.test/gone" as SourceUrl
      }
      const otherBody = Buffer.from("<p>another page</p>")
      const goneRecord: CaptureRecordV2 = {
        ...v2Record,
        source: sources.gone,
        body: { ...v2Record.body, sha256: hex(otherBody) as Sha256Hex, byteLength: otherBody.byteLength }
      }
      for (const source of [sources.text, sources.digest, sources.utf8]) yield* writer.write({ ...salesRecord, source })
      yield* writer.write({ ...v2Record, source: sources.body }, htmlBody)
      yield* writer.write(goneRecord, otherBody)
      const bytes = Buffer.from(CaptureStore.encodeRecord({ ...salesRecord, source: sources.text }), "utf8")
      const altered = Buffer.from(bytes.toString("utf8").replace("4,210", "9,210"), "utf8")
      const otherDigest = hex("another capture")
      const bad = Buffer.from([0x7b, 0x22, 0xff, 0x22])
      const alteredBody = Buffer.from(htmlBody.toString("utf8").replace("4,210", "9,210"), "utf8")
      yield* behindTheBack(
        `UPDATE citegate_captures SET record = '\\x${altered.toString("hex")}' WHERE run = '${run}' AND source = ${quote(sources.text)}`,
        `UPDATE citegate_captures SET sha256 = '${otherDigest}' WHERE run = '${run}' AND source = ${quote(sources.digest)}`,
        `UPDATE citegate_captures SET record = '\\x${bad.toString("hex")}', record_sha256 = '${hex(bad)}' WHERE run = '${run}' AND source = ${quote(sources.utf8)}`,
        `UPDATE citegate_bodies SET bytes = '\\x${alteredBody.toString("hex")}' WHERE sha256 = '${v2Record.body.sha256}'`,
        `DELETE FROM citegate_bodies WHERE sha256 = '${goneRecord.body.sha256}'`
      )
      const reader = yield* storeAs("mut_auditor", { run })
      const outcome = (source: SourceUrl) => Effect.map(failureOf(reader.read(source)), plain)
      assert.deepStrictEqual(yield* outcome(sources.text), {
        _tag: "CorruptCapture",
        source: sources.text,
        reason: "record-digest-mismatch",
        detail: `the record's bytes hash to ${hex(altered)}, the row says ${hex(bytes)}`
      })
      assert.deepStrictEqual(yield* outcome(sources.digest), {
        _tag: "CorruptCapture",
        source: sources.digest,
        reason: "record-digest-mismatch",
        detail: `the record names the capture digest ${salesRecord.sha256}, the row ${otherDigest}`
      })
      assert.deepStrictEqual(yield* outcome(sources.utf8), {
        _tag: "CorruptCapture",
        source: sources.utf8,
        reason: "invalid-utf8",
        detail: "the record is not valid UTF-8"
      })
      assert.deepStrictEqual(yield* outcome(sources.body), {
        _tag: "CorruptCapture",
        source: sources.body,
        reason: "body-mismatch",
        detail: `the stored body hashes to ${hex(alteredBody)}, the record says ${v2Record.body.sha256}`
      })
      assert.deepStrictEqual(yield* outcome(sources.gone), {
        _tag: "CorruptCapture",
        source: sources.gone,
        reason: "body-missing",
        detail: `no body ${goneRecord.body.sha256} is stored`
      })
      const body = yield* failureOf(reader.readBody(v2Record.body.sha256))
      assert.deepStrictEqual(plain(body), {
        _tag: "CorruptCapture",
        source: `body ${v2Record.body.sha256}`,
        reason: "body-mismatch",
        detail: `the stored body hashes to ${hex(alteredBody)}`
      })
      const goneBody = yield* failureOf(reader.readBody(goneRecord.body.sha256))
      assert.instanceOf(goneBody, MissingCapture)
      assert.strictEqual(goneBody.source, `body ${goneRecord.body.sha256}`)
    })))
})
