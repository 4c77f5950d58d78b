/**
 * `npm test` on a machine without Chromium: every browser test skips with its reason when CI is
 * unset, and fails when CI is set. The browser test files run in a child vitest, with CHROMIUM_PATH
 * pointing at a name that does not exist.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { spawn } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { fixturePath, tempDirectory } from "./support.js"

const root = fixturePath("..")
const files = fs.readdirSync(path.join(root, "test")).filter((name) => name.endsWith(".browser.test.ts")).map((name) => `test/${name}`)

/** The browser test files in a child vitest with this environment: exit code and output. */
const runBrowserTests = (env: NodeJS.ProcessEnv) =>
  Effect.async<{ code: number | null; output: string }>((resume) => {
    const child = spawn(process.execPath, [path.join(root, "node_modules", "vitest", "vitest.mjs"), "run", ...files], {
      cwd: root,
      env,
      stdio: ["ignore", "pipe", "pipe"]
    })
    let output = ""
    child.stdout.on("data", (d) => (output += d))
    child.stderr.on("data", (d) => (output += d))
    child.on("close", (code) => resume(Effect.succeed({ code, output })))
  })

/** This environment without CI and without this run's own vitest variables, Chromium looked for at `chromium`. */
const environment = (chromium: string, ci: string | undefined): NodeJS.ProcessEnv => {
  const env: NodeJS.ProcessEnv = {}
  for (const [key, value] of Object.entries(process.env)) {
    if (key !== "CI" && !key.startsWith("VITEST")) env[key] = value
  }
  env["CHROMIUM_PATH"] = chromium
  if (ci !== undefined) env["CI"] = ci
  return env
}

describe("browser tests without Chromium", () => {
  it.scopedLive("CI unset: every browser test is skipped with its reason, none fails; CI set: every one fails", () =>
    Effect.gen(function*() {
      assert.isAtLeast(files.length, 3)
      const missing = path.join(yield* tempDirectory, "no-chromium-here")
      const [outside, inCi] = yield* Effect.all(
        [runBrowserTests(environment(missing, undefined)), runBrowserTests(environment(missing, "true"))],
        { concurrency: 2 }
      )
      assert.strictEqual(outside.code, 0, outside.output)
      const summary = /Tests: 0 passed, 0 failed, (\d+) skipped/.exec(outside.output)
      assert.isNotNull(summary, outside.output)
      assert.isAtLeast(Number(summary![1]), files.length)
      for (const file of files) assert.include(outside.output, `SKIPPED ${file}: Chromium not found at ${missing}`)

      assert.strictEqual(inCi.code, 1, inCi.output)
      assert.match(inCi.output, new RegExp(`Tests: 0 passed, ${summary![1]} failed\\n`))
      assert.include(inCi.output, `Chromium not found at ${missing}`)
    }), 180_000)
})
