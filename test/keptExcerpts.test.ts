/**
 * A kept result holds its excerpts, not the captures they came from: a verified report's
 * selectors, a rejection's nearest passage or cut token and a number review's findings are copies,
 * and a typed error keeps no stack frames (whose closures held the texts being checked). Measured in a process of its own (`--expose-gc`):
 * 16 results, each from a 1 MiB capture read afresh.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import * as path from "node:path"
import { SnippetAbsent } from "../src/Errors.js"
import { gcChildJson } from "./support/gcChild.js"

const measure = gcChildJson<Record<string, number | Record<string, unknown>>>(path.join(import.meta.dirname, "support", "keptExcerptsChild.ts"))

describe("kept results do not keep their captures", () => {
  it.live("16 kept reports, rejections (nearest passage, cut token) and number reviews hold well under one capture; 16 plain slices hold all 16", () =>
    Effect.gen(function*() {
      const held = yield* measure
      // The control: the measurement sees a slice keep its text (16 × 1 MiB).
      assert.isAbove(held.plainSlices as number, 12, JSON.stringify(held))
      assert.isBelow(held.ownedSlices as number, 1, JSON.stringify(held))
      // Each measurement is of the result it names, not of some other failure.
      assert.deepStrictEqual(held.shapes, {
        verified: true,
        rejected: "SnippetAbsent+nearest",
        cutToken: "SnippetCutsToken",
        numberReview: true
      })
      for (const key of ["verified", "rejected", "cutToken", "numberReview"] as const) {
        assert.isBelow(held[key] as number, 4, `${key}: ${JSON.stringify(held)}`)
      }
    }), 60_000)

  it("a typed error is still an Error with its tag, fields and message, made without stack frames", () => {
    const error = new SnippetAbsent({ source: "https://example.com/a", captureSha256: "0".repeat(64), snippet: "quote" })
    assert.instanceOf(error, Error)
    assert.instanceOf(error, SnippetAbsent)
    assert.strictEqual(error._tag, "SnippetAbsent")
    assert.include(error.message, "does not occur verbatim in capture 000000000000")
    assert.notInclude(String(error.stack), "\n    at ")
  })

  it("made with invalid fields (a bug), a typed error throws with the stack it would have had, and the limit is restored", () => {
    const limit = Error.stackTraceLimit
    const thrown = (() => {
      try {
        new SnippetAbsent({ source: 1 } as never)
      } catch (error) {
        return error
      }
    })()
    assert.instanceOf(thrown, Error)
    assert.include(String((thrown as Error).stack), "\n    at ")
    assert.strictEqual(Error.stackTraceLimit, limit)
  })
})
