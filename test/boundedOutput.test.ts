import { assert, describe, it } from "@effect/vitest"
import { Schema } from "effect"
import { decodeOptions, sha256Of } from "../src/Domain.js"
import { ReportRejected, SnippetAbsent } from "../src/Errors.js"
import * as Render from "../src/render/Render.js"
import { RenderedResult } from "../src/render/Rendering.js"

// A hostile report's 3 MB snippet that is not in the capture: every format says so without echoing it in full.
const snippet = "x".repeat(3_000_000)
const error = new ReportRejected({
  failures: [{
    index: 0,
    label: "q3_net_sales",
    error: new SnippetAbsent({ source: "https://reports.example.com/a.txt", captureSha256: sha256Of("a"), snippet })
  }]
})

describe("error output is bounded", () => {
  for (const format of Render.formats) {
    it(`${format}: a 3 MB absent snippet comes back cut, with its length`, () => {
      const out = Render.render(format, Render.Rendering.Rejected({ error }))
      assert.isBelow(out.length, 20_000)
      assert.include(out, "3000000 characters")
    })
  }

  it("json: the cut rendering still decodes with RenderedResult", () => {
    const out = Render.render("json", Render.Rendering.Rejected({ error }))
    const decoded = Schema.decodeUnknownSync(RenderedResult, decodeOptions)(JSON.parse(out))
    assert.strictEqual(decoded.status, "rejected")
    if (decoded.status !== "rejected" || decoded.error._tag !== "ReportRejected") return assert.fail("not a rejection")
    const failure = decoded.error.failures[0]!
    assert.strictEqual(failure.error._tag, "SnippetAbsent")
    assert.isTrue(failure.error._tag === "SnippetAbsent" && failure.error.snippet.startsWith("x".repeat(2_000) + "…"))
  })

  it("the library's error itself is not cut: embedders get the exact snippet", () => {
    assert.strictEqual((error.failures[0]!.error as SnippetAbsent).snippet.length, 3_000_000)
  })
})
