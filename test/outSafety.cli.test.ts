/**
 * `--out` can never destroy evidence or input: it is refused (exit 2, OutputRefused, nothing
 * written) inside the run directory, over the configuration or the report, and over an existing
 * file unless `--force`. Runs the compiled CLI (`npm run build`) as a separate process.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import * as fsp from "node:fs/promises"
import * as path from "node:path"
import * as CaptureStore from "../src/store/CaptureStore.js"
import { sha256Of } from "../src/Domain.js"
import { plainText, testServer } from "./httpServer.js"
import { fixtureText, snapshotDirectory, tempDirectory } from "./support.js"
import { cli } from "./cliProcess.js"
import type { Ran } from "./cliProcess.js"

const salesText = fixtureText("q3-sales.txt")

/** A captured run, its config and a grounded report, in a scratch directory. */
const setup = Effect.gen(function*() {
  const server = yield* testServer(plainText(salesText))
  const work = yield* tempDirectory
  const source = server.url("/q3-sales.txt")
  const config = path.join(work, "pipeline.json")
  yield* Effect.promise(() => fsp.writeFile(config, JSON.stringify({ sources: [source], labels: ["q3_net_sales"] })))
  const report = path.join(work, "report.json")
  yield* Effect.promise(() =>
    fsp.writeFile(report, JSON.stringify({
      facts: [{
        state: "cited",
        label: "q3_net_sales",
        source,
        captureSha256: sha256Of(salesText),
        snippet: "Net sales for Q3 2026 were 4,210 units"
      }]
    }))
  )
  const runDir = path.join(work, "run")
  const captured = yield* cli(["capture", "--config", config, "--run-dir", runDir, "--allow-loopback-http"])
  assert.strictEqual(captured.code, 0, captured.stderr)
  const record = path.join(runDir, CaptureStore.recordFileName(source))
  const verify = (out: string, ...extra: Array<string>) =>
    cli(["verify", "--config", config, "--run-dir", runDir, "--report", report, "--format", "html", "--out", out, ...extra])
  const read = (file: string) => Effect.promise(() => fsp.readFile(file, "utf8"))
  return { server, work, source, config, report, runDir, record, verify, read }
})

const assertRefused = (ran: Ran, reason: "inside-run-directory" | "is-an-input" | "read-only" | "exists") => {
  assert.strictEqual(ran.code, 2, ran.stderr)
  assert.strictEqual(ran.stdout, "")
  assert.match(ran.stderr, new RegExp(`^OutputRefused: Refusing to write the rendering to `))
  assert.include(ran.stderr, {
    "inside-run-directory": "inside the run directory",
    "is-an-input": "it is the ",
    "read-only": "the file is read-only, as every capture record is",
    "exists": "the file exists; pass --force to replace it"
  }[reason])
  // Refused before verification: no verdict line.
  assert.notMatch(ran.stderr, /verify: /)
}

describe("run-pipeline verify --out", () => {
  it.scopedLive("a capture record in the run directory is never replaced, with or without --force", () =>
    Effect.gen(function*() {
      const s = yield* setup
      const before = yield* snapshotDirectory(s.runDir)
      for (const extra of [[], ["--force"]]) {
        assertRefused(yield* s.verify(s.record, ...extra), "inside-run-directory")
      }
      assert.deepStrictEqual(yield* snapshotDirectory(s.runDir), before)
      // The run still verifies.
      const again = yield* cli(["verify", "--config", s.config, "--run-dir", s.runDir, "--report", s.report])
      assert.strictEqual(again.code, 0, again.stderr)
    }))

  it.scopedLive("another run's capture record is never replaced, even with --force (it is read-only)", () =>
    Effect.gen(function*() {
      const s = yield* setup
      // A second run of the same source: its record is read-only like every capture record.
      const otherRun = path.join(s.work, "other-run")
      const captured = yield* cli(["capture", "--config", s.config, "--run-dir", otherRun, "--allow-loopback-http"])
      assert.strictEqual(captured.code, 0, captured.stderr)
      const otherRecord = path.join(otherRun, CaptureStore.recordFileName(s.source))
      const before = yield* snapshotDirectory(otherRun)
      assertRefused(yield* s.verify(otherRecord, "--force"), "read-only")
      assert.deepStrictEqual(yield* snapshotDirectory(otherRun), before)
    }))

  it.scopedLive("a new name inside the run directory is refused too: through `..` and through a symlinked directory", () =>
    Effect.gen(function*() {
      const s = yield* setup
      const before = yield* snapshotDirectory(s.runDir)
      yield* Effect.promise(() => fsp.mkdir(path.join(s.work, "elsewhere")))
      yield* Effect.promise(() => fsp.symlink(s.runDir, path.join(s.work, "alias")))
      for (const out of [
        path.join(s.runDir, "rendering.html"),
        path.join(s.work, "elsewhere", "..", "run", "rendering.html"),
        path.join(s.work, "alias", "rendering.html")
      ]) {
        assertRefused(yield* s.verify(out, "--force"), "inside-run-directory")
      }
      // The run directory itself (or a link to it) is not a file: the option parser refuses it first.
      const directory = yield* s.verify(path.join(s.work, "alias"), "--force")
      assert.strictEqual(directory.code, 2)
      // A symlink outside the run directory that points at a record.
      const link = path.join(s.work, "record-link.json")
      yield* Effect.promise(() => fsp.symlink(s.record, link))
      assertRefused(yield* s.verify(link, "--force"), "inside-run-directory")
      assert.deepStrictEqual(yield* snapshotDirectory(s.runDir), before)
    }))

  it.scopedLive("the report or the configuration is never the output: same path, a symlink or a hard link to it", () =>
    Effect.gen(function*() {
      const s = yield* setup
      const report = yield* s.read(s.report)
      const config = yield* s.read(s.config)
      const symlink = path.join(s.work, "report-link.json")
      const hardlink = path.join(s.work, "config-alias.json")
      yield* Effect.promise(() => fsp.symlink(s.report, symlink))
      yield* Effect.promise(() => fsp.link(s.config, hardlink))
      assertRefused(yield* s.verify(s.report), "is-an-input")
      for (const out of [s.report, s.config, path.join(s.work, ".", "report.json"), symlink, hardlink]) {
        assertRefused(yield* s.verify(out, "--force"), "is-an-input")
      }
      assert.strictEqual(yield* s.read(s.report), report)
      assert.strictEqual(yield* s.read(s.config), config)
    }))

  it.scopedLive("an existing file is replaced only with --force; no temporary file is left", () =>
    Effect.gen(function*() {
      const s = yield* setup
      const out = path.join(s.work, "out.html")
      yield* Effect.promise(() => fsp.writeFile(out, "keep me"))
      assertRefused(yield* s.verify(out), "exists")
      assert.strictEqual(yield* s.read(out), "keep me")
      const forced = yield* s.verify(out, "--force")
      assert.strictEqual(forced.code, 0, forced.stderr)
      assert.match(yield* s.read(out), /Outcome: grounded/)
      const fresh = path.join(s.work, "fresh.html")
      const created = yield* s.verify(fresh)
      assert.strictEqual(created.code, 0, created.stderr)
      assert.match(yield* s.read(fresh), /Outcome: grounded/)
      const names = yield* Effect.promise(() => fsp.readdir(s.work))
      assert.deepStrictEqual(names.filter((n) => n.includes("partial")), [])
    }))

  it.scopedLive("an --out in a missing directory is exit 2 before verification", () =>
    Effect.gen(function*() {
      const s = yield* setup
      const ran = yield* s.verify(path.join(s.work, "missing", "out.html"))
      assert.strictEqual(ran.code, 2)
      assert.match(ran.stderr, /^WriteFailed: .*does not exist/)
    }))
})

describe("run-pipeline run --out", () => {
  it.scopedLive("an --out inside the new run directory, or over the report, is refused before anything is fetched", () =>
    Effect.gen(function*() {
      const s = yield* setup
      const requests = s.server.requests.length
      const runDir = path.join(s.work, "run2")
      const run = (out: string, ...extra: Array<string>) =>
        cli(["run", "--config", s.config, "--run-dir", runDir, "--report", s.report, "--allow-loopback-http", "--out", out, ...extra])
      assertRefused(yield* run(path.join(runDir, "out.html")), "inside-run-directory")
      assertRefused(yield* run(s.report, "--force"), "is-an-input")
      const existing = path.join(s.work, "taken.txt")
      yield* Effect.promise(() => fsp.writeFile(existing, "taken"))
      assertRefused(yield* run(existing), "exists")
      assert.strictEqual(s.server.requests.length, requests)
      yield* Effect.promise(() => fsp.access(runDir).then(() => assert.fail("run directory created"), () => undefined))
      const ok = yield* run(existing, "--force")
      assert.strictEqual(ok.code, 0, ok.stderr)
      assert.match(yield* s.read(existing), /GROUNDED/)
    }))
})
