/**
 * What a new user trips on in the first hour with the command line, each run in-process
 * (test/cliInProcess.ts) against a loopback source: a nested --run-dir, `audit --mode`, the help.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
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
