/**
 * A path option below a regular file, with the CLI spawned as a user runs it: a usage error (exit 2)
 * naming the path, not an internal error (70). @effect/cli checks path options with the platform's
 * `exists`, which failed (ENOTDIR) instead of answering false.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import * as fsp from "node:fs/promises"
import * as path from "node:path"
import { cli } from "./cliProcess.js"
import { tempDirectory } from "./support.js"

describe("run-pipeline: a path below a regular file", () => {
  it.scoped("capture --run-dir file/run: WriteFailed, exit 2", () =>
    Effect.gen(function*() {
      const work = yield* tempDirectory
      const configFile = path.join(work, "pipeline.json")
      yield* Effect.promise(() => fsp.writeFile(configFile, JSON.stringify({ sources: ["https://reports.northwind.test/q3.txt"], labels: ["x"] })))
      const runDir = path.join(configFile, "run")
      const ran = yield* cli(["capture", "--config", configFile, "--run-dir", runDir])
      assert.strictEqual(ran.code, 2, ran.stderr)
      assert.strictEqual(ran.stdout, "")
      assert.isTrue(ran.stderr.startsWith(`WriteFailed: Cannot write ${runDir}: `), ran.stderr)
    }))

  it.scoped("doctor --run-dir file/run: exit 2", () =>
    Effect.gen(function*() {
      const work = yield* tempDirectory
      const file = path.join(work, "file")
      yield* Effect.promise(() => fsp.writeFile(file, "x"))
      const ran = yield* cli(["doctor", "--run-dir", path.join(file, "run")])
      assert.strictEqual(ran.code, 2, ran.stderr)
      assert.notInclude(ran.stderr, "internal error")
    }))
})
