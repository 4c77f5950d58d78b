/**
 * The service under load: `run-pipeline serve` (the bundled CLI, its own process) on 127.0.0.1,
 * driven by autocannon (in a process of its own too: scripts/bench-load.mjs) at concurrency 64
 * with one report per request (20 facts against 20 × 1 MiB captures), over a run directory (also
 * with one and with two verification threads beside the main one, `server.verifyThreads` 1 and 2) and over PostgreSQL (`serve --store`, a cluster of its own; skipped with the reason when the server
 * binaries are absent). Reports verifications per second, p50 / p99 latency and the serve
 * process's CPU time per request (less sensitive to a loaded machine than the rate), measured once
 * every connection is open and answered; every response must be a 200 with the verified JSON
 * result (any other answer fails the bench).
 */
import * as HttpServer from "@effect/platform/HttpServer"
import { Context, Effect, Exit, Layer, Logger, Redacted, Scope } from "effect"
import { spawn } from "node:child_process"
import * as fs from "node:fs"
import * as fsp from "node:fs/promises"
import * as http from "node:http"
import * as os from "node:os"
import type { AddressInfo } from "node:net"
import * as path from "node:path"
import * as CaptureStore from "../src/store/CaptureStore.js"
import * as PostgresStore from "../src/store/Postgres.js"
import { type CaptureRecord, makeCaptureRecord, type Rfc3339Utc, type SourceUrl } from "../src/Domain.js"
import * as Config from "../src/Config.js"
import { tokenDigest } from "../src/server/Auth.js"
import * as Server from "../src/server/Server.js"
import { createDatabase, missingReason, postgresPresent, startCluster } from "../test/support/postgresCluster.js"

import { load } from "./bench-load.mjs"

export interface ServerRow {
  readonly name: string
  readonly connections: number
  readonly durationS: number
  readonly requests: number
  readonly verificationsPerSecond: number
  readonly p50Ms: number
  readonly p99Ms: number
  /** CPU time (user + system) of the serve process over the load, per request; undefined when not measurable (in-process, or no /proc). */
  readonly cpuMsPerRequest?: number | undefined
  /** CPU time of the load generator's own process over the load, per request (it shares the machine's cores). */
  readonly loadCpuMsPerRequest?: number | undefined
  /** Before the measured window: ms until every connection had its first answer, and the slowest first answer. */
  readonly rampMs?: number | undefined
  readonly firstResponseMaxMs?: number | undefined
  /** Answers before the window (the warm-up's, `serviceWarmupSeconds`, and the ramp's after each connection's first): how many, and their p99. */
  readonly warmupRequests?: number | undefined
  readonly warmupP99Ms?: number | undefined
  readonly non2xx: number
  readonly errors: number
}

const accessedAt = "2026-11-30T00:00:00.000Z" as Rfc3339Utc

/**
 * Seconds of load before the measured window, as the plain Node.js floor has
 * (scripts/bench-server-floor.mjs): the serve process's code is compiled and optimised by V8 as the
 * first thousand or so requests run, and with none the window's first few hundred milliseconds (p50
 * about 90 ms against 20 ms after) made most of its p99 (docs/performance.md, "The verification
 * thread's stamps, and the service row's first second"). The answers before the window (the
 * warm-up's, and the ramp's after each connection's first) are still reported: how many, and their
 * p99 (`warmupRequests`, `warmupP99Ms`). None with --smoke.
 */
const serviceWarmupSeconds = 1

interface Served {
  readonly base: string
  readonly stop: () => Promise<number | null>
  /** CPU time the server has used so far, in ms (undefined: not measurable). */
  readonly cpuMs: () => number | undefined
}

/** User plus system CPU time of process `pid` in ms, from /proc (Linux); undefined elsewhere. */
const processCpuMs = (pid: number | undefined): number | undefined => {
  if (pid === undefined) return undefined
  try {
    const fields = fs.readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ")
    // utime and stime (fields 14 and 15 of stat(5)) in clock ticks, 100 per second on Linux.
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100
  } catch {
    return undefined
  }
}

/** Starts `run-pipeline serve` on a free port; resolves with its base URL and a stop function (SIGTERM, waits for exit). */
const serve = (configFile: string, runRoot: string, storeUrl: string | undefined, nodeFlags: ReadonlyArray<string>, cli?: string) =>
  new Promise<Served>((resolve, reject) => {
    const bin = cli ?? path.join(path.dirname(new URL(import.meta.url).pathname), "..", "bin", "run-pipeline.js")
    const store = storeUrl === undefined ? [] : ["--store", storeUrl]
    const child = spawn(process.execPath, [...nodeFlags, bin, "serve", "--config", configFile, "--listen", "127.0.0.1:0", "--run-root", runRoot, ...store], {
      stdio: ["ignore", "ignore", "pipe"]
    })
    let buffered = ""
    let started = false
    const exited = new Promise<number | null>((done) => child.on("close", (code) => done(code)))
    child.stderr.on("data", (chunk: Buffer) => {
      if (started) return
      buffered += chunk.toString("utf8")
      const address = /"address":"(http:\/\/127\.0\.0\.1:\d+)"/.exec(buffered)?.[1]
      if (address !== undefined) {
        started = true
        resolve({ base: address, stop: () => (child.kill("SIGTERM"), exited), cpuMs: () => processCpuMs(child.pid) })
      }
    })
    void exited.then((code) => {
      if (!started) reject(new Error(`serve exited (${code}) before listening: ${buffered}`))
    })
  })

/** The same server in this process (for --smoke): Server.layer on a free loopback port. */
const serveInProcess = async (configFile: string, runRoot: string, storeUrl: string | undefined): Promise<Served> => {
  const config = await Effect.runPromise(Config.decodeText(await fsp.readFile(configFile, "utf8")))
  const scope = Effect.runSync(Scope.make())
  const store = storeUrl === undefined ? undefined : { url: Redacted.make(storeUrl) }
  const context = await Effect.runPromise(
    Layer.buildWithScope(Server.layer({ config, configFile, runRoot, host: "127.0.0.1", port: 0, store }), scope).pipe(
      Effect.provide(Logger.remove(Logger.defaultLogger))
    )
  )
  const address = Context.get(context, HttpServer.HttpServer).address
  const port = address._tag === "TcpAddress" ? address.port : 0
  return {
    base: `http://127.0.0.1:${port}`,
    stop: () => Effect.runPromise(Effect.as(Scope.close(scope, Exit.void), 0)),
    // The harness shares this process: no CPU figure of the server alone.
    cpuMs: () => undefined
  }
}

interface Shape {
  readonly facts: number
  readonly captures: number
  readonly size: number
  readonly connections: number
  readonly duration: number
}

interface BenchOptions {
  readonly smoke: boolean
  readonly makeText: (seed: number, bytes: number) => string
  /** Seconds of load per row (default 15; 1 with --smoke). */
  readonly seconds?: number | undefined
  /** Node flags for the spawned serve process (`--serve-node-flags`), e.g. `--cpu-prof`. */
  readonly nodeFlags?: ReadonlyArray<string> | undefined
  /** The CLI to spawn (default: this package's bin/run-pipeline.js): another build's, to compare. */
  readonly cli?: string | undefined
}

/**
 * The report row over a run directory (without, then with a verification thread), then the same row over PostgreSQL (`serve --store`, a
 * cluster of its own, as the PostgreSQL section starts), back to back so that both see the same load.
 */
export const benchServer = async (options: BenchOptions) => {
  const shape = options.smoke
    ? { facts: 10, captures: 2, size: 4 * 1024, connections: 4, duration: options.seconds ?? 1 }
    : { facts: 20, captures: 20, size: 1024 * 1024, connections: 64, duration: options.seconds ?? 15 }
  // The same row with one and with two verification threads beside the main one (`server.verifyThreads`:
  // the second core); not in --smoke, which serves in this process from the sources.
  const rows = [...await measure(options, shape, false)]
  if (!options.smoke) for (const threads of [1, 2]) rows.push(...await measure(options, shape, false, undefined, threads))
  if (!postgresPresent) {
    process.stderr.write(`bench: the server row over PostgreSQL skipped: ${missingReason}\n`)
    return rows
  }
  // fsync on, as in production (not for --smoke, which measures nothing).
  const cluster = await startCluster({ durable: !options.smoke })
  try {
    const url = cluster.url(createDatabase(cluster, "bench_server"))
    await Effect.runPromise(PostgresStore.migrate.pipe(Effect.provide(PostgresStore.layerClient({ url }))))
    return [...rows, ...await measure(options, shape, false, url)]
  } finally {
    cluster.stop()
  }
}

/** The report row over a run directory with `verifyThreads` verification threads (0: as the first row). */
export const benchServerThreads = (options: BenchOptions, verifyThreads: number) =>
  measure(options, { facts: 20, captures: 20, size: 1024 * 1024, connections: 64, duration: options.seconds ?? 15 }, false, undefined, verifyThreads)

/** An OTLP/HTTP collector that accepts and drops everything (the bench measures the exporting side). */
const otlpSink = () =>
  new Promise<{ url: string; received: () => number; close: () => void }>((resolve) => {
    let received = 0
    const server = http.createServer((req, res) => {
      req.resume()
      req.on("end", () => {
        received++
        res.writeHead(200, { "content-type": "application/json" }).end("{}")
      })
    })
    server.listen(0, "127.0.0.1", () => {
      const port = (server.address() as AddressInfo).port
      resolve({
        url: `http://127.0.0.1:${port}`,
        received: () => received,
        close: () => (server.closeAllConnections(), server.close())
      })
    })
  })

/**
 * Telemetry off against on (OTLP export every second to a loopback sink, plus Prometheus), on a
 * light request (20 facts × 20 captures of 16 KiB) where a per-request cost would show.
 */
export const benchTelemetry = async (options: BenchOptions) => {
  const shape = options.smoke
    ? { facts: 10, captures: 2, size: 4 * 1024, connections: 4, duration: 1 }
    : { facts: 20, captures: 20, size: 16 * 1024, connections: 16, duration: 5 }
  const off = await measure(options, shape, false)
  const sink = await otlpSink()
  try {
    const on = await measure(options, shape, { otlp: { url: sink.url, exportIntervalMs: 1_000 }, prometheus: true })
    if (sink.received() === 0) throw new Error("telemetry on exported nothing to the collector")
    return [...off, ...on]
  } finally {
    sink.close()
  }
}

/** The captures of run `bench`: in a run directory under `runRoot`, or in PostgreSQL at `storeUrl`. */
const writeRun = (records: ReadonlyArray<CaptureRecord>, runRoot: string, storeUrl: string | undefined) =>
  Effect.runPromise(Effect.scoped(Effect.gen(function*() {
    const store = storeUrl === undefined
      ? yield* CaptureStore.makeFileSystem({ directory: path.join(runRoot, "bench") })
      : Context.get(yield* Layer.build(PostgresStore.layerUrl({ url: storeUrl, run: "bench", create: true })), CaptureStore.CaptureStore)
    for (const record of records) yield* store.write(record)
  })))

const measure = async (options: BenchOptions, shape: Shape, telemetry: false | Record<string, unknown>, storeUrl?: string, verifyThreads = 0) => {
  const work = await fsp.mkdtemp(path.join(os.tmpdir(), "citegate-bench-server-"))
  try {
    const runRoot = path.join(work, "runs")
    const runDir = path.join(runRoot, "bench")
    await fsp.mkdir(runDir, { recursive: true })
    const sources = Array.from({ length: shape.captures }, (_, i) => `https://bench.example.com/source-${i}.txt` as SourceUrl)
    const records = sources.map((source, i) =>
      makeCaptureRecord({ source, text: options.makeText(i + 1, shape.size), accessedAt, contentType: "text/plain" })
    )
    await writeRun(records, runRoot, storeUrl)
    const labels = Array.from({ length: shape.facts }, (_, i) => `fact_${i}`)
    let state = 54321
    const next = () => (state = (state * 1664525 + 1013904223) >>> 0)
    const facts = labels.map((label, i) => {
      const record = records[i % records.length]!
      const start = next() % (record.text.length - 60)
      return { state: "cited", label, source: record.source, captureSha256: record.sha256, snippet: record.text.slice(start, start + 60) }
    })
    const body = JSON.stringify({ facts })
    const token = "citegate-bench-token"
    const configFile = path.join(work, "pipeline.json")
    await fsp.writeFile(configFile, JSON.stringify({
      sources,
      labels,
      server: {
        tokens: [{ sha256: tokenDigest(token), runs: "*", capture: false }],
        requestTimeoutMs: 60_000,
        ...(verifyThreads === 0 ? {} : { verifyThreads })
      },
      ...(telemetry === false ? {} : { telemetry })
    }))
    // --smoke serves in this process (no CLI start-up to wait for); the real run measures the CLI's own process.
    const server = options.smoke ? await serveInProcess(configFile, runRoot, storeUrl) : await serve(configFile, runRoot, storeUrl, options.nodeFlags ?? [], options.cli)
    try {
      const url = `${server.base}/v1/verify/report?run=bench`
      const headers = { authorization: `Bearer ${token}`, "content-type": "application/json" }
      // Checked requests first: the load below must measure grounded verifications, not refusals. Three,
      // one after the other: each builds the search indexes its deadline's allowance has room for
      // (about 18 Mi code units at the default 15 s), so the builds fall outside the measured window.
      // Each verification thread has a cache of its own to fill: as many checks again per thread.
      for (let i = 0; i < 3 * (1 + verifyThreads); i++) {
        const check = await fetch(url, { method: "POST", headers, body })
        const result = await check.json() as { status: string; report?: { outcome: string; facts: ReadonlyArray<unknown> } }
        if (check.status !== 200 || result.status !== "verified" || result.report?.facts.length !== shape.facts) {
          throw new Error(`the bench report does not verify: ${check.status} ${JSON.stringify(result).slice(0, 500)}`)
        }
      }
      // The load generator runs in a process of its own; the server's CPU is read as its measured window opens and closes.
      let cpuBefore: number | undefined
      let cpuAfter: number | undefined
      const warmupSeconds = options.smoke ? 0 : serviceWarmupSeconds
      const run = await load({ url, connections: shape.connections, duration: shape.duration, warmupSeconds, method: "POST", headers, body, timeout: 60 }, {
        onStart: () => (cpuBefore = server.cpuMs()),
        onEnd: () => (cpuAfter = server.cpuMs())
      })
      if (run.non2xx > 0 || run.errors > 0) {
        throw new Error(`${run.non2xx} non-2xx answers, ${run.errors} errors (${run.timeouts} timeouts) under load`)
      }
      const row: ServerRow = {
        name: `POST /v1/verify/report, ${shape.facts} facts × ${shape.captures} captures of ${shape.size / 1024} KiB${
          storeUrl === undefined ? "" : ", --store postgres"
        }${telemetry === false ? "" : ", telemetry on (OTLP + Prometheus)"}${verifyThreads === 0 ? "" : `, server.verifyThreads ${verifyThreads}`}`,
        connections: shape.connections,
        durationS: shape.duration,
        requests: run.requests.total,
        verificationsPerSecond: run.requests.average,
        p50Ms: run.latency.p50,
        p99Ms: run.latency.p99,
        cpuMsPerRequest: cpuBefore === undefined || cpuAfter === undefined || run.requests.total === 0
          ? undefined
          : (cpuAfter - cpuBefore) / run.requests.total,
        loadCpuMsPerRequest: run.requests.total === 0 ? undefined : run.cpuMs / run.requests.total,
        rampMs: run.rampMs,
        firstResponseMaxMs: run.firstResponseMaxMs,
        warmupRequests: run.warmup.requests,
        warmupP99Ms: run.warmup.p99,
        non2xx: run.non2xx,
        errors: run.errors
      }
      return [row]
    } finally {
      const code = await server.stop()
      if (code !== 143 && code !== 0) process.stderr.write(`serve exited with ${code}\n`)
    }
  } finally {
    await fsp.rm(work, { recursive: true, force: true })
  }
}

export const serverLines = (rows: ReadonlyArray<ServerRow>) => [
  "| service (run-pipeline serve, autocannon) | connections | requests | verifications/s | p50 (ms) | p99 (ms) | server CPU per request (ms) | before the window (warm-up and ramp): answers, p99 (ms) |",
  "|---|---:|---:|---:|---:|---:|---:|---:|",
  ...rows.map((r) =>
    `| ${r.name} | ${r.connections} | ${r.requests} | ${r.verificationsPerSecond.toFixed(1)} | ${r.p50Ms} | ${r.p99Ms} | ${
      r.cpuMsPerRequest === undefined ? "—" : r.cpuMsPerRequest.toFixed(2)
    } | ${r.warmupRequests === undefined || r.warmupRequests === 0 ? "—" : `${r.warmupRequests}, ${r.warmupP99Ms}`} |`
  )
]
