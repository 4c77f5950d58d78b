/**
 * The cut at `maxRatioLength` on two long inputs (2,048 × 2,048 cells): a difference past the cut
 * is not seen, whichever side holds it; one at the last unit inside it is. Every other case of
 * `src/anchor/Similarity.ts` against plain references is in `mutants.similarity.light.test.ts`,
 * which the mutation run uses (this one takes instrumented code minutes).
 */
import { assert, describe, it } from "@effect/vitest"
import { maxRatioLength, ratioNormalized } from "../src/anchor/Similarity.js"

describe("Similarity: the cut at maxRatioLength, both sides long", () => {
  it("ratioNormalized compares the first maxRatioLength units of each side only", () => {
    const base = "x".repeat(maxRatioLength)
    assert.strictEqual(ratioNormalized(base + "a", base + "b"), 1)
    assert.strictEqual(ratioNormalized(base, base + "tail"), 1)
    assert.strictEqual(ratioNormalized(base + "tail", base), 1)
    const changed = "x".repeat(maxRatioLength - 1) + "y"
    assert.strictEqual(ratioNormalized(changed + "zz", base + "zz"), 1 - 1 / maxRatioLength)
    assert.strictEqual(ratioNormalized(base + "zz", changed + "zz"), 1 - 1 / maxRatioLength)
  })
})
