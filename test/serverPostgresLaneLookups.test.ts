/**
 * The verify lane over PostgreSQL (`serve --store`): a report for a run that is not there is looked
 * up once, not once by the lane and again by the general path it hands the request to. Counted in
 * statements (pg_stat_statements); the answer is the route's 404 `RunNotFound`.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { afterAll, beforeAll } from "vitest"
import * as VerifyLane from "../src/server/VerifyLane.js"
import * as PostgresStore from "../src/store/Postgres.js"
import { call, startService, tokens } from "./serverSupport.js"
import { cited, SALES, salesRecord } from "./support.js"
import { type Cluster, createDatabase, skipPostgres, startCluster } from "./support/postgresCluster.js"

let cluster: Cluster
let database = ""
let url = ""

beforeAll(async () => {
  if (skipPostgres) return
  cluster = await startCluster({ settings: ["shared_preload_libraries=pg_stat_statements"] })
  database = createDatabase(cluster, "pglane")
  url = cluster.url(database)
  await Effect.runPromise(PostgresStore.migrate.pipe(Effect.provide(PostgresStore.layerClient({ url }))))
  cluster.psql(database, "CREATE EXTENSION pg_stat_statements")
}, 120_000)

afterAll(() => cluster?.stop())

/** Statements on the evidence tables since the last reset; not the job queue's polling. */
const evidenceStatements = () =>
  Number(cluster.psql(
    database,
    `SELECT coalesce(sum(calls), 0) FROM pg_stat_statements
     WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database())
       AND query ~ 'citegate_(runs|captures|bodies|reviews|attestations)'`
  ).trim())

const reportText = JSON.stringify({ facts: [cited("q3_net_sales", salesRecord, "Net sales for Q3 2026 were 4,210 units")] })

describe.skipIf(skipPostgres)("the verify lane over PostgreSQL", () => {
  it.scopedLive("looks an unknown run up once: the general path it hands the request to uses its look-up", () =>
    Effect.gen(function*() {
      const service = yield* startService({ sources: [SALES], store: url })
      const verify = (run: string) =>
        call(service, `/v1/verify/report?run=${run}`, { token: tokens.admin, body: reportText, headers: { "content-type": "application/json" } })
      // Warm: the first request of a service prepares what it keeps.
      assert.strictEqual((yield* verify("absent-warm")).status, 404)
      const handedOver = VerifyLane.counts.handedOver
      cluster.psql(database, "SELECT pg_stat_statements_reset()")
      for (let i = 0; i < 5; i++) {
        const answer = yield* verify(`absent-${i}`)
        assert.strictEqual(answer.status, 404, answer.text)
        assert.deepStrictEqual(answer.json, { _tag: "RunNotFound", runId: `absent-${i}` })
      }
      // The lane took each and handed it over (the answer is the general path's).
      assert.strictEqual(VerifyLane.counts.handedOver - handedOver, 5)
      assert.strictEqual(evidenceStatements(), 5)
    }))
})
