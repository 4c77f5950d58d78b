import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { InvalidReport, ReportRejected, SnippetAbsent, UnknownLabel, VerificationTimeout } from "../src/Errors.js"
import { Rendering } from "../src/render/Rendering.js"
import * as Text from "../src/render/Text.js"
import { VerifiedReport } from "../src/verify/VerifiedReport.js"
import { cited, gateFor, runDirectoryWith, salesRecord, unavailable, withMode } from "./support.js"

// The whole text rendering, line by line: headline counts and plurals, fact numbers from 1, which values are
// quoted and which only made control-safe, the notes, and the indentation of retractions and failures.

describe("text rendering, exactly", () => {
  const verified = [
    "citegate: GROUNDED (drop mode): 2 verified citations, 1 unavailable",
    "Provenance only: each verified excerpt occurs verbatim in the exact capture named. Semantic review (is it the right metric, unit, period for the label?) was not performed.",
    "",
    "[1] \"q3_net_sales\"",
    "    VERIFIED EXCERPT  \"Net sales\"",
    "    source    https://reports.northwind.test/q3-sales.txt",
    "    capture   sha256 99449b199eb3\u2026  accessed 2026-10-01T09:30:00.000Z",
    "    span      67\u201376 (1 occurrence)",
    "[2] \"q4_forecast\"",
    "    UNAVAILABLE  reason (unverified explanation): \"no \\u{001b} data\"",
    "[3] \"q3_online_share\"",
    "    VERIFIED EXCERPT  \"Q3 2026\"",
    "    source    https://reports.northwind.test/q3-sales.txt",
    "    capture   sha256 99449b199eb3\u2026  accessed 2026-10-01T09:30:00.000Z",
    "    span      23\u201330 (more than one occurrence)",
    "    AMBIGUOUS ambiguous: more than one occurrence, the first is shown",
    "",
    "Unavailable: the drafter's reason is an unverified explanation, not evidence.",
    "",
    "Retracted in drop mode (2):",
    "  [4] \"q3_returns\": SnippetAbsent: Snippet not found verbatim",
    "      source: https://reports.northwind.test/q3-sales.txt",
    "      capture: 99449b199eb3\u2026",
    "      snippet: \"absent text\"",
    "      fix: Quote the capture exactly (no paraphrase, case, spacing or punctuation changes), or mark the fact unavailable.",
    "  [5] \"nope\": UnknownLabel: Unknown label",
    "      label: \"nope\"",
    "      fix: Use one of the approved labels."
  ].join("\n") + "\n"
  const rejected = [
    "citegate: REJECTED: 3 failures in 2 facts; nothing in this report is accepted",
    "  [1] \"a\\u{202e}\": SnippetAbsent: Snippet not found verbatim",
    "      source: https://x.test/a",
    "      capture: 0123456789ab\u2026",
    "      snippet: \"s\\u{001b}\"",
    "      fix: Quote the capture exactly (no paraphrase, case, spacing or punctuation changes), or mark the fact unavailable.",
    "  [1] \"a\": UnknownLabel: Unknown label",
    "      label: \"zz\"",
    "      fix: Use one of the approved labels.",
    "  [3] \"b\": UnknownLabel: Unknown label",
    "      label: \"b\"",
    "      fix: Use one of the approved labels."
  ].join("\n") + "\n"
  const invalidOmitted = [
    "citegate: REJECTED: the report is not a valid report (3 issues)",
    "  facts[0].label: bad\\u{001b}",
    "  and 2 more issues not listed"
  ].join("\n") + "\n"
  const invalidOne = [
    "citegate: REJECTED: the report is not a valid report (1 issue)",
    "  (root): m"
  ].join("\n") + "\n"
  const timeout = [
    "citegate: REJECTED: verification timed out; nothing in this report is accepted",
    "  deadline ms: 1500",
    "  fix: Nothing in this report is accepted. Cite fewer or smaller excerpts, or raise verify.timeoutMs if the captures are legitimately this large."
  ].join("\n") + "\n"
  const noEvidence = [
    "citegate: NO EVIDENCE (drop mode): no cited fact was verified; nothing here is grounded",
    "Provenance only: each verified excerpt occurs verbatim in the exact capture named. Semantic review (is it the right metric, unit, period for the label?) was not performed.",
    "",
    "(no facts)"
  ].join("\n") + "\n"

  it.scoped("a grounded report in drop mode: verified, unavailable and retracted facts", () =>
    Effect.gen(function*() {
      // Spans and occurrences counted by hand in the fixture text.
      assert.strictEqual(salesRecord.text.indexOf("Net sales"), 67)
      assert.strictEqual(salesRecord.text.indexOf("Q3 2026"), 23)
      assert.strictEqual(salesRecord.text.split("Q3 2026").length - 1, 3)
      assert.isTrue(salesRecord.sha256.startsWith("99449b199eb3"))
      const gate = yield* gateFor(yield* runDirectoryWith([salesRecord]), withMode("drop"))
      const outcome = yield* gate.checkJsonWithCaptures(JSON.stringify({
        facts: [
          cited("q3_net_sales", salesRecord, "Net sales"),
          unavailable("q4_forecast", "no \u001b data"),
          cited("q3_online_share", salesRecord, "Q3 2026"),
          cited("q3_returns", salesRecord, "absent text"),
          cited("nope", salesRecord, "Net sales")
        ]
      }))
      assert.strictEqual(Text.render(Rendering.Verified(outcome)), verified)
      const empty = yield* gate.checkJsonWithCaptures(JSON.stringify({ facts: [] }))
      assert.strictEqual(Text.render(Rendering.Verified(empty)), noEvidence)
    }))

  it("a rejection: failures counted, distinct facts counted, each failure's fields", () => {
    const error = new ReportRejected({
      failures: [
        {
          index: 0,
          label: "a\u202e",
          error: new SnippetAbsent({
            source: "https://x.test/a",
            captureSha256: "0123456789abcdef".repeat(4),
            snippet: "s\u001b"
          })
        },
        { index: 0, label: "a", error: new UnknownLabel({ label: "zz" }) },
        { index: 2, label: "b", error: new UnknownLabel({ label: "b" }) }
      ]
    })
    assert.strictEqual(Text.render(Rendering.Rejected({ error })), rejected)
  })

  it("an invalid report: the issue count includes the omitted ones; one issue is singular", () => {
    const omitted = new InvalidReport({ issues: [{ path: ["facts", 0, "label"], message: "bad\u001b" }], omitted: 2 })
    assert.strictEqual(Text.render(Rendering.Rejected({ error: omitted })), invalidOmitted)
    const one = new InvalidReport({ issues: [{ path: [], message: "m" }] })
    assert.strictEqual(Text.render(Rendering.Rejected({ error: one })), invalidOne)
  })

  it("a verification timeout", () => {
    assert.strictEqual(Text.render(Rendering.Rejected({ error: new VerificationTimeout({ timeoutMs: 1500 }) })), timeout)
  })

  it("an anchored excerpt gets an anchor line: page, section path, or both", () => {
    const snippet = "Net sales"
    const entry = (index: number, anchor: { readonly page?: number; readonly heading?: ReadonlyArray<string> }) => ({
      index,
      fact: { state: "cited" as const, label: "q3_net_sales" as never, source: salesRecord.source, captureSha256: salesRecord.sha256, snippet },
      evidence: { span: { start: 67, end: 76 }, occurrences: 1, accessedAt: salesRecord.accessedAt, ...anchor }
    })
    const report = new VerifiedReport({
      format: "citegate.verified/1",
      outcome: "grounded",
      mode: "reject",
      facts: [entry(0, { page: 3 }), entry(1, { heading: ["Q3", "Sales\u202e"] }), entry(2, { page: 2, heading: ["Q3"] })],
      retractions: [],
      proves: "provenance-only",
      semanticReview: "not-performed"
    })
    const lines = Text.render(Rendering.Verified({ report, captures: new Map([[salesRecord.source, salesRecord]]) })).split("\n")
    assert.deepStrictEqual(lines.filter((line) => line.startsWith("    anchor")), [
      "    anchor    page 3",
      "    anchor    section Q3 \u203a Sales\\u{202e}",
      "    anchor    page 2, section Q3"
    ])
    // Each anchor line follows its own span line.
    assert.strictEqual(lines[lines.indexOf("    anchor    page 3") - 1], "    span      67\u201376 (1 occurrence)")
  })

  it("describe: a tagged description as stderr lines", () => {
    assert.strictEqual(
      Text.describe("InvalidConfig", { title: "T", fields: [["label", "l"], ["path", "p\u001b"]], fix: "F" }),
    "InvalidConfig: T\n  label: \"l\"\n  path: p\\u{001b}\n  fix: F\n"
    )
  })
})
