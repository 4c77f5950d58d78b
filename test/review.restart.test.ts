/**
 * Recorded human review through the service, in both stores: a decision posted to
 * `POST /v1/runs/{id}/reviews` survives a restart of the service (a new server over the same run root,
 * or the same PostgreSQL database with `serve --store`), shows beside provenance in
 * `POST /v1/verify/report`, and cannot be edited: the API has no route that changes a decision, and
 * in PostgreSQL the database refuses UPDATE and DELETE on `citegate_reviews` (the owner included).
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import * as fsp from "node:fs/promises"
import * as path from "node:path"
import { afterAll, beforeAll } from "vitest"
import * as PostgresStore from "../src/store/Postgres.js"
import { serviceRole } from "../src/store/PostgresMigrations.js"
import { call, report, type Service, sources, startService, tokens, waitForRun } from "./serverSupport.js"
import { type Cluster, createDatabase, skipPostgres, startCluster } from "./support/postgresCluster.js"

const json = { "content-type": "application/json" }

/** Starts a run on `service`, waits for its capture, records one decision about its sales fact. */
const reviewedRun = (service: Service, sales: string) =>
  Effect.gen(function*() {
    const started = yield* call(service, "/v1/runs", { method: "POST", token: tokens.admin })
    assert.strictEqual(started.status, 202, started.text)
    const runId = started.json.id as string
    yield* waitForRun(service, runId)
    const reportText = report(sales, ["Net sales for Q3 2026 were 4,210 units"])
    const recorded = yield* call(service, `/v1/runs/${runId}/reviews`, {
      token: tokens.admin,
      headers: json,
      body: JSON.stringify({ report: reportText, fact: 0, decision: "wrong-period", note: "the quarter is Q2 in the draft" })
    })
    assert.strictEqual(recorded.status, 201, recorded.text)
    return { runId, reportText, recorded: recorded.json }
  })

const listed = (service: Service, runId: string) =>
  Effect.map(call(service, `/v1/runs/${runId}/reviews`, { token: tokens.admin }), (response) => {
    assert.strictEqual(response.status, 200, response.text)
    return response.json.decisions as ReadonlyArray<any>
  })

/** After a restart: the log as it was, shown beside provenance, and no route edits or removes it. */
const checkAfterRestart = (service: Service, runId: string, reportText: string, before: ReadonlyArray<any>) =>
  Effect.gen(function*() {
    assert.deepStrictEqual(yield* listed(service, runId), before)
    const verified = yield* call(service, `/v1/verify/report?run=${runId}`, { token: tokens.admin, body: reportText, headers: json })
    assert.strictEqual(verified.status, 200, verified.text)
    assert.strictEqual(verified.json.humanReview.facts[0].current.record.decision, "wrong-period")
    assert.strictEqual(verified.json.humanReview.facts[0].current.record.id, before[0].record.id)
    for (const method of ["PUT", "PATCH", "DELETE"]) {
      const refused = yield* call(service, `/v1/runs/${runId}/reviews`, { method, token: tokens.admin, headers: json, body: "{}" })
      assert.include([404, 405], refused.status, `${method}: ${refused.text}`)
    }
    assert.deepStrictEqual(yield* listed(service, runId), before)
  })

describe("recorded review through the service survives a restart", () => {
  it.scopedLive("filesystem store: the run's reviews/ directory, read-only files", () =>
    Effect.gen(function*() {
      const { server } = yield* sources
      const sales = server.url("/q3-sales.txt")
      const first = yield* startService({ sources: [sales] })
      const { runId, reportText, recorded } = yield* reviewedRun(first, sales)
      const before = yield* listed(first, runId)
      assert.deepStrictEqual(before.map((d) => [d.seq, d.record.id, d.record.reviewer]), [[1, recorded.record.id, "admin"]])
      yield* first.close

      const second = yield* startService({ sources: [sales], work: first.work })
      yield* checkAfterRestart(second, runId, reportText, before)
      // On disk: one decision file, read-only.
      const file = path.join(first.runRoot, runId, "reviews", "000001.json")
      assert.strictEqual((yield* Effect.promise(() => fsp.stat(file))).mode & 0o777, 0o444)
    }))
})

let cluster: Cluster
let database = ""

beforeAll(async () => {
  if (skipPostgres) return
  cluster = await startCluster()
  database = createDatabase(cluster, "servicereviews")
  await Effect.runPromise(PostgresStore.migrate.pipe(Effect.provide(PostgresStore.layerClient({ url: cluster.url(database) }))))
  // The service logs in as a member of the service role only, as docs/deployment.md sets it up.
  cluster.psql(database, `CREATE ROLE replica LOGIN IN ROLE ${serviceRole}`)
}, 120_000)

afterAll(() => cluster?.stop())

describe.skipIf(skipPostgres)("recorded review through serve --store (PostgreSQL)", () => {
  it.scopedLive("decisions are rows of citegate_reviews: kept across a restart, never updated or deleted", () =>
    Effect.gen(function*() {
      const { server } = yield* sources
      const sales = server.url("/q3-sales.txt")
      const store = cluster.url(database, "replica")
      const first = yield* startService({ sources: [sales], store })
      const { runId, reportText, recorded } = yield* reviewedRun(first, sales)
      const before = yield* listed(first, runId)
      assert.deepStrictEqual(before.map((d) => [d.record.id, d.record.run, d.record.reviewer]), [[recorded.record.id, runId, "admin"]])
      // In the database, not in the run root.
      assert.strictEqual(cluster.psql(database, `SELECT count(*) FROM citegate_reviews WHERE run = '${runId}'`).trim(), "1")
      const onDisk = yield* Effect.promise(() => fsp.readdir(first.runRoot).catch(() => [] as Array<string>))
      assert.deepStrictEqual(onDisk.filter((name) => name === runId), [])
      yield* first.close

      const second = yield* startService({ sources: [sales], store })
      yield* checkAfterRestart(second, runId, reportText, before)
      for (const statement of [
        `UPDATE citegate_reviews SET record = replace(record, 'wrong-period', 'supported') WHERE run = '${runId}'`,
        `DELETE FROM citegate_reviews WHERE run = '${runId}'`
      ]) {
        assert.throws(() => cluster.psql(database, statement), /append-only/)
      }
      assert.deepStrictEqual(yield* listed(second, runId), before)
    }))
})
