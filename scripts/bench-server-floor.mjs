// The floor of one verification over HTTP in plain node (docs/performance.md): read the body,
// JSON.parse the report, look each fact's quote up in a prebuilt index (a Map per capture),
// JSON.stringify a result of about the shape of citegate's, write one JSON log line to stderr, and
// answer; the server in its own process, loaded for SECONDS at CONNECTIONS by autocannon in a third
// process (scripts/bench-load.mjs, the service bench's load generator).
// usage: node scripts/bench-server-floor.mjs [SECONDS=5] [CONNECTIONS=16]; prints one JSON line
// (requests, rate, p50/p99 ms, the server's CPU ms per request from /proc, the load generator's).
import * as http from "node:http"
import * as fs from "node:fs"
import { spawn } from "node:child_process"
import { load } from "./bench-load.mjs"
const [seconds = "5", conns = "16"] = process.argv.slice(2)
if (process.argv[4] === "--child") {
  const index = new Map()
  const server = http.createServer((req, res) => {
    const chunks = []
    req.on("data", (c) => chunks.push(c))
    req.on("end", () => {
      const report = JSON.parse(Buffer.concat(chunks).toString("utf8"))
      const facts = report.facts.map((f) => {
        let byCapture = index.get(f.captureSha256)
        if (byCapture === undefined) index.set(f.captureSha256, byCapture = new Map())
        let at = byCapture.get(f.snippet)
        if (at === undefined) byCapture.set(f.snippet, at = { start: 1234, end: 1294, occurrences: 1 })
        return { state: "cited", label: f.label, source: f.source, captureSha256: f.captureSha256, accessedAt: "2026-11-30T00:00:00.000Z", excerpt: f.snippet, span: { start: at.start, end: at.end, unit: "utf16" } }
      })
      const body = JSON.stringify({ format: "citegate.result/1", status: "verified", report: { outcome: "grounded", mode: "reject", facts, retractions: [] } })
      res.writeHead(200, { "content-type": "application/json", "x-request-id": crypto.randomUUID() }).end(body)
      process.stderr.write(JSON.stringify({ message: "request", annotations: { method: "POST", path: "/v1/verify/report", status: 200 } }) + "\n")
    })
  })
  server.listen(0, "127.0.0.1", () => process.stdout.write(String(server.address().port) + "\n"))
} else {
  const child = spawn(process.execPath, [process.argv[1], seconds, conns, "--child"], { stdio: ["ignore", "pipe", "ignore"] })
  const port = await new Promise((r) => child.stdout.once("data", (d) => r(Number(String(d).trim()))))
  const words = ["alpha","beta","gamma","delta"]
  const facts = Array.from({ length: 20 }, (_, i) => ({ state: "cited", label: `fact_${i}`, source: `https://bench.example.com/source-${i}.txt`, captureSha256: String(i).padStart(64, "a"), snippet: Array.from({ length: 10 }, (_, j) => words[(i + j) % 4]).join(" ") }))
  const body = JSON.stringify({ facts })
  const cpu = () => { const f = fs.readFileSync(`/proc/${child.pid}/stat`, "utf8").split(") ")[1].split(" "); return (Number(f[11]) + Number(f[12])) * 10 }
  const url = `http://127.0.0.1:${port}/v1/verify/report`
  const opts = { url, connections: Number(conns), method: "POST", headers: { "content-type": "application/json" }, body, timeout: 60 }
  let c0 = 0
  let c1 = 0
  const run = await load({ ...opts, duration: Number(seconds), warmupSeconds: 1 }, { onStart: () => (c0 = cpu()), onEnd: () => (c1 = cpu()) })
  child.kill()
  console.log(JSON.stringify({ tree: "floor", req: run.requests.total, rps: run.requests.average, p50: run.latency.p50, p99: run.latency.p99, cpuMsPerReq: +((c1 - c0) / run.requests.total).toFixed(3), loadCpuMsPerReq: +(run.cpuMs / run.requests.total).toFixed(3) }))
}
