import { assert, it } from "@effect/vitest"
import { Effect } from "effect"
import { spawn } from "node:child_process"
import * as fsp from "node:fs/promises"
import * as path from "node:path"
import { fixturePath, tempDirectory } from "./support.js"

// The benchmark harness itself must keep working; its figures are not asserted here. It runs every
// section on tiny shapes in a child process (about 20 s of CPU, many spawned processes), so its wall time depends on the
// machine's load: the limit is generous, as the figures are not what this test checks.
it.scopedLive("npm run bench -- --smoke runs every benchmark on tiny shapes", () =>
  Effect.gen(function*() {
    const out = yield* tempDirectory
    const results = path.join(out, "results.json")
    const code = yield* Effect.async<number | null>((resume) => {
      const child = spawn(process.execPath, ["--expose-gc", "--import", "tsx", "scripts/bench.ts", "--smoke", "--results", results], {
        cwd: fixturePath(".."),
        stdio: ["ignore", "ignore", "inherit"]
      })
      child.on("close", (c) => resume(Effect.succeed(c)))
    })
    assert.strictEqual(code, 0)
    const json = JSON.parse(yield* Effect.promise(() => fsp.readFile(results, "utf8")))
    assert.strictEqual(json.smoke, true)
    assert.isAbove(json.rows.length, 2)
    assert.isAbove(json.memory.peakMiB, 0)
    // The later sections ran too (each is skipped only by --only).
    assert.isAbove(json.nearest.length, 0)
    assert.isAbove(json.audits.length, 0)
    assert.strictEqual(json.server.length, 1)
    assert.isObject(json.streams)
  }), 600_000)
