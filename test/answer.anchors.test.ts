/**
 * Answers honour the anchors v2 captures carry: a `page` range (citegate.answer/1, Anthropic
 * `page_location`) and a `heading` path (citegate.answer/1, in the same form as a report's) are
 * checked by the Verifier exactly as a report's `page` and `heading` are.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Either, Layer } from "effect"
import * as Answer from "../src/answer/Answer.js"
import * as Anthropic from "../src/answer/Anthropic.js"
import * as AnswerRender from "../src/answer/Render.js"
import { CaptureStore } from "../src/store/CaptureStore.js"
import type { PipelineConfig } from "../src/Config.js"
import { type CaptureRecord, sha256Of, type SourceUrl } from "../src/Domain.js"
import { AnchorMismatch, AnchorUnsupported, InvalidAnswer } from "../src/Errors.js"
import * as Manifest from "../src/Manifest.js"
import * as Policy from "../src/verify/Policy.js"
import * as MemoryStore from "../src/store/Memory.js"
import * as Verifier from "../src/verify/Verifier.js"
import { createHash } from "node:crypto"
import { accessedAt, SALES, salesRecord } from "./support.js"

const PDF = "https://reports.northwind.test/annual.pdf" as SourceUrl
const GUIDE = "https://reports.northwind.test/guide.md" as SourceUrl

const pdfPages = ["Annual report 2026.\n", "Revenue rose 12 percent in 2026.\n", "Headcount was 410 at year end.\n"]
const pdfText = pdfPages.join("")
let at = 0
const pages = pdfPages.map((page, i) => ({ number: i + 1, start: at, end: (at += page.length) }))

const guideText = "# Guide\n\nIntro text.\n\n## Returns\n\nReturns are accepted within 30 days.\n\n## Shipping\n\nShipping takes 5 days.\n"
const section = (title: string) => guideText.indexOf(title === "Guide" ? "# Guide" : `## ${title}`)
const headings = [
  { level: 1, text: "Guide", path: ["Guide"], start: 0, end: guideText.length },
  { level: 2, text: "Returns", path: ["Guide", "Returns"], start: section("Returns"), end: section("Shipping") },
  { level: 2, text: "Shipping", path: ["Guide", "Shipping"], start: section("Shipping"), end: guideText.length }
]

/** A v2 record and its body (the body's bytes stand for the PDF or Markdown file; only its digest is checked). */
const v2 = (source: SourceUrl, text: string, contentType: string, anchors: object) => {
  const body = new TextEncoder().encode(`body of ${source}`)
  const record = {
    format: "citegate.capture/2",
    source,
    sha256: sha256Of(text),
    accessedAt,
    extraction: contentType === "application/pdf" ? "pdf/1" : "markdown/1",
    body: { sha256: createHash("sha256").update(body).digest("hex"), byteLength: body.byteLength, contentType },
    ...anchors,
    text
  } as CaptureRecord
  return { record, body }
}

const config = { sources: [PDF, GUIDE, SALES], labels: ["unused"] } as unknown as PipelineConfig

const store = Layer.effect(
  CaptureStore,
  Effect.gen(function*() {
    const store = yield* MemoryStore.make()
    for (const { body, record } of [v2(PDF, pdfText, "application/pdf", { pages }), v2(GUIDE, guideText, "text/markdown", { headings })]) {
      yield* store.write(record, body)
    }
    yield* store.write(salesRecord)
    return store
  })
).pipe(Layer.orDie)

const layer = Answer.layer({ mode: "drop", uncited: "report" }).pipe(
  Layer.provide(Verifier.layer),
  Layer.provide(Policy.layer(config)),
  Layer.provideMerge(store)
)

const right = <A, E>(either: Either.Either<A, E>): A => {
  if (Either.isLeft(either)) assert.fail(`expected Right, got ${JSON.stringify(either.left)}`)
  return (either as Either.Right<E, A>).right
}

const answerJson = (manifest: string, claims: ReadonlyArray<unknown>) => JSON.stringify({ format: "citegate.answer/1", manifest, claims })

/** Verifies a citegate.answer/1 with one claim per citation; the first error of each claim (or "ok"). */
const outcomes = (citations: ReadonlyArray<object>) =>
  Effect.gen(function*() {
    const manifest = yield* Manifest.make(config)
    const bound = right(Answer.fromJson(
      answerJson(manifest.digest, citations.map((c, i) => ({ id: `c${i}`, text: `Claim ${i}.`, citations: [c] }))),
      manifest
    ))
    const { answer } = yield* (yield* Answer.Answers).verify(bound)
    return citations.map((_, i) => {
      const removed = answer.removed.find((r) => r.id === `c${i}`)
      return removed === undefined ? "ok" : removed.reasons[0]!.error
    })
  }).pipe(Effect.provide(layer))

describe("answers: page ranges and heading paths are checked like a report's", () => {
  it.effect("citegate.answer/1: pages and heading paths that hold the quote verify; the evidence names where it lies", () =>
    Effect.gen(function*() {
      const manifest = yield* Manifest.make(config)
      const bound = right(Answer.fromJson(
        answerJson(manifest.digest, [
          { id: "rev", text: "Revenue rose.", citations: [{ source: 1, quote: "Revenue rose 12 percent", page: { start: 2, end: 3 } }] },
          { id: "span", text: "Two pages.", citations: [{ source: 1, quote: "Headcount was 410", page: { start: 2, end: 4 } }] },
          { id: "ret", text: "Returns.", citations: [{ source: 2, quote: "within 30 days", heading: ["Guide", "Returns"] }] },
          { id: "top", text: "Guide.", citations: [{ source: 2, quote: "Shipping takes 5 days", heading: ["Guide"] }] }
        ]),
        manifest
      ))
      const { answer } = yield* (yield* Answer.Answers).verify(bound)
      assert.strictEqual(answer.outcome, "grounded")
      assert.deepStrictEqual(answer.removed, [])
      assert.deepStrictEqual(answer.claims.map((c) => c.citations[0]!.evidence.page ?? null), [2, 3, null, null])
      assert.deepStrictEqual(answer.claims.map((c) => c.citations[0]!.evidence.heading ?? null).slice(2), [["Guide", "Returns"], ["Guide", "Shipping"]])
      // Every rendering says where each excerpt lies, as a report's renderings do.
      const rendering = AnswerRender.AnswerRendering.Verified({ answer, captures: new Map() })
      const text = AnswerRender.render("text", rendering)
      assert.include(text, "\n    anchor    page 2\n")
      assert.include(text, "    anchor    section Guide › Returns\n")
      assert.include(AnswerRender.render("markdown", rendering), ", section Guide › Shipping\n")
      assert.include(AnswerRender.render("html", rendering), " · page 3")
    }).pipe(Effect.provide(layer)))

  it.effect("a quote outside the named pages or section: AnchorMismatch outside; no such page or heading: no-such-anchor", () =>
    Effect.gen(function*() {
      const results = yield* outcomes([
        { source: 1, quote: "Revenue rose 12 percent", page: { start: 1, end: 2 } },
        { source: 1, quote: "Revenue rose 12 percent", page: { start: 4, end: 5 } },
        { source: 2, quote: "within 30 days", heading: ["Guide", "Shipping"] },
        { source: 2, quote: "within 30 days", heading: ["Returns"] },
        // Reports' rule: an HTML or plain-text capture has no pages, so a page cannot hold.
        { source: 3, quote: "4,210 units", page: { start: 1, end: 2 } },
        { source: 3, quote: "4,210 units", heading: ["Sales"] }
      ])
      const mismatches = results.map((r) => {
        assert.instanceOf(r, AnchorMismatch)
        return [(r as AnchorMismatch).anchor, (r as AnchorMismatch).reason]
      })
      assert.deepStrictEqual(mismatches, [
        ["page 1", "outside"],
        ["page 4", "no-such-anchor"],
        ["heading Guide > Shipping", "outside"],
        ["heading Returns", "no-such-anchor"],
        ["page 1", "no-such-anchor"],
        ["heading Sales", "no-such-anchor"]
      ])
    }))

  it.effect("a multi-page range names its pages; a range past the last page has no such anchor", () =>
    Effect.gen(function*() {
      const results = yield* outcomes([
        { source: 1, quote: "Annual report 2026.", page: { start: 2, end: 4 } },
        { source: 1, quote: "Annual report 2026.", page: { start: 1, end: 5 } }
      ])
      assert.deepStrictEqual(results.map((r) => [(r as AnchorMismatch).anchor, (r as AnchorMismatch).reason]), [
        ["pages 2–3", "outside"],
        ["pages 1–4", "no-such-anchor"]
      ])
    }))

  it.effect("content blocks stay AnchorUnsupported: no capture has them", () =>
    Effect.gen(function*() {
      const [blocks] = yield* outcomes([{ source: 1, quote: "Revenue rose 12 percent", blocks: { start: 0, end: 1 } }])
      assert.instanceOf(blocks, AnchorUnsupported)
      assert.strictEqual((blocks as AnchorUnsupported).anchor, "content-block")
      assert.match((blocks as AnchorUnsupported).message, /never content blocks/)
    }))

  it.effect("a heading given as a string is refused with the form expected (as in reports)", () =>
    Effect.gen(function*() {
      const manifest = yield* Manifest.make(config)
      const invalid = Answer.fromJson(
        answerJson(manifest.digest, [{ id: "a", text: "A.", citations: [{ source: 2, quote: "within 30 days", heading: "Guide > Returns" }] }]),
        manifest
      )
      assert.isTrue(Either.isLeft(invalid))
      const error = (invalid as Either.Left<InvalidAnswer, unknown>).left
      assert.instanceOf(error, InvalidAnswer)
      const issue = error.issues.find((i) => i.path.includes("heading"))
      assert.isDefined(issue)
      assert.match(issue!.message, /same form as a report's "heading": an array of 1 to 6 heading texts, outermost first/)
    }).pipe(Effect.provide(layer)))

  it.effect("Anthropic page_location: 1-based start, exclusive end, checked against the capture's pages", () =>
    Effect.gen(function*() {
      const manifest = yield* Manifest.make(config)
      const response = (start: number, end: number) =>
        JSON.stringify({
          content: [{
            type: "text",
            text: "Revenue rose 12 percent.",
            citations: [{ type: "page_location", cited_text: "Revenue rose 12 percent in 2026.", document_index: 0, start_page_number: start, end_page_number: end }]
          }]
        })
      const answers = yield* Answer.Answers
      const onPage2 = yield* answers.verify(right(Anthropic.fromJson(response(2, 3), manifest, { manifestDigest: manifest.digest })))
      assert.strictEqual(onPage2.answer.outcome, "grounded")
      assert.strictEqual(onPage2.answer.claims[0]!.citations[0]!.evidence.page, 2)
      const onPage3 = yield* answers.verify(right(Anthropic.fromJson(response(3, 4), manifest, { manifestDigest: manifest.digest })))
      const error = onPage3.answer.removed[0]!.reasons[0]!.error as AnchorMismatch
      assert.instanceOf(error, AnchorMismatch)
      assert.deepStrictEqual([error.anchor, error.reason], ["page 3", "outside"])
    }).pipe(Effect.provide(layer)))
})
