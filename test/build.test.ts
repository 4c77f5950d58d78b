import { assert, describe, it } from "@effect/vitest"
import { readFileSync, statSync } from "node:fs"
import * as path from "node:path"
import { sourceDigest } from "./globalSetup.js"
import { fixturePath } from "./support.js"

// The CLI tests spawn bin/run-pipeline.js, which runs the bundle built from dist/. This fails if the suite ever runs without
// the build step (test/globalSetup.ts), i.e. if a spawned CLI could be older than the sources.
describe("the compiled CLI under test", () => {
  it("was built from exactly the current sources, by this run's setup or an identical earlier one", () => {
    const root = fixturePath("..")
    const stamp = readFileSync(path.join(root, "node_modules", ".cache", "citegate-build-digest"), "utf8")
    const output = statSync(path.join(root, "dist", "bundle", "run-pipeline.cjs"))
    assert.strictEqual(stamp, `${sourceDigest()} ${output.mtimeMs}`)
  })
})

describe("the bundle the bin runs", () => {
  it("is at least as new as every compiled module, so it was made from them", () => {
    const root = fixturePath("..")
    const bundle = statSync(path.join(root, "dist", "bundle", "run-pipeline.cjs")).mtimeMs
    const compiled = statSync(path.join(root, "dist", "cli", "main.js")).mtimeMs
    assert.isAtLeast(bundle, compiled)
  })
})
