/**
 * `citegate.answer/1` citations: the draft citation is decoded by the member its shape selects (a
 * numeric `source` is by number, anything else by URL and digest), so an error names only the branch
 * that applies. The accepted inputs and the JSON Schema are those of the plain union.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Either from "effect/Either"
import * as JSONSchema from "effect/JSONSchema"
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"
import { readFileSync } from "node:fs"
import { decodeJson } from "../src/internal/decode.js"
import * as Records from "../src/answer/Records.js"
import { fixturePath } from "./support.js"

const all = { errors: "all", onExcessProperty: "error" } as const
const messages = (schema: Schema.Schema<any, any>, input: unknown) => {
  const result = Schema.decodeUnknownEither(schema, all)(input)
  return Either.isLeft(result) ? ParseResult.ArrayFormatter.formatErrorSync(result.left).map((i) => `${i.path.join(".")}: ${i.message}`) : []
}
const answer = (citation: unknown) => ({ format: "citegate.answer/1", claims: [{ id: "a", text: "Sales rose.", citations: [citation] }] })
const digest = "a".repeat(64)
const plainUnion = Schema.Union(Records.Citation, Records.NumberedCitation)

describe("citegate.answer/1 citation shapes", () => {
  it("a numbered citation with a bad anchor: only the numbered branch's errors", () => {
    const found = messages(Records.Answer, answer({ source: 1, quote: "Sales rose", chars: { start: 5, end: 2 } }))
    assert.isNotEmpty(found)
    assert.isTrue(found.some((m) => m.includes("end must be greater than start")), found.join("\n"))
    // The explicit branch's complaints (a string source, a digest) are not listed.
    assert.deepStrictEqual(found.filter((m) => /captureSha256|Expected string/.test(m)), [])
  })

  it("an explicit citation with a bad anchor: only the explicit branch's errors", () => {
    const found = messages(Records.Answer, answer({ source: "https://a.test/x", captureSha256: digest, quote: "q", page: { start: 3, end: 1 } }))
    assert.isTrue(found.some((m) => m.includes("end must be greater than start")), found.join("\n"))
    assert.deepStrictEqual(found.filter((m) => /Expected number|Expected an integer|is unexpected/.test(m)), [])
  })

  it("a numbered source with a digest is one branch's error (the digest is unexpected there)", () => {
    const found = messages(Records.DraftCitation, { source: 2, captureSha256: digest, quote: "q" })
    assert.deepStrictEqual(found, ["captureSha256: is unexpected, expected: \"source\" | \"quote\" | \"page\" | \"heading\" | \"blocks\" | \"chars\" | \"prefix\" | \"suffix\""])
  })

  it("accepts exactly what the plain union accepts, with the same values", () => {
    const fixture = JSON.parse(readFileSync(fixturePath("answers", "summary.answer.json"), "utf8")) as { claims: Array<{ citations: Array<unknown> }> }
    const inputs: Array<unknown> = [
      ...fixture.claims.flatMap((c) => c.citations),
      { source: 1, quote: "q" },
      { source: 3, quote: "q", page: { start: 1, end: 2 }, heading: ["A", "B"], blocks: { start: 0, end: 1 }, chars: { start: 0, end: 1 }, prefix: "p", suffix: "s" },
      { source: "https://a.test/x", captureSha256: digest, quote: "q", chars: { start: 0, end: 4 } },
      { source: 0, quote: "q" },
      { source: 1.5, quote: "q" },
      { source: "1", quote: "q" },
      { source: "https://a.test/x", quote: "q" },
      { source: "https://a.test/x", captureSha256: "short", quote: "q" },
      { source: 1, quote: " " },
      { source: 1, quote: "q", extra: true },
      { quote: "q" },
      { source: null, quote: "q" },
      [],
      "text",
      null
    ]
    for (const input of inputs) {
      const a = Schema.decodeUnknownEither(Records.DraftCitation, all)(input)
      const b = Schema.decodeUnknownEither(plainUnion, all)(input)
      assert.strictEqual(Either.isRight(a), Either.isRight(b), JSON.stringify(input))
      if (Either.isRight(a) && Either.isRight(b)) assert.deepStrictEqual(a.right, b.right)
    }
    // The whole fixture answer decodes as before (through the strict JSON decoder the CLI uses).
    const text = readFileSync(fixturePath("answers", "summary.answer.json"), "utf8")
    assert.isTrue(Either.isRight(decodeJson(Records.Answer)(text)))
    // Encoding picks the same member.
    const numbered = { source: 2, quote: "q" }
    assert.deepStrictEqual(Schema.encodeSync(Records.DraftCitation)(numbered), numbered)
  })

  it("keeps the plain union's JSON Schema (the OpenAPI document is unchanged)", () => {
    // A claim's citations still name both members by their identifiers.
    const claim = JSON.stringify(JSONSchema.make(Records.Claim))
    assert.include(claim, "#/$defs/Citation")
    assert.include(claim, "#/$defs/NumberedCitation")
    assert.deepStrictEqual(JSONSchema.make(Records.DraftCitation), JSONSchema.make(plainUnion))
  })
})
