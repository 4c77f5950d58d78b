/**
 * `run-pipeline verify` over enough records for the helper thread to read them ahead
 * (internal/readAhead.ts): the same report as with fewer, and the process ends when its work
 * does. The idle thread must not hold it (its piped standard streams once kept the CLI alive for
 * the thread's 30 s idle time).
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { makeCaptureRecord, type SourceUrl } from "../src/Domain.js"
import * as ReadAhead from "../src/internal/readAhead.js"
import { cli } from "./cliProcess.js"
import { accessedAt, cited, runDirectoryWith, tempDirectory } from "./support.js"

describe("run-pipeline verify with records read ahead", () => {
  it.scopedLive("verifies every fact and exits as soon as it is done", () =>
    Effect.gen(function*() {
      const count = 2 * ReadAhead.minFiles
      const records = Array.from({ length: count }, (_, i) =>
        makeCaptureRecord({
          source: `https://many.example.com/${i}.txt` as SourceUrl,
          text: `Record ${i}: net sales rose ${i}% to ${1_000 + i} units in the third quarter.`,
          accessedAt,
          contentType: "text/plain"
        }))
      const runDir = yield* runDirectoryWith(records)
      const work = yield* tempDirectory
      const labels = records.map((_, i) => `fact_${i}`)
      const report = path.join(work, "report.json")
      const config = path.join(work, "config.json")
      fs.writeFileSync(report, JSON.stringify({ facts: records.map((r, i) => cited(labels[i]!, r, `rose ${i}% to ${1_000 + i} units`)) }))
      fs.writeFileSync(config, JSON.stringify({ sources: records.map((r) => r.source), labels, verify: { maxFacts: count } }))
      const started = Date.now()
      const ran = yield* cli(["verify", "--config", config, "--run-dir", runDir, "--report", report, "--format", "json"])
      const seconds = (Date.now() - started) / 1000
      assert.strictEqual(ran.code, 0, ran.stderr)
      const result = JSON.parse(ran.stdout) as { status: string; report: { outcome: string; facts: ReadonlyArray<unknown> } }
      assert.strictEqual(result.status, "verified")
      assert.strictEqual(result.report.outcome, "grounded")
      assert.strictEqual(result.report.facts.length, count)
      // The CLI's own start and work take a second or two; the thread's idle time is 30 s.
      assert.isBelow(seconds, 15)
    }), 60_000)
})
