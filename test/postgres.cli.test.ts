/**
 * `run-pipeline` on PostgreSQL: store-init, then capture, sources, verify and
 * run with `--store` or CITEGATE_DATABASE_URL, `--run-dir` naming the run. Each
 * command is the built CLI in its own process, against a throwaway cluster and
 * a source server on 127.0.0.1.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { spawn } from "node:child_process"
import * as fs from "node:fs"
import * as fsp from "node:fs/promises"
import * as path from "node:path"
import { afterAll, beforeAll } from "vitest"
import { sha256Of } from "../src/Domain.js"
import { plainText, testServer } from "./httpServer.js"
import { type Cluster, createDatabase, skipPostgres, startCluster } from "./support/postgresCluster.js"
import { fixturePath, fixtureText, tempDirectory } from "./support.js"

const bin = fixturePath("..", "bin", "run-pipeline.js")

interface Ran {
  readonly code: number | null
  readonly stdout: string
  readonly stderr: string
}

const cli = (args: ReadonlyArray<string>, options: { readonly cwd: string; readonly databaseUrl?: string }) =>
  Effect.async<Ran>((resume) => {
    const env = { ...process.env }
    delete env["CITEGATE_DATABASE_URL"]
    if (options.databaseUrl !== undefined) env["CITEGATE_DATABASE_URL"] = options.databaseUrl
    const child = spawn(process.execPath, [bin, ...args], { cwd: options.cwd, env, stdio: ["ignore", "pipe", "pipe"] })
    let stdout = ""
    let stderr = ""
    child.stdout.on("data", (d) => (stdout += d))
    child.stderr.on("data", (d) => (stderr += d))
    child.on("close", (code) => resume(Effect.succeed({ code, stdout, stderr })))
  })

let cluster: Cluster
let database = ""

beforeAll(async () => {
  if (skipPostgres) return
  cluster = await startCluster()
  database = createDatabase(cluster, "cli")
}, 120_000)

afterAll(() => cluster?.stop())

const salesText = fixtureText("q3-sales.txt")

describe.skipIf(skipPostgres)("run-pipeline with a PostgreSQL store", () => {
  it.scopedLive("store-init, then capture as a worker, sources and verify as a verifier, and run", () =>
    Effect.gen(function*() {
      const server = yield* testServer((req, res) => plainText(salesText)(req, res, server))
      const work = yield* tempDirectory
      const sales = server.url("/q3-sales.txt")
      const configFile = path.join(work, "pipeline.json")
      const reportFile = path.join(work, "report.json")
      yield* Effect.promise(async () => {
        await fsp.writeFile(configFile, JSON.stringify({ sources: [sales], labels: ["q3_net_sales"] }))
        await fsp.writeFile(reportFile, JSON.stringify({
          facts: [{
            state: "cited",
            label: "q3_net_sales",
            source: sales,
            captureSha256: sha256Of(salesText),
            snippet: "Net sales for Q3 2026 were 4,210 units"
          }]
        }))
      })
      const owner = cluster.url(database)

      const init = yield* cli(["store-init", "--store", owner], { cwd: work })
      assert.strictEqual(init.code, 0, init.stderr)
      assert.include(init.stdout, "migrated  1_citegate_store")
      const again = yield* cli(["store-init"], { cwd: work, databaseUrl: owner })
      assert.strictEqual(again.code, 0, again.stderr)
      assert.include(again.stdout, "no migration ran")
      cluster.psql(database, "CREATE ROLE worker LOGIN IN ROLE citegate_capture; CREATE ROLE auditor LOGIN IN ROLE citegate_verifier")
      const worker = cluster.url(database, "worker")
      const auditor = cluster.url(database, "auditor")

      // A worker captures into a new run named by --run-dir; no directory of that name is made.
      const capture = yield* cli(["capture", "--config", configFile, "--run-dir", "q3-2026", "--allow-loopback-http"], {
        cwd: work,
        databaseUrl: worker
      })
      assert.strictEqual(capture.code, 0, capture.stderr)
      assert.include(capture.stdout, sha256Of(salesText))
      assert.isFalse(fs.existsSync(path.join(work, "q3-2026")))
      // A run is never captured into twice.
      const twice = yield* cli(["capture", "--config", configFile, "--run-dir", "q3-2026", "--allow-loopback-http"], {
        cwd: work,
        databaseUrl: worker
      })
      assert.strictEqual(twice.code, 2)
      // Its own tag and fix line: the database is fine, the name is taken.
      assert.isTrue(twice.stderr.startsWith("RunExists: Run already exists"), twice.stderr)
      assert.include(twice.stderr, "q3-2026")
      assert.include(twice.stderr, "name one that does not exist yet with --run-dir")
      assert.notInclude(twice.stderr, "StoreUnavailable")

      const sources = yield* cli(["sources", "--config", configFile, "--run-dir", "q3-2026", "--store", auditor, "--format", "json"], { cwd: work })
      assert.strictEqual(sources.code, 0, sources.stderr)
      const manifest = JSON.parse(sources.stdout) as { sources: ReadonlyArray<{ status: string; captureSha256: string }> }
      assert.deepStrictEqual(manifest.sources.map((s) => [s.status, s.captureSha256]), [["captured", sha256Of(salesText)]])

      const verify = yield* cli(["verify", "--config", configFile, "--run-dir", "q3-2026", "--store", auditor, "--report", reportFile], { cwd: work })
      assert.strictEqual(verify.code, 0, verify.stderr)
      assert.include(verify.stderr, "verify: GROUNDED")

      const noRun = yield* cli(["verify", "--config", configFile, "--run-dir", "q4-2026", "--report", reportFile], {
        cwd: work,
        databaseUrl: auditor
      })
      assert.strictEqual(noRun.code, 2)
      assert.include(noRun.stderr, "StoreUnavailable")
      assert.include(noRun.stderr, "no such run")

      // `run` with one login in both roles.
      cluster.psql(database, "CREATE ROLE both_roles LOGIN IN ROLE citegate_capture, citegate_verifier")
      const whole = yield* cli(["run", "--config", configFile, "--run-dir", "q3-rerun", "--report", reportFile, "--allow-loopback-http"], {
        cwd: work,
        databaseUrl: cluster.url(database, "both_roles")
      })
      assert.strictEqual(whole.code, 0, whole.stderr)
      assert.include(whole.stdout, "Net sales for Q3 2026 were 4,210 units")
    }), 120_000)

  it.scopedLive("a store URL that is not postgres:// is a usage error, before anything is read", () =>
    Effect.gen(function*() {
      const work = yield* tempDirectory
      const ran = yield* cli(["sources", "--config", "nope.json", "--run-dir", "r", "--store", "mysql://db/x"], { cwd: work })
      assert.strictEqual(ran.code, 2)
      assert.include(ran.stderr, "StoreChoiceInvalid")
      assert.include(ran.stderr, "--store is not a postgres://")
      const fromEnvironment = yield* cli(["sources", "--config", "nope.json", "--run-dir", "r"], { cwd: work, databaseUrl: "file:///x" })
      assert.strictEqual(fromEnvironment.code, 2)
      assert.include(fromEnvironment.stderr, "CITEGATE_DATABASE_URL is not a postgres://")
    }))
})
