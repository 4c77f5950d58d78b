/**
 * A run's look-up query that hangs (a connection gone silent) over PostgreSQL: concurrent look-ups of
 * one run share one query at a time (src/internal/NextFlight.ts), and a query that hangs must hold
 * the next back for `overtakeMs` only, so that only the requests of the hung query fail (the request
 * deadline's 503), as they would have with a query of their own; the run's later requests are answered.
 */
import { assert, describe, it } from "@effect/vitest"
import { Context, Effect, Layer } from "effect"
import * as net from "node:net"
import { afterAll, beforeAll } from "vitest"
import * as PostgresRuns from "../src/server/PostgresRuns.js"
import { CaptureStore } from "../src/store/CaptureStore.js"
import * as PostgresStore from "../src/store/Postgres.js"
import { call, startService, tokens } from "./serverSupport.js"
import { cited, SALES, salesRecord } from "./support.js"
import { type Cluster, createDatabase, skipPostgres, startCluster } from "./support/postgresCluster.js"

let cluster: Cluster
let url = ""
let runs = 0
beforeAll(async () => {
  if (skipPostgres) return
  cluster = await startCluster({})
  url = cluster.url(createDatabase(cluster, "lookupstuck"))
  await Effect.runPromise(PostgresStore.migrate.pipe(Effect.provide(PostgresStore.layerClient({ url }))))
}, 120_000)
afterAll(() => cluster?.stop())

const reportText = JSON.stringify({ facts: [cited("q3_net_sales", salesRecord, "Net sales for Q3 2026 were 4,210 units")] })
const newRun = Effect.gen(function*() {
  const run = `stuck-${++runs}`
  const store = Context.get(yield* Layer.build(PostgresStore.layerUrl({ url, run, create: true, maxConnections: 1 })), CaptureStore)
  yield* Effect.orDie(store.write(salesRecord))
  return run
})

/** A proxy that, once armed with a needle, holds back every answer of the connection whose next request carries it (one connection only). */
const freezingProxy = (targetPort: number) =>
  Effect.acquireRelease(Effect.async<{ port: number; arm: (needle: string) => void; close: () => void }>((resume) => {
    let needle: string | undefined
    const sockets = new Set<net.Socket>()
    const server = net.createServer((client) => {
      const upstream = net.connect(targetPort, "127.0.0.1")
      let frozen = false
      for (const s of [client, upstream]) {
        sockets.add(s)
        s.on("error", () => (client.destroy(), upstream.destroy()))
        s.on("close", () => (client.destroy(), upstream.destroy()))
      }
      client.on("data", (chunk) => {
        if (needle !== undefined && chunk.includes(needle)) {
          frozen = true
          needle = undefined
        }
        upstream.write(chunk)
      })
      upstream.on("data", (chunk) => { if (!frozen) client.write(chunk) })
    })
    server.listen(0, "127.0.0.1", () => resume(Effect.succeed({
      port: (server.address() as net.AddressInfo).port,
      arm: (n: string) => { needle = n },
      close: () => { server.close(); for (const s of sockets) s.destroy() }
    })))
  }), ({ close }) => Effect.sync(close))

describe.skipIf(skipPostgres)("a run look-up that hangs over PostgreSQL", () => {
  it.scopedLive("fails its own requests only: the run's later requests, and other runs', are answered", () =>
    Effect.gen(function*() {
      const runX = yield* Effect.scoped(newRun)
      const runY = yield* Effect.scoped(newRun)
      const proxy = yield* freezingProxy(Number(new URL(url).port))
      const proxied = new URL(url)
      proxied.port = String(proxy.port)
      const service = yield* startService({ sources: [SALES], store: proxied.href, server: { requestTimeoutMs: 1000 } })
      const verify = (run: string) => Effect.map(call(service, `/v1/verify/report?run=${run}`, { token: tokens.admin, body: reportText, headers: { "content-type": "application/json" } }), (a) => a.status)
      for (let i = 0; i < 3; i++) assert.deepStrictEqual([yield* verify(runX), yield* verify(runY)], [200, 200])
      proxy.arm(runX)
      const before = { ...PostgresRuns.lookUpCounts }
      const statuses: Array<readonly [number, number]> = []
      for (let i = 0; i < 4; i++) {
        statuses.push(yield* Effect.all([verify(runX), verify(runY)], { concurrency: 2 }))
        yield* Effect.sleep("1 second")
      }
      // The first request of X rides the query that hangs: the deadline's 503, as alone. Every later
      // one is answered (before, each waited for the hung query and got 503 too).
      assert.deepStrictEqual(statuses, [[503, 200], [200, 200], [200, 200], [200, 200]])
      assert.isAtLeast((PostgresRuns.lookUpCounts.overtaken ?? 0) - (before.overtaken ?? 0), 1)
    }), 120_000)
})
