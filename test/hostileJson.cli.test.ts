/**
 * Hostile reports against the compiled CLI (`npm run build` first), each in its
 * own process: elapsed time and the process's own peak RSS are measured, not
 * assumed. The process also runs with a capped heap, so a regression aborts it
 * instead of taking the machine's memory.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Schema } from "effect"
import { spawn } from "node:child_process"
import * as fsp from "node:fs/promises"
import * as path from "node:path"
import { pathToFileURL } from "node:url"
import { decodeOptions, makeCaptureRecord, type SourceUrl } from "../src/Domain.js"
import { maxDepth } from "../src/internal/strictJson.js"
import { RenderedResult } from "../src/render/Rendering.js"
import { accessedAt, fixturePath, runDirectoryWith, tempDirectory } from "./support.js"

const bin = fixturePath("..", "bin", "run-pipeline.js")

// Generous for a loaded machine (start-up alone is 1–2 s); the old code took 12 s to 40 s on these inputs.
const timeBudgetMs = 20_000
// The old code peaked at 1.7–2 GiB on these inputs (or aborted out of memory).
const rssBudgetMiB = 400

const SOURCE = "https://hostile.example.com/emoji.txt" as SourceUrl
const emojiText = "Net sales rose to 4,210 units 🚀"
const record = makeCaptureRecord({ source: SOURCE, text: emojiText, accessedAt, contentType: "text/plain" })

interface Ran {
  readonly code: number | null
  readonly signal: NodeJS.Signals | null
  readonly stdout: string
  readonly stderr: string
  readonly ms: number
  readonly maxRssMiB: number
}

/** A run directory with one capture, a pipeline.json (maxFacts 100), and a module that reports peak RSS on exit. */
const setup = Effect.gen(function*() {
  const runDir = yield* runDirectoryWith([record])
  const work = yield* tempDirectory
  const configFile = path.join(work, "pipeline.json")
  const probe = path.join(work, "maxrss.mjs")
  yield* Effect.promise(() =>
    Promise.all([
      fsp.writeFile(configFile, JSON.stringify({ sources: [SOURCE], labels: ["a"], verify: { maxFacts: 100 } })),
      fsp.writeFile(
        probe,
        `import { writeSync } from "node:fs"\n` +
          `process.on("exit", () => writeSync(2, "\\ncitegate-maxrss-kib " + process.resourceUsage().maxRSS + "\\n"))\n`
      )
    ])
  )
  const verify = (name: string, text: string) =>
    Effect.gen(function*() {
      const report = path.join(work, name)
      yield* Effect.promise(() => fsp.writeFile(report, text))
      return yield* run([
        "--max-old-space-size=1024",
        "--import",
        pathToFileURL(probe).href,
        bin,
        "verify",
        "--config",
        configFile,
        "--run-dir",
        runDir,
        "--report",
        report,
        "--format",
        "json"
      ])
    })
  return { verify }
})

const run = (args: ReadonlyArray<string>) =>
  Effect.async<Ran>((resume) => {
    const start = performance.now()
    const child = spawn(process.execPath, args, { stdio: ["ignore", "pipe", "pipe"] })
    let stdout = ""
    let stderr = ""
    child.stdout.on("data", (d) => (stdout += d))
    child.stderr.on("data", (d) => (stderr += d))
    child.on("close", (code, signal) => {
      const ms = performance.now() - start
      const kib = /citegate-maxrss-kib (\d+)/.exec(stderr)?.[1]
      resume(Effect.succeed({ code, signal, stdout, stderr, ms, maxRssMiB: kib === undefined ? NaN : Number(kib) / 1024 }))
    })
  })

/** The CLI rejected the report with InvalidReport (JSON on stdout that decodes), within the time and memory budget. */
const assertInvalidReport = (ran: Ran, what: string) => {
  // Printed so the figures are visible in the test log.
  console.log(`${what}: exit ${ran.code}, ${ran.ms.toFixed(0)} ms, peak RSS ${ran.maxRssMiB.toFixed(0)} MiB, stdout ${ran.stdout.length} bytes`)
  assert.strictEqual(ran.signal, null, ran.stderr.slice(0, 2000))
  assert.strictEqual(ran.code, 1, ran.stderr.slice(0, 2000))
  assert.notInclude(ran.stderr, "internal error")
  assert.match(ran.stderr, /verify: REJECTED \(InvalidReport\)/)
  assert.isBelow(ran.ms, timeBudgetMs)
  assert.isBelow(ran.maxRssMiB, rssBudgetMiB)
  const result = Schema.decodeUnknownSync(RenderedResult, decodeOptions)(JSON.parse(ran.stdout))
  if (result.status !== "rejected" || result.error._tag !== "InvalidReport") return assert.fail("expected InvalidReport")
  return result.error
}

describe("run-pipeline verify: hostile reports", () => {
  it.scopedLive("an 80 KB report 40,000 arrays deep (it used to abort out of memory)", () =>
    Effect.gen(function*() {
      const s = yield* setup
      const text = `{"facts":[` + "[".repeat(40_000) + "]".repeat(40_000) + `]}`
      const error = assertInvalidReport(yield* s.verify("deep40k.json", text), "40,000 deep")
      assert.deepStrictEqual(error.issues[0].path, ["facts", ...Array(maxDepth - 1).fill(0)])
    }), 60_000)

  it.scopedLive("a 6 KB report 3,000 arrays deep (it used to end in an internal error)", () =>
    Effect.gen(function*() {
      const s = yield* setup
      const error = assertInvalidReport(yield* s.verify("deep3k.json", "[".repeat(3_000) + "]".repeat(3_000)), "3,000 deep")
      assert.strictEqual(error.issues.length, 1)
    }), 60_000)

  it.scopedLive("a 3 MB report of a million facts with maxFacts 100: one issue, small output", () =>
    Effect.gen(function*() {
      const s = yield* setup
      const text = `{"facts":[` + Array(1_000_000).fill("{}").join(",") + `]}`
      const ran = yield* s.verify("million.json", text)
      const error = assertInvalidReport(ran, "1,000,000 facts")
      assert.deepStrictEqual(error.issues, [{ path: ["facts"], message: "must hold at most 100 facts, got 1000000" }])
      assert.isBelow(ran.stdout.length, 4096)
    }), 60_000)

  it.scopedLive("100 facts, each with a 300,000-character label: output bounded, values cut", () =>
    Effect.gen(function*() {
      const s = yield* setup
      const long = "x".repeat(300_000)
      const facts = Array.from({ length: 100 }, () => ({ state: "unavailable", label: long, reason: long }))
      const ran = yield* s.verify("long.json", JSON.stringify({ facts }))
      const error = assertInvalidReport(ran, "100 x 300,000-character labels")
      assert.strictEqual(error.issues.length, 20)
      assert.strictEqual(error.omitted, 80)
      assert.isBelow(ran.stdout.length, 64 * 1024)
      assert.include(error.issues[0].message, "… (300000 characters)")
    }), 60_000)

  it.scopedLive("a snippet ending in half an emoji that is in the capture is rejected, not verified", () =>
    Effect.gen(function*() {
      const s = yield* setup
      const snippet = emojiText.slice(0, -1)
      assert.isTrue(emojiText.includes(snippet))
      const fact = { state: "cited", label: "a", source: SOURCE, captureSha256: record.sha256, snippet }
      const error = assertInvalidReport(yield* s.verify("lone.json", JSON.stringify({ facts: [fact] })), "lone surrogate")
      assert.deepStrictEqual(error.issues.map((i) => i.path), [["facts", 0, "snippet"]])
    }), 60_000)

  it.scopedLive("the probe measures: an ordinary report stays far under the budget", () =>
    Effect.gen(function*() {
      const s = yield* setup
      const fact = { state: "cited", label: "a", source: SOURCE, captureSha256: record.sha256, snippet: emojiText }
      const ran = yield* s.verify("good.json", JSON.stringify({ facts: [fact] }))
      console.log(`ordinary report: exit ${ran.code}, ${ran.ms.toFixed(0)} ms, peak RSS ${ran.maxRssMiB.toFixed(0)} MiB`)
      assert.strictEqual(ran.code, 0, ran.stderr)
      assert.isAbove(ran.maxRssMiB, 20)
      assert.isBelow(ran.maxRssMiB, rssBudgetMiB)
    }), 60_000)
})
