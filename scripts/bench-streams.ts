/**
 * `npm run bench -- --only streams`: N concurrent streamed answers (`POST /v1/stream/answer`)
 * against the whole service (`Server.layer`, as `run-pipeline serve` runs it) on 127.0.0.1, each
 * from its own node:http client connection, the answer sent in small deltas as a model would.
 * Reports throughput, latency to `done`, and the process's open sockets and file descriptors
 * before, at the peak, and after (they must be equal before and after).
 */
import * as HttpServer from "@effect/platform/HttpServer"
import { Effect, Exit, Layer, Logger, LogLevel, Scope } from "effect"
import * as fs from "node:fs"
import * as fsp from "node:fs/promises"
import * as http from "node:http"
import * as os from "node:os"
import * as path from "node:path"
import { performance } from "node:perf_hooks"
import * as CaptureStore from "../src/store/CaptureStore.js"
import * as Config from "../src/Config.js"
import { makeCaptureRecord, type Rfc3339Utc, type SourceUrl } from "../src/Domain.js"
import * as Manifest from "../src/Manifest.js"
import { tokenDigest } from "../src/server/Auth.js"
import * as Server from "../src/server/Server.js"

export interface StreamsResult {
  readonly streams: number
  readonly captures: number
  readonly captureBytes: number
  readonly claimsPerAnswer: number
  readonly deltaChars: number
  readonly wallMs: number
  /** CPU time (user + system) of the whole process (server and clients) during the streams. */
  readonly cpuMs: number
  readonly loadAverage: number
  readonly streamsPerSecond: number
  readonly eventsPerSecond: number
  readonly p50Ms: number
  readonly p99Ms: number
  readonly grounded: number
  readonly before: { readonly fds: number; readonly sockets: number }
  readonly peak: { readonly fds: number; readonly sockets: number }
  readonly after: { readonly fds: number; readonly sockets: number }
}

const descriptors = () => {
  const fds = fs.readdirSync("/proc/self/fd")
  let sockets = 0
  for (const fd of fds) {
    try {
      if (fs.readlinkSync(`/proc/self/fd/${fd}`).startsWith("socket:")) sockets++
    } catch {
      // closed between the listing and the read
    }
  }
  return { fds: fds.length, sockets }
}

/** The counts once they have not changed for 250 ms (closing sockets settle asynchronously). */
const steady = async () => {
  let last = descriptors()
  for (let same = 0; same < 5;) {
    await new Promise((resolve) => setTimeout(resolve, 50))
    const now = descriptors()
    same = now.fds === last.fds && now.sockets === last.sockets ? same + 1 : 0
    last = now
  }
  return last
}

const percentile = (sorted: ReadonlyArray<number>, p: number) => sorted[Math.min(sorted.length - 1, Math.ceil(p * sorted.length) - 1)]!

export const benchStreams = async (options: {
  readonly streams: number
  readonly captures: number
  readonly captureBytes: number
  readonly makeText: (seed: number, bytes: number) => string
  /** Untimed streams first (JIT, page cache); off for the smoke run. */
  readonly warmup: boolean
}): Promise<StreamsResult> => {
  const work = await fsp.mkdtemp(path.join(os.tmpdir(), "citegate-bench-streams-"))
  const scope = Effect.runSync(Scope.make())
  try {
    const runRoot = path.join(work, "runs")
    const runDir = path.join(runRoot, "bench-run")
    await fsp.mkdir(runDir, { recursive: true })
    const sources = Array.from({ length: options.captures }, (_, i) => `https://bench.example.com/stream-${i}.txt` as SourceUrl)
    const accessedAt = "2026-11-30T00:00:00.000Z" as Rfc3339Utc
    const records = sources.map((source, i) =>
      makeCaptureRecord({ source, text: options.makeText(i + 101, options.captureBytes), accessedAt, contentType: "text/plain" })
    )
    await Effect.runPromise(Effect.gen(function*() {
      const store = yield* CaptureStore.makeFileSystem({ directory: runDir })
      for (const record of records) yield* store.write(record)
    }))
    const token = "bench-stream-token"
    const configJson = {
      sources,
      labels: ["unused"],
      server: { tokens: [{ sha256: tokenDigest(token), runs: "*", capture: false }], requestTimeoutMs: 120_000 }
    }
    const configFile = path.join(work, "pipeline.json")
    await fsp.writeFile(configFile, JSON.stringify(configJson))
    const config = await Effect.runPromise(Config.decode(configJson))
    const manifest = await Effect.runPromise(Manifest.make(config).pipe(Effect.provide(CaptureStore.layerFileSystem({ directory: runDir }))))

    // One answer: a claim per capture, its quote a real passage; the last claim's quote fabricated (one retraction).
    const claims = Math.min(10, options.captures)
    const body: Array<string> = []
    const evidence: Array<string> = []
    for (let i = 0; i < claims; i++) {
      const text = records[i]!.text
      const at = Math.floor(text.length / 3)
      const quote = text.slice(at, at + 50).replace(/[\n"\\]/g, " ").replace(/\s+/g, " ").trim()
      const exact = text.includes(quote) ? quote : text.slice(0, 20).split("\n")[0]!
      body.push(`Claim ${i + 1} states what source ${i + 1} says.[${i + 1}]{c${i + 1}}`)
      evidence.push(`c${i + 1}|${i + 1}|"${i === claims - 1 ? "a fabricated quote" : exact}"`)
    }
    const answer = `${body.join(" ")}\nEVI1\nMANIFEST ${manifest.digest}\n${evidence.join("\n")}\nEND_EVI1\n`
    const deltaChars = 24
    const lines: Array<string> = []
    for (let i = 0; i < answer.length; i += deltaChars) lines.push(`${JSON.stringify({ type: "delta", text: answer.slice(i, i + deltaChars) })}\n`)

    const context = await Effect.runPromise(Layer.buildWithScope(
      // One log line per request would drown the report.
      Server.layer({ config, configFile, runRoot, allowLoopbackHttp: false, host: "127.0.0.1", port: 0 }).pipe(
        Layer.provide(Logger.minimumLogLevel(LogLevel.Warning))
      ),
      scope
    ))
    const address = Effect.runSync(Effect.provide(HttpServer.HttpServer, context)).address
    const port = address._tag === "TcpAddress" ? address.port : 0

    const one = () =>
      new Promise<{ readonly ms: number; readonly events: number; readonly state: string }>((resolve, reject) => {
        const started = performance.now()
        const request = http.request({
          host: "127.0.0.1",
          port,
          method: "POST",
          path: "/v1/stream/answer?run=bench-run",
          headers: { authorization: `Bearer ${token}`, "content-type": "application/x-ndjson" },
          agent: false
        })
        request.on("error", reject)
        request.on("response", (response) => {
          let text = ""
          response.setEncoding("utf8")
          response.on("data", (chunk: string) => (text += chunk))
          response.on("end", () => {
            const events = text.trim().split("\n")
            const done = JSON.parse(events.at(-1)!) as { type: string; state: string }
            resolve({ ms: performance.now() - started, events: events.length, state: done.type === "done" ? done.state : "none" })
          })
        })
        // The deltas one write each, as a model's output arrives.
        let i = 0
        const write = () => {
          while (i < lines.length) {
            if (!request.write(lines[i++]!)) return void request.once("drain", write)
          }
          request.end()
        }
        write()
      })

    // Warm-up (JIT, page cache), then settle before counting.
    if (options.warmup) await Promise.all(Array.from({ length: 4 }, one))
    const before = await steady()
    let peak = before
    const sampler = setInterval(() => {
      const now = descriptors()
      if (now.fds > peak.fds) peak = now
    }, 5)
    const started = performance.now()
    const cpu = process.cpuUsage()
    const results = await Promise.all(Array.from({ length: options.streams }, one))
    const wallMs = performance.now() - started
    const used = process.cpuUsage(cpu)
    clearInterval(sampler)
    const after = await steady()
    const sorted = results.map((r) => r.ms).sort((a, b) => a - b)
    return {
      streams: options.streams,
      captures: options.captures,
      captureBytes: options.captureBytes,
      claimsPerAnswer: claims,
      deltaChars,
      wallMs,
      cpuMs: (used.user + used.system) / 1000,
      loadAverage: os.loadavg()[0]!,
      streamsPerSecond: options.streams / (wallMs / 1000),
      eventsPerSecond: results.reduce((n, r) => n + r.events, 0) / (wallMs / 1000),
      p50Ms: percentile(sorted, 0.5),
      p99Ms: percentile(sorted, 0.99),
      grounded: results.filter((r) => r.state === "grounded").length,
      before,
      peak,
      after
    }
  } finally {
    await Effect.runPromise(Scope.close(scope, Exit.void))
    await fsp.rm(work, { recursive: true, force: true })
  }
}

export const streamsLines = (r: StreamsResult): Array<string> => [
  "",
  `Streamed answers: ${r.streams} concurrent POST /v1/stream/answer on 127.0.0.1 (one connection each), ` +
    `${r.claimsPerAnswer} claims per answer against ${r.captures} × ${Math.round(r.captureBytes / 1024)} KiB captures, ` +
    `sent in ${r.deltaChars}-character deltas: ${r.wallMs.toFixed(0)} ms wall, ${r.streamsPerSecond.toFixed(1)} streams/s, ` +
    `${r.eventsPerSecond.toFixed(0)} events/s, latency to done p50 ${r.p50Ms.toFixed(0)} ms, p99 ${r.p99Ms.toFixed(0)} ms; ` +
    `${r.grounded}/${r.streams} grounded. CPU (server and clients, one process) ${r.cpuMs.toFixed(0)} ms, ` +
    `${(r.cpuMs / r.streams).toFixed(1)} ms per stream; load average ${r.loadAverage.toFixed(1)} on ${os.cpus().length} CPUs.`,
  "",
  "| process | before | peak | after | equal |",
  "|---|---:|---:|---:|---|",
  `| file descriptors | ${r.before.fds} | ${r.peak.fds} | ${r.after.fds} | ${r.before.fds === r.after.fds ? "yes" : "NO"} |`,
  `| sockets | ${r.before.sockets} | ${r.peak.sockets} | ${r.after.sockets} | ${r.before.sockets === r.after.sockets ? "yes" : "NO"} |`
]
