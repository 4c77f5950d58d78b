/**
 * Extraction bombs against the CLI as a user runs it (issue 30, findings 1-3):
 * a capture from a loopback server of an HTML tree millions of elements deep,
 * a Markdown body of nested brackets, and a PDF whose content stream inflates
 * hundreds of times over. The process must stay alive, answer each with a
 * typed error in `capture --format json`, capture the good source beside it,
 * and keep the peak resident memory of itself and its extraction processes
 * under the documented bound: 448 MiB + 64 x maxBytes (see
 * docs/threat-model.md). Peaks are sampled from /proc every 10 ms.
 *
 * Scaled down from the report (8 MiB bodies, 1 GiB of spaces): the same
 * mechanisms at 1-4 MiB, so each run takes seconds.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { spawn } from "node:child_process"
import * as fsp from "node:fs/promises"
import * as path from "node:path"
import { testServer } from "./httpServer.js"
import { makePdfBomb } from "./pdfBomb.js"
import { hasProc, watchPeak } from "./processMemory.js"
import { fixturePath, tempDirectory } from "./support.js"

const bin = fixturePath("..", "bin", "run-pipeline.js")
const MiB = 1024 * 1024

/** The documented bound on a capture's peak resident memory, CLI and extraction processes together. */
export const captureMemoryBound = (maxBytes: number) => 448 * MiB + 64 * maxBytes

interface Measured {
  readonly code: number | null
  readonly stdout: string
  readonly stderr: string
  readonly ms: number
  readonly peak: { readonly tree: number; readonly root: number; readonly processes: number }
}

const runMeasured = (args: ReadonlyArray<string>) =>
  Effect.async<Measured>((resume) => {
    const started = Date.now()
    const child = spawn(process.execPath, [bin, ...args], { stdio: ["ignore", "pipe", "pipe"] })
    const watch = watchPeak(child.pid!)
    let stdout = ""
    let stderr = ""
    child.stdout.on("data", (d) => (stdout += d))
    child.stderr.on("data", (d) => (stderr += d))
    child.on("close", (code) => resume(Effect.succeed({ code, stdout, stderr, ms: Date.now() - started, peak: watch.stop() })))
    return Effect.sync(() => child.kill("SIGKILL"))
  })

const bodies = {
  good: { type: "text/html; charset=utf-8", body: Buffer.from("<!doctype html><h1>Report</h1><p>Net sales were 4,210 units.</p>") }
} as Record<string, { type: string; body: Buffer }>

/** Captures [bomb, good] with the given maxBytes; returns the measured run and its two results. */
const captureBomb = (bomb: { type: string; body: Buffer }, maxBytes: number) =>
  Effect.gen(function*() {
    const server = yield* testServer((request, response) => {
      const entry = request.url === "/bomb" ? bomb : bodies.good!
      response.writeHead(200, { "content-type": entry.type, "content-length": entry.body.length })
      response.end(entry.body)
    })
    const work = yield* tempDirectory
    const config = path.join(work, "pipeline.json")
    const sources = [server.url("/bomb"), server.url("/good")]
    yield* Effect.promise(() =>
      fsp.writeFile(
        config,
        JSON.stringify({
          sources,
          labels: ["x"],
          capture: {
            maxBytes,
            timeoutMs: 60_000,
            concurrency: 1,
            contentTypes: ["text/html", "text/markdown", "application/pdf"]
          }
        })
      )
    )
    const ran = yield* runMeasured([
      "capture",
      "--config",
      config,
      "--run-dir",
      path.join(work, "run"),
      "--allow-loopback-http",
      "--format",
      "json"
    ])
    const results = JSON.parse(ran.stdout).results as Array<{ status: string; error?: Record<string, unknown> }>
    return { ran, bomb: results[0]!, good: results[1]! }
  })

const report = (what: string, ran: Measured, maxBytes: number) =>
  process.stderr.write(
    `${what}: ${ran.ms} ms, peak ${Math.round(ran.peak.tree / MiB)} MiB (CLI ${Math.round(ran.peak.root / MiB)} MiB, ${ran.peak.processes} processes), bound ${captureMemoryBound(maxBytes) / MiB} MiB\n`
  )

describe.skipIf(!hasProc)("extraction bombs: the CLI stays alive, answers a typed error, within its memory bound", () => {
  it.scopedLive("HTML: 1.4 million nested <b> (4 MiB) is stopped with a typed error, not a process killed or gigabytes", () =>
    Effect.gen(function*() {
      const maxBytes = 4 * MiB
      const body = Buffer.from("<!doctype html><body>" + "<b>".repeat(Math.floor((maxBytes - 64) / 3)))
      const { bomb, good, ran } = yield* captureBomb({ type: "text/html", body }, maxBytes)
      report("html bomb", ran, maxBytes)
      assert.strictEqual(ran.code, 1, ran.stderr)
      assert.strictEqual(bomb.status, "failed")
      // The memory limit, or on a heavily loaded machine the deadline first: either stops the process.
      assert.include(["ExtractionTooLarge", "Timeout"], bomb.error?._tag)
      if (bomb.error?._tag === "ExtractionTooLarge") assert.strictEqual(bomb.error.cap, "memory")
      assert.strictEqual(good.status, "captured")
      assert.isBelow(ran.peak.tree, captureMemoryBound(maxBytes))
    }), 120_000)

  it.scopedLive("Markdown: 2 MiB of nested brackets is a typed error, never an abort of the process", () =>
    Effect.gen(function*() {
      const maxBytes = 2 * MiB
      const half = maxBytes / 2
      const body = Buffer.from("[".repeat(half) + "]".repeat(half - 10))
      const { bomb, good, ran } = yield* captureBomb({ type: "text/markdown", body }, maxBytes)
      report("markdown bomb", ran, maxBytes)
      assert.strictEqual(ran.code, 1, ran.stderr)
      assert.strictEqual(bomb.status, "failed")
      assert.include(["ExtractionTooLarge", "ExtractionFailed"], bomb.error?._tag)
      assert.strictEqual(good.status, "captured")
      assert.isBelow(ran.peak.tree, captureMemoryBound(maxBytes))
    }), 120_000)

  it.scopedLive("PDF: a 256 KiB file inflating to 256 MiB is ExtractionTooLarge (decodedBytes) before pdf.js decodes it", () =>
    Effect.gen(function*() {
      const maxBytes = 1 * MiB
      const body = yield* Effect.promise(() => makePdfBomb(256 * MiB))
      const { bomb, good, ran } = yield* captureBomb({ type: "application/pdf", body }, maxBytes)
      report("pdf bomb", ran, maxBytes)
      assert.strictEqual(ran.code, 1, ran.stderr)
      assert.deepInclude(bomb.error, { _tag: "ExtractionTooLarge", format: "pdf", cap: "decodedBytes", limit: 32 * MiB })
      assert.strictEqual(good.status, "captured")
      assert.isBelow(ran.peak.tree, captureMemoryBound(maxBytes))
    }), 120_000)
})
