/**
 * `npm run bench -- --only bombs`: extraction bombs captured by the CLI from a
 * loopback server (HTML nested a million elements deep, Markdown nested
 * brackets, a PDF whose content stream inflates to hundreds of MiB), each with
 * the peak resident memory of the CLI and its extraction process together
 * (sampled from /proc every 10 ms) against the documented bound
 * 448 MiB + 64 × maxBytes, the typed error, and whether the process lived;
 * and what running extraction in a separate process costs (its start-up, and
 * each job against the same extraction in-process).
 */
import { Effect } from "effect"
import { spawn } from "node:child_process"
import * as fsp from "node:fs/promises"
import * as http from "node:http"
import type { AddressInfo } from "node:net"
import * as os from "node:os"
import * as path from "node:path"
import { performance } from "node:perf_hooks"
import * as Extraction from "../src/extract/Extraction.js"
import * as SourceRunner from "../src/extract/Runner.js"
import { makePdfBomb } from "../test/pdfBomb.js"
import { hasProc, watchPeak } from "../test/processMemory.js"

const MiB = 1024 * 1024

export interface BombRow {
  readonly name: string
  readonly maxBytes: number
  readonly bodyBytes: number
  readonly ms: number
  readonly peakMiB: number
  readonly cliPeakMiB: number
  readonly boundMiB: number
  readonly error: string
  readonly alive: boolean
}

export interface RunnerRow {
  readonly name: string
  readonly ms: number
}

export const captureMemoryBound = (maxBytes: number) => 448 * MiB + 64 * maxBytes

const serveOnce = (type: string, body: Buffer) =>
  new Promise<{ server: http.Server; url: string }>((resolve) => {
    const server = http.createServer((_req, res) => {
      res.writeHead(200, { "content-type": type, "content-length": body.length })
      res.end(body)
    })
    server.listen(0, "127.0.0.1", () => {
      resolve({ server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/bomb` })
    })
  })

const captureBomb = async (name: string, type: string, body: Buffer, maxBytes: number): Promise<BombRow> => {
  const { server, url } = await serveOnce(type, body)
  const work = await fsp.mkdtemp(path.join(os.tmpdir(), "citegate-bench-bombs-"))
  try {
    const config = path.join(work, "pipeline.json")
    await fsp.writeFile(config, JSON.stringify({
      sources: [url],
      labels: ["x"],
      capture: { maxBytes, timeoutMs: 120_000, contentTypes: ["text/html", "text/markdown", "application/pdf"] }
    }))
    const bin = path.join("bin", "run-pipeline.js")
    const args = [bin, "capture", "--config", config, "--run-dir", path.join(work, "run"), "--allow-loopback-http", "--format", "json"]
    const started = performance.now()
    const { code, peak, stdout } = await new Promise<{ code: number | null; stdout: string; peak: ReturnType<ReturnType<typeof watchPeak>["stop"]> }>((resolve) => {
      const child = spawn(process.execPath, args, { stdio: ["ignore", "pipe", "ignore"] })
      const watch = watchPeak(child.pid!)
      let out = ""
      child.stdout.on("data", (d) => (out += d))
      child.on("close", (exit) => resolve({ code: exit, stdout: out, peak: watch.stop() }))
    })
    const ms = performance.now() - started
    let error = "none"
    try {
      const result = JSON.parse(stdout).results[0]
      error = result.error === undefined ? result.status : `${result.error._tag}${result.error.cap === undefined ? "" : ` (${result.error.cap})`}`
    } catch {
      error = `no answer (exit ${code})`
    }
    return {
      name,
      maxBytes,
      bodyBytes: body.byteLength,
      ms,
      peakMiB: peak.tree / MiB,
      cliPeakMiB: peak.root / MiB,
      boundMiB: captureMemoryBound(maxBytes) / MiB,
      error,
      alive: code === 0 || code === 1
    }
  } finally {
    server.close()
    await fsp.rm(work, { recursive: true, force: true })
  }
}

export const benchBombs = async (smoke: boolean): Promise<Array<BombRow>> => {
  if (!hasProc) {
    process.stderr.write("bench: extraction bombs skipped: no /proc to sample memory from\n")
    return []
  }
  // --smoke checks the harness on bodies too small to be bombs (micromark's time on brackets grows faster than linearly).
  const html = smoke ? 64 * 1024 : 4 * MiB
  const markdown = smoke ? 16 * 1024 : 2 * MiB
  const pdfSpaces = smoke ? MiB : 256 * MiB
  return [
    await captureBomb(
      `HTML, ${Math.floor(html / 3)} nested <b>`,
      "text/html",
      Buffer.from("<!doctype html><body>" + "<b>".repeat(Math.floor((html - 64) / 3))),
      html
    ),
    await captureBomb(
      `Markdown, ${markdown / 2} [ then ]`,
      "text/markdown",
      Buffer.from("[".repeat(markdown / 2) + "]".repeat(markdown / 2 - 10)),
      markdown
    ),
    await captureBomb(
      `PDF, ${pdfSpaces / MiB} MiB of spaces under /FlateDecode`,
      "application/pdf",
      await makePdfBomb(pdfSpaces),
      MiB
    )
  ]
}

/** The cost of the extraction process: its start-up, and a small HTML page in it against in-process. */
export const benchRunner = async (runs: number, smoke: boolean): Promise<Array<RunnerRow>> => {
  const body = Buffer.from("<!doctype html><h1>Report</h1>" + "<p>Net sales were <b>4,210</b> units.</p>".repeat(200))
  const limits = { maxPages: 2_000, maxCharacters: 16 * MiB, maxDepth: 512 }
  const median = (xs: Array<number>) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!
  return Effect.runPromise(Effect.scoped(Effect.gen(function*() {
    const timed = <A, E>(effect: Effect.Effect<A, E>) =>
      Effect.gen(function*() {
        const started = performance.now()
        yield* effect
        return performance.now() - started
      })
    // The runner users get (dist/, which starts the bundled child) when built; else the sources' (child through tsx).
    const built = path.join("dist", "extract", "Runner.js")
    const Runner: typeof SourceRunner = yield* Effect.promise(() =>
      fsp.access(built).then(() => import(path.resolve(built)) as Promise<typeof SourceRunner>, () => SourceRunner)
    )
    const fromDist = Runner !== SourceRunner
    const runner = yield* Runner.make({ maxBytes: 8 * MiB, size: 1 })
    const cold = yield* timed(runner.extract("https://bench.example.com/a", "text/html", body, limits))
    const warm: Array<number> = []
    const inProcess: Array<number> = []
    const largeWarm: Array<number> = []
    const largeInProcess: Array<number> = []
    // A 2 MiB page: the body goes over the channel and its 1.4 Mi characters of text come back.
    const large = Buffer.from("<!doctype html><h1>Report</h1>" + "<p>Net sales were <b>4,210</b> units.</p>".repeat(smoke ? 1_000 : 50_000))
    for (let i = 0; i < runs; i++) {
      warm.push(yield* timed(runner.extract("https://bench.example.com/a", "text/html", body, limits)))
      inProcess.push(yield* timed(Extraction.extract("https://bench.example.com/a", "text/html", body, limits)))
      largeWarm.push(yield* timed(runner.extract("https://bench.example.com/b", "text/html", large, limits)))
      largeInProcess.push(yield* timed(Extraction.extract("https://bench.example.com/b", "text/html", large, limits)))
    }
    return [
      { name: `a ${(large.byteLength / MiB).toFixed(1)} MiB HTML page in the warm extraction process`, ms: median(largeWarm) },
      { name: "the same page extracted in-process (for comparison)", ms: median(largeInProcess) },
      { name: `first job, the extraction process starting (${fromDist ? "the bundled child" : "from the sources, through tsx"})`, ms: cold },
      { name: `a ${(body.byteLength / 1024).toFixed(0)} KiB HTML page in the warm extraction process`, ms: median(warm) },
      { name: "the same page extracted in-process (for comparison)", ms: median(inProcess) }
    ]
  })))
}

export const bombLines = (bombs: ReadonlyArray<BombRow>, runner: ReadonlyArray<RunnerRow>) => [
  "",
  "| extraction bomb (CLI capture, loopback) | body | maxBytes | wall (ms) | peak RSS, CLI + extraction (MiB) | CLI alone (MiB) | bound 448 MiB + 64 × maxBytes | answer | process alive |",
  "|---|---:|---:|---:|---:|---:|---:|---|---|",
  ...bombs.map((r) =>
    `| ${r.name} | ${(r.bodyBytes / MiB).toFixed(2)} MiB | ${(r.maxBytes / MiB).toFixed(2)} MiB | ${r.ms.toFixed(0)} | ${r.peakMiB.toFixed(0)} | ${r.cliPeakMiB.toFixed(0)} | ${r.boundMiB.toFixed(0)} MiB ${r.peakMiB <= r.boundMiB ? "met" : "MISSED"} | ${r.error} | ${r.alive ? "yes" : "NO"} |`
  ),
  "",
  "| extraction process cost | ms |",
  "|---|---:|",
  ...runner.map((r) => `| ${r.name} | ${r.ms.toFixed(1)} |`)
]
