/**
 * The audit's deadline (`audit.timeoutMs`): 100 excerpts absent from an 8 MiB new capture, each of
 * which goes to the candidate search. With the deadline at 1 s the spawned CLI ends with
 * `AuditTimeout` (exit 2, no result) long before the search would have finished.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import * as fsp from "node:fs/promises"
import * as path from "node:path"
import { makeCaptureRecord, type SourceUrl } from "../src/Domain.js"
import { cli } from "./cliProcess.js"
import { accessedAt, tempDirectory, writeRecords } from "./support.js"

const source = "https://reports.northwind.test/ledger.txt" as SourceUrl
const sentences = Array.from({ length: 100 }, (_, i) => `Ledger entry ${i} records ${1000 + i * 7} crates shipped to depot ${i % 13}.`)
const filler = (bytes: number) => {
  const line = "Quarterly operations continued without notable events in this period.\n"
  return line.repeat(Math.ceil(bytes / line.length)).slice(0, bytes)
}

const setup = (timeoutMs: number) =>
  Effect.gen(function*() {
    const work = yield* tempDirectory
    const oldRun = path.join(work, "old")
    const newRun = path.join(work, "new")
    const old = makeCaptureRecord({ source, text: sentences.join("\n") + "\n", accessedAt, contentType: "text/plain" })
    const now = makeCaptureRecord({ source, text: filler(8 * 1024 * 1024), accessedAt, contentType: "text/plain" })
    yield* Effect.promise(() => Promise.all([fsp.mkdir(oldRun), fsp.mkdir(newRun)]))
    yield* writeRecords(oldRun, [old])
    yield* writeRecords(newRun, [now])
    const labels = sentences.map((_, i) => `entry_${i}`)
    const config = path.join(work, "pipeline.json")
    const report = path.join(work, "report.json")
    yield* Effect.promise(() =>
      Promise.all([
        fsp.writeFile(config, JSON.stringify({ sources: [source], labels, audit: { timeoutMs } })),
        fsp.writeFile(report, JSON.stringify({
          facts: sentences.map((snippet, i) => ({ state: "cited", label: labels[i], source, captureSha256: old.sha256, snippet }))
        }))
      ])
    )
    return ["audit", "--report", report, "--config", config, "--run-dir", oldRun, "--against", newRun]
  })

describe("audit deadline", () => {
  it.scopedLive("100 absent excerpts against an 8 MiB capture, audit.timeoutMs 1000: AuditTimeout, exit 2, in a few seconds", () =>
    Effect.gen(function*() {
      const args = yield* setup(1000)
      const started = Date.now()
      const ran = yield* cli(args)
      const elapsed = Date.now() - started
      assert.strictEqual(ran.code, 2, ran.stderr)
      assert.strictEqual(ran.stdout, "")
      assert.isTrue(ran.stderr.startsWith("AuditTimeout: Audit timed out\n"), ran.stderr)
      assert.include(ran.stderr, "deadline ms")
      assert.include(ran.stderr, "audit: TIMED OUT: nothing was audited (audit.timeoutMs)")
      // The CLI's start-up and the two reads of the captures, plus the second: far below the unbounded search.
      assert.isBelow(elapsed, 8_000)
    }), 60_000)

  it.scopedLive("audit.timeoutMs outside 1..600000 is an invalid configuration, before anything is read", () =>
    Effect.gen(function*() {
      const args = yield* setup(0)
      const ran = yield* cli(args)
      assert.strictEqual(ran.code, 2)
      assert.include(ran.stderr, "InvalidConfig")
      assert.include(ran.stderr, "audit.timeoutMs")
    }), 60_000)
})
