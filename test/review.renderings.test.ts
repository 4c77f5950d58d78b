/**
 * The four outcomes side by side: one verified report with the number adapter's review
 * (`review.numbers: report`), the judge's review (a loopback judge) and a recorded human decision,
 * rendered as text, Markdown, HTML and JSON. Each outcome stands in its own section, after provenance
 * and in a fixed order; none of them changes the provenance part, and none is merged into another.
 */
import { assert, describe, it } from "@effect/vitest"
import { Context, Effect, Either, Layer, Schema } from "effect"
import * as Render from "../src/render/Render.js"
import { fromOutcome, RenderedResult } from "../src/render/Rendering.js"
import * as Decisions from "../src/review/Decisions.js"
import * as Judge from "../src/review/Judge.js"
import * as JudgeReview from "../src/review/JudgeReview.js"
import * as ReviewLog from "../src/store/ReviewLog.js"
import * as ReviewFilesystem from "../src/store/ReviewFilesystem.js"
import { apiKey, judgeServer, settingsFor, verdicts } from "./judgeServer.js"
import { revenueRecord, reviewConfig } from "./reviewSupport.js"
import { cited, gateFor, inventoryRecord, runDirectoryWith, salesRecord } from "./support.js"

const reportText = JSON.stringify({
  facts: [
    cited("q3_net_sales", salesRecord, "Net sales for Q3 2026 were 4,210 units"),
    // The demo's wrong-label sample: an inventory count cited as net sales.
    cited("q3_online_share", inventoryRecord, "Inventory on hand at 30 September 2026 was 1,180 units")
  ]
})

/** Where each of `markers` first occurs in `text` (asserting that it does). */
const positions = (text: string, markers: ReadonlyArray<string>) =>
  markers.map((marker) => {
    const at = text.indexOf(marker)
    assert.isAtLeast(at, 0, `missing ${JSON.stringify(marker)}`)
    return at
  })

/** `needle` occurs in `text` only between `from` and `to` (the section that owns it). */
const onlyWithin = (text: string, needle: string, from: number, to: number) => {
  let at = text.indexOf(needle)
  assert.isAtLeast(at, 0, `missing ${JSON.stringify(needle)}`)
  for (; at >= 0; at = text.indexOf(needle, at + 1)) {
    assert.isTrue(at > from && at < to, `${JSON.stringify(needle)} outside its section (at ${at}, section ${from}..${to})`)
  }
}

describe("renderings keep provenance, the adapter, the judge and human review apart", () => {
  it.scopedLive("text, Markdown, HTML and JSON: four sections, in order, none merged", () =>
    Effect.gen(function*() {
      const directory = yield* runDirectoryWith([salesRecord, inventoryRecord, revenueRecord])
      const gate = yield* gateFor(directory, reviewConfig("report"))
      const outcome = yield* Effect.either(gate.checkJsonWithCaptures(reportText))
      assert.isTrue(Either.isRight(outcome))
      if (Either.isLeft(outcome)) return
      const { captures, report } = outcome.right
      assert.deepStrictEqual(report.numberReview?.facts.map((f) => f.outcome), ["consistent", "mismatch"])

      const server = yield* judgeServer("openai", (request) => ({
        text: verdicts(request.ids.map((id, i) => i === 0 ? { id, class: "entailed", confidence: 0.95 } : { id, class: "overstated", confidence: 0.4 }))
      }))
      const judgeContext = yield* Layer.build(Judge.layer({ settings: settingsFor("openai", server.url, { batchSize: 2, maxRetries: 0 }, "report"), apiKey }))
      const judge = yield* JudgeReview.reviewReport(Context.get(judgeContext, Judge.Judge), report, captures)

      const log = ReviewFilesystem.layer({ directory })
      const request = yield* Decisions.request({ fact: 1, decision: "wrong-metric", note: "inventory, not sales", reviewer: "alice" })
      yield* Decisions.record({ run: "run-1", reportText, outcome, request }).pipe(Effect.provide(log))
      const humanReview = Decisions.humanReviewOf(report, yield* Effect.flatMap(ReviewLog.ReviewLog, (l) => l.list).pipe(Effect.provide(log)))

      const provenance = fromOutcome(outcome)
      assert.strictEqual(provenance._tag, "Verified")
      if (provenance._tag !== "Verified") return
      const all = Render.Rendering.Verified({ ...provenance, judge, humanReview })
      const alone = Render.Rendering.Verified({ ...provenance })

      // Text: provenance, then the adapter, the judge, the human review, each under its own heading.
      const text = Render.render("text", all)
      const [adapter, judged, human] = positions(text, [
        "Semantic review: number adapter",
        "Judge (semantic review):",
        "Human review (recorded decisions):"
      ])
      assert.isTrue(adapter! < judged! && judged! < human!)
      onlyWithin(text, "MISMATCH metric", adapter!, judged!)
      onlyWithin(text, "overstated", judged!, human!)
      onlyWithin(text, "WRONG-METRIC", human!, text.length)
      onlyWithin(text, "inventory, not sales", human!, text.length)
      // The provenance part (everything before the first review section) is the rendering without the judge and the decision.
      assert.strictEqual(text.slice(0, adapter), Render.render("text", alone).slice(0, adapter))

      const markdown = Render.render("markdown", all)
      const [mdAdapter, mdJudge, mdHuman] = positions(markdown, ["Semantic review", "Judge", "## Human review (recorded decisions)"])
      assert.isTrue(mdAdapter! < mdJudge! && mdJudge! < mdHuman!)
      onlyWithin(markdown, "overstated", mdJudge!, mdHuman!)
      onlyWithin(markdown, "inventory, not sales", mdHuman!, markdown.length)
      assert.strictEqual(markdown.slice(0, mdAdapter), Render.render("markdown", alone).slice(0, mdAdapter))

      const html = Render.render("html", all)
      const [hJudge, hHuman] = positions(html, ['class="judge', 'class="human-review"'])
      assert.isTrue(hJudge! < hHuman!)
      onlyWithin(html, "overstated", hJudge!, hHuman!)
      onlyWithin(html, "inventory, not sales", hHuman!, html.length)

      // JSON: one key per outcome; the report's provenance is byte for byte the one without judge and decision.
      const json = JSON.parse(Render.render("json", all))
      Schema.decodeUnknownSync(RenderedResult)(json)
      assert.deepStrictEqual(json.report, JSON.parse(Render.render("json", alone)).report)
      assert.deepStrictEqual(json.report.numberReview.facts.map((f: any) => [f.outcome, f.mismatches?.[0]?.aspect]), [["consistent", undefined], ["mismatch", "metric"]])
      assert.deepStrictEqual(json.judge.citations.map((c: any) => c.verdict), ["entailed", "overstated"])
      assert.deepStrictEqual(json.humanReview.facts.map((f: any) => [f.index, f.current.record.decision]), [[1, "wrong-metric"]])
      // No outcome carries another's fields.
      assert.notProperty(json.judge, "humanReview")
      assert.notProperty(json.humanReview, "judge")
      assert.notInclude(JSON.stringify(json.report), "wrong-metric")
      assert.notInclude(JSON.stringify(json.report), "overstated")
    }))
})
