import { assert, it } from "@effect/vitest"
import { Console, Effect } from "effect"
import { spawn } from "node:child_process"
import * as fsp from "node:fs/promises"
import * as path from "node:path"
import { postgresPresent } from "./support/postgresCluster.js"
import { fixturePath, tempDirectory } from "./support.js"

/** Exit code of `scripts/bench.ts` when a section ran past its `--section-deadline`. */
const sectionDeadlineExit = 3

const runSmoke = (results: string) =>
  Effect.async<{ readonly code: number | null; readonly stderr: string }>((resume) => {
    const stderr: Array<string> = []
    const child = spawn(
      process.execPath,
      ["--expose-gc", "--import", "tsx", "scripts/bench.ts", "--smoke", "--section-deadline", "150000", "--results", results],
      // Its own process group, so that what a stalled section started goes with it.
      { cwd: fixturePath(".."), stdio: ["ignore", "ignore", "pipe"], detached: true }
    )
    const killGroup = () => {
      try {
        process.kill(-child.pid!, "SIGKILL")
      } catch {
        // the group has ended
      }
    }
    child.stderr.setEncoding("utf8")
    child.stderr.on("data", (chunk: string) => stderr.push(chunk))
    child.on("close", (code) => {
      if (code !== 0) killGroup()
      resume(Effect.succeed({ code, stderr: stderr.join("") }))
    })
    // Interrupted (this test's limit): the bench and what it started do not outlive the test.
    return Effect.sync(killGroup)
  })

// The benchmark harness itself must keep working; its figures are not asserted here. It runs every
// section on tiny shapes in a child process (about 20 s of CPU, many spawned processes). Each
// section has a deadline inside the bench, so one that stalls names itself (its stderr is in the
// failure message). A section past its deadline under this suite's load gets one more whole run;
// a second stall, or any other failure, fails the test.
it.scopedLive("npm run bench -- --smoke runs every benchmark on tiny shapes", () =>
  Effect.gen(function*() {
    const out = yield* tempDirectory
    const results = path.join(out, "results.json")
    let run = yield* runSmoke(results)
    if (run.code === sectionDeadlineExit) {
      yield* Console.warn(`bench --smoke: a section ran past its deadline; running once more. Its stderr ends:\n${run.stderr.slice(-2000)}`)
      run = yield* runSmoke(results)
    }
    assert.strictEqual(run.code, 0, `bench --smoke exited with ${run.code}; its stderr ends:\n${run.stderr.slice(-4000)}`)
    const json = JSON.parse(yield* Effect.promise(() => fsp.readFile(results, "utf8")))
    assert.strictEqual(json.smoke, true)
    assert.isAbove(json.rows.length, 2)
    assert.isAbove(json.memory.peakMiB, 0)
    // The later sections ran too (each is skipped only by --only).
    assert.isAbove(json.nearest.length, 0)
    assert.isAbove(json.audits.length, 0)
    // The service row, and the telemetry off/on rows.
    assert.isAtLeast(json.server.length, 1)
    const serverRows = json.server.map((row: { name: string }) => row.name)
    // The same row over PostgreSQL (`serve --store`), when the server binaries are installed (CI installs them).
    if (postgresPresent) assert.isTrue(serverRows.some((name: string) => name.includes("--store postgres")), serverRows.join("; "))
    assert.isObject(json.streams)
  }), 600_000)
