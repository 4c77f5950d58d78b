/**
 * `src/Domain.ts` builds its Schemas when it loads. A change that makes that fail (a filter that is
 * not a function, say) fails every file that imports the module statically before any test runs,
 * which the mutation runner does not count as a failing test; this file imports it inside a test.
 */
import { assert, describe, it } from "@effect/vitest"

describe("Domain: the module loads", () => {
  it("its Schemas and limits are built", async () => {
    const D = await import("../src/Domain.js")
    assert.strictEqual(D.defaultMaxFacts, 100)
    assert.strictEqual(D.Report.ast._tag, "TypeLiteral")
    for (const schema of [D.NonBlankString, D.Sha256Hex, D.SourceUrl, D.Rfc3339Utc, D.QuoteContext, D.Label]) {
      assert.strictEqual(schema.ast._tag, "Refinement")
    }
  })
})
