/**
 * What a new user trips on in the first hour with the command line, each run in-process
 * (test/cliInProcess.ts) against a loopback source: a nested --run-dir, `audit --mode`, the help.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { createHash } from "node:crypto"
import * as fsp from "node:fs/promises"
import * as path from "node:path"
import { cliInProcess } from "./cliInProcess.js"
import { plainText, testServer } from "./httpServer.js"
import { expectedRecordName } from "./mutants.support.js"
import { fixtureText, tempDirectory } from "./support.js"

const salesText = fixtureText("q3-sales.txt")
const write = (file: string, content: unknown) =>
  Effect.promise(() => fsp.writeFile(file, typeof content === "string" ? content : JSON.stringify(content, null, 2)))
const listing = (directory: string) => Effect.promise(() => fsp.readdir(directory).then((names) => names.sort()))

/** A loopback server publishing the sales text, a config approving it, a scratch directory. */
const setup = Effect.gen(function*() {
  const server = yield* testServer((req, res, state) => plainText(salesText)(req, res, state))
  const work = yield* tempDirectory
  const sales = server.url("/q3-sales.txt")
  const configFile = path.join(work, "pipeline.json")
  yield* write(configFile, { sources: [sales], labels: ["q3_net_sales", "q3_returns"] })
  return { server, work, sales, configFile }
})

describe("capture --run-dir with missing parents", () => {
  it.scopedLive("creates a/b, then the run a/b/run; the same run directory again is refused", () =>
    Effect.gen(function*() {
      const s = yield* setup
      const runDir = path.join(s.work, "a", "b", "run")
      const ran = yield* cliInProcess(["capture", "--config", s.configFile, "--run-dir", runDir, "--allow-loopback-http"])
      assert.strictEqual(ran.code, 0, ran.stderr)
      assert.deepStrictEqual(yield* listing(runDir), [expectedRecordName(s.sales)])
      const again = yield* cliInProcess(["capture", "--config", s.configFile, "--run-dir", runDir, "--allow-loopback-http"])
      assert.strictEqual(again.code, 2)
      assert.isTrue(again.stderr.startsWith(`RunDirectoryExists: Run directory ${runDir} already exists`), again.stderr)
      // The existing run is untouched: still its one record.
      assert.deepStrictEqual(yield* listing(runDir), [expectedRecordName(s.sales)])
      assert.strictEqual(s.server.requests.length, 1)
    }))
})

describe("audit --mode", () => {
  it.scopedLive("an answer with one failing citation: no baseline in reject mode; with --mode drop the grounded claim is audited", () =>
    Effect.gen(function*() {
      const s = yield* setup
      const oldRun = path.join(s.work, "old")
      const newRun = path.join(s.work, "new")
      for (const runDir of [oldRun, newRun]) {
        const ran = yield* cliInProcess(["capture", "--config", s.configFile, "--run-dir", runDir, "--allow-loopback-http"])
        assert.strictEqual(ran.code, 0, ran.stderr)
      }
      const captureSha256 = createHash("sha256").update(salesText, "utf8").digest("hex")
      const answerFile = path.join(s.work, "answer.json")
      yield* write(answerFile, {
        format: "citegate.answer/1",
        claims: [
          { id: "c1", text: "Net sales were 4,210 units.", citations: [{ source: s.sales, captureSha256, quote: "Net sales for Q3 2026 were 4,210 units" }] },
          { id: "c2", text: "Returns were high.", citations: [{ source: s.sales, captureSha256, quote: "Returns were 9.9% of units" }] }
        ]
      })
      const args = ["audit", "--answer", answerFile, "--config", s.configFile, "--run-dir", oldRun, "--against", newRun]
      const strict = yield* cliInProcess(args)
      assert.strictEqual(strict.code, 2, strict.stderr)
      assert.include(strict.stderr, "audit: NO BASELINE: the answer does not verify against the old run; nothing was audited")
      const dropped = yield* cliInProcess([...args, "--mode", "drop"])
      assert.strictEqual(dropped.code, 0, dropped.stderr)
      assert.include(dropped.stderr, "audit: STABLE (answer): all 1 citation(s) still verbatim in the new run (0 relocated)")
      // --mode reject is the default made explicit; anything else is a usage error naming the choices.
      assert.strictEqual((yield* cliInProcess([...args, "--mode", "reject"])).code, 2)
      const bad = yield* cliInProcess([...args, "--mode", "lenient"])
      assert.strictEqual(bad.code, 2)
      assert.include(bad.stdout + bad.stderr, "reject")
    }))
})

describe("help", () => {
  it.effect("the top-level help: one line per command, its name and summary", () =>
    Effect.gen(function*() {
      const ran = yield* cliInProcess(["--help"])
      assert.strictEqual(ran.code, 0)
      const section = ran.stdout.slice(ran.stdout.indexOf("COMMANDS"))
      const items = section.split("\n").filter((line) => line.startsWith("  - "))
      const names = ["capture", "verify", "run", "migrate", "demo", "sources", "doctor", "verify-answer", "store-init", "recapture", "audit", "serve", "judge-prompt", "export", "verify-signature", "review", "review", "review", "validate-graph", "check-attestation"]
      assert.deepStrictEqual(items.map((line) => line.slice(4).split(" ")[0]), names)
      for (const line of items) {
        assert.isBelow(line.trimEnd().length, 200, line)
        assert.notMatch(line, /--(config|run-dir|report) /, line)
      }
      assert.include(section, `  - ${"capture".padEnd("check-attestation".length)}  Capture every approved source into a NEW run directory.`)
    }))

  it.effect("option values are described; no option says \"A user-defined piece of text\"", () =>
    Effect.gen(function*() {
      for (const name of ["verify", "sources", "serve", "verify-answer", "audit", "capture"]) {
        const ran = yield* cliInProcess([name, "--help"])
        assert.strictEqual(ran.code, 0)
        assert.notInclude(ran.stdout, "A user-defined piece of text", name)
      }
      const verify = yield* cliInProcess(["verify", "--help"])
      assert.include(verify.stdout, "One of: text, json, markdown, html, jsonld, repair.")
      assert.include(verify.stdout, "A postgres:// or postgresql:// URL.")
      const serve = yield* cliInProcess(["serve", "--help"])
      assert.include(serve.stdout, "HOST:PORT: an IP address and a port.")
      const answer = yield* cliInProcess(["verify-answer", "--help"])
      assert.include(answer.stdout, "A manifest digest: 64 lowercase hex digits")
    }))

  it.effect("exit-code lines fit each command: sources speaks of sources, not reports", () =>
    Effect.gen(function*() {
      const sources = (yield* cliInProcess(["sources", "--help"])).stdout
      assert.include(sources, "Exit codes: 0 every approved source has a usable capture in the run")
      assert.include(sources, "1 an approved source has no usable capture")
      assert.notInclude(sources, "report")
      const doctor = (yield* cliInProcess(["doctor", "--help"])).stdout
      assert.include(doctor, "2 usage or configuration error (bad options, invalid config, unreadable file), or not a run directory")
      assert.notInclude(doctor, "report verified")
      const audit = (yield* cliInProcess(["audit", "--help"])).stdout
      assert.include(audit, "Exit codes: 0 nothing drifted")
      assert.include(audit, "the audit timed out (audit.timeoutMs)")
      const verify = (yield* cliInProcess(["verify", "--help"])).stdout
      assert.include(verify, "Exit codes: 0 report verified and grounded")
      assert.include(verify, "70 internal error; 130 interrupted (SIGINT); 143 terminated (SIGTERM)")
    }))
})
