/**
 * Replicas over PostgreSQL (`serve --store`): what a verification asks the database. The run is
 * looked up in one query that also stamps its review log (src/server/PostgresRuns.ts), so the log
 * shown beside a verified report is read once and kept while unchanged (src/server/KeptReviews.ts),
 * not read per request: the tests count reads and statements (they fail without the stamp), and pin
 * what a kept log cannot go stale about: an append by another replica or process, and a row a
 * superuser rewrites (even with the same bytes) or deletes with the append-only trigger off, are all
 * seen by the next request (docs/threat-model.md, "Kept review logs"). The same query stamps the
 * captures the run's verifications cited before (src/store/PostgresStamps.ts): a warm verification
 * sends one statement, and a capture row rewritten, deleted or inserted again is still read again
 * by the next request.
 */
import { assert, describe, it } from "@effect/vitest"
import { Context, Deferred, Effect, Fiber, FiberRef, Layer, Option } from "effect"
import { afterAll, beforeAll } from "vitest"
import * as Config from "../src/Config.js"
import * as Decisions from "../src/review/Decisions.js"
import { Lifecycle, ServerContext } from "../src/server/Context.js"
import * as KeptReviews from "../src/server/KeptReviews.js"
import * as PostgresRuns from "../src/server/PostgresRuns.js"
import { Runs } from "../src/server/Runs.js"
import * as VerifyLane from "../src/server/VerifyLane.js"
import { CaptureStore } from "../src/store/CaptureStore.js"
import * as PostgresStore from "../src/store/Postgres.js"
import * as PostgresStamps from "../src/store/PostgresStamps.js"
import * as ReviewLog from "../src/store/ReviewLog.js"
import * as ReviewPostgres from "../src/store/ReviewPostgres.js"
import * as Gate from "../src/verify/Gate.js"
import { call, startService, tokens } from "./serverSupport.js"
import { holdingProxy } from "./support/holdingProxy.js"
import { cited, INVENTORY, pipelineConfig, SALES, salesRecord } from "./support.js"
import { type Cluster, createDatabase, skipPostgres, startCluster } from "./support/postgresCluster.js"

let cluster: Cluster
let database = ""
let url = ""
let runs = 0

beforeAll(async () => {
  if (skipPostgres) return
  // pg_stat_statements counts the statements each verification sends (it ships with the server).
  cluster = await startCluster({ settings: ["shared_preload_libraries=pg_stat_statements"] })
  database = createDatabase(cluster, "pgkept")
  url = cluster.url(database)
  await Effect.runPromise(PostgresStore.migrate.pipe(Effect.provide(PostgresStore.layerClient({ url }))))
  cluster.psql(database, "CREATE EXTENSION pg_stat_statements")
}, 120_000)

afterAll(() => cluster?.stop())

const reportText = JSON.stringify({ facts: [cited("q3_net_sales", salesRecord, "Net sales for Q3 2026 were 4,210 units")] })

/** A new run holding the sales capture, written as a capture worker would (`run-pipeline capture --store`). */
const newRun = Effect.gen(function*() {
  const run = `kept-${++runs}`
  const store = Context.get(yield* Layer.build(PostgresStore.layerUrl({ url, run, create: true, maxConnections: 1 })), CaptureStore)
  yield* Effect.orDie(store.write(salesRecord))
  return run
})

const decisionsOf = (logged: ReadonlyArray<ReviewLog.LoggedDecision>) => logged.map((entry) => entry.record.decision)

/** The replicated Runs service over its own client (as one replica has), and a decision writer with another. */
const setup = Effect.gen(function*() {
  const run = yield* newRun
  const config = yield* Config.decode(pipelineConfig)
  const signal = yield* Deferred.make<void>()
  const lifecycle = Lifecycle.of({
    draining: Deferred.await(signal),
    isDraining: Deferred.isDone(signal),
    openRequests: Effect.succeed(0),
    shutdown: Effect.asVoid(Deferred.succeed(signal, undefined))
  })
  const context = Layer.succeed(ServerContext, {
    config,
    configFile: "pipeline.json",
    runRoot: "runs",
    limits: Config.resolvedServer(config),
    allowLoopbackHttp: false
  })
  const built = yield* Layer.build(
    PostgresRuns.layer({ replica: "kept-test" }).pipe(
      Layer.provide(Layer.mergeAll(context, Layer.succeed(Lifecycle, lifecycle), PostgresStore.layerClient({ url, maxConnections: 2 })))
    )
  )
  const replica = Context.get(built, Runs)
  const outcome = yield* Effect.flatMap(Gate.Gate, (gate) => Effect.either(gate.checkJsonWithCaptures(reportText))).pipe(
    Effect.provide(Gate.layerWithStore(config).pipe(Layer.provide(PostgresStore.layerUrl({ url, run, maxConnections: 1 })))),
    Effect.orDie
  )
  const log = Context.get(yield* Layer.build(ReviewPostgres.layerUrl({ url, run, maxConnections: 1 })), ReviewLog.ReviewLog)
  /** Appends one decision through another client (another replica, or `run-pipeline review record --store`). */
  const append = (decision: string) =>
    Effect.gen(function*() {
      const request = yield* Decisions.request({ fact: 0, decision, reviewer: "alice" })
      return yield* Decisions.record({ run, reportText, outcome, request }).pipe(Effect.provideService(ReviewLog.ReviewLog, log))
    }).pipe(Effect.orDie)
  const kept = yield* Effect.provideService(KeptReviews.make(), Runs, replica)
  /** One request's worth: the run looked up (and its log stamped) now, then its log as kept or read. */
  const listed = Effect.flatMap(replica.get(run), (view) => kept.list(view)).pipe(Effect.map(decisionsOf))
  return { run, replica, append, kept, listed }
})

/** Rewrites rows of the review log as a superuser can: the append-only trigger disabled for one statement. */
const bypass = (statement: string) =>
  cluster.psql(
    database,
    `BEGIN;
     ALTER TABLE citegate_reviews DISABLE TRIGGER citegate_reviews_append_only;
     ${statement};
     ALTER TABLE citegate_reviews ENABLE TRIGGER citegate_reviews_append_only;
     COMMIT;`
  )

describe.skipIf(skipPostgres)("replicas over PostgreSQL: the review log read once while unchanged", () => {
  it.live("ten verifications read an unchanged log once; another client's append is seen by the next", () =>
    Effect.scoped(Effect.gen(function*() {
      const { append, kept, listed } = yield* setup
      // No decision yet: kept as empty (an append changes the stamp).
      for (let i = 0; i < 10; i++) assert.deepStrictEqual(yield* listed, [])
      assert.deepStrictEqual(yield* kept.stats, { reads: 1, hits: 9, entries: 1, decisions: 0 })

      yield* append("supported")
      // Exact stamps (no clock): kept from the first read after the append, no settling time.
      for (let i = 0; i < 5; i++) assert.deepStrictEqual(yield* listed, ["supported"])
      assert.deepStrictEqual(yield* kept.stats, { reads: 2, hits: 13, entries: 1, decisions: 1 })

      yield* append("wrong-period")
      assert.deepStrictEqual(yield* listed, ["supported", "wrong-period"])
      assert.strictEqual((yield* kept.stats).reads, 3)
    })))

  it.live("a row a superuser rewrites (same bytes, or others) or deletes, trigger off, is read again on the next request", () =>
    Effect.scoped(Effect.gen(function*() {
      const { append, kept, listed, run } = yield* setup
      yield* append("supported")
      yield* append("wrong-period")
      assert.deepStrictEqual(yield* listed, ["supported", "wrong-period"])
      assert.deepStrictEqual(yield* listed, ["supported", "wrong-period"])
      assert.strictEqual((yield* kept.stats).reads, 1)

      // The same bytes written again: a new row version, so a new stamp (the log could have changed).
      bypass(`UPDATE citegate_reviews SET record = record WHERE run = '${run}'`)
      assert.deepStrictEqual(yield* listed, ["supported", "wrong-period"])
      assert.strictEqual((yield* kept.stats).reads, 2)

      // Another decision written into the first row: shown at once, never the kept one.
      bypass(`UPDATE citegate_reviews SET record = replace(record, '"supported"', '"wrong-metric"')
              WHERE run = '${run}' AND seq = (SELECT min(seq) FROM citegate_reviews WHERE run = '${run}')`)
      assert.deepStrictEqual(yield* listed, ["wrong-metric", "wrong-period"])
      assert.strictEqual((yield* kept.stats).reads, 3)

      // The last decision deleted (and so the count changed): gone from the next request.
      bypass(`DELETE FROM citegate_reviews WHERE run = '${run}' AND seq = (SELECT max(seq) FROM citegate_reviews WHERE run = '${run}')`)
      assert.deepStrictEqual(yield* listed, ["wrong-metric"])

      // A deleted decision replaced by another row with the same text: a new `seq` and version.
      bypass(`WITH d AS (DELETE FROM citegate_reviews WHERE run = '${run}' RETURNING record)
              INSERT INTO citegate_reviews (run, record) SELECT '${run}', replace(record, '"wrong-metric"', '"supported"') FROM d`)
      assert.deepStrictEqual(yield* listed, ["supported"])
      assert.strictEqual((yield* kept.stats).reads, 5)
    })))

  it.live("a log that fails to read is never kept: every request reads it and reports its error", () =>
    Effect.scoped(Effect.gen(function*() {
      const { append, kept, replica, run } = yield* setup
      yield* append("supported")
      bypass(`UPDATE citegate_reviews SET record = '{"not": "a decision"}' WHERE run = '${run}'`)
      for (let i = 0; i < 2; i++) {
        const failed = yield* Effect.flip(Effect.flatMap(replica.get(run), (view) => kept.list(view)))
        assert.strictEqual(failed._tag, "DecisionLogCorrupt")
      }
      assert.deepStrictEqual(yield* kept.stats, { reads: 2, hits: 0, entries: 0, decisions: 0 })
    })))

  it.live("a run is looked up afresh on every request: a run created by another replica after a miss is found", () =>
    Effect.scoped(Effect.gen(function*() {
      const { replica } = yield* setup
      const name = `kept-later-${runs}`
      assert.strictEqual((yield* Effect.flip(replica.get(name)))._tag, "RunNotFound")
      cluster.psql(database, `INSERT INTO citegate_runs (run) VALUES ('${name}')`)
      const found = yield* replica.get(name)
      assert.strictEqual(found.status, "stored")
      // An empty log stamps as its count alone: a stamp is always there for a run that is.
      assert.strictEqual(found.reviewsStamp, "0")
    })))
})

/** Statements on the evidence tables (runs, captures, bodies, reviews) since the last reset; not the job queue's polling. */
const evidenceStatements = () =>
  Number(cluster.psql(
    database,
    `SELECT coalesce(sum(calls), 0) FROM pg_stat_statements
     WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database())
       AND query ~ 'citegate_(runs|captures|bodies|reviews|attestations)'`
  ).trim())

describe.skipIf(skipPostgres)("replicas over PostgreSQL: one statement per verification, and every replica sees the review log", () => {
  it.scopedLive("a decision recorded on one replica is shown by the other's next verification; a kept verification sends one statement", () =>
    Effect.gen(function*() {
      const run = yield* Effect.scoped(newRun)
      const first = yield* startService({ sources: [SALES], store: url })
      const second = yield* startService({ sources: [SALES], store: url })
      const verify = (service: typeof first) =>
        call(service, `/v1/verify/report?run=${run}`, { token: tokens.admin, body: reportText, headers: { "content-type": "application/json" } })
      const review = (service: typeof first, decision: string) =>
        call(service, `/v1/runs/${run}/reviews`, {
          token: tokens.admin,
          body: JSON.stringify({ report: reportText, fact: 0, decision }),
          headers: { "content-type": "application/json" }
        })
      const shown = (verified: { readonly json: any }) =>
        verified.json.humanReview === undefined ? undefined : verified.json.humanReview.facts[0].current.record.decision

      // Warm: the Gate built, the capture verified and kept, the (empty) log read and kept.
      for (let i = 0; i < 2; i++) {
        const warm = yield* verify(second)
        assert.strictEqual(warm.status, 200, warm.text)
        assert.strictEqual(shown(warm), undefined)
      }
      cluster.psql(database, "SELECT pg_stat_statements_reset()")
      const warmBefore = { ...VerifyLane.synchronous }
      for (let i = 0; i < 10; i++) assert.strictEqual((yield* verify(second)).status, 200)
      // The run with its review log's stamp and the capture's stamp, taken ahead: one each (two before, four before that).
      assert.strictEqual(evidenceStatements(), 10)
      // Each answered at once after its look-up, with the stamps it took, without a fiber (the lane's warm step).
      assert.strictEqual(VerifyLane.synchronous.afterLookUp - warmBefore.afterLookUp, 10)
      assert.strictEqual(VerifyLane.synchronous.answered - warmBefore.answered, 10)

      assert.strictEqual((yield* review(first, "wrong-period")).status, 201)
      assert.strictEqual(shown(yield* verify(second)), "wrong-period")
      assert.strictEqual((yield* review(first, "supported")).status, 201)
      assert.strictEqual(shown(yield* verify(second)), "supported")
      assert.strictEqual(shown(yield* verify(first)), "supported")
    }))
})

/** Capture reads since the last reset (each a full read of one record: the cache did not serve it). */
const captureReads = () =>
  Number(cluster.psql(
    database,
    `SELECT coalesce(sum(calls), 0) FROM pg_stat_statements
     WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database())
       AND query ~ 'FROM citegate_captures' AND query ~ 'convert_from'`
  ).trim())

/** Rewrites capture rows as a superuser can: the append-only trigger disabled for one statement. */
const bypassCaptures = (statement: string) =>
  cluster.psql(
    database,
    `BEGIN;
     ALTER TABLE citegate_captures DISABLE TRIGGER citegate_captures_append_only;
     ${statement};
     ALTER TABLE citegate_captures ENABLE TRIGGER citegate_captures_append_only;
     COMMIT;`
  )

describe.skipIf(skipPostgres)("replicas over PostgreSQL: capture stamps taken by the run look-up", () => {
  it.scopedLive("a capture kept while its row is unchanged is read again after a rewrite, a delete, a re-insert by another client, a write", () =>
    Effect.gen(function*() {
      const run = yield* Effect.scoped(newRun)
      const service = yield* startService({ sources: [SALES], store: url })
      const verify = Effect.map(
        call(service, `/v1/verify/report?run=${run}`, { token: tokens.admin, body: reportText, headers: { "content-type": "application/json" } }),
        (answer) => {
          assert.strictEqual(answer.status, 200, answer.text)
          return answer.json.report?.outcome as string | undefined
        }
      )
      /** One verification: its outcome, the statements it sent, and the captures it read. */
      const counted = Effect.gen(function*() {
        cluster.psql(database, "SELECT pg_stat_statements_reset()")
        const warmBefore = VerifyLane.synchronous.afterLookUp
        const outcome = yield* verify
        // warm: answered at once after the look-up (only with every capture kept under its fresh stamp).
        return { outcome, statements: evidenceStatements(), reads: captureReads(), warm: VerifyLane.synchronous.afterLookUp - warmBefore }
      })
      const sales = `run = '${run}' AND source = '${SALES}'`

      // Cold: the store opened, the capture stamped by the store itself and read, the review log read; the
      // look-ups after it stamp the capture ahead, and a verification of a kept capture sends one statement.
      assert.deepStrictEqual(yield* counted, { outcome: "grounded", statements: 6, reads: 1, warm: 0 })
      assert.deepStrictEqual(yield* counted, { outcome: "grounded", statements: 1, reads: 0, warm: 1 })
      assert.deepStrictEqual(yield* counted, { outcome: "grounded", statements: 1, reads: 0, warm: 1 })

      // The same bytes written again: a new row version, read again (then kept again).
      bypassCaptures(`UPDATE citegate_captures SET record = record WHERE ${sales}`)
      assert.deepStrictEqual(yield* counted, { outcome: "grounded", statements: 2, reads: 1, warm: 0 })
      assert.deepStrictEqual(yield* counted, { outcome: "grounded", statements: 1, reads: 0, warm: 1 })

      // Deleted and inserted again with the same bytes by another client: read again.
      bypassCaptures(`WITH d AS (DELETE FROM citegate_captures WHERE ${sales} RETURNING *)
                      INSERT INTO citegate_captures SELECT * FROM d`)
      assert.deepStrictEqual(yield* counted, { outcome: "grounded", statements: 2, reads: 1, warm: 0 })

      // Other bytes under the same digests: the read refuses them, at once and on every request.
      bypassCaptures(`UPDATE citegate_captures SET record = convert_to('{"not": "a record"}', 'UTF8') WHERE ${sales}`)
      for (let i = 0; i < 2; i++) assert.notStrictEqual((yield* counted).outcome, "grounded")

      // Deleted: the next verification finds no capture.
      bypassCaptures(`DELETE FROM citegate_captures WHERE ${sales}`)
      const missing = yield* counted
      assert.notStrictEqual(missing.outcome, "grounded")
      assert.strictEqual(missing.statements, 2)

      // Written again (a capture worker's exclusive write): read, grounded, then kept.
      const store = Context.get(yield* Layer.build(PostgresStore.layerUrl({ url, run, maxConnections: 1 })), CaptureStore)
      yield* Effect.orDie(store.write(salesRecord))
      assert.deepStrictEqual(yield* counted, { outcome: "grounded", statements: 2, reads: 1, warm: 0 })
      assert.deepStrictEqual(yield* counted, { outcome: "grounded", statements: 1, reads: 0, warm: 1 })
    }))
})

describe.skipIf(skipPostgres)("replicas over PostgreSQL: stamps taken ahead serve one stamping of the same run, fresh", () => {
  it.live("taken once, by the same run's store, for the sources asked only, within freshMs; the same stamps as the store's own query", () =>
    Effect.scoped(Effect.gen(function*() {
      const { replica, run } = yield* setup
      const other = yield* newRun
      const storeOf = (name: string) =>
        Effect.flatMap(replica.get(name), (view) => Effect.map(Layer.build(replica.store(view)), (built) => Context.get(built, CaptureStore)))
      const store = yield* storeOf(run)
      const otherStore = yield* storeOf(other)
      /** What `effect` gives, and the statements it sent. */
      const sent = <A, E>(effect: Effect.Effect<A, E>) =>
        Effect.gen(function*() {
          cluster.psql(database, "SELECT pg_stat_statements_reset()")
          const value = yield* effect
          return [value, evidenceStatements()] as const
        })
      const stamps = (target: typeof store, sources: ReadonlyArray<typeof SALES>) => Effect.map(target.stamps!(sources), (found) => [...found])
      const lookUp = Effect.asVoid(replica.get(run))

      // Nothing asked yet: the look-up stamps nothing ahead, the store stamps itself (and remembers SALES).
      const [own, ownSent] = yield* sent(Effect.zipRight(lookUp, stamps(store, [SALES])))
      assert.strictEqual(own.length, 1)
      assert.strictEqual(ownSent, 2)

      // The look-up stamps SALES ahead: the store takes those (no statement), the same stamp text; once only.
      assert.deepStrictEqual(yield* sent(Effect.zipRight(lookUp, stamps(store, [SALES]))), [own, 1])
      assert.deepStrictEqual(yield* sent(stamps(store, [SALES])), [own, 1])

      // Another run's store over the same client never takes them, nor does a store asked for a source not stamped ahead.
      assert.deepStrictEqual(yield* sent(Effect.zipRight(lookUp, stamps(otherStore, [SALES]))), [(yield* stamps(otherStore, [SALES])), 2])
      const [both, bothSent] = yield* sent(Effect.zipRight(lookUp, stamps(store, [SALES, INVENTORY])))
      assert.deepStrictEqual([both, bothSent], [own, 2])

      // Older than freshMs: the store stamps itself.
      const stale = Effect.zipRight(
        lookUp,
        FiberRef.update(PostgresStamps.taken, (taken) => taken === undefined ? undefined : { ...taken, at: taken.at - PostgresStamps.freshMs - 1 })
      )
      assert.deepStrictEqual(yield* sent(Effect.zipRight(stale, stamps(store, [SALES]))), [own, 2])

      // A row changed after the look-up and before its stamps are used: this request uses the look-up's
      // (taken before), the next request's look-up sees the change.
      yield* lookUp
      bypassCaptures(`UPDATE citegate_captures SET record = record WHERE run = '${run}' AND source = '${SALES}'`)
      assert.deepStrictEqual(yield* stamps(store, [SALES]), own)
      const [changed, changedSent] = yield* sent(Effect.zipRight(lookUp, stamps(store, [SALES])))
      assert.strictEqual(changedSent, 1)
      assert.notDeepEqual(changed, own)
      assert.deepStrictEqual(yield* stamps(store, [SALES]), changed)
    })))
})

/** Run look-up statements since the last reset. */
const lookUpStatements = () =>
  Number(cluster.psql(
    database,
    `SELECT coalesce(sum(calls), 0) FROM pg_stat_statements
     WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database())
       AND query ~ 'FROM citegate_runs r LEFT JOIN citegate_jobs j'`
  ).trim())

describe.skipIf(skipPostgres)("replicas over PostgreSQL: concurrent look-ups of one run share a query begun after each arrived", () => {
  it.scopedLive("a request that arrives after a change, while a look-up begun before it is in flight, waits for the next look-up and sees it", () =>
    Effect.gen(function*() {
      const run = yield* Effect.scoped(newRun)
      // The service reaches the database through a proxy that can hold the database's answers.
      const proxy = yield* holdingProxy(Number(new URL(url).port))
      const proxied = new URL(url)
      proxied.port = String(proxy.port)
      const service = yield* startService({ sources: [SALES], store: proxied.href })
      const verify = Effect.map(
        call(service, `/v1/verify/report?run=${run}`, { token: tokens.admin, body: reportText, headers: { "content-type": "application/json" } }),
        (answer) => {
          assert.strictEqual(answer.status, 200, answer.text)
          return answer.json.report?.outcome as string | undefined
        }
      )
      /** Waits (bounded) until `ready()`. */
      const until = (ready: () => boolean) =>
        Effect.gen(function*() {
          for (let turns = 0; !ready(); turns++) {
            if (turns > 500) return assert.fail("timed out waiting")
            yield* Effect.sleep("10 millis")
          }
        })
      for (let i = 0; i < 3; i++) assert.strictEqual(yield* verify, "grounded")

      // A's look-up runs in the database (its snapshot taken) and its answer is held on the way back.
      proxy.hold()
      cluster.psql(database, "SELECT pg_stat_statements_reset()")
      const before = { ...PostgresRuns.lookUpCounts }
      const first = yield* Effect.fork(verify)
      yield* until(() => lookUpStatements() === 1)
      // Then the capture row is rewritten (committed), and B is sent: its look-up must not be A's.
      bypassCaptures(`UPDATE citegate_captures SET record = convert_to('{"not": "a record"}', 'UTF8') WHERE run = '${run}' AND source = '${SALES}'`)
      const second = yield* Effect.fork(verify)
      yield* until(() => PostgresRuns.lookUpCounts.later - before.later === 1)
      assert.strictEqual(PostgresRuns.lookUpCounts.reads - before.reads, 1)
      proxy.release()
      assert.notStrictEqual(yield* Fiber.join(second), "grounded")
      // A's own look-up began before the change: either answer is right for A.
      yield* Fiber.join(first)
      assert.strictEqual(PostgresRuns.lookUpCounts.reads - before.reads, 2)
    }))

  it.scopedLive("a look-up held past the request deadline: the lane's 503, a client gone while waiting: nothing written; the next requests answered", () =>
    Effect.gen(function*() {
      const run = yield* Effect.scoped(newRun)
      const proxy = yield* holdingProxy(Number(new URL(url).port))
      const proxied = new URL(url)
      proxied.port = String(proxy.port)
      const service = yield* startService({ sources: [SALES], store: proxied.href, server: { requestTimeoutMs: 500 } })
      const verify = call(service, `/v1/verify/report?run=${run}`, { token: tokens.admin, body: reportText, headers: { "content-type": "application/json" } })
      for (let i = 0; i < 2; i++) assert.strictEqual((yield* verify).status, 200)
      proxy.hold()
      const before = { ...PostgresRuns.lookUpCounts }
      // A client that goes away while its look-up waits (the connection closed before any answer).
      const abandoned = Effect.promise((signal) =>
        fetch(`${service.base}/v1/verify/report?run=${run}`, {
          method: "POST",
          headers: { authorization: `Bearer ${tokens.admin}`, "content-type": "application/json" },
          body: reportText,
          signal
        }).then((answer) => answer.status, () => -1)
      )
      assert.isTrue(Option.isNone(yield* Effect.timeoutOption(abandoned, "100 millis")))
      const timedOut = yield* verify
      assert.strictEqual(timedOut.status, 503, timedOut.text)
      assert.include(timedOut.text, "RequestTimeout")
      proxy.release()
      for (let i = 0; i < 2; i++) assert.strictEqual((yield* verify).status, 200)
      assert.isAbove(PostgresRuns.lookUpCounts.calls - before.calls, 3)
    }))

  it.scopedLive("concurrent verifications share look-ups; a change committed before a request is sent is seen by it, under load", () =>
    Effect.gen(function*() {
      const run = yield* Effect.scoped(newRun)
      const service = yield* startService({ sources: [SALES], store: url })
      const other = yield* startService({ sources: [SALES], store: url })
      const verify = Effect.map(
        call(service, `/v1/verify/report?run=${run}`, { token: tokens.admin, body: reportText, headers: { "content-type": "application/json" } }),
        (answer) => {
          assert.strictEqual(answer.status, 200, answer.text)
          const decision = answer.json.humanReview?.facts[0].current.record.decision as string | undefined
          return { outcome: answer.json.report?.outcome as string | undefined, decision }
        }
      )
      const burst = (n: number) => Effect.all(Array.from({ length: n }, () => verify), { concurrency: "unbounded" })
      for (let i = 0; i < 2; i++) assert.strictEqual((yield* verify).outcome, "grounded")

      // Shared: 64 at once, five times; the database counts the look-ups it ran.
      cluster.psql(database, "SELECT pg_stat_statements_reset()")
      const before = { ...PostgresRuns.lookUpCounts }
      for (let i = 0; i < 5; i++) for (const answer of yield* burst(64)) assert.strictEqual(answer.outcome, "grounded")
      const calls = PostgresRuns.lookUpCounts.calls - before.calls
      const reads = PostgresRuns.lookUpCounts.reads - before.reads
      assert.strictEqual(calls, 320)
      assert.isBelow(reads, calls)
      assert.isAbove(PostgresRuns.lookUpCounts.later - before.later, 0)
      assert.strictEqual(lookUpStatements(), reads)

      // Under load (16 clients verifying without a pause), each change is committed before the burst
      // after it is sent: every request of that burst sees it, none answers from a query begun earlier.
      const load = yield* Effect.fork(Effect.all(Array.from({ length: 16 }, () => Effect.forever(verify)), { concurrency: "unbounded" }))
      const laterBefore = PostgresRuns.lookUpCounts.later
      for (const decision of ["wrong-period", "supported", "wrong-period", "supported"]) {
        const recorded = yield* call(other, `/v1/runs/${run}/reviews`, {
          token: tokens.admin,
          body: JSON.stringify({ report: reportText, fact: 0, decision }),
          headers: { "content-type": "application/json" }
        })
        assert.strictEqual(recorded.status, 201, recorded.text)
        for (const answer of yield* burst(32)) assert.deepStrictEqual(answer, { outcome: "grounded", decision })
      }
      // A capture row rewritten by a superuser with the trigger off: refused by every request after it.
      bypassCaptures(`UPDATE citegate_captures SET record = convert_to('{"not": "a record"}', 'UTF8') WHERE run = '${run}' AND source = '${SALES}'`)
      for (let i = 0; i < 3; i++) for (const answer of yield* burst(32)) assert.notStrictEqual(answer.outcome, "grounded")
      yield* Fiber.interrupt(load)
      // The bursts did wait for queries in flight (begun before they arrived) to end.
      assert.isAbove(PostgresRuns.lookUpCounts.later - laterBefore, 0)
    }))
})
