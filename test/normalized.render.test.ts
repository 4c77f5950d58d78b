/**
 * What a reader and a streaming client learn about a normalised (NOT verbatim) match (issue 30,
 * finding 10; issue 23 §4): citation events carry `method` and the capture's text; answer pages show
 * the capture's text, never title such a quote "verbatim from the capture", show the captured
 * sources with highlights, and every page header states the matching policy in force.
 */
import { assert, describe, it } from "@effect/vitest"
import { Chunk, Effect, Either, Layer, Schema, Stream } from "effect"
import * as Answer from "../src/answer/Answer.js"
import * as AnswerRender from "../src/answer/Render.js"
import * as Config from "../src/Config.js"
import { StaleManifest } from "../src/Errors.js"
import * as Gate from "../src/verify/Gate.js"
import * as Manifest from "../src/Manifest.js"
import * as Policy from "../src/verify/Policy.js"
import * as Render from "../src/render/Render.js"
import * as AnswerStream from "../src/server/AnswerStream.js"
import * as MemoryStore from "../src/store/Memory.js"
import * as Verifier from "../src/verify/Verifier.js"
import { configWith, fact, recordOf, SOURCE } from "./anchorSupport.js"

const text = "Intro.\n\u201CThe plant delivered 40 MW in 2026,\u201D the CFO said.\nOutro line.\n"
const raw = "\u201CThe plant delivered 40 MW in 2026,\u201D"
const typed = "\"The plant delivered 40 MW in 2026,\""
const record = recordOf(text)
const config = Schema.decodeUnknownSync(Config.PipelineConfig)({ ...configWith({ matching: "normalized/2" }), answers: { uncited: "report" } })
const verifier = Verifier.layer.pipe(
  Layer.provide(Policy.layer(config)),
  Layer.provideMerge(MemoryStore.layer({ records: [record] }).pipe(Layer.orDie))
)

describe("streamed citation events", () => {
  it.effect("carry method (exact or normalized/2) and, when not verbatim, the capture's own text", () =>
    Effect.gen(function*() {
      const manifest = yield* Manifest.make(config)
      const service = yield* AnswerStream.AnswerStream
      const answer = `The plant delivered 40 MW.[1]{c1} Intro.[1]{c2}\nEVI1\nMANIFEST ${manifest.digest}\n` +
        `c1|1|${JSON.stringify(typed)}\nc2|1|"Intro."\nEND_EVI1\n`
      const events = Chunk.toArray(
        yield* Stream.runCollect(service.stream(Stream.make(JSON.stringify({ type: "delta", text: answer })), { manifest }))
      ).map((e) => JSON.parse(AnswerStream.encodeEvent(e)))
      const citations = events.filter((e) => e.type === "citation")
      assert.strictEqual(citations.length, 2)
      assert.strictEqual(citations[0].method, "normalized/2")
      assert.strictEqual(citations[0].captureText, raw)
      assert.strictEqual(text.slice(citations[0].span.start, citations[0].span.end), raw)
      assert.strictEqual(citations[1].method, "exact")
      assert.notProperty(citations[1], "captureText")
    }).pipe(Effect.provide(AnswerStream.layer().pipe(Layer.provideMerge(verifier)))))
})

describe("answer renderings of a normalised match", () => {
  it.effect("show the capture's text; the Markdown heading never says verbatim; HTML highlights the capture; headers state the policy", () =>
    Effect.gen(function*() {
      const answers = yield* Answer.Answers
      const verified = yield* answers.verify({
        manifest: null,
        claims: [
          { id: "c1", text: "The plant delivered 40 MW.", citations: [{ source: SOURCE, captureSha256: record.sha256, quote: typed }] },
          { id: "c2", text: "It ended.", citations: [{ source: SOURCE, captureSha256: record.sha256, quote: "Outro line." }] }
        ],
        uncited: []
      })
      const rendering = AnswerRender.AnswerRendering.Verified({ ...verified, matching: Config.resolvedMatching(config) })
      const plain = AnswerRender.render("text", rendering)
      assert.include(plain, `    capture reads  ${JSON.stringify(raw)}`)
      assert.strictEqual(plain.split("\n")[1], "Matching policy: normalized/2 (opt-in: an excerpt labelled NOT verbatim equals the capture's text only after normalisation; every other excerpt is verbatim)")

      const markdown = AnswerRender.render("markdown", rendering)
      assert.include(markdown, "**\\[1\\]** verified quote (NOT verbatim: matched under normalized/2), as the answer gives it:")
      assert.include(markdown, `The capture's own text at this span:\n\n\`\`\`text\n${raw}\n\`\`\``)
      // The verbatim quote keeps its heading; the normalised one never gets it.
      assert.strictEqual(markdown.split("verbatim from the capture").length - 1, 1)
      assert.include(markdown, "**\\[2\\]** verified quote (verbatim from the capture):")
      assert.isTrue(markdown.startsWith("# Verified answer\n\n*Matching policy: normalized/2"))

      const html = AnswerRender.render("html", rendering)
      assert.include(html, `<div class="capture-reads">The capture's own text at this span: <q>${raw}</q></div>`)
      assert.include(html, `<h1>Verified answer</h1>\n<p class="note matching">Matching policy: normalized/2`)
      // The capture text, each verified span highlighted and linked back to its footnote.
      assert.include(html, `<section class="capture" id="capture-1">`)
      assert.include(html, `<span class="anchor" id="fn-1-excerpt"></span><mark data-facts="1"><a href="#fn-1" title="footnote 1">${raw}</a></mark>`)
      assert.include(html, `<span class="anchor" id="fn-2-excerpt"></span><mark data-facts="2"><a href="#fn-2" title="footnote 2">Outro line.</a></mark>`)
      assert.include(html, `<a href="#fn-1-excerpt">open in the captured text</a>`)
      assert.include(html, `#fn-2-excerpt:target ~ mark[data-facts~="2"]`)

      // A rejected answer's page states it too, and JSON is unchanged (each excerpt carries its method).
      const rejected = AnswerRender.AnswerRendering.Rejected({ error: new StaleManifest({ named: "b".repeat(64), current: "a".repeat(64) }), matching: "exact" })
      assert.strictEqual(AnswerRender.render("text", rejected).split("\n")[1], "Matching policy: exact (every excerpt is the capture's text, code unit for code unit)")
      assert.include(AnswerRender.render("markdown", rejected), "# Answer rejected\n\n*Matching policy: exact")
      assert.include(AnswerRender.render("html", rejected), "<h1>Answer rejected</h1>\n<p class=\"note matching\">Matching policy: exact")
      assert.notInclude(AnswerRender.render("json", rendering), "Matching policy")
    }).pipe(Effect.provide(Answer.layer({ mode: "reject", uncited: "report" }).pipe(Layer.provide(verifier)))))
})

describe("report pages state the matching policy", () => {
  it.effect("text, Markdown and HTML, verified and rejected", () =>
    Effect.gen(function*() {
      const gate = yield* Gate.Gate
      const good = yield* Effect.either(gate.checkJsonWithCaptures(JSON.stringify({ facts: [fact(text, typed)] })))
      const bad = yield* Effect.either(gate.checkJsonWithCaptures(JSON.stringify({ facts: [fact(text, "The plant delivered 40 mW in 2026,")] })))
      for (const outcome of [good, bad]) {
        const rendering = Render.fromOutcome(outcome, Config.resolvedMatching(config))
        assert.include(Render.render("text", rendering).split("\n")[1]!, "Matching policy: normalized/2")
        assert.include(Render.render("markdown", rendering), "\n*Matching policy: normalized/2")
        assert.include(Render.render("html", rendering), "</h1>\n<p class=\"note matching\">Matching policy: normalized/2")
      }
      // The normalised excerpt is never titled verbatim; the capture's own text is shown.
      const markdown = Render.render("markdown", Render.fromOutcome(good, "normalized/2"))
      assert.include(markdown, "**Verified excerpt** (NOT verbatim: matched under normalized/2), as the report gives it:")
      assert.notInclude(markdown, "verbatim from the capture")
      assert.include(markdown, raw)
      assert.isTrue(Either.isRight(good))
      assert.isTrue(Either.isLeft(bad))
    }).pipe(Effect.provide(Gate.layerWithStore(config).pipe(Layer.provide(MemoryStore.layer({ records: [record] })), Layer.orDie))))
})
