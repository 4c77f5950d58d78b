/**
 * The number adapter's counterexamples (wrong metric, wrong unit, wrong period) flagged through the
 * CLI (a spawned `run-pipeline`) and the service (HTTP on 127.0.0.1), from one configuration each.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import * as fsp from "node:fs/promises"
import * as path from "node:path"
import { sha256Of } from "../src/Domain.js"
import { cli } from "./cliProcess.js"
import { plainText, testServer } from "./httpServer.js"
import { catalogue, labels, revenueText } from "./reviewSupport.js"
import { call, startService, tokens, waitForRun } from "./serverSupport.js"
import { fixtureText, tempDirectory } from "./support.js"

const texts: Record<string, string> = {
  "/q3-sales.txt": fixtureText("q3-sales.txt"),
  "/q3-inventory.txt": fixtureText("q3-inventory.txt"),
  "/q3-revenue.txt": revenueText
}

const sourceServer = Effect.gen(function*() {
  const server = yield* testServer((req, res) => {
    const text = texts[req.url ?? ""]
    if (text !== undefined) return plainText(text)(req, res, server)
    res.writeHead(404, { "content-type": "text/plain" })
    res.end("not published")
  })
  const cite = (label: string, name: string, snippet: string) => ({
    state: "cited",
    label,
    source: server.url(name),
    captureSha256: sha256Of(texts[name]!),
    snippet
  })
  const facts = [
    cite("q3_net_sales", "/q3-sales.txt", "Net sales for Q3 2026 were 4,210 units"),
    cite("q3_inventory", "/q3-inventory.txt", "Inventory on hand at 30 September 2026 was 1,180 units"),
    // wrong metric, wrong unit (currency), wrong period
    cite("q3_online_share", "/q3-inventory.txt", "Inventory on hand at 30 September 2026 was 1,180 units"),
    cite("q3_revenue", "/q3-revenue.txt", "Revenue for Q3 2026 was EUR 182,400"),
    cite("q2_net_sales", "/q3-sales.txt", "Net sales for Q3 2026 were 4,210 units")
  ]
  return { sources: Object.keys(texts).map((name) => server.url(name)), report: JSON.stringify({ facts }) }
})

const flagged = [
  [2, "SemanticMismatch", "metric"],
  [3, "SemanticMismatch", "unit"],
  [4, "SemanticMismatch", "period"]
]

describe("semantic review through the CLI", () => {
  it.scopedLive("report: the verify rendering shows the review apart; require: exit 1 with SemanticMismatch per fact", () =>
    Effect.gen(function*() {
      const { report, sources } = yield* sourceServer
      const work = yield* tempDirectory
      const configFile = path.join(work, "pipeline.json")
      const reportFile = path.join(work, "report.json")
      const config = (numbers: string) => JSON.stringify({ sources, labels, review: { numbers, catalogue } })
      yield* Effect.promise(() => fsp.writeFile(configFile, config("report")))
      yield* Effect.promise(() => fsp.writeFile(reportFile, report))
      const runDir = path.join(work, "run")
      const captured = yield* cli(["capture", "--config", configFile, "--run-dir", runDir, "--allow-loopback-http"])
      assert.strictEqual(captured.code, 0, captured.stderr)

      const reported = yield* cli(["verify", "--config", configFile, "--run-dir", runDir, "--report", reportFile])
      assert.strictEqual(reported.code, 0, reported.stderr)
      assert.match(reported.stderr, /verify: GROUNDED \(reject mode, 0 retracted\); semantic review: consistent; mismatch: metric, value-kind; mismatch: unit; mismatch: period/)
      assert.include(reported.stdout, "Semantic review: number adapter numbers/1 (review.numbers: report), separate from provenance:")
      assert.include(reported.stdout, 'fact 4 "q3_revenue": MISMATCH unit')
      assert.include(reported.stdout, 'unit: expected USD; found "EUR"')
      assert.include(reported.stdout, 'period: expected Q2 2026; found "Q3 2026"')

      yield* Effect.promise(() => fsp.writeFile(configFile, config("require")))
      const required = yield* cli(["verify", "--config", configFile, "--run-dir", runDir, "--report", reportFile, "--format", "json"])
      assert.strictEqual(required.code, 1, required.stderr)
      const result = JSON.parse(required.stdout)
      assert.strictEqual(result.status, "rejected")
      assert.deepStrictEqual(
        result.error.failures.map((f: any) => [f.index, f.error._tag, f.error.mismatches[0].aspect]),
        flagged
      )
    }))
})

/** The service with `review.numbers` set, and a run of the sources it captured. */
const capturedBy = (numbers: "report" | "require") =>
  Effect.gen(function*() {
    const { report, sources } = yield* sourceServer
    const service = yield* startService({ sources, config: { labels, review: { numbers, catalogue } } })
    const started = yield* call(service, "/v1/runs", { method: "POST", token: tokens.admin })
    assert.strictEqual(started.status, 202, started.text)
    yield* waitForRun(service, started.json.id)
    /** `POST /v1/verify/report` of the counterexamples' report against the run (`query`: more parameters). */
    const verify = (query = "") => call(service, `/v1/verify/report?run=${started.json.id}${query}`, { token: tokens.admin, body: report })
    return { verify }
  })

describe("semantic review through the service", () => {
  it.scopedLive("report: POST /v1/verify/report keeps provenance verified and reads mismatch: metric | unit | period per fact", () =>
    Effect.gen(function*() {
      const { verify } = yield* capturedBy("report")
      const verified = yield* verify()
      assert.strictEqual(verified.status, 200, verified.text)
      // Provenance: every fact verified, nothing retracted; the adapter's outcome apart from it.
      assert.strictEqual(verified.json.status, "verified")
      assert.deepStrictEqual(verified.json.report.facts.map((f: any) => f.index), [0, 1, 2, 3, 4])
      assert.deepStrictEqual(verified.json.report.retractions, [])
      const review = verified.json.report.numberReview.facts
      assert.deepStrictEqual(review.map((f: any) => [f.index, f.outcome]), [
        [0, "consistent"], [1, "consistent"], [2, "mismatch"], [3, "mismatch"], [4, "mismatch"]
      ])
      assert.deepStrictEqual(flagged.map(([index]) => review[index as number].mismatches[0].aspect), ["metric", "unit", "period"])
      assert.deepStrictEqual(review[3].mismatches[0].found, ["EUR"])
    }))

  it.scopedLive("capability gating: serve with review.judge.mode require and no judge exits 2 with CapabilityError, never listening", () =>
    Effect.gen(function*() {
      const work = yield* tempDirectory
      const configFile = path.join(work, "pipeline.json")
      yield* Effect.promise(() =>
        fsp.writeFile(configFile, JSON.stringify({ sources: ["https://127.0.0.1:9/a.txt"], labels, review: { judge: { mode: "require" } } }))
      )
      const served = yield* cli(["serve", "--config", configFile, "--listen", "127.0.0.1:0", "--run-root", path.join(work, "runs")])
      assert.strictEqual(served.code, 2, served.stderr)
      assert.match(served.stderr, /CapabilityError: review\.judge\.mode is "require" but no judge is configured/)
      assert.notInclude(served.stderr, "listening")
    }))

  it.scopedLive("POST /v1/verify/report: require rejects (reject mode) or retracts (drop mode) each mismatched fact", () =>
    Effect.gen(function*() {
      const { verify } = yield* capturedBy("require")
      const rejected = yield* verify()
      assert.strictEqual(rejected.status, 200, rejected.text)
      assert.strictEqual(rejected.json.status, "rejected")
      assert.deepStrictEqual(rejected.json.error.failures.map((f: any) => [f.index, f.error._tag, f.error.mismatches[0].aspect]), flagged)
      const dropped = yield* verify("&mode=drop")
      assert.strictEqual(dropped.json.status, "verified")
      assert.deepStrictEqual(dropped.json.report.facts.map((f: any) => f.index), [0, 1])
      assert.deepStrictEqual(dropped.json.report.retractions.map((f: any) => [f.index, f.error._tag, f.error.mismatches[0].aspect]), flagged)
      assert.strictEqual(dropped.json.report.semanticReview, "performed")
      assert.deepStrictEqual(dropped.json.report.numberReview.facts.map((f: any) => f.outcome), [
        "consistent", "consistent", "mismatch", "mismatch", "mismatch"
      ])
    }))
})
