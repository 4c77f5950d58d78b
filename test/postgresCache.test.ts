/**
 * The PostgreSQL store under the verified-capture cache (verify/CaptureCache.ts), on a throwaway
 * cluster: its identity names the database and run (shared by two store values over them, never by
 * another run or database); a verification with a cache stamps all its captures in one query and
 * reads nothing the second time; a row a superuser replaces (the append-only trigger disabled), even
 * with the same bytes, and a v2 body row replaced, are read and checked again on the next
 * verification; concurrent verifications on a cold cache read each capture once.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { assert, describe, it } from "@effect/vitest"
import { Context, Effect, Either, Layer, Option, type Scope } from "effect"
import { afterAll, beforeAll } from "vitest"
import { captureFormatV2, type CaptureRecordV2, sha256Of } from "../src/Domain.js"
import * as PostgresStore from "../src/store/Postgres.js"
import * as CaptureCache from "../src/verify/CaptureCache.js"
import * as Verifier from "../src/verify/Verifier.js"
import { accessedAt, citationOf, counting, fixtureSources, verifierFor } from "./support/captureCacheFixture.js"
import { type Cluster, createDatabase, skipPostgres, startCluster } from "./support/postgresCluster.js"

let cluster: Cluster
let database = ""
let other = ""
let runs = 0
const newRun = () => `cache-${++runs}`

beforeAll(async () => {
  if (skipPostgres) return
  cluster = await startCluster()
  database = createDatabase(cluster, "pgcache")
  other = createDatabase(cluster, "pgcache")
  for (const name of [database, other]) {
    await Effect.runPromise(PostgresStore.migrate.pipe(Effect.provide(PostgresStore.layerClient({ url: cluster.url(name) }))))
  }
  cluster.psql(database, `CREATE ROLE auditor LOGIN IN ROLE ${PostgresStore.verifierRole};`)
}, 120_000)

afterAll(() => cluster?.stop())

const { recordOf, sourceOf } = fixtureSources("cache.example.com", "pg-")

const build = <A, I>(tag: Context.Tag<I, A>, layer: Layer.Layer<I, unknown>): Effect.Effect<A, unknown, Scope.Scope> =>
  Effect.map(Layer.build(layer), (context) => Context.get(context, tag))

const clientAs = (name: string, user = "postgres") => PostgresStore.layerClient({ url: cluster.url(name, user), maxConnections: 4 })

/** A store on `run` over its own client (one client per test, as the service has one). */
const storeOn = (run: string, options: { readonly create?: boolean; readonly name?: string; readonly user?: string } = {}) =>
  Effect.gen(function*() {
    const sql = yield* build(SqlClient.SqlClient, clientAs(options.name ?? database, options.user))
    const open = (create: boolean) =>
      PostgresStore.make({ run, create }).pipe(Effect.provideService(SqlClient.SqlClient, sql))
    return { store: yield* open(options.create ?? false), open: open(false) }
  })

const firstFailure = (checked: { readonly results: ReadonlyArray<Either.Either<unknown, ReadonlyArray<{ _tag: string }>>> }) =>
  Either.getLeft(checked.results[0]!).pipe(Option.map((failures) => failures[0]!), Option.getOrUndefined)

/** Replaces the row as a superuser would: the append-only trigger disabled for one UPDATE. */
const rewrite = (run: string, source: string, set: string, table = "citegate_captures", where = `run = '${run}' AND source = '${source}'`) =>
  cluster.psql(
    database,
    `BEGIN;
     ALTER TABLE ${table} DISABLE TRIGGER ${table}_append_only;
     UPDATE ${table} SET ${set} WHERE ${where};
     ALTER TABLE ${table} ENABLE TRIGGER ${table}_append_only;
     COMMIT;`
  )

describe.skipIf(skipPostgres)("PostgreSQL store: identity and stamps for the verified-capture cache", () => {
  it.scopedLive("an identity per database and run, shared by two store values over them", () =>
    Effect.gen(function*() {
      const run = newRun()
      const { open, store } = yield* storeOn(run, { create: true })
      const again = yield* open
      assert.isString(store.identity)
      assert.match(store.identity!, /^postgres:\d+:\d+:/)
      assert.strictEqual(again.identity, store.identity)
      // Another client (and another login) over the same database and run: the same data, the same identity.
      const auditor = yield* storeOn(run, { user: "auditor" })
      assert.strictEqual(auditor.store.identity, store.identity)
      const otherRun = yield* storeOn(newRun(), { create: true })
      assert.notStrictEqual(otherRun.store.identity, store.identity)
      // The same run name in another database of the cluster.
      const elsewhere = yield* storeOn(run, { create: true, name: other })
      assert.notStrictEqual(elsewhere.store.identity, store.identity)
    }))

  it.scopedLive("cached: one stamp query per verification and no read the second time; a row replaced is read again", () =>
    Effect.gen(function*() {
      const run = newRun()
      const records = [recordOf(1), recordOf(2)]
      const { store: pg } = yield* storeOn(run, { create: true })
      for (const record of records) yield* pg.write(record)
      const { reads, stamps, store } = counting(pg)
      const cache = CaptureCache.make({ maxBytes: 1 << 20 })
      const verifier = yield* verifierFor(store, records.map((r) => r.source), cache)
      const citations = records.map((r) => citationOf(r))
      const verify = () => verifier.checkCitations(citations)
      for (let round = 0; round < 3; round++) {
        const checked = yield* verify()
        assert.isTrue(checked.results.every(Either.isRight), JSON.stringify(checked.results))
      }
      assert.deepStrictEqual(reads, records.map((r) => r.source), "a cached capture was read again")
      assert.strictEqual(stamps(), 3, "one bulk stamp per verification")

      // The same bytes written over the row (a new row version): read and checked again, then kept again.
      rewrite(run, sourceOf(1), "record = record")
      assert.isTrue((yield* verify()).results.every(Either.isRight))
      assert.deepStrictEqual(reads.slice(2), [sourceOf(1)])
      yield* verify()
      assert.strictEqual(reads.length, 3)

      // Another text with every digest in the row recomputed: the Verifier's own rehash refuses it.
      const altered = "convert_to(replace(convert_from(record, 'UTF8'), 'rose', 'fell'), 'UTF8')"
      rewrite(run, sourceOf(2), `record = ${altered}, record_sha256 = encode(sha256(${altered}), 'hex')`)
      const after = yield* verify()
      assert.deepStrictEqual(reads.slice(3), [sourceOf(2)])
      assert.isTrue(Either.isRight(after.results[0]!))
      const failure = firstFailure({ results: [after.results[1]!] as never })
      assert.strictEqual(failure?._tag, "DigestMismatch")
      assert.strictEqual((failure as { kind?: string } | undefined)?.kind, "stored")
      // Never kept: the next verification reads it again and fails again.
      yield* verify()
      assert.deepStrictEqual(reads.slice(4), [sourceOf(2)])
    }))

  it.scopedLive("a v2 capture's body row replaced after caching is read and checked again (body-mismatch)", () =>
    Effect.gen(function*() {
      const run = newRun()
      const html = Buffer.from("<p>Net sales for Q3 2026 were 4,210 units across the region.</p>")
      const text = "Net sales for Q3 2026 were 4,210 units across the region."
      const record: CaptureRecordV2 = {
        format: captureFormatV2,
        source: sourceOf(3),
        sha256: sha256Of(text),
        accessedAt,
        extraction: "html/1",
        body: { sha256: sha256Of(html), byteLength: html.byteLength, contentType: "text/html" },
        text
      }
      const { store: pg } = yield* storeOn(run, { create: true })
      yield* pg.write(record, html)
      const { reads, store } = counting(pg)
      const cache = CaptureCache.make({ maxBytes: 1 << 20 })
      const verifier = yield* verifierFor(store, [record.source], cache)
      const citation = { source: record.source, captureSha256: record.sha256, snippet: "4,210 units" } as Verifier.CitationInput
      assert.isTrue((yield* verifier.checkCitations([citation])).results.every(Either.isRight))
      assert.isTrue((yield* verifier.checkCitations([citation])).results.every(Either.isRight))
      assert.strictEqual(reads.length, 1)
      rewrite(run, "", "bytes = convert_to('<p>Net sales for Q3 2026 were 9,210 units across the region.</p>', 'UTF8')", "citegate_bodies", `sha256 = '${record.body.sha256}'`)
      const after = yield* verifier.checkCitations([citation])
      assert.strictEqual(reads.length, 2)
      const failure = firstFailure(after as never) as { _tag: string; reason?: string } | undefined
      assert.strictEqual(failure?._tag, "CorruptCapture")
      assert.strictEqual(failure?.reason, "body-mismatch")
    }))

  it.scopedLive("concurrent verifications on a cold cache read each capture once", () =>
    Effect.gen(function*() {
      const run = newRun()
      const records = [recordOf(4), recordOf(5), recordOf(6)]
      const { store: pg } = yield* storeOn(run, { create: true })
      for (const record of records) yield* pg.write(record)
      const { reads, store } = counting(pg)
      const cache = CaptureCache.make({ maxBytes: 1 << 20 })
      const verifier = yield* verifierFor(store, records.map((r) => r.source), cache)
      const checked = yield* Effect.all(
        Array.from({ length: 8 }, () => verifier.checkCitations(records.map((r) => citationOf(r)))),
        { concurrency: "unbounded" }
      )
      for (const one of checked) assert.isTrue(one.results.every(Either.isRight))
      assert.deepStrictEqual([...reads].sort(), records.map((r) => r.source).sort(), `reads: ${reads.join(", ")}`)
      const stats = yield* cache.stats
      assert.strictEqual(stats.misses, 3)
      assert.strictEqual(stats.merged + stats.hits, 7 * 3)
      assert.isAbove(stats.merged, 0)
    }))
})
