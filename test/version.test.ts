import { assert, it } from "@effect/vitest"
import { readFileSync } from "node:fs"
import { version } from "../src/version.js"
import { fixturePath } from "./support.js"

it("the User-Agent version is the package version", () => {
  const pkg = JSON.parse(readFileSync(fixturePath("..", "package.json"), "utf8"))
  assert.strictEqual(version, pkg.version)
})
