/**
 * Recorded human review in PostgreSQL (migration 2, `citegate_reviews`), on a throwaway cluster: the
 * reviewer role appends, a new client reads the decisions back in order, the database refuses to
 * edit or remove one (the owner included), the verifier role cannot append, and a tampered row is
 * refused on read. Also the spawned CLI with `--store`.
 */
import { assert, describe, it } from "@effect/vitest"
import { Context, Effect, Layer, type Scope } from "effect"
import * as fsp from "node:fs/promises"
import * as path from "node:path"
import { afterAll, beforeAll } from "vitest"
import * as Config from "../src/Config.js"
import { DecisionLogCorrupt, DecisionLogFull, DecisionWriteFailed } from "../src/Errors.js"
import * as Decisions from "../src/review/Decisions.js"
import { withHistory } from "../src/review/Records.js"
import * as CaptureStore from "../src/store/CaptureStore.js"
import * as PostgresStore from "../src/store/Postgres.js"
import * as ReviewLog from "../src/store/ReviewLog.js"
import * as ReviewPostgres from "../src/store/ReviewPostgres.js"
import * as Gate from "../src/verify/Gate.js"
import { cli } from "./cliProcess.js"
import { type Cluster, createDatabase, skipPostgres, startCluster } from "./support/postgresCluster.js"
import { cited, fixturePath, pipelineConfig, salesRecord, tempDirectory } from "./support.js"

let cluster: Cluster
let database = ""
let runs = 0
const newRun = () => `review-${++runs}`

beforeAll(async () => {
  if (skipPostgres) return
  cluster = await startCluster()
  database = createDatabase(cluster, "reviews")
  const ran = await Effect.runPromise(
    PostgresStore.migrate.pipe(Effect.provide(PostgresStore.layerClient({ url: cluster.url(database) })))
  )
  assert.deepStrictEqual(ran.map(([id, name]) => `${id}_${name}`), ["1_citegate_store", "2_citegate_reviews", "3_citegate_replicas", "4_citegate_service_reviews", "5_citegate_attestations"])
  cluster.psql(
    database,
    `CREATE ROLE worker LOGIN IN ROLE ${PostgresStore.captureRole};
     CREATE ROLE reviewer LOGIN IN ROLE ${PostgresStore.reviewerRole};
     CREATE ROLE auditor LOGIN IN ROLE ${PostgresStore.verifierRole};`
  )
}, 120_000)

afterAll(() => cluster?.stop())

const build = <A, I>(tag: Context.Tag<I, A>, layer: Layer.Layer<I, unknown>): Effect.Effect<A, unknown, Scope.Scope> =>
  Effect.map(Layer.build(layer), (context) => Context.get(context, tag))

const client = (user: string) => PostgresStore.layerClient({ url: cluster.url(database, user), maxConnections: 2 })
const logAs = (user: string, run: string, maxDecisions?: number) =>
  build(ReviewLog.ReviewLog, ReviewPostgres.layer({ run, ...(maxDecisions === undefined ? {} : { maxDecisions }) }).pipe(Layer.provide(client(user))))

const reportText = JSON.stringify({ facts: [cited("q3_net_sales", salesRecord, "Net sales for Q3 2026 were 4,210 units")] })

/** A run holding the sales capture, and a report verified against it as `user` would (reviewer). */
const capturedRun = Effect.gen(function*() {
  const run = newRun()
  const worker = yield* build(CaptureStore.CaptureStore, PostgresStore.layer({ run, create: true }).pipe(Layer.provide(client("worker"))))
  yield* worker.write(salesRecord)
  const config = yield* Config.decode(pipelineConfig)
  const outcome = yield* Effect.flatMap(Gate.Gate, (gate) => Effect.either(gate.checkJsonWithCaptures(reportText))).pipe(
    Effect.provide(Gate.layerWithStore(config).pipe(Layer.provide(PostgresStore.layer({ run }).pipe(Layer.provide(client("reviewer"))))))
  )
  return { run, outcome }
})

const decision = (run: string, outcome: Effect.Effect.Success<typeof capturedRun>["outcome"], decision: string, reviewer: string) =>
  Effect.flatMap(Decisions.request({ fact: 0, decision, reviewer }), (request) => Decisions.record({ run, reportText, outcome, request }))

describe.skipIf(skipPostgres)("recorded human review in PostgreSQL", () => {
  it.scopedLive("the reviewer appends, a new client reads them back in order, the database refuses edits", () =>
    Effect.gen(function*() {
      const { outcome, run } = yield* capturedRun
      const log = yield* logAs("reviewer", run)
      const first = yield* decision(run, outcome, "wrong-metric", "alice").pipe(Effect.provideService(ReviewLog.ReviewLog, log))
      const second = yield* decision(run, outcome, "supported", "bob").pipe(Effect.provideService(ReviewLog.ReviewLog, log))
      assert.isTrue(second.seq > first.seq)
      // Another client, as the verifier role (read-only): the decisions as written.
      const read = yield* (yield* logAs("auditor", run)).list
      assert.deepStrictEqual(withHistory(read).map((d) => [d.record.decision, d.record.reviewer, d.supersededBy]), [
        ["wrong-metric", "alice", second.seq],
        ["supported", "bob", null]
      ])
      assert.deepStrictEqual(read[0]!.record, first.record)
      for (const statement of [
        `UPDATE citegate_reviews SET record = replace(record, 'wrong-metric', 'supported')`,
        `DELETE FROM citegate_reviews`,
        `TRUNCATE citegate_reviews`
      ]) {
        assert.throws(() => cluster.psql(database, statement), /append-only/)
      }
      assert.strictEqual((yield* (yield* logAs("auditor", run)).list).length, 2)
    }))

  it.scopedLive("DecisionWriteFailed: the verifier role cannot append", () =>
    Effect.gen(function*() {
      const { outcome, run } = yield* capturedRun
      const log = yield* logAs("auditor", run)
      const failed = yield* Effect.flip(decision(run, outcome, "supported", "alice").pipe(Effect.provideService(ReviewLog.ReviewLog, log)))
      assert.instanceOf(failed, DecisionWriteFailed)
      assert.include((failed as DecisionWriteFailed).detail, "permission denied")
    }))

  it.scopedLive("DecisionLogFull and DecisionLogCorrupt in the database", () =>
    Effect.gen(function*() {
      const { outcome, run } = yield* capturedRun
      const small = yield* logAs("reviewer", run, 1)
      yield* decision(run, outcome, "supported", "alice").pipe(Effect.provideService(ReviewLog.ReviewLog, small))
      const full = yield* Effect.flip(decision(run, outcome, "unsure", "alice").pipe(Effect.provideService(ReviewLog.ReviewLog, small)))
      assert.instanceOf(full, DecisionLogFull)
      // A row inserted around citegate (by the owner) that is not a decision is refused on read.
      cluster.psql(database, `INSERT INTO citegate_reviews (run, record) VALUES ('${run}', '{"format":"citegate.review-decision/1"}')`)
      const corrupt = yield* Effect.flip((yield* logAs("auditor", run)).list)
      assert.instanceOf(corrupt, DecisionLogCorrupt)
    }))

  it.scopedLive("run-pipeline review record and list with --store", () =>
    Effect.gen(function*() {
      const { run } = yield* capturedRun
      const work = yield* tempDirectory
      const report = path.join(work, "report.json")
      yield* Effect.promise(() => fsp.writeFile(report, reportText))
      const recorded = yield* cli([
        "review", "record", "--config", fixturePath("pipeline.json"), "--run-dir", run, "--store", cluster.url(database, "reviewer"),
        "--report", report, "--fact", "1", "--decision", "wrong-period", "--reviewer", "carol"
      ])
      assert.strictEqual(recorded.code, 0, recorded.stderr)
      const listed = yield* cli(["review", "list", "--run-dir", run, "--store", cluster.url(database, "auditor"), "--format", "json"])
      assert.strictEqual(listed.code, 0, listed.stderr)
      assert.deepStrictEqual(JSON.parse(listed.stdout).decisions.map((d: any) => [d.record.decision, d.record.reviewer, d.record.run]), [["wrong-period", "carol", run]])
    }))
})
