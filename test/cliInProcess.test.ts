/**
 * The `run-pipeline` commands run in-process (test/cliInProcess.ts), so that a mutant of
 * src/cli/ reaches them (the spawned-process tests cannot: a child never sees a mutant). Each test
 * checks exact exit codes and exact output; expected values are written here by hand (messages,
 * lines, table layout) or computed from independent references (SHA-256 by node:crypto, byte
 * lengths by Buffer, the record's own JSON file, the library's Manifest for an answer's digest).
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { createHash } from "node:crypto"
import * as fsp from "node:fs/promises"
import * as path from "node:path"
import * as CaptureStore from "../src/store/CaptureStore.js"
import type { PipelineConfig } from "../src/Config.js"
import * as Manifest from "../src/Manifest.js"
import { config as answerConfig, configJson as answerConfigJson, emojiRecord } from "./answerSupport.js"
import { cliInProcess } from "./cliInProcess.js"
import { plainText, testServer } from "./httpServer.js"
import { expectedRecordName } from "./mutants.support.js"
import {
  fixtureText,
  inventoryRecord,
  recordPath,
  runDirectoryWith,
  SALES,
  salesRecord,
  snapshotDirectory,
  tempDirectory
} from "./support.js"

const salesText = fixtureText("q3-sales.txt")
const sha256 = (text: string) => createHash("sha256").update(Buffer.from(text, "utf8")).digest("hex")
const salesDigest = sha256(salesText)
const salesBytes = Buffer.byteLength(salesText, "utf8")

const write = (file: string, content: unknown) =>
  Effect.promise(() => fsp.writeFile(file, typeof content === "string" ? content : JSON.stringify(content, null, 2)))
const read = (file: string) => Effect.promise(() => fsp.readFile(file, "utf8"))
const exists = (file: string) => Effect.promise(() => fsp.lstat(file).then(() => true, () => false))
const listing = (directory: string) => Effect.promise(() => fsp.readdir(directory).then((names) => names.sort()))

/** A loopback source server (one source; everything else 404), a config approving it, a scratch directory. */
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
  const good = {
    state: "cited",
    label: "q3_net_sales",
    source: sales,
    captureSha256: salesDigest,
    snippet: "Net sales for Q3 2026 were 4,210 units"
  }
  const bad = { ...good, label: "q3_returns", snippet: "Returns were 9.9% of units" }
  let n = 0
  const report = (facts: ReadonlyArray<unknown>) => {
    const file = path.join(work, `report-${n++}.json`)
    return Effect.as(write(file, { facts }), file)
  }
  return { server, work, sales, missing, configFile, good, bad, report }
})

/** A run captured by the CLI itself, with the record's accessedAt read from the record file. */
const captured = Effect.gen(function*() {
  const s = yield* setup
  const runDir = path.join(s.work, "run")
  const ran = yield* cliInProcess(["capture", "--config", s.configFile, "--run-dir", runDir, "--allow-loopback-http"])
  assert.strictEqual(ran.code, 0, ran.stderr)
  const record = JSON.parse(yield* read(path.join(runDir, expectedRecordName(s.sales))))
  return { ...s, runDir, accessedAt: record.accessedAt as string, captureRan: ran }
})

/** The table line layout, written out: status padded to 7, a space, the source padded, two spaces, the result. */
const tableLine = (status: string, source: string, width: number, result: string) =>
  `${status.padEnd(7)} ${source.padEnd(width)}  ${result}`

describe("capture", () => {
  it.scopedLive("without --allow-loopback-http: TestModeRequired, exit 2, nothing fetched or created", () =>
    Effect.gen(function*() {
      const s = yield* setup
      const runDir = path.join(s.work, "run")
      const ran = yield* cliInProcess(["capture", "--config", s.configFile, "--run-dir", runDir])
      assert.deepStrictEqual(ran, {
        code: 2,
        stdout: "",
        stderr: `TestModeRequired: The configuration approves plain-http sources (${s.sales}); only test mode fetches them: ` +
          "pass --allow-loopback-http (literal 127.0.0.1 only), or approve https sources\n"
      })
      assert.strictEqual(s.server.connections, 0)
      assert.isFalse(yield* exists(runDir))
    }))

  it.scopedLive("without it, only the plain-http sources are named (an https source needs no test mode)", () =>
    Effect.gen(function*() {
      const s = yield* setup
      yield* write(s.configFile, { sources: ["https://reports.northwind.test/q3.txt", s.sales], labels: ["q3_net_sales"] })
      const ran = yield* cliInProcess(["capture", "--config", s.configFile, "--run-dir", path.join(s.work, "run")])
      assert.strictEqual(ran.code, 2)
      const expected = `TestModeRequired: The configuration approves plain-http sources (${s.sales}); only test mode fetches them: ` +
        "pass --allow-loopback-http (literal 127.0.0.1 only), or approve https sources\n"
      assert.strictEqual(ran.stderr, expected, JSON.stringify({ actual: ran.stderr, expected }))
    }))

  it.scopedLive("with it: the table on stdout, progress on stderr, exit 0, one record", () =>
    Effect.gen(function*() {
      const s = yield* captured
      const width = Math.max(6, s.sales.length)
      assert.strictEqual(
        s.captureRan.stdout,
        [
          tableLine("STATUS", "SOURCE", width, "RESULT"),
          tableLine("ok", s.sales, width, `sha256 ${salesDigest}  ${salesBytes} bytes  ${s.accessedAt}`),
          "1 of 1 sources captured",
          ""
        ].join("\n")
      )
      assert.strictEqual(
        s.captureRan.stderr,
        `capture: fetching ${s.sales}\ncapture: ok       ${s.sales} (${salesBytes} bytes, sha256 ${salesDigest.slice(0, 12)}…)\n`
      )
      assert.deepStrictEqual(yield* listing(s.runDir), [expectedRecordName(s.sales)])
    }))

  it.scopedLive("--format json with a failing source: the results in order, exit 1", () =>
    Effect.gen(function*() {
      const s = yield* setup
      yield* write(s.configFile, { sources: [s.sales, s.missing], labels: ["q3_net_sales"] })
      const runDir = path.join(s.work, "run")
      const ran = yield* cliInProcess([
        "capture", "--config", s.configFile, "--run-dir", runDir, "--allow-loopback-http", "--format", "json"
      ])
      assert.strictEqual(ran.code, 1, ran.stderr)
      const record = JSON.parse(yield* read(path.join(runDir, expectedRecordName(s.sales))))
      const json = JSON.parse(ran.stdout)
      assert.strictEqual(ran.stdout, JSON.stringify(json, null, 2) + "\n")
      assert.strictEqual(json.format, "citegate.capture-results/1")
      assert.deepStrictEqual(json.results[0], {
        number: 1,
        source: s.sales,
        status: "captured",
        captureSha256: salesDigest,
        byteLength: salesBytes,
        accessedAt: record.accessedAt
      })
      assert.deepStrictEqual(Object.keys(json.results[1]), ["number", "source", "status", "error"])
      assert.deepStrictEqual([json.results[1].number, json.results[1].source, json.results[1].status], [2, s.missing, "failed"])
      assert.strictEqual(json.results[1].error._tag, "UnexpectedStatus")
      assert.strictEqual(json.results[1].error.status, 404)
      assert.strictEqual(json.results.length, 2)
      assert.match(ran.stderr, new RegExp(`^capture: FAILED   ${s.missing.replace(/[.]/g, "\\.")}: UnexpectedStatus: `, "m"))
    }))

  it.scopedLive("a failing source in the table: FAILED row, 1 of 2 captured, exit 1", () =>
    Effect.gen(function*() {
      const s = yield* setup
      yield* write(s.configFile, { sources: [s.missing, s.sales], labels: ["q3_net_sales"] })
      const runDir = path.join(s.work, "run")
      const ran = yield* cliInProcess(["capture", "--config", s.configFile, "--run-dir", runDir, "--allow-loopback-http"])
      assert.strictEqual(ran.code, 1, ran.stderr)
      const lines = ran.stdout.split("\n")
      assert.strictEqual(lines.length, 5)
      // The source column is as wide as the longest source (the missing one, two characters longer).
      assert.strictEqual(s.missing.length, s.sales.length + 2)
      assert.strictEqual(lines[0], `STATUS  ${"SOURCE".padEnd(s.missing.length)}  RESULT`)
      assert.strictEqual(lines[1], `FAILED  ${s.missing}  UnexpectedStatus: Unexpected HTTP status (status=404)`)
      assert.isTrue(lines[2]!.startsWith(`ok      ${s.sales}    sha256 ${salesDigest}  ${salesBytes} bytes  `), lines[2])
      assert.strictEqual(
        ran.stderr.split("\n").filter((line) => line.includes("q4-outlook")).join("\n"),
        `capture: fetching ${s.missing}\ncapture: FAILED   ${s.missing}: UnexpectedStatus: Unexpected HTTP status`
      )
      assert.deepStrictEqual(lines.slice(3), ["1 of 2 sources captured", ""])
    }))

  it.scopedLive("an existing run directory: RunDirectoryExists, exit 2, nothing fetched", () =>
    Effect.gen(function*() {
      const s = yield* setup
      const runDir = path.join(s.work, "run")
      yield* Effect.promise(() => fsp.mkdir(runDir))
      const ran = yield* cliInProcess(["capture", "--config", s.configFile, "--run-dir", runDir, "--allow-loopback-http"])
      assert.deepStrictEqual(ran, {
        code: 2,
        stdout: "",
        stderr: `RunDirectoryExists: Run directory ${runDir} already exists; captures go into a new run directory so evidence is never mixed or overwritten\n`
      })
      assert.strictEqual(s.server.connections, 0)
    }))

  it.scopedLive("an unreadable or invalid config: exit 2, nothing created", () =>
    Effect.gen(function*() {
      const s = yield* setup
      const runDir = path.join(s.work, "run")
      const noConfig = path.join(s.work, "none.json")
      const ran = yield* cliInProcess(["capture", "--config", noConfig, "--run-dir", runDir, "--allow-loopback-http"])
      assert.deepStrictEqual(ran, {
        code: 2,
        stdout: "",
        stderr: `FileUnreadable: Cannot read the configuration ${noConfig}: no such file\n`
      })
      yield* write(s.configFile, { sources: [s.sales], labels: ["a"], extra: true })
      const invalid = yield* cliInProcess(["capture", "--config", s.configFile, "--run-dir", runDir, "--allow-loopback-http"])
      assert.strictEqual(invalid.code, 2)
      assert.strictEqual(invalid.stdout, "")
      assert.match(invalid.stderr, /^InvalidConfig/)
      assert.include(invalid.stderr, "extra")
      assert.isFalse(yield* exists(runDir))
      assert.strictEqual(s.server.connections, 0)
    }))

  it.scopedLive("a bad --format or a missing option: exit 2 before anything is read", () =>
    Effect.gen(function*() {
      const s = yield* setup
      const runDir = path.join(s.work, "run")
      const ran = yield* cliInProcess([
        "capture", "--config", s.configFile, "--run-dir", runDir, "--allow-loopback-http", "--format", "xml"
      ])
      assert.strictEqual(ran.code, 2)
      assert.strictEqual(ran.stdout, "")
      assert.include(ran.stderr, `--format must be one of table, json; got "xml"`)
      const missing = yield* cliInProcess(["capture", "--run-dir", runDir])
      assert.strictEqual(missing.code, 2)
      assert.isFalse(yield* exists(runDir))
      assert.strictEqual(s.server.connections, 0)
    }))

  it.scopedLive("a run directory below a regular file: WriteFailed, exit 2 (was an internal error, 70)", () =>
    Effect.gen(function*() {
      const s = yield* setup
      const runDir = path.join(s.configFile, "run")
      const ran = yield* cliInProcess(["capture", "--config", s.configFile, "--run-dir", runDir, "--allow-loopback-http"])
      assert.strictEqual(ran.code, 2, ran.stderr)
      assert.strictEqual(ran.stdout, "")
      assert.isTrue(ran.stderr.startsWith(`WriteFailed: Cannot write ${runDir}: `), ran.stderr)
      assert.include(ran.stderr, "ENOTDIR")
      assert.strictEqual(s.server.connections, 0)
      // A symbolic link loop on the way: the same (ELOOP).
      yield* Effect.promise(() => fsp.symlink(path.join(s.work, "b"), path.join(s.work, "a")))
      yield* Effect.promise(() => fsp.symlink(path.join(s.work, "a"), path.join(s.work, "b")))
      const loopDir = path.join(s.work, "a", "run")
      const loop = yield* cliInProcess(["capture", "--config", s.configFile, "--run-dir", loopDir, "--allow-loopback-http"])
      assert.strictEqual(loop.code, 2, loop.stderr)
      assert.isTrue(loop.stderr.startsWith(`WriteFailed: Cannot write ${loopDir}: `), loop.stderr)
      assert.include(loop.stderr, "ELOOP")
    }))

  it.scopedLive("--store that is no postgres URL: StoreChoiceInvalid, exit 2", () =>
    Effect.gen(function*() {
      const s = yield* setup
      const runDir = path.join(s.work, "run")
      const ran = yield* cliInProcess([
        "capture", "--config", s.configFile, "--run-dir", runDir, "--allow-loopback-http", "--store", "mysql://x/y"
      ])
      assert.deepStrictEqual(ran, {
        code: 2,
        stdout: "",
        stderr: "StoreChoiceInvalid: --store is not a postgres:// or postgresql:// URL; give --store postgres://user@host/db " +
          "(or set CITEGATE_DATABASE_URL), and --run-dir then names the run in the database; without either, --run-dir is a run directory\n"
      })
      assert.isFalse(yield* exists(runDir))
    }))
})

describe("verify", () => {
  const verifyArgs = (s: { configFile: string; runDir: string }, report: string, ...more: Array<string>) => [
    "verify", "--config", s.configFile, "--run-dir", s.runDir, "--report", report, ...more
  ]

  it.scopedLive("a grounded report: text on stdout, the summary on stderr, exit 0, the run unchanged", () =>
    Effect.gen(function*() {
      const s = yield* captured
      const before = yield* snapshotDirectory(s.runDir)
      const report = yield* s.report([s.good])
      const ran = yield* cliInProcess(verifyArgs(s, report))
      assert.strictEqual(ran.code, 0, ran.stderr)
      assert.strictEqual(ran.stderr, "verify: GROUNDED (reject mode, 0 retracted)\n")
      assert.isTrue(ran.stdout.startsWith("citegate: GROUNDED"), ran.stdout)
      // The page header states the matching policy in force (the configuration sets none: exact).
      assert.strictEqual(ran.stdout.split("\n")[1], "Matching policy: exact (every excerpt is the capture's text, code unit for code unit)")
      assert.include(ran.stdout, `"${s.good.snippet}"`)
      assert.deepStrictEqual(yield* snapshotDirectory(s.runDir), before)
    }))

  it.scopedLive("every output format of a rejected report: exit 1, the format's own rendering", () =>
    Effect.gen(function*() {
      const s = yield* captured
      const report = yield* s.report([s.good, s.bad])
      const outputs: Record<string, string> = {}
      for (const format of ["text", "json", "markdown", "html", "repair"]) {
        const ran = yield* cliInProcess(verifyArgs(s, report, "--format", format))
        assert.strictEqual(ran.code, 1, `${format}: ${ran.stderr}`)
        assert.strictEqual(ran.stderr, "verify: REJECTED (ReportRejected)\n")
        outputs[format] = ran.stdout
      }
      assert.isTrue(outputs.text!.startsWith("citegate: REJECTED"), outputs.text)
      assert.strictEqual(outputs.text!.split("\n")[1], "Matching policy: exact (every excerpt is the capture's text, code unit for code unit)")
      assert.include(outputs.markdown!, "# Report rejected\n\n*Matching policy: exact")
      assert.include(outputs.html!, "<h1>Report rejected</h1>\n<p class=\"note matching\">Matching policy: exact")
      const json = JSON.parse(outputs.json!)
      assert.strictEqual(json.status, "rejected")
      assert.strictEqual(json.error._tag, "ReportRejected")
      assert.deepStrictEqual(json.error.failures.map((f: { error: { _tag: string } }) => f.error._tag), ["SnippetAbsent"])
      assert.isTrue(outputs.markdown!.startsWith("# "), outputs.markdown)
      assert.isTrue(outputs.html!.startsWith("<!doctype html>\n"), outputs.html)
      assert.include(outputs.repair!, "q3_returns")
      // Five different renderings: the format chosen is the format rendered.
      assert.strictEqual(new Set(Object.values(outputs)).size, 5)
      for (const format of ["text", "markdown", "html", "repair"]) assert.include(outputs[format]!, "SnippetAbsent", format)
    }))

  it.scopedLive("drop mode: the failed fact is retracted, exit 0; the config's mode is the default", () =>
    Effect.gen(function*() {
      const s = yield* captured
      const report = yield* s.report([s.good, s.bad])
      const ran = yield* cliInProcess(verifyArgs(s, report, "--mode", "drop", "--format", "json"))
      assert.strictEqual(ran.code, 0, ran.stderr)
      assert.strictEqual(ran.stderr, "verify: GROUNDED (drop mode, 1 retracted)\n")
      const json = JSON.parse(ran.stdout)
      assert.strictEqual(json.status, "verified")
      assert.strictEqual(json.report.mode, "drop")
      yield* write(s.configFile, { sources: [s.sales], labels: ["q3_net_sales", "q3_returns"], verify: { mode: "drop" } })
      const fromConfig = yield* cliInProcess(verifyArgs(s, report))
      assert.strictEqual(fromConfig.code, 0, fromConfig.stderr)
      assert.strictEqual(fromConfig.stderr, "verify: GROUNDED (drop mode, 1 retracted)\n")
      // --mode wins over the config.
      const overridden = yield* cliInProcess(verifyArgs(s, report, "--mode", "reject"))
      assert.strictEqual(overridden.code, 1)
      assert.strictEqual(overridden.stderr, "verify: REJECTED (ReportRejected)\n")
    }))

  it.scopedLive("drop mode with nothing verified: NO EVIDENCE, exit 1", () =>
    Effect.gen(function*() {
      const s = yield* captured
      const report = yield* s.report([s.bad])
      const ran = yield* cliInProcess(verifyArgs(s, report, "--mode", "drop"))
      assert.strictEqual(ran.code, 1)
      assert.strictEqual(ran.stderr, "verify: NO EVIDENCE (drop mode): no cited fact was verified\n")
      assert.isTrue(ran.stdout.startsWith("citegate: NO EVIDENCE"), ran.stdout)
    }))

  it.scopedLive("--out: written atomically, nothing on stdout; an existing file needs --force", () =>
    Effect.gen(function*() {
      const s = yield* captured
      const report = yield* s.report([s.good])
      const out = path.join(s.work, "out.json")
      const ran = yield* cliInProcess(verifyArgs(s, report, "--format", "json", "--out", out))
      assert.strictEqual(ran.code, 0, ran.stderr)
      assert.strictEqual(ran.stdout, "")
      assert.strictEqual(ran.stderr, `verify: GROUNDED (reject mode, 0 retracted); written to ${out}\n`)
      const written = yield* read(out)
      assert.strictEqual(JSON.parse(written).status, "verified")
      assert.deepStrictEqual((yield* listing(s.work)).filter((name) => name.includes("partial")), [])
      // Same again without --force: refused, file unchanged.
      yield* write(out, "keep me")
      const again = yield* cliInProcess(verifyArgs(s, report, "--format", "json", "--out", out))
      assert.deepStrictEqual(again, {
        code: 2,
        stdout: "",
        stderr: `OutputRefused: Refusing to write the rendering to ${out}: the file exists; pass --force to replace it\n`
      })
      assert.strictEqual(yield* read(out), "keep me")
      const forced = yield* cliInProcess(verifyArgs(s, report, "--format", "json", "--out", out, "--force"))
      assert.strictEqual(forced.code, 0, forced.stderr)
      assert.strictEqual(yield* read(out), written)
    }))

  it.scopedLive("--out inside the run directory or over an input: refused, exit 2", () =>
    Effect.gen(function*() {
      const s = yield* captured
      const report = yield* s.report([s.good])
      const inside = path.join(s.runDir, "out.txt")
      const ran = yield* cliInProcess(verifyArgs(s, report, "--out", inside))
      assert.deepStrictEqual(ran, {
        code: 2,
        stdout: "",
        stderr: `OutputRefused: Refusing to write the rendering to ${inside}: it is inside the run directory ${
          yield* Effect.promise(() => fsp.realpath(s.runDir))
        }; captures are never overwritten\n`
      })
      const overReport = yield* cliInProcess(verifyArgs(s, report, "--out", report, "--force"))
      assert.deepStrictEqual(overReport, {
        code: 2,
        stdout: "",
        stderr: `OutputRefused: Refusing to write the rendering to ${report}: it is the report ${report}\n`
      })
      const overConfig = yield* cliInProcess(verifyArgs(s, report, "--out", s.configFile, "--force"))
      assert.strictEqual(overConfig.code, 2)
      assert.strictEqual(
        overConfig.stderr,
        `OutputRefused: Refusing to write the rendering to ${s.configFile}: it is the configuration ${s.configFile}\n`
      )
      assert.isFalse(yield* exists(inside))
    }))

  it.scopedLive("an unreadable report, a missing run, a bad --mode: exit 2", () =>
    Effect.gen(function*() {
      const s = yield* captured
      const noReport = path.join(s.work, "none.json")
      const ran = yield* cliInProcess(verifyArgs(s, noReport))
      assert.deepStrictEqual(ran, { code: 2, stdout: "", stderr: `FileUnreadable: Cannot read the report ${noReport}: no such file\n` })
      const report = yield* s.report([s.good])
      const noRun = yield* cliInProcess(verifyArgs({ ...s, runDir: path.join(s.work, "nope") }, report))
      assert.strictEqual(noRun.code, 2)
      assert.strictEqual(noRun.stdout, "")
      assert.match(noRun.stderr, /^InvalidRunDirectory/)
      const badMode = yield* cliInProcess(verifyArgs(s, report, "--mode", "lenient"))
      assert.strictEqual(badMode.code, 2)
      assert.strictEqual(badMode.stdout, "")
      const badFormat = yield* cliInProcess(verifyArgs(s, report, "--format", "pdf"))
      assert.strictEqual(badFormat.code, 2)
      assert.include(badFormat.stderr, `--format must be one of text, json, markdown, html, jsonld, repair; got "pdf"`)
    }))
})

describe("run", () => {
  it.scopedLive("captures and verifies: progress and table on stderr, the rendering alone on stdout, exit 0", () =>
    Effect.gen(function*() {
      const s = yield* setup
      const report = yield* s.report([s.good])
      const runDir = path.join(s.work, "run")
      const ran = yield* cliInProcess([
        "run", "--config", s.configFile, "--run-dir", runDir, "--report", report, "--allow-loopback-http", "--format", "json"
      ])
      assert.strictEqual(ran.code, 0, ran.stderr)
      const json = JSON.parse(ran.stdout)
      assert.strictEqual(json.status, "verified")
      const record = JSON.parse(yield* read(path.join(runDir, expectedRecordName(s.sales))))
      const width = Math.max(6, s.sales.length)
      assert.strictEqual(
        ran.stderr,
        [
          `capture: fetching ${s.sales}`,
          `capture: ok       ${s.sales} (${salesBytes} bytes, sha256 ${salesDigest.slice(0, 12)}…)`,
          tableLine("STATUS", "SOURCE", width, "RESULT"),
          tableLine("ok", s.sales, width, `sha256 ${salesDigest}  ${salesBytes} bytes  ${record.accessedAt}`),
          "1 of 1 sources captured",
          "verify: GROUNDED (reject mode, 0 retracted)",
          ""
        ].join("\n")
      )
    }))

  it.scopedLive("a failed capture fails the run even when the report verifies (exit 1)", () =>
    Effect.gen(function*() {
      const s = yield* setup
      yield* write(s.configFile, { sources: [s.sales, s.missing], labels: ["q3_net_sales"] })
      const report = yield* s.report([s.good])
      const ran = yield* cliInProcess([
        "run", "--config", s.configFile, "--run-dir", path.join(s.work, "run"), "--report", report, "--allow-loopback-http"
      ])
      assert.strictEqual(ran.code, 1)
      assert.isTrue(ran.stderr.endsWith("1 of 2 sources captured\nverify: GROUNDED (reject mode, 0 retracted)\n"), ran.stderr)
    }))

  it.scopedLive("a rejected report with every source captured: exit 1", () =>
    Effect.gen(function*() {
      const s = yield* setup
      const report = yield* s.report([s.bad])
      const ran = yield* cliInProcess([
        "run", "--config", s.configFile, "--run-dir", path.join(s.work, "run"), "--report", report, "--allow-loopback-http"
      ])
      assert.strictEqual(ran.code, 1)
      assert.isTrue(ran.stderr.endsWith("1 of 1 sources captured\nverify: REJECTED (ReportRejected)\n"), ran.stderr)
    }))

  it.scopedLive("an unreadable report or a refused --out: exit 2 before anything is fetched or created", () =>
    Effect.gen(function*() {
      const s = yield* setup
      const runDir = path.join(s.work, "run")
      const noReport = path.join(s.work, "none.json")
      const ran = yield* cliInProcess([
        "run", "--config", s.configFile, "--run-dir", runDir, "--report", noReport, "--allow-loopback-http"
      ])
      assert.deepStrictEqual(ran, { code: 2, stdout: "", stderr: `FileUnreadable: Cannot read the report ${noReport}: no such file\n` })
      const report = yield* s.report([s.good])
      const out = path.join(s.work, "exists.txt")
      yield* write(out, "x")
      const refused = yield* cliInProcess([
        "run", "--config", s.configFile, "--run-dir", runDir, "--report", report, "--allow-loopback-http", "--out", out
      ])
      assert.strictEqual(refused.code, 2)
      assert.match(refused.stderr, /^OutputRefused: /)
      const noConfig = yield* cliInProcess([
        "run", "--config", path.join(s.work, "nothing.json"), "--run-dir", runDir, "--report", report, "--allow-loopback-http"
      ])
      assert.strictEqual(noConfig.code, 2)
      assert.match(noConfig.stderr, /^FileUnreadable: Cannot read the configuration /)
      assert.isFalse(yield* exists(runDir))
      assert.strictEqual(s.server.connections, 0)
    }))
})

describe("migrate", () => {
  const legacySetup = Effect.gen(function*() {
    const s = yield* setup
    const legacy = path.join(s.work, "legacy")
    yield* Effect.promise(() => fsp.mkdir(legacy))
    const legacyRecord = (source: string | undefined, text: string, digest = sha256(text)) => ({
      ...(source === undefined ? {} : { source }),
      text,
      sha256: digest,
      accessedAt: "2025-06-01T08:00:00.000Z"
    })
    yield* write(path.join(legacy, "sales.json"), legacyRecord(undefined, salesText))
    yield* write(path.join(legacy, "tampered.json"), legacyRecord(s.missing, "edited text", "a".repeat(64)))
    yield* write(path.join(legacy, "unapproved.json"), legacyRecord("https://elsewhere.test/x", "not approved"))
    const mapFile = path.join(s.work, "map.json")
    return { ...s, legacy, mapFile }
  })

  it.scopedLive("migrated, rejected and skipped lines, exit 1 when one is rejected", () =>
    Effect.gen(function*() {
      const s = yield* legacySetup
      yield* write(s.mapFile, { entries: [{ file: "sales.json", source: s.sales }, { file: "tampered.json", source: s.missing }] })
      const runDir = path.join(s.work, "migrated")
      const ran = yield* cliInProcess(["migrate", "--legacy", s.legacy, "--map", s.mapFile, "--run-dir", runDir])
      assert.strictEqual(ran.code, 1, ran.stderr)
      assert.strictEqual(ran.stderr, "")
      const lines = ran.stdout.split("\n")
      assert.strictEqual(lines[0], `migrated  sales.json -> ${s.sales} (sha256 ${salesDigest.slice(0, 12)}…)`)
      assert.isTrue(lines[1]!.startsWith("REJECTED  tampered.json: digest-mismatch: "), lines[1])
      assert.deepStrictEqual(lines.slice(2), [
        "skipped   unapproved.json: not approved by the map, left alone",
        "1 migrated, 1 rejected, 1 skipped",
        ""
      ])
      assert.deepStrictEqual(yield* listing(runDir), [expectedRecordName(s.sales)])
    }))

  it.scopedLive("everything approved migrates: exit 0; the same run directory again: exit 2", () =>
    Effect.gen(function*() {
      const s = yield* legacySetup
      yield* write(s.mapFile, { entries: [{ file: "sales.json", source: s.sales }] })
      const runDir = path.join(s.work, "migrated")
      const ran = yield* cliInProcess(["migrate", "--legacy", s.legacy, "--map", s.mapFile, "--run-dir", runDir])
      assert.strictEqual(ran.code, 0, ran.stderr)
      assert.isTrue(ran.stdout.endsWith("\n1 migrated, 0 rejected, 2 skipped\n"), ran.stdout)
      const again = yield* cliInProcess(["migrate", "--legacy", s.legacy, "--map", s.mapFile, "--run-dir", runDir])
      assert.strictEqual(again.code, 2)
      assert.strictEqual(again.stdout, "")
      assert.match(again.stderr, /^RunDirectoryExists: /)
    }))

  it.scopedLive("an unreadable or invalid map: exit 2, no run directory", () =>
    Effect.gen(function*() {
      const s = yield* legacySetup
      const runDir = path.join(s.work, "migrated")
      const ran = yield* cliInProcess(["migrate", "--legacy", s.legacy, "--map", s.mapFile, "--run-dir", runDir])
      assert.deepStrictEqual(ran, {
        code: 2,
        stdout: "",
        stderr: `FileUnreadable: Cannot read the migration map ${s.mapFile}: no such file\n`
      })
      yield* write(s.mapFile, { entries: "none" })
      const invalid = yield* cliInProcess(["migrate", "--legacy", s.legacy, "--map", s.mapFile, "--run-dir", runDir])
      assert.strictEqual(invalid.code, 2)
      assert.match(invalid.stderr, /^InvalidMigrationMap/)
      assert.isFalse(yield* exists(runDir))
    }))
})

describe("doctor", () => {
  it.scoped("a clean run: exit 0, the summary line", () =>
    Effect.gen(function*() {
      const directory = yield* runDirectoryWith([salesRecord, inventoryRecord])
      const ran = yield* cliInProcess(["doctor", "--run-dir", directory])
      assert.deepStrictEqual(ran, { code: 0, stdout: "2 records verify, 0 leftovers, 0 corrupt records\n", stderr: "" })
    }))

  it.scoped("a leftover: exit 1 and left alone; --fix removes it (exit 0); a corrupt record stays exit 1", () =>
    Effect.gen(function*() {
      const directory = yield* runDirectoryWith([salesRecord])
      const leftover = ".partial-3f1c2a40-0000-4000-8000-000000000001"
      // citegate's own leftover: its exact name, read-only (doctor leaves any other file alone).
      yield* Effect.promise(() => fsp.writeFile(path.join(directory, leftover), "x".repeat(100), { mode: 0o444 }))
      yield* Effect.promise(() => fsp.writeFile(path.join(directory, "notes.txt"), "mine"))
      const found = yield* cliInProcess(["doctor", "--run-dir", directory])
      assert.deepStrictEqual(found, {
        code: 1,
        stdout: [
          `LEFTOVER  ${leftover} (100 bytes): an interrupted write; no record was made from it`,
          "other     notes.txt: not written by citegate, left alone",
          "1 records verify, 1 leftovers, 0 corrupt records",
          ""
        ].join("\n"),
        stderr: ""
      })
      assert.isTrue(yield* exists(path.join(directory, leftover)))
      const fixed = yield* cliInProcess(["doctor", "--run-dir", directory, "--fix"])
      assert.deepStrictEqual(fixed, {
        code: 0,
        stdout: [
          `removed   ${leftover} (100 bytes): an interrupted write; no record was made from it`,
          "other     notes.txt: not written by citegate, left alone",
          "1 records verify, 1 leftovers (1 removed), 0 corrupt records",
          ""
        ].join("\n"),
        stderr: ""
      })
      assert.isFalse(yield* exists(path.join(directory, leftover)))
      // A record whose text no longer matches its digest: corrupt, exit 1 with and without --fix, left alone.
      const file = recordPath(directory, SALES)
      const record = JSON.parse(yield* read(file))
      yield* Effect.promise(() => fsp.chmod(file, 0o644))
      yield* write(file, JSON.stringify({ ...record, text: record.text + "!" }))
      for (const args of [["doctor", "--run-dir", directory], ["doctor", "--run-dir", directory, "--fix"]]) {
        const corrupt = yield* cliInProcess(args)
        assert.strictEqual(corrupt.code, 1, corrupt.stdout)
        const lines = corrupt.stdout.split("\n")
        assert.isTrue(lines[0]!.startsWith(`CORRUPT   ${path.basename(file)}: `), lines[0])
        assert.isTrue(lines[0]!.endsWith(" (left alone)"), lines[0])
        assert.strictEqual(
          lines.at(-2),
          args.length === 3 ? "0 records verify, 0 leftovers, 1 corrupt records" : "0 records verify, 0 leftovers (0 removed), 1 corrupt records"
        )
      }
      assert.isTrue(yield* exists(file))
    }))

  it.scoped("a second link of a record, stored bodies (unused, corrupt), a leftover that cannot be removed", () =>
    Effect.gen(function*() {
      const directory = yield* runDirectoryWith([salesRecord])
      const recordName = path.basename(recordPath(directory, SALES))
      const recordBytes = Buffer.byteLength(yield* read(recordPath(directory, SALES)))
      const linked = ".partial-3f1c2a40-0000-4000-8000-000000000002"
      yield* Effect.promise(() => fsp.link(recordPath(directory, SALES), path.join(directory, linked)))
      const found = yield* cliInProcess(["doctor", "--run-dir", directory])
      assert.deepStrictEqual(found, {
        code: 1,
        stdout: `LEFTOVER  ${linked} (${recordBytes} bytes): a second link of ${recordName}, whose write finished; the record is intact\n` +
          "1 records verify, 1 leftovers, 0 corrupt records\n",
        stderr: ""
      })
      const fixed = yield* cliInProcess(["doctor", "--run-dir", directory, "--fix"])
      assert.strictEqual(fixed.code, 0, fixed.stdout)
      assert.isTrue(yield* exists(recordPath(directory, SALES)))

      // A body no record names: listed, not a failure.
      const unusedName = `${sha256("stored body")}.body`
      yield* Effect.promise(() => fsp.writeFile(path.join(directory, unusedName), "stored body"))
      const unusedLine = `unused    ${unusedName} (11 bytes): a stored body no record names (a write that died before its record), left alone`
      const unused = yield* cliInProcess(["doctor", "--run-dir", directory])
      assert.deepStrictEqual(unused, {
        code: 0,
        stdout: `${unusedLine}\n1 records verify, 0 leftovers, 0 corrupt records, 1 stored bodies (0 corrupt)\n`,
        stderr: ""
      })
      // A body whose bytes do not hash to its name: corrupt, exit 1 with and without --fix.
      const corruptName = `${"0".repeat(64)}.body`
      yield* Effect.promise(() => fsp.writeFile(path.join(directory, corruptName), "tampered"))
      const corruptLine = `CORRUPT   ${corruptName}: body-mismatch: the body hashes to ${sha256("tampered")} (left alone)`
      const corrupt = yield* cliInProcess(["doctor", "--run-dir", directory])
      assert.deepStrictEqual(corrupt, {
        code: 1,
        stdout: `${corruptLine}\n${unusedLine}\n1 records verify, 0 leftovers, 0 corrupt records, 2 stored bodies (1 corrupt)\n`,
        stderr: ""
      })
      const corruptFix = yield* cliInProcess(["doctor", "--run-dir", directory, "--fix"])
      assert.deepStrictEqual(corruptFix, {
        code: 1,
        stdout: `${corruptLine}\n${unusedLine}\n1 records verify, 0 leftovers (0 removed), 0 corrupt records, 2 stored bodies (1 corrupt)\n`,
        stderr: ""
      })
      assert.isTrue(yield* exists(path.join(directory, corruptName)))
    }))

  it.scopedLive("a capture with a stored body (HTML): the body is named by its record, so nothing is listed for it", () =>
    Effect.gen(function*() {
      const server = yield* testServer(plainText("<!doctype html><title>Q3</title><p>Net sales were 4,210 units.</p>", "text/html; charset=utf-8"))
      const work = yield* tempDirectory
      const configFile = path.join(work, "pipeline.json")
      yield* write(configFile, { sources: [server.url("/q3.html")], labels: ["x"], capture: { contentTypes: ["text/html"] } })
      const runDir = path.join(work, "run")
      const captured = yield* cliInProcess(["capture", "--config", configFile, "--run-dir", runDir, "--allow-loopback-http"])
      assert.strictEqual(captured.code, 0, captured.stderr)
      assert.strictEqual((yield* listing(runDir)).filter((name) => name.endsWith(".body")).length, 1)
      const ran = yield* cliInProcess(["doctor", "--run-dir", runDir])
      assert.deepStrictEqual(ran, { code: 0, stdout: "1 records verify, 0 leftovers, 0 corrupt records, 1 stored bodies (0 corrupt)\n", stderr: "" })
    }))

  it.scoped("a missing run directory: exit 2", () =>
    Effect.gen(function*() {
      const work = yield* tempDirectory
      const ran = yield* cliInProcess(["doctor", "--run-dir", path.join(work, "nope")])
      assert.strictEqual(ran.code, 2)
      assert.strictEqual(ran.stdout, "")
      assert.match(ran.stderr, /^InvalidRunDirectory/)
    }))
})

describe("sources", () => {
  it.scoped("text, json and prompt; a source without a capture: exit 1 and a note on stderr", () =>
    Effect.gen(function*() {
      const runDir = yield* runDirectoryWith([salesRecord, inventoryRecord, emojiRecord])
      const work = yield* tempDirectory
      const configFile = path.join(work, "pipeline.json")
      yield* write(configFile, answerConfigJson)
      const manifest = yield* Manifest.make(answerConfig).pipe(Effect.provide(CaptureStore.layerFileSystem({ directory: runDir })))
      const outputs: Record<string, string> = {}
      for (const format of ["text", "json", "prompt"]) {
        const ran = yield* cliInProcess(["sources", "--config", configFile, "--run-dir", runDir, "--format", format])
        assert.strictEqual(ran.code, 1, ran.stderr)
        assert.strictEqual(ran.stderr, "sources: 1 of 4 approved source(s) have no usable capture in this run\n")
        outputs[format] = ran.stdout
      }
      const json = JSON.parse(outputs.json!)
      assert.strictEqual(json.digest, manifest.digest)
      assert.deepStrictEqual(json.sources.map((s: { status: string }) => s.status), ["captured", "captured", "captured", "missing"])
      assert.strictEqual(new Set(Object.values(outputs)).size, 3)
      for (const format of ["text", "prompt"]) assert.include(outputs[format]!, manifest.digest, format)
      assert.isTrue(outputs.text!.startsWith(`citegate manifest ${manifest.digest}\n[1] captured  ${SALES}\n`), outputs.text)
      assert.isTrue(outputs.prompt!.includes(`[1] ${JSON.stringify({ source: SALES, captureSha256: salesRecord.sha256 })}\n`), outputs.prompt)
      // Every approved source captured: exit 0, nothing on stderr.
      yield* write(configFile, { sources: [SALES], labels: ["unused"] })
      const complete = yield* cliInProcess(["sources", "--config", configFile, "--run-dir", runDir])
      assert.strictEqual(complete.code, 0, complete.stderr)
      assert.strictEqual(complete.stderr, "")
    }))
})

describe("verify-answer", () => {
  const answerSetup = Effect.gen(function*() {
    const runDir = yield* runDirectoryWith([salesRecord, inventoryRecord, emojiRecord])
    const work = yield* tempDirectory
    const configFile = path.join(work, "pipeline.json")
    yield* write(configFile, answerConfigJson)
    const manifest = yield* Manifest.make(answerConfig).pipe(Effect.provide(CaptureStore.layerFileSystem({ directory: runDir })))
    const answer = (claims: ReadonlyArray<unknown>, digest: string = manifest.digest) =>
      Effect.as(
        write(path.join(work, "answer.json"), { format: "citegate.answer/1", manifest: digest, claims }),
        path.join(work, "answer.json")
      )
    return { runDir, work, configFile, manifest, answer }
  })
  const good = { id: "a", text: "Net sales were 4,210 units.", citations: [{ source: 1, quote: "4,210 units" }] }
  const bad = { id: "b", text: "Sales tripled.", citations: [{ source: 1, quote: "tripled" }] }

  it.scoped("grounded (exit 0), rejected (exit 1), drop mode, and --out", () =>
    Effect.gen(function*() {
      const s = yield* answerSetup
      const args = (file: string, ...more: Array<string>) => [
        "verify-answer", "--answer", file, "--config", s.configFile, "--run-dir", s.runDir, ...more
      ]
      const grounded = yield* cliInProcess(args(yield* s.answer([good]), "--format", "json"))
      assert.strictEqual(grounded.code, 0, grounded.stderr)
      assert.strictEqual(grounded.stderr, "verify-answer: GROUNDED (reject mode, 1 of 1 claims, 0 removed)\n")
      assert.strictEqual(JSON.parse(grounded.stdout).status, "verified")
      // Text, Markdown and HTML answer pages state the matching policy under their title.
      const page = (yield* cliInProcess(args(yield* s.answer([good]), "--format", "html"))).stdout
      assert.include(page, "<h1>Verified answer</h1>\n<p class=\"note matching\">Matching policy: exact")
      assert.include(page, "<h2>Captured sources</h2>")
      assert.include((yield* cliInProcess(args(yield* s.answer([good]), "--format", "markdown"))).stdout, "# Verified answer\n\n*Matching policy: exact")

      const file = yield* s.answer([good, bad])
      const rejected = yield* cliInProcess(args(file, "--format", "json"))
      assert.strictEqual(rejected.code, 1)
      assert.strictEqual(rejected.stderr, "verify-answer: REJECTED (AnswerRejected)\n")
      assert.strictEqual(JSON.parse(rejected.stdout).status, "rejected")
      const repair = yield* cliInProcess(args(file, "--format", "repair"))
      assert.strictEqual(repair.code, 1)
      assert.notStrictEqual(repair.stdout, rejected.stdout)
      assert.include(repair.stdout, "tripled")

      const dropped = yield* cliInProcess(args(file, "--mode", "drop"))
      assert.strictEqual(dropped.code, 0, dropped.stderr)
      assert.strictEqual(dropped.stderr, "verify-answer: GROUNDED (drop mode, 1 of 2 claims, 1 removed)\n")

      const none = yield* cliInProcess(args(yield* s.answer([bad]), "--mode", "drop"))
      assert.strictEqual(none.code, 1)
      assert.strictEqual(none.stderr, "verify-answer: NO EVIDENCE (drop mode): no claim was grounded\n")

      const out = path.join(s.work, "answer.html")
      const written = yield* cliInProcess(args(yield* s.answer([good]), "--format", "html", "--out", out))
      assert.strictEqual(written.code, 0, written.stderr)
      assert.strictEqual(written.stdout, "")
      assert.strictEqual(written.stderr, `verify-answer: GROUNDED (reject mode, 1 of 1 claims, 0 removed); written to ${out}\n`)
      assert.isTrue((yield* read(out)).startsWith("<!doctype html>\n"))
      // An existing --out: refused without --force, replaced with it.
      const firstHtml = yield* read(out)
      yield* write(out, "old")
      const refused = yield* cliInProcess(args(path.join(s.work, "answer.json"), "--format", "html", "--out", out))
      assert.strictEqual(refused.code, 2)
      assert.strictEqual(refused.stderr, `OutputRefused: Refusing to write the rendering to ${out}: the file exists; pass --force to replace it\n`)
      const forced = yield* cliInProcess(args(path.join(s.work, "answer.json"), "--format", "html", "--out", out, "--force"))
      assert.strictEqual(forced.code, 0, forced.stderr)
      assert.strictEqual(yield* read(out), firstHtml)
      const overAnswer = yield* cliInProcess(args(path.join(s.work, "answer.json"), "--out", path.join(s.work, "answer.json"), "--force"))
      assert.deepStrictEqual(overAnswer, {
        code: 2,
        stdout: "",
        stderr: `OutputRefused: Refusing to write the rendering to ${path.join(s.work, "answer.json")}: it is the answer ${
          path.join(s.work, "answer.json")
        }\n`
      })
    }))

  it.scoped("evi1 and anthropic input formats; a stale manifest digest; an unreadable answer", () =>
    Effect.gen(function*() {
      const s = yield* answerSetup
      const evi1 = yield* Effect.as(
        write(
          path.join(s.work, "answer.evi1"),
          ["Net sales for Q3 2026 were 4,210 units.[1]{c1}", "EVI1", "c1|1|\"Net sales for Q3 2026 were 4,210 units\"", "END_EVI1", ""].join("\n")
        ),
        path.join(s.work, "answer.evi1")
      )
      const base = ["--config", s.configFile, "--run-dir", s.runDir]
      const ran = yield* cliInProcess(["verify-answer", "--answer", evi1, "--format-in", "evi1", ...base, "--manifest-digest", s.manifest.digest])
      assert.strictEqual(ran.code, 0, ran.stdout + ran.stderr)
      assert.strictEqual(ran.stderr, "verify-answer: GROUNDED (reject mode, 1 of 1 claims, 0 removed)\n")
      // The same text read as json is not an answer: rejected with the json decoder's tag.
      const asJson = yield* cliInProcess(["verify-answer", "--answer", evi1, ...base, "--manifest-digest", s.manifest.digest])
      assert.strictEqual(asJson.code, 1)
      assert.notStrictEqual(asJson.stderr, ran.stderr)
      const asAnthropic = yield* cliInProcess([
        "verify-answer", "--answer", evi1, "--format-in", "anthropic", ...base, "--manifest-digest", s.manifest.digest
      ])
      assert.strictEqual(asAnthropic.code, 1)
      assert.match(asAnthropic.stderr, /^verify-answer: REJECTED \(/)
      // A Messages API response citing the sales capture by character offsets (the fixture is ASCII).
      const quote = "4,210 units"
      const start = salesRecord.text.indexOf(quote)
      const anthropicFile = path.join(s.work, "anthropic.json")
      yield* write(anthropicFile, {
        id: "msg",
        type: "message",
        content: [{
          type: "text",
          text: "Net sales were 4,210 units.",
          citations: [{ type: "char_location", cited_text: quote, document_index: 0, document_title: null, start_char_index: start, end_char_index: start + quote.length }]
        }]
      })
      const anthropic = yield* cliInProcess([
        "verify-answer", "--answer", anthropicFile, "--format-in", "anthropic", ...base, "--manifest-digest", s.manifest.digest
      ])
      assert.strictEqual(anthropic.code, 0, anthropic.stdout + anthropic.stderr)
      assert.strictEqual(anthropic.stderr, "verify-answer: GROUNDED (reject mode, 1 of 1 claims, 0 removed)\n")
      const stale = yield* cliInProcess(["verify-answer", "--answer", evi1, "--format-in", "evi1", ...base, "--manifest-digest", "c".repeat(64)])
      assert.strictEqual(stale.code, 1)
      assert.strictEqual(stale.stderr, "verify-answer: REJECTED (StaleManifest)\n")
      const noAnswer = path.join(s.work, "none.json")
      const missing = yield* cliInProcess(["verify-answer", "--answer", noAnswer, ...base])
      assert.deepStrictEqual(missing, { code: 2, stdout: "", stderr: `FileUnreadable: Cannot read the answer ${noAnswer}: no such file\n` })
    }))
})

describe("store-init and usage", () => {
  it.effect("store-init without a database: StoreChoiceInvalid, exit 2", () =>
    Effect.gen(function*() {
      const ran = yield* cliInProcess(["store-init"])
      assert.deepStrictEqual(ran, {
        code: 2,
        stdout: "",
        stderr: "StoreChoiceInvalid: store-init needs a database; give --store postgres://user@host/db (or set CITEGATE_DATABASE_URL), " +
          "and --run-dir then names the run in the database; without either, --run-dir is a run directory\n"
      })
    }))

  it.scoped("a defect (a write to stdout throws) ends with 70 and the cause on stderr", () =>
    Effect.gen(function*() {
      const directory = yield* runDirectoryWith([salesRecord])
      const ran = yield* cliInProcess(["doctor", "--run-dir", directory], { stdoutFails: true })
      assert.strictEqual(ran.code, 70)
      assert.strictEqual(ran.stdout, "")
      assert.isTrue(ran.stderr.startsWith("run-pipeline: internal error: Error: stdout is gone\n"), ran.stderr)
      // Reported once, by the program itself.
      assert.strictEqual(ran.stderr.split("internal error").length, 2)
    }))

  it.effect("an unknown command is a usage error (exit 2); --help is exit 0 with the exit codes", () =>
    Effect.gen(function*() {
      const unknown = yield* cliInProcess(["frobnicate"])
      assert.strictEqual(unknown.code, 2)
      const help = yield* cliInProcess(["verify", "--help"])
      assert.strictEqual(help.code, 0, help.stderr)
      assert.include(help.stdout, "$ run-pipeline verify")
      assert.include(help.stdout, "70 internal error; 130 interrupted (SIGINT); 143 terminated (SIGTERM)")
      // Not a terminal: no ANSI styling.
      assert.notInclude(help.stdout, "\u001b[")
      const top = yield* cliInProcess(["--help"])
      assert.strictEqual(top.code, 0)
      assert.isTrue(top.stdout.startsWith("run-pipeline\n\nrun-pipeline "), top.stdout)
    }))
})

describe("recapture and audit", () => {
  /** A server whose sales text changes (4,210 → 4,250 units) once `revision` is 2; an old run and a verified report. */
  const auditSetup = Effect.gen(function*() {
    const state = { revision: 1 }
    const revised = salesText.replace("4,210 units", "4,250 units")
    const server = yield* testServer((req, res) => {
      if (req.url === "/q3-sales.txt" && state.revision < 3) return plainText(state.revision === 1 ? salesText : revised)(req, res, server)
      res.writeHead(404, { "content-type": "text/plain" })
      res.end("not published")
    })
    const work = yield* tempDirectory
    const sales = server.url("/q3-sales.txt")
    const later = server.url("/later.txt")
    const configFile = path.join(work, "pipeline.json")
    yield* write(configFile, { sources: [later, sales], labels: ["q3_net_sales"] })
    const oldConfig = path.join(work, "old.json")
    yield* write(oldConfig, { sources: [sales], labels: ["q3_net_sales"] })
    const oldRun = path.join(work, "old")
    const captured = yield* cliInProcess(["capture", "--config", oldConfig, "--run-dir", oldRun, "--allow-loopback-http"])
    assert.strictEqual(captured.code, 0, captured.stderr)
    const report = path.join(work, "report.json")
    yield* write(report, {
      facts: [{ state: "cited", label: "q3_net_sales", source: sales, captureSha256: salesDigest, snippet: "Net sales for Q3 2026 were 4,210 units" }]
    })
    const newRun = path.join(work, "new")
    const recapture = () =>
      cliInProcess(["recapture", "--from", oldRun, "--config", configFile, "--run-dir", newRun, "--allow-loopback-http"])
    const audit = (...more: Array<string>) =>
      cliInProcess(["audit", "--report", report, "--config", configFile, "--run-dir", oldRun, "--against", newRun, ...more])
    return { state, server, work, sales, later, configFile, oldRun, newRun, report, recapture, audit, revised }
  })

  it.scopedLive("recapture: the plan on stderr, the old run's sources only, exit 0; audit of an unchanged source: STABLE, exit 0", () =>
    Effect.gen(function*() {
      const s = yield* auditSetup
      const ran = yield* s.recapture()
      assert.strictEqual(ran.code, 0, ran.stderr)
      assert.strictEqual(
        ran.stderr,
        `recapture: skipped  ${s.later}: no record in the old run\nrecapture: 1 source(s) to capture again, 1 skipped\n` +
          `capture: fetching ${s.sales}\ncapture: ok       ${s.sales} (${salesBytes} bytes, sha256 ${salesDigest.slice(0, 12)}…)\n`
      )
      assert.strictEqual(ran.stdout.split("\n").at(-2), "1 of 1 sources captured")
      assert.deepStrictEqual(yield* listing(s.newRun), [expectedRecordName(s.sales)])
      assert.strictEqual(s.server.requests.filter((r) => r.url === "/later.txt").length, 0)
      const audited = yield* s.audit("--format", "json")
      assert.strictEqual(audited.code, 0, audited.stderr)
      assert.strictEqual(audited.stderr, "audit: STABLE (report): all 1 citation(s) still verbatim in the new run (0 relocated)\n")
      const json = JSON.parse(audited.stdout)
      assert.strictEqual(json.outcome, "stable")
    }))

  it.scopedLive("audit of a changed source: DRIFTED, exit 1; --out written; refusals and a report without a baseline: exit 2", () =>
    Effect.gen(function*() {
      const s = yield* auditSetup
      s.state.revision = 2
      assert.strictEqual((yield* s.recapture()).code, 0)
      const text = yield* s.audit()
      assert.strictEqual(text.code, 1, text.stderr)
      assert.match(text.stderr, /^audit: DRIFTED \(report\): 1 changed \(1 material\) of 1 citation\(s\)\n$/)
      const outputs: Record<string, string> = { text: text.stdout }
      for (const format of ["json", "markdown", "html"]) {
        const ran = yield* s.audit("--format", format)
        assert.strictEqual(ran.code, 1)
        outputs[format] = ran.stdout
      }
      assert.strictEqual(JSON.parse(outputs.json!).outcome, "drifted")
      assert.isTrue(outputs.html!.startsWith("<!doctype html>\n"), outputs.html)
      assert.strictEqual(new Set(Object.values(outputs)).size, 4)
      const out = path.join(s.work, "audit.md")
      const written = yield* s.audit("--format", "markdown", "--out", out)
      assert.strictEqual(written.code, 1)
      assert.strictEqual(written.stdout, "")
      assert.isTrue(written.stderr.endsWith(`; written to ${out}\n`), written.stderr)
      assert.strictEqual(yield* read(out), outputs.markdown)
      // --out may replace neither run's evidence.
      for (const run of [s.oldRun, s.newRun]) {
        const inside = path.join(run, "audit.txt")
        const refused = yield* s.audit("--out", inside)
        assert.strictEqual(refused.code, 2)
        assert.match(refused.stderr, /^OutputRefused: .*inside the run directory/)
      }
      // A report that does not verify against the old run: no baseline, exit 2.
      yield* write(s.report, {
        facts: [{ state: "cited", label: "q3_net_sales", source: s.sales, captureSha256: salesDigest, snippet: "Net sales were 9 units" }]
      })
      const none = yield* s.audit()
      assert.strictEqual(none.code, 2)
      assert.strictEqual(none.stdout, "")
      assert.isTrue(
        none.stderr.endsWith("audit: NO BASELINE: the report does not verify against the old run; nothing was audited\n"),
        none.stderr
      )
    }))

  it.scopedLive("audit --answer: the answer's citations audited (STABLE, exit 0); --out over an existing file needs --force", () =>
    Effect.gen(function*() {
      const s = yield* auditSetup
      assert.strictEqual((yield* s.recapture()).code, 0)
      // The old run's manifest under this config: source 1 (later) missing, source 2 the sales capture.
      const config = { sources: [s.later, s.sales], labels: ["q3_net_sales"] } as unknown as PipelineConfig
      const manifest = yield* Manifest.make(config).pipe(Effect.provide(CaptureStore.layerFileSystem({ directory: s.oldRun })))
      const answer = path.join(s.work, "answer.json")
      yield* write(answer, {
        format: "citegate.answer/1",
        manifest: manifest.digest,
        claims: [{ id: "a", text: "Net sales were 4,210 units.", citations: [{ source: 2, quote: "4,210 units" }] }]
      })
      const args = ["audit", "--answer", answer, "--config", s.configFile, "--run-dir", s.oldRun, "--against", s.newRun]
      const ran = yield* cliInProcess([...args, "--format", "json"])
      assert.strictEqual(ran.code, 0, ran.stderr)
      assert.strictEqual(ran.stderr, "audit: STABLE (answer): all 1 citation(s) still verbatim in the new run (0 relocated)\n")
      assert.strictEqual(JSON.parse(ran.stdout).outcome, "stable")
      const out = path.join(s.work, "audit.txt")
      yield* write(out, "old")
      const refused = yield* cliInProcess([...args, "--out", out])
      assert.strictEqual(refused.code, 2)
      assert.strictEqual(refused.stderr, `OutputRefused: Refusing to write the rendering to ${out}: the file exists; pass --force to replace it\n`)
      const forced = yield* cliInProcess([...args, "--out", out, "--force"])
      assert.strictEqual(forced.code, 0, forced.stderr)
      assert.notStrictEqual(yield* read(out), "old")
      // An answer that does not verify against the old run: no baseline, exit 2, named as an answer.
      yield* write(answer, { format: "citegate.answer/1", manifest: manifest.digest, claims: [{ id: "a", text: "x", citations: [{ source: 2, quote: "9 units" }] }] })
      const none = yield* cliInProcess(args)
      assert.strictEqual(none.code, 2)
      assert.isTrue(none.stderr.endsWith("audit: NO BASELINE: the answer does not verify against the old run; nothing was audited\n"), none.stderr)
    }))

  it.scopedLive("the config's drop mode sets the baseline: a report with one failing fact still has one citation to audit", () =>
    Effect.gen(function*() {
      const s = yield* auditSetup
      assert.strictEqual((yield* s.recapture()).code, 0)
      yield* write(s.configFile, { sources: [s.later, s.sales], labels: ["q3_net_sales", "q3_returns"], verify: { mode: "drop" } })
      const good = { state: "cited", label: "q3_net_sales", source: s.sales, captureSha256: salesDigest, snippet: "Net sales for Q3 2026 were 4,210 units" }
      yield* write(s.report, { facts: [good, { ...good, label: "q3_returns", snippet: "Returns were 9.9% of units" }] })
      const ran = yield* s.audit()
      assert.strictEqual(ran.code, 0, ran.stderr)
      assert.strictEqual(ran.stderr, "audit: STABLE (report): all 1 citation(s) still verbatim in the new run (0 relocated)\n")
    }))

  it.scopedLive("a source gone from the new run: DRIFTED with source missing; a new run that is no run directory: exit 2", () =>
    Effect.gen(function*() {
      const s = yield* auditSetup
      s.state.revision = 3 // the sales page now answers 404
      assert.strictEqual((yield* s.recapture()).code, 1)
      const ran = yield* s.audit()
      assert.strictEqual(ran.code, 1)
      assert.strictEqual(ran.stderr, "audit: DRIFTED (report): 1 source missing of 1 citation(s)\n")
      const nowhere = path.join(s.work, "nowhere")
      const missing = yield* cliInProcess(["audit", "--report", s.report, "--config", s.configFile, "--run-dir", s.oldRun, "--against", nowhere])
      assert.strictEqual(missing.code, 2)
      assert.strictEqual(missing.stdout, "")
      assert.match(missing.stderr, /^InvalidRunDirectory/)
    }))

  it.scopedLive("audit --answer in evi1 with --manifest-digest; recapture of an unusable old record warns and fetches it again", () =>
    Effect.gen(function*() {
      const s = yield* auditSetup
      assert.strictEqual((yield* s.recapture()).code, 0)
      const config = { sources: [s.later, s.sales], labels: ["q3_net_sales"] } as unknown as PipelineConfig
      const manifest = yield* Manifest.make(config).pipe(Effect.provide(CaptureStore.layerFileSystem({ directory: s.oldRun })))
      const evi1 = path.join(s.work, "answer.evi1")
      yield* write(evi1, ["Net sales were 4,210 units.[2]{c1}", "EVI1", "c1|2|\"4,210 units\"", "END_EVI1", ""].join("\n"))
      const ran = yield* cliInProcess([
        "audit", "--answer", evi1, "--format-in", "evi1", "--manifest-digest", manifest.digest,
        "--config", s.configFile, "--run-dir", s.oldRun, "--against", s.newRun
      ])
      assert.strictEqual(ran.code, 0, ran.stderr)
      assert.strictEqual(ran.stderr, "audit: STABLE (answer): all 1 citation(s) still verbatim in the new run (0 relocated)\n")
      // The same citation as a Messages API response (document 1 is the manifest's source 2).
      const quote = "4,210 units"
      const start = salesText.indexOf(quote)
      const anthropicFile = path.join(s.work, "anthropic.json")
      yield* write(anthropicFile, {
        id: "msg",
        type: "message",
        content: [{
          type: "text",
          text: "Net sales were 4,210 units.",
          citations: [{ type: "char_location", cited_text: quote, document_index: 1, document_title: null, start_char_index: start, end_char_index: start + quote.length }]
        }]
      })
      const anthropic = yield* cliInProcess([
        "audit", "--answer", anthropicFile, "--format-in", "anthropic", "--manifest-digest", manifest.digest,
        "--config", s.configFile, "--run-dir", s.oldRun, "--against", s.newRun
      ])
      assert.strictEqual(anthropic.code, 0, anthropic.stderr)
      assert.strictEqual(anthropic.stderr, "audit: STABLE (answer): all 1 citation(s) still verbatim in the new run (0 relocated)\n")
      // Without the digest an EVI1 answer names no manifest: no baseline.
      const stale = yield* cliInProcess([
        "audit", "--answer", evi1, "--format-in", "evi1", "--config", s.configFile, "--run-dir", s.oldRun, "--against", s.newRun
      ])
      assert.strictEqual(stale.code, 2)
      assert.include(stale.stderr, "StaleManifest")

      // The old record altered: recaptured anyway, with a warning naming why it is unusable.
      const record = path.join(s.oldRun, expectedRecordName(s.sales))
      const json = JSON.parse(yield* read(record))
      yield* Effect.promise(() => fsp.chmod(record, 0o644))
      yield* write(record, JSON.stringify({ ...json, text: json.text + "!" }))
      const again = path.join(s.work, "again")
      const recaptured = yield* cliInProcess([
        "recapture", "--from", s.oldRun, "--config", s.configFile, "--run-dir", again, "--allow-loopback-http"
      ])
      assert.strictEqual(recaptured.code, 0, recaptured.stderr)
      const plan = recaptured.stderr.split("\n").filter((line) => line.startsWith("recapture: "))
      assert.strictEqual(plan.length, 3)
      assert.strictEqual(plan[0], `recapture: skipped  ${s.later}: no record in the old run`)
      assert.match(plan[1]!, new RegExp(`^recapture: WARNING  ${s.sales.replace(/[.]/g, "\\.")}: the old record is unusable \\([A-Za-z]+\\); captured again$`))
      assert.strictEqual(plan[2], "recapture: 1 source(s) to capture again, 1 skipped")
      assert.deepStrictEqual(yield* listing(again), [expectedRecordName(s.sales)])
    }))

  it.scopedLive("recapture into the old run, or without test mode: exit 2, nothing fetched", () =>
    Effect.gen(function*() {
      const s = yield* auditSetup
      const before = s.server.requests.length
      const same = yield* cliInProcess(["recapture", "--from", s.oldRun, "--config", s.configFile, "--run-dir", s.oldRun, "--allow-loopback-http"])
      assert.strictEqual(same.code, 2)
      assert.strictEqual(
        same.stderr,
        `RecaptureRefused: Refusing to recapture ${s.oldRun} into ${s.oldRun}: the new run directory is the old run; captures go into a new run\n`
      )
      // A new run directory under a file: its real name cannot be resolved.
      yield* write(path.join(s.work, "plain"), "x")
      const underFile = path.join(s.work, "plain", "new")
      const unresolved = yield* cliInProcess(["recapture", "--from", s.oldRun, "--config", s.configFile, "--run-dir", underFile, "--allow-loopback-http"])
      assert.strictEqual(unresolved.code, 2, unresolved.stderr)
      assert.isTrue(unresolved.stderr.startsWith(`WriteFailed: Cannot write ${underFile}: `), unresolved.stderr)
      assert.include(unresolved.stderr, "ENOTDIR")
      const nested = path.join(s.oldRun, "new")
      const inside = yield* cliInProcess(["recapture", "--from", s.oldRun, "--config", s.configFile, "--run-dir", nested, "--allow-loopback-http"])
      assert.strictEqual(inside.code, 2)
      assert.match(inside.stderr, /^RecaptureRefused: .*: the new run directory is inside the old run .*; runs are never nested\n$/)
      // A config approving nothing the old run holds: nothing to recapture.
      const otherConfig = path.join(s.work, "other.json")
      yield* write(otherConfig, { sources: [s.later], labels: ["q3_net_sales"] })
      const nothing = yield* cliInProcess(["recapture", "--from", s.oldRun, "--config", otherConfig, "--run-dir", s.newRun, "--allow-loopback-http"])
      assert.strictEqual(nothing.code, 2)
      assert.strictEqual(
        nothing.stderr,
        `RecaptureRefused: Refusing to recapture ${s.oldRun} into ${s.newRun}: the old run holds no record of any of the 1 approved source(s)\n`
      )
      const noFlag = yield* cliInProcess(["recapture", "--from", s.oldRun, "--config", s.configFile, "--run-dir", s.newRun])
      assert.strictEqual(noFlag.code, 2)
      assert.isTrue(noFlag.stderr.endsWith(`TestModeRequired: The configuration approves plain-http sources (${s.sales}); only test mode fetches them: ` +
        "pass --allow-loopback-http (literal 127.0.0.1 only), or approve https sources\n"), noFlag.stderr)
      assert.strictEqual(s.server.requests.length, before)
      assert.isFalse(yield* exists(s.newRun))
    }))
})

describe("serve, demo and the CA file", () => {
  it.scopedLive("demo: the whole pipeline offline into a new folder under --output, exit 0", () =>
    Effect.gen(function*() {
      const work = yield* tempDirectory
      const ran = yield* cliInProcess(["demo", "--output", work])
      assert.strictEqual(ran.code, 0, ran.stderr)
      const [stamp, ...others] = yield* listing(work)
      assert.deepStrictEqual(others, [])
      assert.strictEqual((yield* listing(path.join(work, stamp!, "renderings"))).length, 30) // six samples (wrong-label, wrong-unit and wrong-period among them), five formats each
    }))

  it.scopedLive("serve: plain-http sources without test mode, a bad --listen, a port in use: exit 2", () =>
    Effect.gen(function*() {
      const s = yield* setup
      const noFlag = yield* cliInProcess(["serve", "--config", s.configFile, "--listen", "127.0.0.1:0"])
      assert.strictEqual(noFlag.code, 2)
      assert.match(noFlag.stderr, /^TestModeRequired: /)
      const badListen = yield* cliInProcess(["serve", "--config", s.configFile, "--listen", "localhost"])
      assert.strictEqual(badListen.code, 2)
      assert.include(badListen.stderr, `--listen must be HOST:PORT with an IP address (e.g. 127.0.0.1:8787), got "localhost"`)
      // The port of the loopback source server is taken.
      const taken = yield* cliInProcess([
        "serve", "--config", s.configFile, "--listen", `127.0.0.1:${s.server.port}`, "--allow-loopback-http", "--run-root", s.work
      ])
      assert.strictEqual(taken.code, 2, taken.stderr)
      assert.isTrue(taken.stderr.startsWith(`serve: cannot listen on 127.0.0.1:${s.server.port}: `), taken.stderr)
    }))

  it.scopedLive("a relative caFile is read beside the config, before the run directory exists", () =>
    Effect.gen(function*() {
      const s = yield* setup
      yield* write(s.configFile, { sources: [s.sales], labels: ["q3_net_sales"], capture: { caFile: "ca.pem" } })
      const runDir = path.join(s.work, "run")
      const ran = yield* cliInProcess(["capture", "--config", s.configFile, "--run-dir", runDir, "--allow-loopback-http"])
      assert.strictEqual(ran.code, 2)
      assert.isTrue(ran.stderr.startsWith(`InvalidCaFile: The CA file ${path.join(s.work, "ca.pem")} cannot be used: `), ran.stderr)
      assert.isFalse(yield* exists(runDir))
      assert.strictEqual(s.server.connections, 0)
    }))
})

describe("a PostgreSQL store that cannot be reached (nothing listens on 127.0.0.1 port 1)", () => {
  const database = "postgres://citegate@127.0.0.1:1/citegate"
  const unavailable = (run: string) =>
    `StoreUnavailable: Capture store unavailable\n  run: ${run}\n  detail: connect ECONNREFUSED 127.0.0.1:1\n` +
    "  fix: Check the database URL and credentials, run the store's migration, and name with --run-dir a run written by " +
    "`run-pipeline capture --store …`.\n"

  it.effect("store-init: StoreUnavailable, exit 2", () =>
    Effect.gen(function*() {
      assert.deepStrictEqual(yield* cliInProcess(["store-init", "--store", database]), { code: 2, stdout: "", stderr: unavailable("") })
    }))

  it.scopedLive("capture and verify: --run-dir names the run, no directory is made, --out is not checked against it", () =>
    Effect.gen(function*() {
      const s = yield* setup
      const run = path.join(s.work, "run")
      const captured = yield* cliInProcess([
        "capture", "--config", s.configFile, "--run-dir", run, "--allow-loopback-http", "--store", database
      ])
      assert.deepStrictEqual(captured, { code: 2, stdout: "", stderr: unavailable(run) })
      assert.isFalse(yield* exists(run))
      // A directory of that name holds no run in a database: an --out inside it is allowed (the store then fails).
      yield* Effect.promise(() => fsp.mkdir(run))
      const report = yield* s.report([s.good])
      const verified = yield* cliInProcess([
        "verify", "--config", s.configFile, "--run-dir", run, "--report", report, "--store", database, "--out", path.join(run, "out.txt")
      ])
      assert.deepStrictEqual(verified, { code: 2, stdout: "", stderr: unavailable(run) })
      assert.deepStrictEqual(yield* listing(run), [])
    }))
})
