import { assert, describe, it } from "@effect/vitest"
import { spawnSync } from "node:child_process"
import { fixturePath } from "./support.js"

// Library code imports Effect modules one by one (`effect/Effect`, not the `effect` barrel), so an
// application pays only for the modules it uses. `scripts/deep-imports.mjs` rewrites barrel imports.
describe("deep imports", () => {
  it("no source file imports an Effect package's barrel", () => {
    const ran = spawnSync(process.execPath, [fixturePath("..", "scripts", "deep-imports.mjs"), "--check"], {
      cwd: fixturePath(".."),
      encoding: "utf8"
    })
    assert.strictEqual(ran.status, 0, `${ran.stdout}${ran.stderr}\nrun: node scripts/deep-imports.mjs`)
  })
})
