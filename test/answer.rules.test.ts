/**
 * Which uncited sentences need a citation: the rule on its own, configured, and on realistic
 * multi-paragraph answers (fixtures/answers/) in every hand-off format, verified against real captures.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Either, Layer } from "effect"
import { readFileSync } from "node:fs"
import * as Answer from "../src/answer/Answer.js"
import * as Anthropic from "../src/answer/Anthropic.js"
import * as Evi1 from "../src/answer/Evi1.js"
import { type CitationRule, defaultCitationRule } from "../src/answer/Records.js"
import { needsCitation, statesQuantity } from "../src/answer/Sentences.js"
import * as Config from "../src/Config.js"
import { AnswerLimitExceeded, AnswerRejected, InvalidConfig } from "../src/Errors.js"
import * as Manifest from "../src/Manifest.js"
import * as Policy from "../src/verify/Policy.js"
import * as MemoryStore from "../src/store/Memory.js"
import * as Verifier from "../src/verify/Verifier.js"
import { config, emojiRecord } from "./answerSupport.js"
import { fixturePath, inventoryRecord, salesRecord } from "./support.js"

const fixture = (name: string) => readFileSync(fixturePath("answers", name), "utf8")

const setup = (needsCitationRule?: CitationRule) =>
  Effect.gen(function*() {
    return { manifest: yield* Manifest.make(config), answers: yield* Answer.Answers }
  }).pipe(Effect.provide(
    Answer.layer({ mode: "reject", uncited: "reject", needsCitation: needsCitationRule }).pipe(
      Layer.provide(Verifier.layer),
      Layer.provide(Policy.layer(config)),
      Layer.provideMerge(MemoryStore.layer({ records: [salesRecord, inventoryRecord, emojiRecord] }).pipe(Layer.orDie))
    )
  ))

const bound = <A, E extends { readonly message: string }>(either: Either.Either<A, E>): A =>
  Either.getOrElse(either, (e) => assert.fail(`expected a bound answer, got ${e.message}`))

describe("the rule", () => {
  it("a sentence stating a number, date, amount or named quantity needs a citation whatever its length and form", () => {
    for (
      const s of [
        "Revenue fell 90%.", // finding: under 40 code points
        "Up 12.",
        "Costs were $3m.",
        "It cost €40.",
        "Sales doubled.",
        "Half were returned.",
        "Ninety percent left.",
        "A tenfold rise.",
        "Sold out by March.",
        "# Revenue fell 90%", // a heading
        "Did revenue fall 90%?", // a question
        "Net sales, 4,210 units:", // a lead-in
        "Based on the documents, 4,210 units." // framing words, but a figure
      ]
    ) assert.isTrue(needsCitation(s), s)
    assert.isTrue(statesQuantity("Growth of ½ a point."))
    // Digits inside a word name something: a product, a quarter, a protocol.
    for (const s of ["Q3 in brief.", "H2O.", "EVI11 text."]) assert.isFalse(statesQuantity(s), s)
  })

  it("quantity-free sentences: long ones need a citation unless they frame the answer or say the sources are silent", () => {
    assert.isTrue(needsCitation("The CEO resigned in disgrace."))
    assert.isFalse(needsCitation("Short and sweet."))
    for (
      const s of [
        "Based on the documents, here is a summary.", // issue 23: a preamble
        "Here is a summary of what the documents say.",
        "Let me know if you need more detail on any of these points.",
        "The sources do not say how the rest of the stock was split.",
        "# A heading that is long enough to count as a sentence",
        "What drove the growth in online orders over the period?",
        "Details by region and warehouse follow in the table below:"
      ]
    ) assert.isFalse(needsCitation(s), s)
    // Framing is every word from the vocabulary: one word of content makes it a statement.
    assert.isTrue(needsCitation("Based on the documents, sales were strong."))
  })

  it("configurable: exemptions can be withdrawn and the length raised, but a quantity always needs a citation", () => {
    const strict: CitationRule = { minLength: 20, exempt: [] }
    assert.isTrue(needsCitation("Based on the documents, here is a summary.", strict))
    assert.isTrue(needsCitation("What drove the growth in online orders over the period?", strict))
    const lenient: CitationRule = { minLength: 1000, exempt: defaultCitationRule.exempt }
    assert.isFalse(needsCitation("The CEO resigned in disgrace.", lenient))
    assert.isTrue(needsCitation("Revenue fell 90%.", lenient))
  })

  it.effect("answers.needsCitation: a strict schema, defaults filled in", () =>
    Effect.gen(function*() {
      const base = { sources: ["https://reports.northwind.test/q3-sales.txt"], labels: ["x"] }
      assert.deepStrictEqual(Config.resolvedCitationRule(yield* Config.decode(base)), defaultCitationRule)
      const set = yield* Config.decode({ ...base, answers: { uncited: "reject", needsCitation: { minLength: 30, exempt: ["heading"] } } })
      assert.deepStrictEqual(Config.resolvedCitationRule(set), { minLength: 30, exempt: ["heading"] })
      for (
        const bad of [
          { minLength: 0 },
          { exempt: ["heading", "heading"] },
          { exempt: ["preamble"] },
          { minLength: 30, other: true }
        ]
      ) {
        const error = yield* Effect.flip(Config.decode({ ...base, answers: { needsCitation: bad } }))
        assert.instanceOf(error, InvalidConfig, JSON.stringify(bad))
      }
    }))
})

describe("realistic answers (fixtures/answers), uncited: reject", () => {
  it.effect("grounded with no finding: preamble, headings, lead-ins, 'the sources do not say', closing line", () =>
    Effect.gen(function*() {
      const { answers, manifest } = yield* setup()
      const options = { manifestDigest: manifest.digest }
      const all = [
        bound(Evi1.decode(fixture("summary.evi1"), manifest, options)),
        bound(Anthropic.fromJson(fixture("summary.anthropic.json"), manifest, options)),
        bound(Answer.fromJson(fixture("summary.answer.json"), manifest, options))
      ]
      for (const answer of all) {
        const checked = yield* answers.verify(answer)
        assert.strictEqual(checked.answer.outcome, "grounded")
        assert.deepStrictEqual(checked.answer.uncited, [])
        assert.strictEqual(checked.answer.summary.citationsVerified, checked.answer.summary.citations)
      }
    }))

  it.effect("EVI1: the figures and the claim smuggled in beside cited sentences are the findings, with their lines", () =>
    Effect.gen(function*() {
      const { answers, manifest } = yield* setup()
      const answer = bound(Evi1.decode(fixture("smuggled-figures.evi1"), manifest, { manifestDigest: manifest.digest }))
      const error = yield* Effect.flip(answers.verify(answer))
      assert.instanceOf(error, AnswerRejected)
      assert.deepStrictEqual(error.citations, [])
      assert.deepStrictEqual(error.uncited.map((u) => [u.sentence, u.line]), [
        ["Revenue fell 90%.", 3],
        ["The CEO resigned in disgrace.", 4],
        ["Analysts expect a recovery by March:", 7]
      ])
    }))

  it.effect("Anthropic: a cited block of three sentences is one claim (its last sentence) and two uncited sentences", () =>
    Effect.gen(function*() {
      const { answers, manifest } = yield* setup()
      const answer = bound(Anthropic.fromJson(fixture("smuggled-figures.anthropic.json"), manifest, { manifestDigest: manifest.digest }))
      assert.deepStrictEqual(answer.claims.map((c) => [c.id, c.text]), [["block-1", "Net sales were 4,210 units."]])
      const error = yield* Effect.flip(answers.verify(answer))
      assert.instanceOf(error, AnswerRejected)
      assert.deepStrictEqual(error.citations, [])
      assert.deepStrictEqual(error.uncited.map((u) => u.sentence), [
        "Revenue collapsed by 90 percent in the quarter.",
        "The CEO resigned in disgrace."
      ])
    }))

  it.effect("withdrawing an exemption in the configuration brings its sentences back as findings", () =>
    Effect.gen(function*() {
      const { answers, manifest } = yield* setup({ minLength: 20, exempt: ["heading", "question", "lead-in", "unavailable"] })
      const answer = bound(Evi1.decode(fixture("summary.evi1"), manifest, { manifestDigest: manifest.digest }))
      const error = yield* Effect.flip(answers.verify(answer))
      assert.instanceOf(error, AnswerRejected)
      assert.deepStrictEqual(error.uncited.map((u) => [u.sentence, u.line]), [
        ["Based on the documents, here is a summary.", 1],
        ["Let me know if you need more detail on any of these points.", 13]
      ])
    }))

  it.effect("findings are bounded: past 1,000 uncited sentences that need a citation the answer is refused", () =>
    Effect.gen(function*() {
      const { answers, manifest } = yield* setup()
      const answer = (uncited: number) =>
        bound(Answer.fromJson(JSON.stringify({
          format: "citegate.answer/1",
          claims: [{ id: "a", text: "Net sales were 4,210 units.", citations: [{ source: 1, quote: "4,210 units" }] }],
          uncited: ["Up 1. ".repeat(uncited)]
        }), manifest, { manifestDigest: manifest.digest }))
      const atLimit = yield* Effect.flip(answers.verify(answer(1_000)))
      assert.instanceOf(atLimit, AnswerRejected)
      assert.strictEqual((atLimit as AnswerRejected).uncited.length, 1_000)
      const over = yield* Effect.flip(answers.verify(answer(100_000)))
      assert.instanceOf(over, AnswerLimitExceeded)
      const { limit, max, received } = over as AnswerLimitExceeded
      assert.deepStrictEqual({ limit, max, received }, { limit: "uncited-sentences", max: 1_000, received: 1_001 })
    }))
})
