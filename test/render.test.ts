import { assert, describe, it } from "@effect/vitest"
import { Effect, Either, Match } from "effect"
import { marked } from "marked"
import { decodeOptions, makeCaptureRecord, type SourceUrl } from "../src/Domain.js"
import type { FactError } from "../src/Errors.js"
import { ReportRejected } from "../src/Errors.js"
import * as Render from "../src/render/Render.js"
import { RenderedResult, Rendering } from "../src/render/Rendering.js"
import { Schema } from "effect"
import { accessedAt, gateFor, runDirectoryWith, withMode } from "./support.js"

const SOURCE = "https://reports.northwind.test/q3-sales.txt" as SourceUrl
const hostile = "Total: 4,210 units <script>window.__pwned = 1</script> [click](javascript:alert(1)) ![x](https://evil.test/x.png) **bold** \u001b[31mred\u001b[0m \u202eevil www.evil.test <img src=x onerror=alert(2)>"
const record = makeCaptureRecord({
  source: SOURCE,
  text: `Header line\r\n${hostile}\nTail & more`,
  accessedAt,
  contentType: "text/plain"
})
const config = {
  sources: [SOURCE],
  labels: ["q3_net_sales", "<b>label</b>", "q4_forecast"],
  verify: { mode: "drop" }
}

/** A verified rendering with hostile text everywhere, and a rejection carrying hostile fields. */
const fixtures = Effect.gen(function*() {
  const directory = yield* runDirectoryWith([record])
  const gate = yield* gateFor(directory, config)
  const draft = JSON.stringify({
    facts: [
      { state: "cited", label: "<b>label</b>", source: SOURCE, captureSha256: record.sha256, snippet: hostile },
      { state: "unavailable", label: "q4_forecast", reason: "[see here](javascript:alert(3)) <script>x()</script>" },
      { state: "cited", label: "q3_net_sales", source: SOURCE, captureSha256: record.sha256, snippet: "<not there>" }
    ]
  })
  const verified = yield* gate.checkJsonWithCaptures(draft)
  const rejectGate = yield* gateFor(directory, { ...config, verify: { mode: "reject" } })
  const error = yield* Effect.flip(rejectGate.checkJson(draft))
  return {
    verified: Rendering.Verified({ report: verified.report, captures: verified.captures }),
    rejected: Rendering.Rejected({ error })
  }
})

describe("renderers", () => {
  it.scoped("text: control and bidi characters in untrusted values are made visible", () =>
    Effect.gen(function*() {
      const { rejected, verified } = yield* fixtures
      for (const output of [Render.render("text", verified), Render.render("text", rejected)]) {
        assert.notMatch(output, /[\u001b\u202e]/)
      }
      assert.include(Render.render("text", verified), "\\u{001b}[31m")
      assert.include(Render.render("text", verified), "VERIFIED EXCERPT")
      assert.include(Render.render("text", verified), "UNAVAILABLE")
    }))

  it.scoped("markdown: no link, image or HTML can form from source or report text", () =>
    Effect.gen(function*() {
      const { rejected, verified } = yield* fixtures
      for (const rendering of [verified, rejected]) {
        const html = yield* Effect.promise(async () => marked.parse(Render.render("markdown", rendering), { gfm: true }))
        assert.notMatch(html, /<(img|script|b)[\s>]/i, html)
        // The only links are the approved source of a verified citation.
        for (const link of html.match(/<a\b[^>]*>/gi) ?? []) assert.strictEqual(link, `<a href="${SOURCE}">`)
        assert.include(html, "&lt;")
      }
      const md = Render.render("markdown", verified)
      assert.include(md, "**Verified excerpt**")
      assert.include(md, "**Unavailable.**")
      assert.include(md, "Semantic review")
    }))

  it.scoped("json: a stable shape that decodes with the project's own Schema, errors with _tag and fields", () =>
    Effect.gen(function*() {
      const { rejected, verified } = yield* fixtures
      const decode = Schema.decodeUnknownEither(RenderedResult, decodeOptions)
      const okJson = JSON.parse(Render.render("json", verified))
      const ok = decode(okJson)
      assert.isTrue(Either.isRight(ok), String(Either.isLeft(ok) && ok.left))
      assert.strictEqual(okJson.status, "verified")
      assert.strictEqual(okJson.report.outcome, "grounded")
      assert.strictEqual(okJson.report.retractions[0].error._tag, "SnippetAbsent")
      assert.strictEqual(okJson.report.retractions[0].error.snippet, "<not there>")
      const badJson = JSON.parse(Render.render("json", rejected))
      const bad = decode(badJson)
      if (Either.isLeft(bad)) return assert.fail(String(bad.left))
      if (bad.right.status !== "rejected") return assert.fail(`expected status "rejected", got ${bad.right.status}`)
      assert.instanceOf(bad.right.error, ReportRejected)
      assert.deepStrictEqual(bad.right.error.failures.map((f) => [f.index, f.label, f.error._tag]), [
        [2, "q3_net_sales", "SnippetAbsent"]
      ])
      assert.deepStrictEqual(Object.keys(badJson.error.failures[0].error).sort(), ["_tag", "captureSha256", "snippet", "source"])
    }))

  it.scoped("drop-mode retractions and no_evidence are shown as such in every format", () =>
    Effect.gen(function*() {
      const directory = yield* runDirectoryWith([record])
      const gate = yield* gateFor(directory, { ...config, ...withMode("drop"), sources: [SOURCE], labels: config.labels })
      const checked = yield* gate.checkJsonWithCaptures(JSON.stringify({
        facts: [{ state: "cited", label: "q3_net_sales", source: SOURCE, captureSha256: record.sha256, snippet: "absent" }]
      }))
      assert.strictEqual(checked.report.outcome, "no_evidence")
      const rendering = Rendering.Verified(checked)
      assert.include(Render.render("text", rendering), "NO EVIDENCE")
      assert.include(Render.render("markdown", rendering), "no evidence")
      assert.include(Render.render("html", rendering), "no evidence")
      assert.include(Render.render("html", rendering), "Retracted")
    }))

  // A compile-time check, not a run-time one: `npm test` runs `tsc --noEmit`, whose tsconfig includes
  // test/, so if Match.valueTags ever accepted a partial handler set, the @ts-expect-error below would
  // be unused and type-checking would fail. Nothing is asserted at run time.
  const _forgetsATag = (error: FactError) =>
    // @ts-expect-error SnippetAbsent (and others) are not handled: Match.valueTags demands every tag.
    Match.valueTags(error, { NotApproved: () => "x", UnknownLabel: () => "y" })
  void _forgetsATag
})
