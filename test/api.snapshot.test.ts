/**
 * The public API, pinned: every name exported by `citegate` and by each subpath export of
 * package.json (read through its `source` path), with its kind, compared with the committed
 * `test/api.snapshot.txt`. A removed, renamed or re-kinded public name fails here, and so does a new
 * one until it is recorded: the snapshot is the list of what the package promises.
 *
 * To change the public API deliberately, update the snapshot and commit it with the change, saying
 * in CHANGELOG.md what was added or removed:
 *
 *     npm run api:update        (= npx vitest run test/api.snapshot.test.ts -u)
 */
import { assert, describe, expect, it } from "@effect/vitest"
import * as path from "node:path"
import { apiSurface, entryPoints, valueKind } from "./apiSurface.js"

const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), "..")

describe("public API", () => {
  it("every entry point's names and kinds match test/api.snapshot.txt", async () => {
    const surface = await apiSurface((source) => import(path.join(root, source)))
    await expect(surface).toMatchFileSnapshot("./api.snapshot.txt")
  }, 60_000)

  it("covers the root and every subpath export of package.json", () => {
    const specifiers = entryPoints().map((e) => e.specifier)
    assert.include(specifiers, "citegate")
    assert.include(specifiers, "citegate/Errors")
    assert.include(specifiers, "citegate/Verifier")
  })

  it("tells kinds apart (a renamed name keeps failing when its kind changes too)", async () => {
    const Errors = await import("../src/Errors.js")
    const Gate = await import("../src/verify/Gate.js")
    const Verifier = await import("../src/verify/Verifier.js")
    assert.strictEqual(valueKind(Errors.SnippetAbsent), "error-class")
    assert.strictEqual(valueKind(Errors.FactError), "schema")
    assert.strictEqual(valueKind(Errors.groupFailures), "function")
    assert.strictEqual(valueKind(Errors.factErrorTags), "object")
    assert.strictEqual(valueKind(Gate.Gate), "tag")
    assert.strictEqual(valueKind(Verifier.layer), "layer")
    assert.strictEqual(valueKind(Verifier.make), "effect")
  })
})
