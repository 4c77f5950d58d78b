/**
 * A kept result holds its excerpts, not the captures they came from: a verified report's
 * selectors and a rejection's nearest passage are copies, and a typed error keeps no stack frames
 * (whose closures held the texts being checked). Measured in a process of its own (`--expose-gc`):
 * 16 results, each from a 1 MiB capture read afresh.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { spawn } from "node:child_process"
import * as path from "node:path"
import { SnippetAbsent } from "../src/Errors.js"

const measure = Effect.async<Record<string, number>, Error>((resume) => {
  const script = path.join(import.meta.dirname, "support", "keptExcerptsChild.ts")
  const child = spawn(process.execPath, ["--expose-gc", "--import", "tsx", script], { stdio: ["ignore", "pipe", "pipe"] })
  let stdout = ""
  let stderr = ""
  child.stdout.on("data", (d) => (stdout += d))
  child.stderr.on("data", (d) => (stderr += d))
  child.on("close", (code) => resume(code === 0 ? Effect.succeed(JSON.parse(stdout)) : Effect.fail(new Error(`exit ${code}: ${stderr}`))))
})

describe("kept results do not keep their captures", () => {
  it.live("16 kept reports and 16 kept rejections hold well under one capture; 16 plain slices hold all 16", () =>
    Effect.gen(function*() {
      const held = yield* measure
      // The control: the measurement sees a slice keep its text (16 × 1 MiB).
      assert.isAbove(held.plainSlices!, 12, JSON.stringify(held))
      assert.isBelow(held.ownedSlices!, 1, JSON.stringify(held))
      assert.isBelow(held.verified!, 4, JSON.stringify(held))
      assert.isBelow(held.rejected!, 4, JSON.stringify(held))
    }), 60_000)

  it("a typed error is still an Error with its tag, fields and message, made without stack frames", () => {
    const error = new SnippetAbsent({ source: "https://example.com/a", captureSha256: "0".repeat(64), snippet: "quote" })
    assert.instanceOf(error, Error)
    assert.instanceOf(error, SnippetAbsent)
    assert.strictEqual(error._tag, "SnippetAbsent")
    assert.include(error.message, "does not occur verbatim in capture 000000000000")
    assert.notInclude(String(error.stack), "\n    at ")
  })
})
