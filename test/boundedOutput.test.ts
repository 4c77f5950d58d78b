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

describe("HTML shows what it holds", () => {
  it("bidi overrides and controls in labels, reasons, issues, excerpts and capture text are shown as escapes", async () => {
    const { VerifiedReport } = await import("../src/verify/VerifiedReport.js")
    const { makeCaptureRecord } = await import("../src/Domain.js")
    const rlo = "\u202e"
    const text = `Net sales ${rlo}stinu 012,4\n were up.`
    const record = makeCaptureRecord({
      source: "https://reports.example.com/a.txt" as never,
      text,
      accessedAt: "2026-11-30T09:00:00.000Z" as never,
      contentType: "text/plain"
    })
    const snippet = `${rlo}stinu 012,4`
    const start = text.indexOf(snippet)
    const report = new VerifiedReport({
      format: "citegate.verified/1",
      outcome: "grounded",
      mode: "reject",
      facts: [
        {
          index: 0,
          fact: { state: "cited", label: `sales${rlo}` as never, source: record.source, captureSha256: record.sha256, snippet },
          evidence: { span: { start, end: start + snippet.length }, occurrences: 1, accessedAt: record.accessedAt }
        },
        { index: 1, fact: { state: "unavailable", label: "q4" as never, reason: `none${rlo}\u0007` } }
      ],
      retractions: [],
      proves: "provenance-only",
      semanticReview: "not-performed"
    })
    const html = Render.render("html", Render.Rendering.Verified({ report, captures: new Map([[record.source, record]]) }))
    assert.notInclude(html, rlo)
    assert.notInclude(html, "\u0007")
    assert.include(html, `<span class="ctl">\\u{202e}</span>stinu 012,4`)
    assert.include(html, "none\\u{202e}\\u{0007}")
    // Line breaks of the capture text stay line breaks.
    assert.include(html, "\n were up.")
  })
})
