/** Hostile capture texts against normalized/2 and the nearest-passage diagnostic: bounded work, no false acceptance. */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { normalize } from "../src/anchor/Normalize.js"
import { prepare } from "../src/anchor/Nearest.js"
import { SnippetAbsent } from "../src/Errors.js"
import { check, fact, onlyCitation, onlyFailure } from "./anchorSupport.js"

// U+FDFA: one code unit that NFKC expands to 18.
const ligature = "\uFDFA"
const sentence = "\u201CRevenue grew 12\u00A0% in 2025\u2013Q3,\u201D the CFO said."
const typed = "\"Revenue grew 12 % in 2025-Q3,\""

describe("adversarial: NFKC expansion", () => {
  it("a capture's normalised form is capped at 2 × its length + 1024 code units; what is kept is a true prefix", () => {
    const hostile = ligature.repeat(100_000)
    const prepared = prepare(hostile)
    assert.isAtMost(prepared.normalized.text.length, 2 * hostile.length + 1_024)
    assert.isTrue(prepared.normalized.truncated)
    const whole = normalize(hostile)
    assert.strictEqual(whole.text.length, 18 * hostile.length)
    assert.isFalse(whole.truncated)
    assert.isTrue(whole.text.startsWith(prepared.normalized.text))
    // Ordinary text is never cut.
    assert.isFalse(prepare(sentence.repeat(1_000)).normalized.truncated)
  })

  it("snippets are never cut (a cut snippet could match where the whole one does not)", () => {
    assert.strictEqual(normalize(ligature.repeat(5_000)).text.length, 18 * 5_000)
  })

  it.scoped("normalized/2 on a capture past the cap: exact matching only, a variant is SnippetAbsent (not accepted from a partial view)", () =>
    Effect.gen(function*() {
      const text = sentence + " " + ligature.repeat(20_000)
      const error = onlyFailure(yield* Effect.flip(check(text, [fact(text, typed)], { matching: "normalized/2" })))
      assert.instanceOf(error, SnippetAbsent)
      assert.strictEqual(error.snippet, typed)
      // A verbatim quote still verifies.
      const { evidence } = onlyCitation(yield* check(text, [fact(text, "the CFO said.")], { matching: "normalized/2" }))
      assert.strictEqual(evidence.method, "exact")
    }))

  it.scoped("normalized/2 below the cap still accepts the variant", () =>
    Effect.gen(function*() {
      const text = sentence + " " + ligature.repeat(20)
      const { evidence } = onlyCitation(yield* check(text, [fact(text, typed)], { matching: "normalized/2" }))
      assert.strictEqual(evidence.method, "normalized/2")
    }))
})
