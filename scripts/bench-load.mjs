// The service bench's load generator, in a process of its own: autocannon run by a child node
// process, its result sent back as JSON. The server under test runs in another process, so the
// bench measures two processes side by side (the issue's "server and load generator on this
// machine"), and neither the harness's heap nor its event loop sits in the load generator's path.
//
// What is measured is the steady state of CONNECTIONS keep-alive connections, not their opening:
// - Every connection is opened before any request is sent (autocannon would write each first
//   request as its connection opens). Node (libuv 1.45 and later) accepts one connection per turn
//   of its event loop, and a loaded server's turn lasts as long as the work of every request read
//   in it: 64 connections opening while the first requests are served were accepted one per turn,
//   their first requests waiting seconds, which dominated the p99 of a 10 s run
//   (docs/performance.md, 2026-12-02). An idle server accepts them all within milliseconds.
// - The measured window starts once every connection has had an answer and the warm-up has passed,
//   and lasts `duration` seconds; rate, latency percentiles and CPU times are those of the
//   responses completed in it. Errors and non-2xx answers are counted over the whole run.
// - The warm-up's own answers (after each connection's first, before the window) are reported
//   apart (`warmup`), so that what the window leaves out is still seen.
//
// As a module: `load(options, { onStart, onEnd })` spawns this file and resolves with the result.
// As a program: reads one JSON object of options on stdin, writes JSON lines on stdout:
// `{"started":true}` as the window opens, `{"ended":true}` as it closes, then the result.
import { spawn } from "node:child_process"
import { createRequire } from "node:module"
import { fileURLToPath } from "node:url"

const self = fileURLToPath(import.meta.url)

/** Runs autocannon in a child process; `onStart` and `onEnd` are called as the measured window opens and closes. */
export const load = (options, hooks = {}) =>
  new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [self], { stdio: ["pipe", "pipe", "inherit"] })
    let buffered = ""
    let result
    child.stdout.setEncoding("utf8")
    child.stdout.on("data", (chunk) => {
      buffered += chunk
      let newline
      while ((newline = buffered.indexOf("\n")) >= 0) {
        const line = JSON.parse(buffered.slice(0, newline))
        buffered = buffered.slice(newline + 1)
        if (line.started === true) hooks.onStart?.()
        else if (line.ended === true) hooks.onEnd?.()
        else result = line
      }
    })
    child.on("error", reject)
    child.on("close", (code) =>
      code === 0 && result !== undefined ? resolve(result) : reject(new Error(`the load generator exited with ${code} and no result`))
    )
    child.stdin.end(JSON.stringify(options))
  })

/** Nearest-rank percentile of ascending `sorted`, in whole ms (as autocannon reports them). */
const percentile = (sorted, p) => sorted.length === 0 ? 0 : Math.round(sorted[Math.max(0, Math.ceil((p / 100) * sorted.length) - 1)])

/** How long every connection may take to get its first answer before the run fails. */
const rampLimitS = 120

const main = async () => {
  const autocannon = createRequire(import.meta.url)("autocannon")
  let input = ""
  for await (const chunk of process.stdin) input += chunk
  const { warmupSeconds = 0, duration, ...options } = JSON.parse(input)
  const now = () => performance.now()

  // Each client's first request is held until every connection is open, then a short pause lets
  // the (still idle) server accept them all. autocannon 9's Client writes its first request from
  // `_connect` through `_doRequest`; both are wrapped here.
  let gateOpen = false
  let connected = 0
  const held = []
  let opened
  const openGate = () => setTimeout(() => {
    opened = now()
    gateOpen = true
    for (const send of held.splice(0)) send()
    if (!warm) setTimeout(() => ((warm = true), openWindow()), warmupSeconds * 1000)
  }, 250)
  const setupClient = (client) => {
    if (typeof client._doRequest !== "function" || typeof client._connect !== "function") {
      throw new Error("autocannon's Client has no _doRequest/_connect: the load generator's gate needs updating")
    }
    const doRequest = client._doRequest
    client._doRequest = function (...args) {
      if (gateOpen) return doRequest.apply(this, args)
      held.push(() => doRequest.apply(this, args))
    }
    const connect = client._connect
    let first = true
    client._connect = function (...args) {
      connect.apply(this, args)
      if (first) {
        first = false
        this.conn.once("connect", () => ++connected === options.connections && openGate())
      }
    }
  }

  const instance = autocannon({ ...options, duration: warmupSeconds + duration + rampLimitS + 5, setupClient })
  const answered = new Set()
  let windowStart
  let windowEnd
  let cpu
  let cpuMs
  let firstResponseMaxMs = 0
  let rampMs
  const latencies = []
  const warmupLatencies = []
  let warm = warmupSeconds === 0
  const closeWindow = () => {
    windowEnd = now()
    const used = process.cpuUsage(cpu)
    cpuMs = (used.user + used.system) / 1000
    process.stdout.write(JSON.stringify({ ended: true }) + "\n")
    instance.stop()
  }
  const openWindow = () => {
    if (windowStart !== undefined || !warm || answered.size < options.connections) return
    windowStart = now()
    cpu = process.cpuUsage()
    process.stdout.write(JSON.stringify({ started: true }) + "\n")
    setTimeout(closeWindow, duration * 1000)
  }
  instance.on("response", (client, _status, _bytes, responseTime) => {
    if (!answered.has(client)) {
      answered.add(client)
      firstResponseMaxMs = Math.max(firstResponseMaxMs, responseTime)
      if (answered.size === options.connections) rampMs = now() - opened
      openWindow()
    } else if (windowStart !== undefined && windowEnd === undefined) {
      latencies.push(responseTime)
    } else if (windowStart === undefined) {
      warmupLatencies.push(responseTime)
    }
  })
  const run = await instance
  if (windowStart === undefined || windowEnd === undefined) {
    throw new Error(`${options.connections - answered.size} of ${options.connections} connections got no answer within ${rampLimitS} s`)
  }
  latencies.sort((a, b) => a - b)
  warmupLatencies.sort((a, b) => a - b)
  const total = latencies.length
  process.stdout.write(JSON.stringify({
    requests: { total, average: total / ((windowEnd - windowStart) / 1000) },
    latency: {
      p50: percentile(latencies, 50),
      p97_5: percentile(latencies, 97.5),
      p99: percentile(latencies, 99),
      max: percentile(latencies, 100),
      average: total === 0 ? 0 : latencies.reduce((a, b) => a + b, 0) / total
    },
    non2xx: run.non2xx,
    errors: run.errors,
    timeouts: run.timeouts,
    duration: (windowEnd - windowStart) / 1000,
    // The load generator's own CPU time (user + system) over the window, in ms: it shares the machine's cores with the server.
    cpuMs,
    // From the first requests' release until every connection had its first answer, and the slowest first answer.
    rampMs,
    firstResponseMaxMs,
    // Answered after each connection's first and before the window (none without a warm-up).
    warmup: {
      requests: warmupLatencies.length,
      p50: warmupLatencies.length === 0 ? undefined : percentile(warmupLatencies, 50),
      p99: warmupLatencies.length === 0 ? undefined : percentile(warmupLatencies, 99)
    }
  }) + "\n")
}

if (process.argv[1] === self) await main()
