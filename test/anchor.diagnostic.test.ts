import { assert, describe, it } from "@effect/vitest"
import { Effect, Either, Layer, Schema } from "effect"
import * as Diagnostic from "../src/anchor/Diagnostic.js"
import { differences, maxDifferencesLength } from "../src/anchor/Differences.js"
import { decodeOptions } from "../src/Domain.js"
import { NearestPassage, ReportRejected, SnippetAbsent } from "../src/Errors.js"
import * as Policy from "../src/verify/Policy.js"
import * as MemoryStore from "../src/store/Memory.js"
import * as Verifier from "../src/verify/Verifier.js"
import { config } from "./answerSupport.js"
import * as Render from "../src/render/Render.js"
import { cited, gateFor, runDirectoryWith, salesRecord } from "./support.js"

const fact = (snippet: string, label = "q3_net_sales") => cited(label, salesRecord, snippet)

const rejected = (report: unknown) =>
  Effect.gen(function*() {
    const directory = yield* runDirectoryWith([salesRecord])
    const error = yield* Effect.flip(Effect.flatMap(gateFor(directory), (gate) => gate.check(report)))
    assert.instanceOf(error, ReportRejected)
    return error
  })

describe("differences", () => {
  it("shows changed words and makes white space visible", () => {
    assert.strictEqual(differences("were 4,210 units", "were 4,201 units"), "were [-4-]{+4+},[-210-]{+201+} units".replace("[-4-]{+4+}", "4"))
    assert.strictEqual(differences("Net sales", "Net\u00a0sales"), "Net[-\u2420-]{+\\u{a0}+}sales")
    assert.strictEqual(differences("sales were up", "sales were not up"), "sales were {+not\u2420+}up")
    assert.strictEqual(differences("in\u00adventory", "inventory"), "[-in\\u{ad}ventory-]{+inventory+}")
    assert.strictEqual(differences("a\tb\n", "a b\r\n"), "a[-\\t-]{+\u2420+}b{+\\r+}\n")
  })

  it("is bounded whatever the lengths", () => {
    const long = "word ".repeat(100_000)
    const out = differences(long, long.replace(/word/g, "other"))
    assert.isAtMost(out.length, maxDifferencesLength + 40)
  })
})

describe("repair diagnostics on SnippetAbsent", () => {
  it.scoped("a typographic variant gets its normalized/1 passage; the fact still fails", () =>
    Effect.gen(function*() {
      const snippet = "net  sales for Q3\u00a02026 were 4,210 units"
      const at = salesRecord.text.indexOf("Net sales for Q3 2026 were 4,210 units")
      const error = yield* rejected({ facts: [fact(snippet)] })
      const failure = error.failures[0]!.error
      assert.instanceOf(failure, SnippetAbsent)
      assert.strictEqual(failure.snippet, snippet)
      assert.deepStrictEqual(failure.nearest, {
        method: "normalized/1",
        score: 1,
        span: { start: at, end: at + 38 },
        text: "Net sales for Q3 2026 were 4,210 units",
        differences: "[-net-]{+Net+} [-\u2420-]sales for Q3[-\\u{a0}-]{+\u2420+}2026 were 4,210 units"
      })
      assert.include(failure.message, "nearest passage: normalized/1, score 1")
    }))

  it.scoped("a changed digit or an inserted negation gets a fuzzy passage below 1, and is rejected", () =>
    Effect.gen(function*() {
      const error = yield* rejected({
        facts: [
          fact("Net sales for Q3 2026 were 4,201 units, up 12% on Q2 2026."),
          fact("Net sales for Q3 2026 were not 4,210 units, up 12% on Q2 2026.", "q3_online_share")
        ]
      })
      assert.strictEqual(error.failures.length, 2)
      const [digit, negation] = error.failures.map((f) => f.error as SnippetAbsent)
      assert.strictEqual(digit!.nearest!.method, "fuzzy")
      assert.strictEqual(digit!.nearest!.text, "Net sales for Q3 2026 were 4,210 units, up 12% on Q2 2026.")
      assert.isAbove(digit!.nearest!.score, 0.9)
      assert.isBelow(digit!.nearest!.score, 1)
      assert.include(digit!.nearest!.differences, "[-201-]{+210+}")
      assert.strictEqual(negation!.nearest!.method, "fuzzy")
      assert.include(negation!.nearest!.differences, "[-not\u2420-]")
    }))

  it.scoped("an absent quote gets no nearest passage", () =>
    Effect.gen(function*() {
      const error = yield* rejected({ facts: [fact("Zebras juggle forty-two xylophones at dawn in Leeds.")] })
      const failure = error.failures[0]!.error as SnippetAbsent
      assert.instanceOf(failure, SnippetAbsent)
      assert.isUndefined(failure.nearest)
      assert.notInclude(failure.message, "nearest")
    }))

  it.scoped("only the first failures of a capture are diagnosed", () =>
    Effect.gen(function*() {
      const labels = ["q3_net_sales", "q3_online_share", "q3_inventory", "q3_returns", "q4_forecast"]
      const facts = Array.from({ length: 10 }, (_, i) => fact(`net sales for q3 2026 were 4,210 units${" ".repeat(i + 1)}`, labels[i % 5]!))
      const error = yield* rejected({ facts })
      const absent = error.failures.filter((f) => f.error._tag === "SnippetAbsent").map((f) => f.error as SnippetAbsent)
      assert.strictEqual(absent.length, 10)
      assert.deepStrictEqual(absent.map((e) => e.nearest !== undefined), absent.map((_, i) => i < Diagnostic.maxPerCapture))
    }))

  it.scoped("the answer path (checkCitations) carries the same diagnostic", () =>
    Effect.gen(function*() {
      const verifier = yield* Effect.provide(
        Verifier.Verifier,
        Verifier.layer.pipe(Layer.provide(Policy.layer(config)), Layer.provide(MemoryStore.layer({ records: [salesRecord] }).pipe(Layer.orDie)))
      )
      const { results } = yield* verifier.checkCitations([
        { source: salesRecord.source, captureSha256: salesRecord.sha256, snippet: "Returns were 3.4 % of units sold" }
      ])
      const result = results[0]!
      assert.isTrue(Either.isLeft(result))
      const error = (result as Either.Left<ReadonlyArray<SnippetAbsent>, unknown>).left[0]!
      assert.instanceOf(error, SnippetAbsent)
      assert.strictEqual(error.nearest!.method, "fuzzy")
      assert.strictEqual(error.nearest!.text, "Returns were 3.4% of units sold")
    }))

  it("at most maxPerCapture per capture and maxPerVerification in all", () => {
    const diagnose = Diagnostic.forVerification(60_000)
    const captures = [0, 1, 2].map((k) => ({ text: `Capture ${k}: net sales were 4,210 units in the quarter.` }))
    const got = captures.map((capture) =>
      Array.from({ length: 10 }, () => diagnose(capture, "NET SALES were 4,210 units").nearest !== undefined).filter(Boolean).length
    )
    assert.strictEqual(Diagnostic.maxPerCapture, 8)
    assert.strictEqual(Diagnostic.maxPerVerification, 16)
    assert.deepStrictEqual(got, [8, 8, 0])
  })

  it("no diagnostics once the budget is spent", () => {
    const diagnose = Diagnostic.forVerification(0)
    assert.deepStrictEqual(diagnose({ text: "Net sales were 4,210 units" }, "net sales were 4,210 units"), {})
    const open = Diagnostic.forVerification(1_000)
    assert.strictEqual(open({ text: "Net sales were 4,210 units" }, "net sales were 4,210 units").nearest!.method, "normalized/1")
  })

  it.scoped("the JSON rendering carries the diagnostic and decodes strictly", () =>
    Effect.gen(function*() {
      const error = yield* rejected({ facts: [fact("Net sales for Q3 2026 were 4,201 units")] })
      const json = Render.render("json", Render.Rendering.Rejected({ error }))
      const decoded = Schema.decodeUnknownSync(Render.RenderedResult)(JSON.parse(json), decodeOptions)
      assert.strictEqual(decoded.status, "rejected")
      const parsed = JSON.parse(json)
      assert.strictEqual(parsed.error.failures[0].error.nearest.method, "fuzzy")
      // Strict: an unknown key inside the diagnostic is rejected, not stripped.
      parsed.error.failures[0].error.nearest.extra = 1
      assert.throws(() => Schema.decodeUnknownSync(Render.RenderedResult)(parsed, decodeOptions))
      assert.throws(() =>
        Schema.decodeUnknownSync(NearestPassage)({ method: "fuzzy", score: 1.5, span: { start: 0, end: 1 }, text: "", differences: "" })
      )
    }))
})
