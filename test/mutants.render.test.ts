/**
 * The HTML page escapes every failure value (snippet, source, label, detail) on
 * the rejected page and in drop-mode retractions, and always carries a Content
 * Security Policy that forbids scripts. Checked on the HTML string itself: a
 * forgotten escape or a dropped policy fails here without a browser.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { makeCaptureRecord, type SourceUrl } from "../src/Domain.js"
import { InvalidReport, NotApproved, ReportRejected, SnippetAbsent, UnknownLabel } from "../src/Errors.js"
import * as Render from "../src/render/Render.js"
import { Rendering } from "../src/render/Rendering.js"
import { failureOf } from "./mutants.support.js"
import { accessedAt, gateFor, runDirectoryWith } from "./support.js"

const SOURCE = "https://reports.northwind.test/q3-sales.txt" as SourceUrl
const record = makeCaptureRecord({
  source: SOURCE,
  text: "Net sales for Q3 2026 were 4,210 units.\n",
  accessedAt,
  contentType: "text/plain"
})

// Each hostile value carries its own marker, so a finding names the field that leaked.
const snippet = `<script>leak("snippet")</script>"'&`
const label = `<img src=x onerror=leak("label")>`
const source = `https://evil.test/"><svg onload=leak("source")>`
const unknownKey = `<iframe src=leak("path")>`

const config = { sources: [SOURCE], labels: ["q3_net_sales", "q4_forecast", "q3_returns"] }
const draft = {
  facts: [
    { state: "cited", label: "q3_net_sales", source: SOURCE, captureSha256: record.sha256, snippet },
    { state: "unavailable", label, reason: "not published" },
    { state: "cited", label: "q4_forecast", source, captureSha256: record.sha256, snippet: "4,210 units" }
  ]
}

/** Every tag that a hostile value would open, if any of it reached the page unescaped. */
const injected = /<(script|img|svg|iframe)\b/i

/** The policy of the page's CSP meta tag, as directive name -> values. */
const cspOf = (html: string): Map<string, ReadonlyArray<string>> => {
  const head = html.slice(0, html.indexOf("</head>"))
  const meta = /<meta http-equiv="Content-Security-Policy" content="([^"]*)">/.exec(head)
  assert.isNotNull(meta, "the page has a Content-Security-Policy meta tag in its head")
  return new Map(
    meta![1]!.split(";").map((d) => d.trim()).filter((d) => d !== "").map((d) => {
      const [name, ...values] = d.split(/\s+/)
      return [name!, values] as const
    })
  )
}

/** Scripts are forbidden: script-src (or default-src when script-src is absent) allows nothing. */
const assertForbidsScripts = (html: string) => {
  const csp = cspOf(html)
  assert.deepStrictEqual(csp.get("default-src"), ["'none'"])
  assert.deepStrictEqual(csp.get("script-src") ?? csp.get("default-src"), ["'none'"])
  // The meta tag must come before anything a value could inject into.
  assert.isBelow(html.indexOf("Content-Security-Policy"), html.indexOf("<body>"))
}

const assertEscaped = (html: string) => {
  assert.notMatch(html, injected, html)
  assert.include(html, `&lt;script&gt;leak(&quot;snippet&quot;)&lt;/script&gt;&quot;&#39;&amp;`)
  assert.include(html, `&lt;img src=x onerror=leak(&quot;label&quot;)&gt;`)
  assert.include(html, `https://evil.test/&quot;&gt;&lt;svg onload=leak(&quot;source&quot;)&gt;`)
}

describe("HTML: failure values are escaped", () => {
  it.scoped("on the rejected page (reject mode), snippet, label and source of every failure", () =>
    Effect.gen(function*() {
      const directory = yield* runDirectoryWith([record])
      const gate = yield* gateFor(directory, { ...config, verify: { mode: "reject" } })
      const error = yield* failureOf(gate.checkJson(JSON.stringify(draft)))
      assert.instanceOf(error, ReportRejected)
      assert.deepStrictEqual(error.failures.map((f) => [f.index, f.error._tag]), [
        [0, "SnippetAbsent"],
        [1, "UnknownLabel"],
        [2, "NotApproved"]
      ])
      const html = Render.render("html", Rendering.Rejected({ error }))
      assertEscaped(html)
      assertForbidsScripts(html)
      // The label of a failed fact is escaped in the failure heading too.
      assert.include(html, `(label <code class="value">&lt;img src=x onerror=leak(&quot;label&quot;)&gt;</code>)`)
    }))

  it.scoped("in drop-mode retractions on the verified page", () =>
    Effect.gen(function*() {
      const directory = yield* runDirectoryWith([record])
      const gate = yield* gateFor(directory, { ...config, verify: { mode: "drop" } })
      const checked = yield* gate.checkJsonWithCaptures(JSON.stringify({
        facts: [...draft.facts, { state: "cited", label: "q3_returns", source: SOURCE, captureSha256: record.sha256, snippet: "4,210 units" }]
      }))
      assert.strictEqual(checked.report.outcome, "grounded")
      assert.deepStrictEqual(checked.report.retractions.map((r) => [r.index, r.error._tag]), [
        [0, "SnippetAbsent"],
        [1, "UnknownLabel"],
        [2, "NotApproved"]
      ])
      assert.deepStrictEqual(checked.report.facts.map((e) => e.index), [3])
      const html = Render.render("html", Rendering.Verified(checked))
      assert.include(html, "Retracted facts (drop mode)")
      assertEscaped(html)
      assertForbidsScripts(html)
    }))

  it("errors built directly: every described field value is escaped", () => {
    const error = new ReportRejected({
      failures: [
        { index: 0, label, error: new SnippetAbsent({ source, captureSha256: record.sha256, snippet }) },
        { index: 1, label, error: new UnknownLabel({ label }) },
        { index: 2, label, error: new NotApproved({ source, reason: "not-in-approved-set", detail: `<svg onload=leak("detail")>` }) }
      ]
    })
    const html = Render.render("html", Rendering.Rejected({ error }))
    assertEscaped(html)
    assert.include(html, `&lt;svg onload=leak(&quot;detail&quot;)&gt;`)
    assertForbidsScripts(html)
  })

  it.scoped("on the invalid-report page: issue paths and messages", () =>
    Effect.gen(function*() {
      const directory = yield* runDirectoryWith([record])
      const gate = yield* gateFor(directory, config)
      const error = yield* failureOf(gate.checkJson(JSON.stringify({ facts: [], [unknownKey]: 1 })))
      assert.instanceOf(error, InvalidReport)
      const html = Render.render("html", Rendering.Rejected({ error }))
      assert.notMatch(html, injected, html)
      assert.include(html, `&lt;iframe src=leak(&quot;path&quot;)&gt;`)
      assertForbidsScripts(html)
    }))

  it.scoped("the verified page carries the same policy", () =>
    Effect.gen(function*() {
      const directory = yield* runDirectoryWith([record])
      const gate = yield* gateFor(directory, config)
      const checked = yield* gate.checkJsonWithCaptures(JSON.stringify({
        facts: [{ state: "cited", label: "q3_net_sales", source: SOURCE, captureSha256: record.sha256, snippet: "4,210 units" }]
      }))
      assertForbidsScripts(Render.render("html", Rendering.Verified(checked)))
    }))
})
