import { assert, describe, it } from "@effect/vitest"
import { readFileSync, statSync } from "node:fs"
import * as path from "node:path"
import { sourceDigest } from "./globalSetup.js"
import { fixturePath } from "./support.js"

// The CLI tests spawn bin/run-pipeline.js, which runs dist/. This fails if the suite ever runs without
// the build step (test/globalSetup.ts), i.e. if a spawned CLI could be older than the sources.
describe("the compiled CLI under test", () => {
  it("was built from exactly the current sources, by this run's setup or an identical earlier one", () => {
    const root = fixturePath("..")
    const stamp = readFileSync(path.join(root, "node_modules", ".cache", "citegate-build-digest"), "utf8")
    const output = statSync(path.join(root, "dist", "cli", "main.js"))
    assert.strictEqual(stamp, `${sourceDigest()} ${output.mtimeMs}`)
  })
})
