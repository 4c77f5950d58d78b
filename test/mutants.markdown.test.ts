import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { InvalidReport, ReportRejected, SnippetAbsent, UnknownLabel, VerificationTimeout } from "../src/Errors.js"
import * as Markdown from "../src/render/Markdown.js"
import { Rendering } from "../src/render/Rendering.js"
import { VerifiedReport } from "../src/verify/VerifiedReport.js"
import { cited, gateFor, runDirectoryWith, salesRecord, unavailable, withMode } from "./support.js"

// The whole Markdown rendering, line by line: headings and numbering, counts and plurals, which values are
// code spans, blocks or escaped text, the notes, anchors, and every kind of rejection.

describe("Markdown rendering, exactly", () => {
  const verified = [
    "# Verified report",
    "",
    "**Outcome: grounded** (drop mode): 2 verified citations, 1 unavailable.",
    "",
    "*Provenance only: each verified excerpt occurs verbatim in the exact capture named. Semantic review (is it the right metric, unit, period for the label?) was not performed.*",
    "",
    "## Fact 1: q3_net_sales",
    "",
    "**Verified excerpt** (verbatim from the capture):",
    "",
    "```text",
    "Net sales",
    "```",
    "",
    "Source: <https://reports.northwind.test/q3-sales.txt>  ",
    "Capture: sha256 `99449b199eb3`\u2026, accessed 2026-10-01T09:30:00.000Z, characters 67\u201376, 1 occurrence",
    "",
    "## Fact 2: q4_forecast",
    "",
    "**Unavailable.** Reason given by the drafter (unverified explanation, not evidence): no \\*data\\*",
    "",
    "## Fact 3: q3_online_share",
    "",
    "**Verified excerpt** (verbatim from the capture):",
    "",
    "```text",
    "Q3 2026",
    "```",
    "",
    "Source: <https://reports.northwind.test/q3-sales.txt>  ",
    "Capture: sha256 `99449b199eb3`\u2026, accessed 2026-10-01T09:30:00.000Z, characters 23\u201330, more than one occurrence",
    "",
    "**Ambiguous:** ambiguous: more than one occurrence, the first is shown.",
    "",
    "*Unavailable: the drafter's reason is an unverified explanation, not evidence.*",
    "",
    "## Retracted facts (drop mode): 2 failures",
    "",
    "### Fact 4: `SnippetAbsent`: Snippet not found verbatim",
    "",
    "- label: `q3_returns`",
    "- source: `https://reports.northwind.test/q3-sales.txt`",
    "- capture: `99449b199eb3\u2026`",
    "",
    "The snippet, exactly as given:",
    "",
    "```text",
    "absent text",
    "```",
    "",
    "What to do: Quote the capture exactly (no paraphrase, case, spacing or punctuation changes), or mark the fact unavailable.",
    "",
    "### Fact 5: `UnknownLabel`: Unknown label",
    "",
    "- label: `nope`",
    "- label: `nope`",
    "",
    "What to do: Use one of the approved labels.",
    ""
  ].join("\n")
  const rejected = [
    "# Report rejected",
    "",
    "3 failures in 2 facts. Nothing in this report is accepted.",
    "",
    "### Fact 1: `SnippetAbsent`: Snippet not found verbatim",
    "",
    "- label: ``a`b``",
    "- source: `https://x.test/a`",
    "- capture: `0123456789ab\u2026`",
    "",
    "The snippet, exactly as given:",
    "",
    "```text",
    "s  t",
    "```",
    "",
    "What to do: Quote the capture exactly (no paraphrase, case, spacing or punctuation changes), or mark the fact unavailable.",
    "",
    "### Fact 1: `UnknownLabel`: Unknown label",
    "",
    "- label: `a`",
    "- label: `zz`",
    "",
    "What to do: Use one of the approved labels.",
    "",
    "### Fact 3: `UnknownLabel`: Unknown label",
    "",
    "- label: `b`",
    "- label: `b`",
    "",
    "What to do: Use one of the approved labels.",
    "",
    ""
  ].join("\n")
  const invalidOmitted = [
    "# Report rejected",
    "",
    "The report is not a valid report. Nothing in it is accepted.",
    "",
    "- `facts[0].label`: bad \\*x\\*",
    "- and 2 more issues not listed",
    ""
  ].join("\n")
  const invalidOne = [
    "# Report rejected",
    "",
    "The report is not a valid report. Nothing in it is accepted.",
    "",
    "- `(root)`: m",
    "- and 1 more issue not listed",
    ""
  ].join("\n")
  const timeout = [
    "# Report rejected",
    "",
    "Verification timed out. Nothing in this report is accepted.",
    "",
    "- deadline ms: 1500",
    "",
    "Nothing in this report is accepted. Cite fewer or smaller excerpts, or raise verify.timeoutMs if the captures are legitimately this large.",
    ""
  ].join("\n")
  const noEvidence = [
    "# Verified report",
    "",
    "**Outcome: no evidence** (drop mode): no cited fact was verified; nothing here is grounded.",
    "",
    "*Provenance only: each verified excerpt occurs verbatim in the exact capture named. Semantic review (is it the right metric, unit, period for the label?) was not performed.*",
    ""
  ].join("\n")
  const anchored = [
    "# Verified report",
    "",
    "**Outcome: grounded** (reject mode): 2 verified citations, 0 unavailable.",
    "",
    "*Provenance only: each verified excerpt occurs verbatim in the exact capture named. Semantic review (is it the right metric, unit, period for the label?) was not performed.*",
    "",
    "## Fact 1: q3_net_sales",
    "",
    "**Verified excerpt** (verbatim from the capture):",
    "",
    "```text",
    "Net sales",
    "```",
    "",
    "Source: <https://reports.northwind.test/q3-sales.txt>  ",
    "Capture: sha256 `99449b199eb3`\u2026, accessed 2026-10-01T09:30:00.000Z, characters 67\u201376, 1 occurrence, page 3",
    "",
    "## Fact 2: q3_net_sales",
    "",
    "**Verified excerpt** (verbatim from the capture):",
    "",
    "```text",
    "Net sales",
    "```",
    "",
    "Source: <https://reports.northwind.test/q3-sales.txt>  ",
    "Capture: sha256 `99449b199eb3`\u2026, accessed 2026-10-01T09:30:00.000Z, characters 67\u201376, 1 occurrence, section Q3 \u203a \\*Sales\\*",
    ""
  ].join("\n")

  it.scoped("a grounded report in drop mode, and one with no evidence", () =>
    Effect.gen(function*() {
      const gate = yield* gateFor(yield* runDirectoryWith([salesRecord]), withMode("drop"))
      const outcome = yield* gate.checkJsonWithCaptures(JSON.stringify({
        facts: [
          cited("q3_net_sales", salesRecord, "Net sales"),
          unavailable("q4_forecast", "no *data*"),
          cited("q3_online_share", salesRecord, "Q3 2026"),
          cited("q3_returns", salesRecord, "absent text"),
          cited("nope", salesRecord, "Net sales")
        ]
      }))
      assert.strictEqual(Markdown.render(Rendering.Verified(outcome)), verified)
      const empty = yield* gate.checkJsonWithCaptures(JSON.stringify({ facts: [] }))
      assert.strictEqual(Markdown.render(Rendering.Verified(empty)), noEvidence)
    }))

  it("a rejection: failures and distinct facts counted, inline fields and the snippet block", () => {
    const error = new ReportRejected({
      failures: [
        {
          index: 0,
          label: "a`b",
          error: new SnippetAbsent({ source: "https://x.test/a", captureSha256: "0123456789abcdef".repeat(4), snippet: "s  t" })
        },
        { index: 0, label: "a", error: new UnknownLabel({ label: "zz" }) },
        { index: 2, label: "b", error: new UnknownLabel({ label: "b" }) }
      ]
    })
    assert.strictEqual(Markdown.render(Rendering.Rejected({ error })), rejected)
  })

  it("an invalid report: issues as code-span paths, the omitted count singular and plural", () => {
    const two = new InvalidReport({ issues: [{ path: ["facts", 0, "label"], message: "bad *x*" }], omitted: 2 })
    assert.strictEqual(Markdown.render(Rendering.Rejected({ error: two })), invalidOmitted)
    const one = new InvalidReport({ issues: [{ path: [], message: "m" }], omitted: 1 })
    assert.strictEqual(Markdown.render(Rendering.Rejected({ error: one })), invalidOne)
  })

  it("a verification timeout", () => {
    assert.strictEqual(Markdown.render(Rendering.Rejected({ error: new VerificationTimeout({ timeoutMs: 1500 }) })), timeout)
  })

  it("anchors: page, or section path (escaped), after the occurrences", () => {
    const entry = (index: number, anchor: { readonly page?: number; readonly heading?: ReadonlyArray<string> }) => ({
      index,
      fact: { state: "cited" as const, label: "q3_net_sales" as never, source: salesRecord.source, captureSha256: salesRecord.sha256, snippet: "Net sales" },
      evidence: { span: { start: 67, end: 76 }, occurrences: 1, accessedAt: salesRecord.accessedAt, ...anchor }
    })
    const report = new VerifiedReport({
      format: "citegate.verified/1",
      outcome: "grounded",
      mode: "reject",
      facts: [entry(0, { page: 3 }), entry(1, { heading: ["Q3", "*Sales*"] })],
      retractions: [],
      proves: "provenance-only",
      semanticReview: "not-performed"
    })
    assert.strictEqual(Markdown.render(Rendering.Verified({ report, captures: new Map() })), anchored)
  })
})
