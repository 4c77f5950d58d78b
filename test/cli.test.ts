import { assert, describe, it } from "@effect/vitest"
import { Effect, Either, Schema } from "effect"
import * as fsp from "node:fs/promises"
import * as path from "node:path"
import { decodeOptions, sha256Of } from "../src/Domain.js"
import { RenderedResult } from "../src/render/Rendering.js"
import { plainText, testServer } from "./httpServer.js"
import { expectedRecordName } from "./mutants.support.js"
import { fixtureText, snapshotDirectory, tempDirectory } from "./support.js"
import { cli } from "./cliProcess.js"


const write = (file: string, content: unknown) =>
  Effect.promise(() => fsp.writeFile(file, typeof content === "string" ? content : JSON.stringify(content, null, 2)))

const salesText = fixtureText("q3-sales.txt")
const salesDigest = sha256Of(salesText)

/** A source server, a pipeline.json approving its two sources (one answers 404), and a scratch directory. */
const setup = Effect.gen(function*() {
  const server = yield* testServer((req, res) => {
    if (req.url === "/q3-sales.txt") return plainText(salesText)(req, res, server)
    res.writeHead(404, { "content-type": "text/plain" })
    res.end("not published")
  })
  const work = yield* tempDirectory
  const sales = server.url("/q3-sales.txt")
  const missing = server.url("/q4-outlook.txt")
  const configFile = path.join(work, "pipeline.json")
  yield* write(configFile, { sources: [sales], labels: ["q3_net_sales", "q3_returns", "q4_forecast"] })
  const report = (facts: ReadonlyArray<unknown>) => {
    const file = path.join(work, `report-${Math.random().toString(36).slice(2)}.json`)
    return Effect.as(write(file, { facts }), file)
  }
  const good = {
    state: "cited",
    label: "q3_net_sales",
    source: sales,
    captureSha256: salesDigest,
    snippet: "Net sales for Q3 2026 were 4,210 units"
  }
  return { server, work, sales, missing, configFile, report, good }
})

/** A run directory captured by the CLI itself. */
const captured = Effect.gen(function*() {
  const s = yield* setup
  const runDir = path.join(s.work, "run")
  const ran = yield* cli(["capture", "--config", s.configFile, "--run-dir", runDir, "--allow-loopback-http"])
  assert.strictEqual(ran.code, 0, ran.stderr)
  return { ...s, runDir }
})

describe("run-pipeline capture", () => {
  it.scopedLive("captures every approved source into a new run directory", () =>
    Effect.gen(function*() {
      const s = yield* captured
      const entries = yield* snapshotDirectory(s.runDir)
      assert.deepStrictEqual(entries.map((e) => e.name), [expectedRecordName(s.sales)])
    }))

  it.scopedLive("exits 1 when a source fails, keeping the successful captures; progress on stderr, table on stdout", () =>
    Effect.gen(function*() {
      const s = yield* setup
      yield* write(s.configFile, { sources: [s.sales, s.missing], labels: ["q3_net_sales"] })
      const runDir = path.join(s.work, "run")
      const ran = yield* cli(["capture", "--config", s.configFile, "--run-dir", runDir, "--allow-loopback-http"])
      assert.strictEqual(ran.code, 1)
      assert.match(ran.stderr, /capture: FAILED .*q4-outlook\.txt: UnexpectedStatus/)
      assert.match(ran.stdout, /^ok +http:\/\/127\.0\.0\.1:\d+\/q3-sales\.txt/m)
      assert.match(ran.stdout, /^FAILED +http:\/\/127\.0\.0\.1:\d+\/q4-outlook\.txt +UnexpectedStatus/m)
      assert.match(ran.stdout, /1 of 2 sources captured/)
      assert.strictEqual((yield* snapshotDirectory(runDir)).length, 1)
    }))

  it.scopedLive("an existing run directory is a usage error (exit 2) and is left untouched", () =>
    Effect.gen(function*() {
      const s = yield* captured
      const before = yield* snapshotDirectory(s.runDir)
      const ran = yield* cli(["capture", "--config", s.configFile, "--run-dir", s.runDir, "--allow-loopback-http"])
      assert.strictEqual(ran.code, 2)
      assert.match(ran.stderr, /RunDirectoryExists/)
      assert.strictEqual(ran.stdout, "")
      assert.deepStrictEqual(yield* snapshotDirectory(s.runDir), before)
      assert.strictEqual(s.server.requests.length, 1)
    }))

  it.scopedLive("a bad config is exit 2 with every issue at its path, and nothing is fetched", () =>
    Effect.gen(function*() {
      const s = yield* setup
      yield* write(s.configFile, { sources: ["HTTP://127.0.0.1/x"], labels: [], capture: { timeoutMs: 0 }, extra: true })
      const ran = yield* cli(["capture", "--config", s.configFile, "--run-dir", path.join(s.work, "run")])
      assert.strictEqual(ran.code, 2)
      assert.match(ran.stderr, /InvalidConfig/)
      for (const p of ["sources\\[0\\]", "labels", "capture\\.timeoutMs", "extra"]) assert.match(ran.stderr, new RegExp(p))
      assert.strictEqual(s.server.connections, 0)
      const exists = yield* Effect.promise(() => fsp.access(path.join(s.work, "run")).then(() => true, () => false))
      assert.isFalse(exists)
    }))

  it.scopedLive("a config with a repeated key is exit 2", () =>
    Effect.gen(function*() {
      const s = yield* setup
      yield* write(s.configFile, `{"sources":["${s.sales}"],"labels":["a"],"labels":["b"]}`)
      const ran = yield* cli(["capture", "--config", s.configFile, "--run-dir", path.join(s.work, "run")])
      assert.strictEqual(ran.code, 2)
      assert.match(ran.stderr, /repeated key "labels"/)
    }))

  it.scopedLive("a missing required option is exit 2", () =>
    Effect.gen(function*() {
      const ran = yield* cli(["capture"])
      assert.strictEqual(ran.code, 2)
    }))
})

describe("run-pipeline verify", () => {
  it.scopedLive("a grounded report renders to stdout and exits 0", () =>
    Effect.gen(function*() {
      const s = yield* captured
      const report = yield* s.report([s.good, { state: "unavailable", label: "q4_forecast", reason: "not published" }])
      const ran = yield* cli(["verify", "--config", s.configFile, "--run-dir", s.runDir, "--report", report])
      assert.strictEqual(ran.code, 0, ran.stderr)
      assert.match(ran.stdout, /citegate: GROUNDED/)
      assert.match(ran.stdout, /VERIFIED EXCERPT +"Net sales for Q3 2026 were 4,210 units"/)
      assert.match(ran.stderr, /verify: GROUNDED/)
    }))

  for (const format of ["text", "json", "markdown", "html"] as const) {
    it.scopedLive(`a rejected report in ${format} exits 1 and shows every typed failure`, () =>
      Effect.gen(function*() {
        const s = yield* captured
        const report = yield* s.report([
          s.good,
          { ...s.good, label: "q3_returns", snippet: "Returns were 3.4 % of units" },
          { ...s.good, label: "q4_forecast", source: s.missing }
        ])
        const ran = yield* cli(["verify", "--config", s.configFile, "--run-dir", s.runDir, "--report", report, "--format", format])
        assert.strictEqual(ran.code, 1, ran.stderr)
        assert.match(ran.stderr, /verify: REJECTED \(ReportRejected\)/)
        for (const tag of ["SnippetAbsent", "NotApproved"]) assert.include(ran.stdout, tag)
        if (format === "json") {
          const decoded = Schema.decodeUnknownEither(RenderedResult, decodeOptions)(JSON.parse(ran.stdout))
          assert.isTrue(Either.isRight(decoded))
          const json = JSON.parse(ran.stdout)
          assert.strictEqual(json.status, "rejected")
          assert.deepStrictEqual(json.error.failures.map((f: { error: { _tag: string } }) => f.error._tag), ["SnippetAbsent", "NotApproved"])
        }
      }))
  }

  it.scopedLive("an invalid report is rejected with its paths (exit 1)", () =>
    Effect.gen(function*() {
      const s = yield* captured
      const report = yield* s.report([{ ...s.good, value: 4210 }])
      const ran = yield* cli(["verify", "--config", s.configFile, "--run-dir", s.runDir, "--report", report])
      assert.strictEqual(ran.code, 1)
      assert.match(ran.stdout, /REJECTED: the report is not a valid report/)
      assert.match(ran.stdout, /facts\[0\]\.value/)
    }))

  it.scopedLive("--out writes the rendering atomically, --mode drop yields no_evidence (exit 1)", () =>
    Effect.gen(function*() {
      const s = yield* captured
      const report = yield* s.report([{ ...s.good, snippet: "paraphrased sales figure" }])
      const out = path.join(s.work, "out.html")
      const ran = yield* cli([
        "verify", "--config", s.configFile, "--run-dir", s.runDir, "--report", report, "--mode", "drop", "--format", "html", "--out", out
      ])
      assert.strictEqual(ran.code, 1)
      assert.strictEqual(ran.stdout, "")
      assert.match(ran.stderr, /NO EVIDENCE/)
      const html = yield* Effect.promise(() => fsp.readFile(out, "utf8"))
      assert.match(html, /Outcome: no evidence/)
      assert.deepStrictEqual((yield* Effect.promise(() => fsp.readdir(s.work))).filter((f) => f.includes("partial")), [])
    }))

  it.scopedLive("verification leaves the run directory unchanged", () =>
    Effect.gen(function*() {
      const s = yield* captured
      const before = yield* snapshotDirectory(s.runDir)
      const report = yield* s.report([s.good])
      const ran = yield* cli(["verify", "--config", s.configFile, "--run-dir", s.runDir, "--report", report, "--format", "json"])
      // Verification itself must have run and passed: a crash would leave the directory unchanged too.
      assert.strictEqual(ran.code, 0, ran.stderr)
      assert.match(ran.stderr, /verify: GROUNDED \(reject mode, 0 retracted\)/)
      const json = JSON.parse(ran.stdout)
      assert.strictEqual(json.status, "verified")
      assert.deepStrictEqual(json.report.facts.map((e: { fact: { snippet: string } }) => e.fact.snippet), [s.good.snippet])
      assert.deepStrictEqual(yield* snapshotDirectory(s.runDir), before)
    }))

  it.scopedLive("a missing run directory or report is exit 2", () =>
    Effect.gen(function*() {
      const s = yield* setup
      const report = yield* s.report([s.good])
      const noRun = yield* cli(["verify", "--config", s.configFile, "--run-dir", path.join(s.work, "nope"), "--report", report])
      assert.strictEqual(noRun.code, 2)
      assert.match(noRun.stderr, /InvalidRunDirectory/)
      const noReport = yield* cli(["verify", "--config", s.configFile, "--run-dir", s.work, "--report", path.join(s.work, "nope.json")])
      assert.strictEqual(noReport.code, 2)
      assert.match(noReport.stderr, /FileUnreadable/)
    }))
})

describe("run-pipeline run", () => {
  it.scopedLive("captures, verifies and renders in one go", () =>
    Effect.gen(function*() {
      const s = yield* setup
      const report = yield* s.report([s.good])
      const runDir = path.join(s.work, "run")
      const ran = yield* cli([
        "run", "--config", s.configFile, "--run-dir", runDir, "--report", report, "--allow-loopback-http", "--format", "markdown"
      ])
      assert.strictEqual(ran.code, 0, ran.stderr)
      assert.match(ran.stdout, /\*\*Outcome: grounded\*\*/)
      assert.match(ran.stderr, /capture: ok/)
      assert.match(ran.stderr, /1 of 1 sources captured/)
    }))
})

describe("run-pipeline migrate", () => {
  const legacySetup = Effect.gen(function*() {
    const s = yield* setup
    const legacy = path.join(s.work, "legacy")
    yield* Effect.promise(() => fsp.mkdir(legacy))
    const legacyRecord = (source: string | undefined, text: string, digest = sha256Of(text)) => ({
      ...(source === undefined ? {} : { source }),
      text,
      sha256: digest,
      accessedAt: "2025-06-01T08:00:00.000Z"
    })
    yield* write(path.join(legacy, "sales.json"), legacyRecord(undefined, salesText))
    yield* write(path.join(legacy, "tampered.json"), legacyRecord(s.missing, "edited text", "a".repeat(64) as typeof salesDigest))
    yield* write(path.join(legacy, "unapproved.json"), legacyRecord("https://elsewhere.test/x", "not approved"))
    return { ...s, legacy }
  })

  it.scopedLive("restores approved entries only, checks digests first, never modifies the legacy directory", () =>
    Effect.gen(function*() {
      const s = yield* legacySetup
      const mapFile = path.join(s.work, "map.json")
      yield* write(mapFile, { entries: [{ file: "sales.json", source: s.sales }, { file: "tampered.json", source: s.missing }] })
      const before = yield* snapshotDirectory(s.legacy)
      const runDir = path.join(s.work, "migrated")
      const ran = yield* cli(["migrate", "--legacy", s.legacy, "--map", mapFile, "--run-dir", runDir])
      assert.strictEqual(ran.code, 1, ran.stderr)
      assert.match(ran.stdout, /migrated +sales\.json/)
      assert.match(ran.stdout, /REJECTED +tampered\.json: digest-mismatch/)
      assert.match(ran.stdout, /skipped +unapproved\.json: not approved by the map/)
      assert.deepStrictEqual(yield* snapshotDirectory(s.legacy), before)
      assert.deepStrictEqual((yield* snapshotDirectory(runDir)).map((e) => e.name), [expectedRecordName(s.sales)])

      // The migrated capture is evidence now: the verifier accepts an excerpt of it.
      const report = yield* s.report([s.good])
      const verified = yield* cli(["verify", "--config", s.configFile, "--run-dir", runDir, "--report", report])
      assert.strictEqual(verified.code, 0, verified.stdout + verified.stderr)
    }))

  it.scopedLive("an unapproved legacy entry is never migrated, and a map must not touch an existing run", () =>
    Effect.gen(function*() {
      const s = yield* legacySetup
      const mapFile = path.join(s.work, "map.json")
      yield* write(mapFile, { entries: [{ file: "sales.json", source: s.sales }] })
      const runDir = path.join(s.work, "migrated")
      const ran = yield* cli(["migrate", "--legacy", s.legacy, "--map", mapFile, "--run-dir", runDir])
      assert.strictEqual(ran.code, 0, ran.stderr)
      assert.match(ran.stdout, /1 migrated, 0 rejected, 2 skipped/)
      const again = yield* cli(["migrate", "--legacy", s.legacy, "--map", mapFile, "--run-dir", runDir])
      assert.strictEqual(again.code, 2)
      assert.match(again.stderr, /RunDirectoryExists/)
    }))

  it.scopedLive("a map naming a source the legacy record contradicts is rejected", () =>
    Effect.gen(function*() {
      const s = yield* legacySetup
      const mapFile = path.join(s.work, "map.json")
      yield* write(mapFile, { entries: [{ file: "unapproved.json", source: s.sales }] })
      const ran = yield* cli(["migrate", "--legacy", s.legacy, "--map", mapFile, "--run-dir", path.join(s.work, "m")])
      assert.strictEqual(ran.code, 1)
      assert.match(ran.stdout, /REJECTED +unapproved\.json: source-conflict/)
    }))
})

describe("run-pipeline demo", () => {
  it.scopedLive("runs offline and writes every rendering", () =>
    Effect.gen(function*() {
      const work = yield* tempDirectory
      const ran = yield* cli(["demo"], work)
      assert.strictEqual(ran.code, 0, ran.stderr)
      const [stamp] = yield* Effect.promise(() => fsp.readdir(path.join(work, "demo-output")))
      const renderings = yield* Effect.promise(() => fsp.readdir(path.join(work, "demo-output", stamp!, "renderings")))
      assert.strictEqual(renderings.length, 30)
      assert.match(ran.stdout, /grounded +reject +GROUNDED \(6 facts kept, 0 retracted\); semantic review: consistent\n/)
      assert.match(ran.stdout, /no-evidence +drop +NO EVIDENCE/)
      assert.match(ran.stdout, /rejected +reject +REJECTED: .*SnippetAbsent/)
      // Provenance passes; semantic review, apart from it, flags each counterexample by its aspect.
      assert.match(ran.stdout, /wrong-label +reject +GROUNDED .*; semantic review: mismatch: metric\n/)
      assert.match(ran.stdout, /wrong-unit +reject +GROUNDED .*; semantic review: mismatch: unit\n/)
      assert.match(ran.stdout, /wrong-period +reject +GROUNDED .*; semantic review: mismatch: period\n/)
      const wrongLabel = yield* Effect.promise(() =>
        fsp.readFile(path.join(work, "demo-output", stamp!, "renderings", "wrong-label.txt"), "utf8"))
      assert.include(wrongLabel, "fact 1 \"q3_net_sales\": MISMATCH metric")
      assert.include(wrongLabel, "metric: expected net sales; found \"Inventory on hand\"")
      assert.notInclude(wrongLabel, "was not performed")
      const rejected = JSON.parse(yield* Effect.promise(() =>
        fsp.readFile(path.join(work, "demo-output", stamp!, "renderings", "rejected.json"), "utf8")))
      const tags = new Set(rejected.error.failures.map((f: { error: { _tag: string } }) => f.error._tag))
      for (const tag of ["UnknownLabel", "SnippetAbsent", "NotApproved", "DigestMismatch", "MissingCapture", "DuplicateLabel"]) {
        assert.isTrue(tags.has(tag), tag)
      }
    }), { timeout: 180_000 }) // a spawned process capturing six sources (a PDF in an extraction process) on a shared machine
})
