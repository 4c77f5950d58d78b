/**
 * The service under load: `run-pipeline serve` (the bundled CLI, its own process) on 127.0.0.1,
 * driven by autocannon at concurrency 64 with one report per request (20 facts against 20 × 1 MiB
 * captures). Reports verifications per second and p50 / p99 latency; every response must be a
 * 200 with the verified JSON result (any other answer fails the bench).
 */
import * as HttpServer from "@effect/platform/HttpServer"
import { Context, Effect, Exit, Layer, Logger, Scope } from "effect"
import { spawn } from "node:child_process"
import * as fsp from "node:fs/promises"
import * as http from "node:http"
import { createRequire } from "node:module"
import * as os from "node:os"
import type { AddressInfo } from "node:net"
import * as path from "node:path"
import * as CaptureStore from "../src/store/CaptureStore.js"
import { makeCaptureRecord, type Rfc3339Utc, type SourceUrl } from "../src/Domain.js"
import * as Config from "../src/Config.js"
import { tokenDigest } from "../src/server/Auth.js"
import * as Server from "../src/server/Server.js"

interface AutocannonResult {
  readonly requests: { readonly average: number; readonly total: number }
  readonly latency: { readonly p50: number; readonly p99: number; readonly average: number }
  readonly non2xx: number
  readonly errors: number
  readonly timeouts: number
  readonly duration: number
}
type Autocannon = (options: {
  url: string
  connections: number
  duration: number
  method: string
  headers: Record<string, string>
  body: string
  timeout: number
}) => Promise<AutocannonResult>
const autocannon = createRequire(import.meta.url)("autocannon") as Autocannon

export interface ServerRow {
  readonly name: string
  readonly connections: number
  readonly durationS: number
  readonly requests: number
  readonly verificationsPerSecond: number
  readonly p50Ms: number
  readonly p99Ms: number
  readonly non2xx: number
  readonly errors: number
}

const accessedAt = "2026-11-30T00:00:00.000Z" as Rfc3339Utc

/** Starts `run-pipeline serve` on a free port; resolves with its base URL and a stop function (SIGTERM, waits for exit). */
const serve = (configFile: string, runRoot: string) =>
  new Promise<{ base: string; stop: () => Promise<number | null> }>((resolve, reject) => {
    const bin = path.join(path.dirname(new URL(import.meta.url).pathname), "..", "bin", "run-pipeline.js")
    const child = spawn(process.execPath, [bin, "serve", "--config", configFile, "--listen", "127.0.0.1:0", "--run-root", runRoot], {
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
        resolve({ base: address, stop: () => (child.kill("SIGTERM"), exited) })
      }
    })
    void exited.then((code) => {
      if (!started) reject(new Error(`serve exited (${code}) before listening: ${buffered}`))
    })
  })

/** The same server in this process (for --smoke): Server.layer on a free loopback port. */
const serveInProcess = async (configFile: string, runRoot: string) => {
  const config = await Effect.runPromise(Config.decodeText(await fsp.readFile(configFile, "utf8")))
  const scope = Effect.runSync(Scope.make())
  const context = await Effect.runPromise(
    Layer.buildWithScope(Server.layer({ config, configFile, runRoot, host: "127.0.0.1", port: 0 }), scope).pipe(
      Effect.provide(Logger.remove(Logger.defaultLogger))
    )
  )
  const address = Context.get(context, HttpServer.HttpServer).address
  const port = address._tag === "TcpAddress" ? address.port : 0
  return { base: `http://127.0.0.1:${port}`, stop: () => Effect.runPromise(Effect.as(Scope.close(scope, Exit.void), 0)) }
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
}

export const benchServer = (options: BenchOptions) =>
  measure(
    options,
    options.smoke
      ? { facts: 10, captures: 2, size: 4 * 1024, connections: 4, duration: 1 }
      : { facts: 20, captures: 20, size: 1024 * 1024, connections: 64, duration: 15 },
    false
  )

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

const measure = async (options: BenchOptions, shape: Shape, telemetry: false | Record<string, unknown>) => {
  const work = await fsp.mkdtemp(path.join(os.tmpdir(), "citegate-bench-server-"))
  try {
    const runRoot = path.join(work, "runs")
    const runDir = path.join(runRoot, "bench")
    await fsp.mkdir(runDir, { recursive: true })
    const sources = Array.from({ length: shape.captures }, (_, i) => `https://bench.example.com/source-${i}.txt` as SourceUrl)
    const records = sources.map((source, i) =>
      makeCaptureRecord({ source, text: options.makeText(i + 1, shape.size), accessedAt, contentType: "text/plain" })
    )
    await Effect.runPromise(Effect.gen(function*() {
      const store = yield* CaptureStore.makeFileSystem({ directory: runDir })
      for (const record of records) yield* store.write(record)
    }))
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
      server: { tokens: [{ sha256: tokenDigest(token), runs: "*", capture: false }], requestTimeoutMs: 60_000 },
      ...(telemetry === false ? {} : { telemetry })
    }))
    // --smoke serves in this process (no CLI start-up to wait for); the real run measures the CLI's own process.
    const server = options.smoke ? await serveInProcess(configFile, runRoot) : await serve(configFile, runRoot)
    try {
      const url = `${server.base}/v1/verify/report?run=bench`
      const headers = { authorization: `Bearer ${token}`, "content-type": "application/json" }
      // One checked request first: the load below must measure grounded verifications, not refusals.
      const check = await fetch(url, { method: "POST", headers, body })
      const result = await check.json() as { status: string; report?: { outcome: string; facts: ReadonlyArray<unknown> } }
      if (check.status !== 200 || result.status !== "verified" || result.report?.facts.length !== shape.facts) {
        throw new Error(`the bench report does not verify: ${check.status} ${JSON.stringify(result).slice(0, 500)}`)
      }
      const run = await autocannon({ url, connections: shape.connections, duration: shape.duration, method: "POST", headers, body, timeout: 60 })
      if (run.non2xx > 0 || run.errors > 0) {
        throw new Error(`${run.non2xx} non-2xx answers, ${run.errors} errors (${run.timeouts} timeouts) under load`)
      }
      const row: ServerRow = {
        name: `POST /v1/verify/report, ${shape.facts} facts × ${shape.captures} captures of ${shape.size / 1024} KiB${
          telemetry === false ? "" : ", telemetry on (OTLP + Prometheus)"
        }`,
        connections: shape.connections,
        durationS: shape.duration,
        requests: run.requests.total,
        verificationsPerSecond: run.requests.average,
        p50Ms: run.latency.p50,
        p99Ms: run.latency.p99,
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
  "| service (run-pipeline serve, autocannon) | connections | requests | verifications/s | p50 (ms) | p99 (ms) |",
  "|---|---:|---:|---:|---:|---:|",
  ...rows.map((r) => `| ${r.name} | ${r.connections} | ${r.requests} | ${r.verificationsPerSecond.toFixed(1)} | ${r.p50Ms} | ${r.p99Ms} |`)
]
