import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer, Schema } from "effect"
import * as Answer from "../src/answer/Answer.js"
import * as AnswerRender from "../src/answer/Render.js"
import * as Config from "../src/Config.js"
import { decodeOptions } from "../src/Domain.js"
import { AmbiguousSnippet, InvalidConfig, SnippetAbsent } from "../src/Errors.js"
import * as Policy from "../src/verify/Policy.js"
import * as Render from "../src/render/Render.js"
import * as MemoryStore from "../src/store/Memory.js"
import * as Verifier from "../src/verify/Verifier.js"
import { check, configWith, fact, onlyCitation, onlyFailure, recordOf, SOURCE } from "./anchorSupport.js"

// Typographic capture text: curly quotes, an en dash, a soft hyphen, a no-break space, a ligature, CRLF, astral neighbours.
const text =
  "\u{1F4C8}\u201CRevenue grew 12\u00A0% in 2025\u2013Q3,\u201D the CFO said. Ef\uFB01cient opera\u00ADtions.\r\n" +
  "Costs fell 3% in Q3.\u{1F4C9}\r\n"
const sha = recordOf(text).sha256
// What a drafting model typically writes for the first sentence: straight quotes, a hyphen, ordinary spaces.
const typed = "\"Revenue grew 12 % in 2025-Q3,\""
const normalizedOnly = { matching: "normalized/2" }

describe("Opt-in normalised acceptance (verify.matching)", () => {
  it.scoped("default (exact): a typographic variant is SnippetAbsent", () =>
    Effect.gen(function*() {
      const error = onlyFailure(yield* Effect.flip(check(text, [fact(text, typed)])))
      assert.instanceOf(error, SnippetAbsent)
      assert.deepStrictEqual([error.source, error.captureSha256, error.snippet], [SOURCE, sha, typed])
    }))

  it.scoped("normalized/2: accepted, labelled, at the raw span the normalised match maps to; digest unchanged", () =>
    Effect.gen(function*() {
      const report = yield* check(text, [fact(text, typed)], normalizedOnly)
      const { evidence, fact: f } = onlyCitation(report)
      const raw = "\u201CRevenue grew 12\u00A0% in 2025\u2013Q3,\u201D"
      const start = text.indexOf(raw)
      assert.strictEqual(evidence.method, "normalized/2")
      assert.deepStrictEqual(evidence.span, { start, end: start + raw.length })
      assert.strictEqual(f.captureSha256, sha)
      assert.strictEqual(f.snippet, typed) // the report's quote is passed on as given
      assert.strictEqual(evidence.selector![0].exact, raw) // the selector quotes the capture
      // The span never splits the astral character before it.
      assert.isTrue(text.slice(0, evidence.span.start).isWellFormed() && text.slice(evidence.span.end).isWellFormed())
      assert.deepStrictEqual(evidence.offsets!.codePoints, { start: 1, end: 1 + [...raw].length })
      assert.deepStrictEqual(evidence.offsets!.utf8, {
        start: 4,
        end: 4 + Buffer.byteLength(raw)
      })
    }))

  it.scoped("normalized/2: a verbatim quote is still method exact", () =>
    Effect.gen(function*() {
      const { evidence } = onlyCitation(yield* check(text, [fact(text, "Costs fell 3% in Q3.")], normalizedOnly))
      assert.strictEqual(evidence.method, "exact")
    }))

  it.scoped("normalized/2: ligature, soft hyphen and case differences are accepted; the raw span holds them", () =>
    Effect.gen(function*() {
      const { evidence } = onlyCitation(yield* check(text, [fact(text, "efficient operations")], normalizedOnly))
      assert.strictEqual(evidence.method, "normalized/2")
      assert.strictEqual(text.slice(evidence.span.start, evidence.span.end), "Ef\uFB01cient opera\u00ADtions")
    }))

  it.scoped("normalized/2 never accepts a changed digit or an inserted negation: SnippetAbsent", () =>
    Effect.gen(function*() {
      for (const changed of ["\"Revenue grew 13 % in 2025-Q3,\"", "\"Revenue did not grow 12 % in 2025-Q3,\"", "Costs fell 8% in Q3."]) {
        const error = onlyFailure(yield* Effect.flip(check(text, [fact(text, changed)], normalizedOnly)))
        assert.instanceOf(error, SnippetAbsent)
        assert.deepStrictEqual([error.source, error.captureSha256, error.snippet], [SOURCE, sha, changed])
      }
    }))

  it.scoped("normalized/2 keeps the ambiguity rule: several normalised occurrences are flagged, or AmbiguousSnippet under reject", () =>
    Effect.gen(function*() {
      const twice = "A \u201Cgood\u201D year. A \u201Cgood\u201D plan."
      const flagged = onlyCitation(yield* check(twice, [fact(twice, "a \"good\"")], normalizedOnly)).evidence
      assert.strictEqual(flagged.method, "normalized/2")
      assert.strictEqual(flagged.ambiguous, true)
      assert.strictEqual(flagged.occurrences, 2)
      assert.deepStrictEqual(flagged.span, { start: 0, end: 8 })
      const error = onlyFailure(
        yield* Effect.flip(check(twice, [fact(twice, "a \"good\"")], { ...normalizedOnly, ambiguous: "reject" }))
      )
      assert.instanceOf(error, AmbiguousSnippet)
      assert.deepStrictEqual({ ...error }, {
        _tag: "AmbiguousSnippet",
        source: SOURCE,
        captureSha256: recordOf(twice).sha256,
        snippet: "a \"good\"",
        occurrences: 2
      })
      // A suffix, normalised too, picks the second.
      const picked = onlyCitation(yield* check(twice, [fact(twice, "a \"good\"", { suffix: " PLAN" })], normalizedOnly)).evidence
      assert.strictEqual(twice.slice(picked.span.start, picked.span.end), "A \u201Cgood\u201D")
      assert.strictEqual(picked.span.start, twice.lastIndexOf("A "))
      assert.strictEqual(picked.ambiguous, false)
    }))

  it.scoped("every rendering says the match is normalised, not verbatim, and shows the capture's own text", () =>
    Effect.gen(function*() {
      const report = yield* check(text, [fact(text, typed)], normalizedOnly)
      const rendering = Render.Rendering.Verified({ report, captures: new Map([[SOURCE as string, recordOf(text)]]) })
      const plain = Render.render("text", rendering)
      assert.include(plain, "MATCH     matched under normalized/2 (opt-in), NOT verbatim")
      assert.include(plain, "capture reads")
      const markdown = Render.render("markdown", rendering)
      assert.include(markdown, "**Match: matched under normalized/2 (opt-in), NOT verbatim")
      assert.include(markdown, "The capture's own text at this span:")
      const html = Render.render("html", rendering)
      assert.include(html, `<div class="match normalized">matched under normalized/2 (opt-in), NOT verbatim`)
      assert.include(html, `<div class="capture-reads">`)
      const json = JSON.parse(Render.render("json", rendering))
      assert.strictEqual(json.report.facts[0].evidence.method, "normalized/2")
      Schema.decodeUnknownSync(Render.RenderedResult, decodeOptions)(json)
      // An exact match carries no such label.
      const exact = yield* check(text, [fact(text, "Costs fell 3% in Q3.")], normalizedOnly)
      const exactText = Render.render("text", Render.Rendering.Verified({ report: exact, captures: new Map() }))
      assert.notInclude(exactText, "normalized/2")
    }))

  it.effect("verify.matching: exact by default, exact, normalized/2 or the deprecated normalized/1 only", () =>
    Effect.gen(function*() {
      assert.strictEqual(Config.resolvedMatching(yield* Config.decode(configWith())), "exact")
      assert.strictEqual(Config.resolvedMatching(yield* Config.decode(configWith(normalizedOnly))), "normalized/2")
      // The deprecated id is still accepted, and verified under the rules that keep numbers and units.
      assert.strictEqual(Config.resolvedMatching(yield* Config.decode(configWith({ matching: "normalized/1" }))), "normalized/2")
      const error = yield* Effect.flip(Config.decode(configWith({ matching: "fuzzy" })))
      assert.instanceOf(error, InvalidConfig)
      assert.deepStrictEqual([...new Set(error.issues.map((issue) => JSON.stringify(issue.path)))], [`["verify","matching"]`])
    }))
})

describe("normalized/2 in answers (the same matching path)", () => {
  const answersLayer = Answer.layer({ mode: "reject", uncited: "report" }).pipe(
    Layer.provide(Verifier.layer),
    Layer.provide(Policy.layer(Schema.decodeUnknownSync(Config.PipelineConfig)(configWith(normalizedOnly)))),
    Layer.provideMerge(MemoryStore.layer({ records: [recordOf(text)] }).pipe(Layer.orDie))
  )

  it.effect("a typographic quote is accepted as normalized/2, at its raw code-point span, and labelled in every answer rendering", () =>
    Effect.gen(function*() {
      const answers = yield* Answer.Answers
      const raw = "\u201CRevenue grew 12\u00A0% in 2025\u2013Q3,\u201D"
      // `chars` in code points: the astral character before the quote is one.
      const chars = { start: 1, end: 1 + [...raw].length }
      const { answer, captures } = yield* answers.verify({
        manifest: null,
        claims: [{ id: "c1", text: "Revenue grew.", citations: [{ source: SOURCE, captureSha256: sha, quote: typed, chars }] }],
        uncited: []
      })
      const evidence = answer.claims[0]!.citations[0]!.evidence
      assert.strictEqual(evidence.method, "normalized/2")
      assert.deepStrictEqual(evidence.offsets!.codePoints, chars)
      const rendering = AnswerRender.AnswerRendering.Verified({ answer, captures })
      assert.include(AnswerRender.render("text", rendering), "MATCH     matched under normalized/2 (opt-in), NOT verbatim")
      assert.include(AnswerRender.render("markdown", rendering), "**matched under normalized/2 (opt-in), NOT verbatim")
      assert.include(AnswerRender.render("html", rendering), "<strong>matched under normalized/2 (opt-in), NOT verbatim")
      assert.strictEqual(JSON.parse(AnswerRender.render("json", rendering)).answer.claims[0].citations[0].evidence.method, "normalized/2")
    }).pipe(Effect.provide(answersLayer)))
})
