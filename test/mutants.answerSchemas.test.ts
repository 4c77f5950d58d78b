/**
 * The answer record Schemas on their own: the identifiers their errors and
 * JSON Schema name, the ranges' own strictness and message, the uncited policy's
 * literals. Decoded with Schema's defaults, so only the Schemas' own annotations count.
 */
import { assert, describe, it } from "@effect/vitest"
import { Either, Option, ParseResult, Schema, SchemaAST } from "effect"
import * as Records from "../src/answer/Records.js"

const identifier = (ast: SchemaAST.AST) => Option.getOrUndefined(SchemaAST.getIdentifierAnnotation(ast))

describe("answer record Schemas", () => {
  it("each struct carries its identifier", () => {
    const named: Array<[Schema.Schema.Any, string]> = [
      [Records.Citation, "Citation"],
      [Records.NumberedCitation, "NumberedCitation"],
      [Records.Claim, "Claim"],
      [Records.Answer, "Answer"],
      [Records.VerifiedAnswerCitation, "VerifiedAnswerCitation"],
      [Records.RetractedCitation, "RetractedCitation"],
      [Records.GroundedClaim, "GroundedClaim"],
      [Records.RemovedClaim, "RemovedClaim"],
      [Records.AnswerSummary, "AnswerSummary"],
      [Records.VerifiedAnswer, "VerifiedAnswer"]
    ]
    for (const [schema, name] of named) assert.strictEqual(identifier(schema.ast), name)
    // The ranges are named before their filter.
    assert.strictEqual(identifier(Records.PageRange.from.ast), "PageRange")
    assert.strictEqual(identifier(Records.BlockRange.from.ast), "BlockRange")
    assert.strictEqual(identifier(Records.CharRange.from.ast), "CharRange")
  })

  it("a range is strict on its own, non-empty with its message, and starts at its minimum", () => {
    const decode = (schema: Schema.Schema<{ start: number; end: number }, { start: number; end: number }>, value: unknown) =>
      Schema.decodeUnknownEither(schema)(value)
    assert.isTrue(Either.isRight(decode(Records.CharRange, { start: 0, end: 1 })))
    assert.isTrue(Either.isLeft(decode(Records.CharRange, { start: 0, end: 1, extra: 1 })))
    assert.isTrue(Either.isLeft(decode(Records.PageRange, { start: 0, end: 1 })))
    assert.isTrue(Either.isRight(decode(Records.PageRange, { start: 1, end: 2 })))
    const empty = decode(Records.BlockRange, { start: 2, end: 2 })
    assert.isTrue(Either.isLeft(empty))
    if (Either.isLeft(empty)) {
      assert.include(ParseResult.TreeFormatter.formatErrorSync(empty.left), "end must be greater than start (end is exclusive)")
    }
  })

  it("the uncited policy is reject or report", () => {
    assert.isTrue(Schema.is(Records.UncitedPolicy)("reject"))
    assert.isTrue(Schema.is(Records.UncitedPolicy)("report"))
    assert.isFalse(Schema.is(Records.UncitedPolicy)(""))
  })
})
