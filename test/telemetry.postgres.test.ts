/**
 * Telemetry of replicas over PostgreSQL (`serve --store`): the shared capture queue's depth,
 * sampled into `citegate.capture.queue.depth` (docs/observability.md). A real service on 127.0.0.1
 * over a PostgreSQL cluster started for the test; its source answers only when the test lets it, so
 * the queue holds a known number of jobs while the metric is scraped. The same queue gives a run's
 * status: `queued` until a replica claims its job.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { afterAll, beforeAll } from "vitest"
import { tokenDigest } from "../src/server/Auth.js"
import * as PostgresStore from "../src/store/Postgres.js"
import { call, heldEachSource, heldSource, scrapeUntil, startRuns, startService, tokens, waitForRun } from "./serverSupport.js"
import { type Cluster, createDatabase, skipPostgres, startCluster } from "./support/postgresCluster.js"

let cluster: Cluster
let database = ""
let url = ""

beforeAll(async () => {
  if (skipPostgres) return
  cluster = await startCluster()
  database = createDatabase(cluster, "telemetry_queue")
  url = cluster.url(database)
  await Effect.runPromise(PostgresStore.migrate.pipe(Effect.provide(PostgresStore.layerClient({ url }))))
}, 120_000)

afterAll(() => cluster?.stop())

const metricsToken = "citegate-test-metrics-token-737373"

describe.skipIf(skipPostgres)("telemetry over PostgreSQL", () => {
  it.scopedLive("samples the shared capture queue's depth: waiting and running jobs", () =>
    Effect.gen(function*() {
      // Its source holds every response: the first run's capture keeps its job running.
      const source = yield* heldSource
      const service = yield* startService({
        sources: [source.url],
        store: url,
        server: {
          maxActiveRuns: 1,
          tokens: [
            { sha256: tokenDigest(tokens.capture), runs: "*", capture: true, name: "capture" },
            { sha256: tokenDigest(metricsToken), runs: [], capture: false, metrics: true, name: "metrics" }
          ] as any
        },
        config: { telemetry: { prometheus: true } }
      })
      const runIds = yield* startRuns(service, 3)
      // One job held by this replica (its one slot), two queued behind it.
      yield* scrapeUntil(service, metricsToken, [/^citegate_capture_queue_depth\{state="waiting"\} 2$/m, /^citegate_capture_queue_depth\{state="running"\} 1$/m])
      yield* source.release
      for (const runId of runIds) yield* waitForRun(service, runId, tokens.capture)
      yield* scrapeUntil(service, metricsToken, [/^citegate_capture_queue_depth\{state="waiting"\} 0$/m, /^citegate_capture_queue_depth\{state="running"\} 0$/m])
    }))

  it.scopedLive("a run reads as queued until a replica claims its job, then running, then completed", () =>
    Effect.gen(function*() {
      const source = yield* heldEachSource
      const service = yield* startService({ sources: [source.url], store: url, server: { maxActiveRuns: 1 } })
      const created = yield* Effect.forEach([1, 2], () => call(service, "/v1/runs", { method: "POST", token: tokens.admin }))
      // Created as a queued job: a replica claims it after the answer.
      assert.deepStrictEqual(created.map((r) => [r.status, r.json.status]), [[202, "queued"], [202, "queued"]])
      const ids: Array<string> = created.map((r) => r.json.id)
      const statuses = Effect.forEach(ids, (id) => Effect.map(call(service, `/v1/runs/${id}`, { token: tokens.admin }), (r) => r.json.status as string))
      // The replica's one slot takes the first job; the second waits in the queue.
      const deadline = Date.now() + 10_000
      let seen = yield* statuses
      while (seen[0] !== "running" && Date.now() < deadline) {
        yield* Effect.sleep("20 millis")
        seen = yield* statuses
      }
      assert.deepStrictEqual(seen, ["running", "queued"])
      // A job whose holder's lease ran out (its replica died) waits for another replica: queued too.
      const orphan = "20261204T000000Z-0rphan000000"
      cluster.psql(database, `INSERT INTO citegate_runs (run) VALUES ('${orphan}');
        INSERT INTO citegate_jobs (run, owner, state, holder, epoch, lease_until, created_at)
        VALUES ('${orphan}', '${tokenDigest(tokens.admin)}', 'running', 'a-replica-gone', 1, now() - interval '1 minute', now() + interval '1 minute')`)
      const orphanStatus = Effect.map(call(service, `/v1/runs/${orphan}`, { token: tokens.admin }), (r) => r.json.status as string)
      assert.strictEqual(yield* orphanStatus, "queued")
      for (const _ of [...ids, orphan]) yield* source.releaseNext
      for (const id of [...ids, orphan]) yield* waitForRun(service, id)
      assert.deepStrictEqual([...(yield* statuses), yield* orphanStatus], ["completed", "completed", "completed"])
    }))
})
