/**
 * `verify.boundaries`: under the default `substring`, an excerpt verifies wherever it occurs
 * verbatim, `4,210` inside `4,210,000` included (the core property); under `tokens`, only an
 * occurrence that cuts no number or word counts, else `SnippetCutsToken`.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Either } from "effect"
import * as Config from "../src/Config.js"
import { InvalidConfig, SnippetCutsToken } from "../src/Errors.js"
import * as Describe from "../src/render/Describe.js"
import { check, fact, onlyCitation, onlyFailure, recordOf, SOURCE } from "./anchorSupport.js"

const text = "Net sales were 4,210,000 units in 2023. Costs were $30 million, up 37%. Later: 4,210 units shipped.\n"
const sha = recordOf(text).sha256
const tokens = { boundaries: "tokens" }

describe("verify.boundaries", () => {
  it.scoped("substring (default): 4,210 verifies inside 4,210,000, at the first occurrence", () =>
    Effect.gen(function*() {
      const { evidence } = onlyCitation(yield* check(text, [fact(text, "4,210")]))
      assert.deepStrictEqual(evidence.span, { start: text.indexOf("4,210"), end: text.indexOf("4,210") + 5 })
    }))

  it.scoped("tokens: a later occurrence that keeps its boundaries is used (its span), not the cut one", () =>
    Effect.gen(function*() {
      const { evidence } = onlyCitation(yield* check(text, [fact(text, "4,210")], tokens))
      const later = text.indexOf("4,210 units")
      assert.deepStrictEqual(evidence.span, { start: later, end: later + 5 })
    }))

  it.scoped("tokens: a number only found inside a longer one is SnippetCutsToken, with the whole token", () =>
    Effect.gen(function*() {
      const error = onlyFailure(yield* Effect.flip(check(text, [fact(text, "4,210,00")], tokens)))
      assert.instanceOf(error, SnippetCutsToken)
      const at = text.indexOf("4,210,00")
      assert.deepStrictEqual({ ...error }, {
        _tag: "SnippetCutsToken",
        source: SOURCE,
        captureSha256: sha,
        snippet: "4,210,00",
        span: { start: at, end: at + 8 },
        token: "4,210,000"
      })
      assert.match(error.message, /only as part of a longer number or word .*"4,210,000"/)
    }))

  it.scoped("tokens: a currency sign, a percent sign and a word are tokens too", () =>
    Effect.gen(function*() {
      for (const [snippet, token] of [["30 million", "$30 million"], ["up 37", "up 37%"], ["ales were", "sales were"]] as const) {
        const error = onlyFailure(yield* Effect.flip(check(text, [fact(text, snippet)], tokens)))
        assert.instanceOf(error, SnippetCutsToken)
        assert.strictEqual((error as SnippetCutsToken).token, token)
      }
    }))

  it.scoped("tokens: a prefix that picks the cut occurrence is refused, not moved elsewhere", () =>
    Effect.gen(function*() {
      const error = onlyFailure(yield* Effect.flip(check(text, [fact(text, "4,210", { prefix: "were " })], tokens)))
      assert.instanceOf(error, SnippetCutsToken)
      assert.strictEqual((error as SnippetCutsToken).span.start, text.indexOf("4,210"))
    }))

  it.scoped("tokens: whole numbers and words verify as before", () =>
    Effect.gen(function*() {
      const { evidence } = onlyCitation(yield* check(text, [fact(text, "$30 million, up 37%")], tokens))
      assert.strictEqual(evidence.span.start, text.indexOf("$30"))
    }))

  it("the rendering says what to do; a bad value is InvalidConfig", () => {
    const error = new SnippetCutsToken({ source: SOURCE, captureSha256: sha, snippet: "4,210", span: { start: 15, end: 20 }, token: "4,210,000" })
    const described = Describe.factError(error)
    assert.strictEqual(described.title, "Snippet is part of a longer number or word")
    assert.deepStrictEqual(described.fields.find(([k]) => k === "within"), ["within", "4,210,000"])
    const decoded = Effect.runSync(Effect.either(Config.decode({ sources: [SOURCE], labels: ["a"], verify: { boundaries: "words" } })))
    assert.isTrue(Either.isLeft(decoded) && decoded.left instanceof InvalidConfig)
  })
})
