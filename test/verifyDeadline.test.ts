import { assert, describe, it } from "@effect/vitest"
import { Effect, Exit, Schema } from "effect"
import { spawn } from "node:child_process"
import * as fsp from "node:fs/promises"
import * as path from "node:path"
import { performance } from "node:perf_hooks"
import * as Config from "../src/Config.js"
import { decodeOptions, makeCaptureRecord, type SourceUrl } from "../src/Domain.js"
import { InvalidConfig, VerificationTimeout } from "../src/Errors.js"
import { searchAll } from "../src/internal/multiSearch.js"
import * as Render from "../src/render/Render.js"
import { RenderedResult } from "../src/render/Rendering.js"
import { accessedAt, cited, fixturePath, gateFor, runDirectoryWith, tempDirectory } from "./support.js"

const SOURCE = "https://reports.northwind.test/repetitive.txt" as SourceUrl

/** A flat string, as a capture decoded from JSON is (`repeat` builds a rope). */
const flat = (s: string): string => JSON.parse(JSON.stringify(s)) as string

/** A repetitive capture, and many long snippets that almost match at every position. */
const hostile = (bytes: number, facts: number) => {
  const record = makeCaptureRecord({ source: SOURCE, text: flat("a".repeat(bytes)), accessedAt, contentType: "text/plain" })
  const labels = Array.from({ length: facts }, (_, i) => `fact_${i}`)
  const snippets = labels.map((_, i) => flat("a".repeat(1000 + i) + "b"))
  const report = { facts: labels.map((label, i) => cited(label, record, snippets[i]!)) }
  const config = (verify: object) => ({ sources: [SOURCE], labels, verify: { maxFacts: facts, ...verify } })
  return { record, snippets, report, config }
}

/** The decoded JSON rendering is a rejection by VerificationTimeout with this deadline. */
const assertTimedOut = (json: RenderedResult, timeoutMs: number) => {
  assert.strictEqual(json.format, "citegate.result/1")
  if (json.status !== "rejected") return assert.fail(`expected a rejection, got ${json.status}`)
  assert.instanceOf(json.error, VerificationTimeout)
  assert.strictEqual(json.error._tag, "VerificationTimeout")
  assert.strictEqual(json.error._tag === "VerificationTimeout" ? json.error.timeoutMs : undefined, timeoutMs)
}

describe("verification deadline", () => {
  it.live("a long search is interrupted at the deadline with VerificationTimeout, long before it would end", () =>
    Effect.scoped(Effect.gen(function*() {
      const facts = 200
      const { config, record, report, snippets } = hostile(1 << 20, facts)
      // What the whole search would cost: one snippet's search, measured here, times the facts.
      searchAll(record.text, [snippets[0]!])
      const one = performance.now()
      searchAll(record.text, [snippets[0]!])
      const wholeSearchMs = (performance.now() - one) * facts

      const timeoutMs = 250
      const directory = yield* runDirectoryWith([record])
      const gate = yield* gateFor(directory, config({ timeoutMs, mode: "drop" }))
      const started = performance.now()
      const error = yield* Effect.flip(gate.check(report))
      const elapsedMs = performance.now() - started

      assert.instanceOf(error, VerificationTimeout)
      assert.strictEqual(error._tag, "VerificationTimeout")
      assert.strictEqual(error.timeoutMs, timeoutMs)
      assert.isAtLeast(elapsedMs, timeoutMs - 5)
      // Without yields between slices the deadline could only fire once the whole search was done.
      assert.isBelow(elapsedMs, timeoutMs + wholeSearchMs / 2, `whole search ≈ ${wholeSearchMs.toFixed(0)} ms`)
    })), 60_000)

  it.live("the same report verifies under a deadline it can meet", () =>
    Effect.scoped(Effect.gen(function*() {
      const { config, record, report } = hostile(64 * 1024, 40)
      const directory = yield* runDirectoryWith([record])
      const gate = yield* gateFor(directory, config({ timeoutMs: 600_000, mode: "drop" }))
      const verified = yield* gate.check(report)
      assert.strictEqual(verified.outcome, "no_evidence")
      assert.strictEqual(verified.retractions.length, 40)
      assert.isTrue(verified.retractions.every((r) => r.error._tag === "SnippetAbsent"))
    })))

  it.live("a timed-out report renders as rejected in every format, and its JSON decodes", () =>
    Effect.scoped(Effect.gen(function*() {
      const { config, record, report } = hostile(1 << 20, 40)
      const directory = yield* runDirectoryWith([record])
      const gate = yield* gateFor(directory, config({ timeoutMs: 1 }))
      const error = yield* Effect.flip(gate.checkJsonWithCaptures(JSON.stringify(report)))
      assert.instanceOf(error, VerificationTimeout)
      assert.strictEqual(error.timeoutMs, 1)
      assert.strictEqual(error.message, "Verification did not finish within 1 ms; nothing in the report is accepted")

      const rendering = Render.Rendering.Rejected({ error })
      const json = Schema.decodeUnknownSync(Schema.parseJson(RenderedResult))(Render.render("json", rendering), decodeOptions)
      assertTimedOut(json, 1)
      assert.match(Render.render("text", rendering), /REJECTED: verification timed out[\s\S]*deadline ms: 1/)
      assert.match(Render.render("markdown", rendering), /# Report rejected[\s\S]*Verification timed out/)
      assert.match(Render.render("html", rendering), /Report rejected[\s\S]*Verification timed out/)
    })))

  it.effect("verify.timeoutMs: default 30000, 1 to 600000, an integer", () =>
    Effect.gen(function*() {
      const base = { sources: [SOURCE], labels: ["a"] }
      assert.strictEqual(Config.resolvedVerifyTimeoutMs(yield* Config.decode(base)), 30_000)
      assert.strictEqual(Config.resolvedVerifyTimeoutMs(yield* Config.decode({ ...base, verify: { timeoutMs: 1 } })), 1)
      for (const timeoutMs of [0, 600_001, 1.5, "100"]) {
        const error = yield* Effect.flip(Config.decode({ ...base, verify: { timeoutMs } }))
        assert.instanceOf(error, InvalidConfig)
        assert.deepStrictEqual(error.issues[0].path, ["verify", "timeoutMs"], String(timeoutMs))
        assert.match(error.issues[0].message, /integer|number/)
      }
    }))

  it.scoped("run-pipeline verify exits 1 with VerificationTimeout, and prints the JSON rejection", () =>
    Effect.gen(function*() {
      const { config, record, report } = hostile(1 << 20, 40)
      const work = yield* tempDirectory
      const runDir = yield* runDirectoryWith([record])
      const configFile = path.join(work, "pipeline.json")
      const reportFile = path.join(work, "report.json")
      yield* Effect.promise(() => fsp.writeFile(configFile, JSON.stringify(config({ timeoutMs: 1 }))))
      yield* Effect.promise(() => fsp.writeFile(reportFile, JSON.stringify(report)))
      const bin = fixturePath("..", "bin", "run-pipeline.js")
      const ran = yield* Effect.async<{ code: number | null; stdout: string; stderr: string }>((resume) => {
        const child = spawn(
          process.execPath,
          [bin, "verify", "--config", configFile, "--run-dir", runDir, "--report", reportFile, "--format", "json"],
          { stdio: ["ignore", "pipe", "pipe"] }
        )
        let stdout = ""
        let stderr = ""
        child.stdout.on("data", (d) => (stdout += d))
        child.stderr.on("data", (d) => (stderr += d))
        child.on("close", (code) => resume(Effect.succeed({ code, stdout, stderr })))
      })
      assert.strictEqual(ran.code, 1, ran.stderr)
      assert.match(ran.stderr, /verify: REJECTED \(VerificationTimeout\)/)
      const json = Schema.decodeUnknownSync(Schema.parseJson(RenderedResult))(ran.stdout, decodeOptions)
      assertTimedOut(json, 1)
    }), 60_000)

  it.live("a verification of small local captures ends in the caller's step: nothing in it waits", () =>
    Effect.scoped(Effect.gen(function*() {
      // Each capture is read at once (a small file), searched in its first slice, and the deadline's
      // fiber ends when it is forked: the caller never waits, so nothing of the verification is
      // kept past its end by a waiting fiber (docs/performance.md).
      const records = [0, 1, 2].map((i) =>
        makeCaptureRecord({ source: `https://reports.northwind.test/q${i}.txt` as SourceUrl, text: `Net sales rose ${i + 3}% in Q3.`, accessedAt, contentType: "text/plain" })
      )
      const labels = records.map((_, i) => `sales_${i}`)
      const directory = yield* runDirectoryWith(records)
      const gate = yield* gateFor(directory, { sources: records.map((r) => r.source), labels, verify: { maxFacts: 10, timeoutMs: 60_000 } })
      const report = { facts: records.map((record, i) => cited(labels[i]!, record, `rose ${i + 3}%`)) }
      const exit = Effect.runFork(gate.check(report)).unsafePoll()
      if (exit === null) return assert.fail("the verification waited")
      assert.isTrue(Exit.isSuccess(exit))
      assert.deepStrictEqual(Exit.isSuccess(exit) ? exit.value.facts.map((entry) => entry.fact.label) : [], labels)
    })))
})
