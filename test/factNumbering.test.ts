/**
 * One numbering of facts for humans: a rejected report's `message`, its duplicate-label message and
 * every rendering number the same fact with the same number, from 1.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import * as Render from "../src/render/Render.js"
import { Rendering } from "../src/render/Rendering.js"
import { cited, gateFor, runDirectoryWith, salesRecord, unavailable } from "./support.js"

describe("fact numbers", () => {
  it.scoped("ReportRejected.message and the renderings call the failing second and third facts 2 and 3", () =>
    Effect.gen(function*() {
      const directory = yield* runDirectoryWith([salesRecord])
      const gate = yield* gateFor(directory)
      const good = cited("q3_net_sales", salesRecord, "Net sales for Q3 2026 were 4,210 units")
      const absent = cited("q3_returns", salesRecord, "Returns were 9.9% of units")
      const rejected = yield* Effect.flip(gate.checkJson(JSON.stringify({
        facts: [good, absent, { ...unavailable("q3_net_sales", "again") }]
      })))
      assert.strictEqual(rejected._tag, "ReportRejected")
      if (rejected._tag !== "ReportRejected") return
      assert.strictEqual(
        rejected.message,
        "The report was rejected: 2 fact failures: fact 2 (\"q3_returns\"): SnippetAbsent, fact 3 (\"q3_net_sales\"): DuplicateLabel"
      )
      const duplicate = rejected.failures[1]!.error
      assert.strictEqual(duplicate.message, "Label \"q3_net_sales\" is already used by fact 1")
      const markdown = Render.render("markdown", Rendering.Rejected({ error: rejected }))
      assert.include(markdown, "### Fact 2: `SnippetAbsent`")
      assert.include(markdown, "### Fact 3: `DuplicateLabel`")
      const html = Render.render("html", Rendering.Rejected({ error: rejected }))
      assert.include(html, "<strong>Fact 2</strong>")
      assert.include(html, "<strong>Fact 3</strong>")
    }))
})
