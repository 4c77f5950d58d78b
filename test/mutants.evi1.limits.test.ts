/**
 * The EVI1 limits at their exact values (a text of 16 Mi code units; more than 10,000 issues):
 * kept apart from mutants.evi1.test.ts, whose tests are light enough to run for every mutant.
 */
import { assert, describe, it } from "@effect/vitest"
import { Either } from "effect"
import * as Evi1 from "../src/answer/Evi1.js"
import { limits } from "../src/answer/Records.js"
import { AnswerTooLarge, Evi1Invalid } from "../src/Errors.js"

const right = <A, E>(either: Either.Either<A, E>): A => {
  if (Either.isLeft(either)) assert.fail("expected Right")
  return (either as Either.Right<E, A>).right
}
const left = <A, E>(either: Either.Either<A, E>): E => {
  if (Either.isRight(either)) assert.fail("expected Left")
  return (either as Either.Left<E, A>).left
}
const invalidOf = (text: string): Evi1Invalid => {
  const error = left(Evi1.parse(text))
  assert.instanceOf(error, Evi1Invalid)
  return error as Evi1Invalid
}

describe("EVI1 limits", () => {
  it("exactly maxChars is parsed; one more is AnswerTooLarge; push after end throws", () => {
    const document = right(Evi1.parse("x".repeat(limits.maxChars)))
    assert.strictEqual(document.body.length, 1)
    assert.strictEqual((document.body[0] as { text: string }).text.length, 16 * 1024 * 1024)
    const parser = new Evi1.Parser()
    parser.push("x".repeat(limits.maxChars - 1))
    parser.push("yz")
    const error = left(parser.end())
    assert.instanceOf(error, AnswerTooLarge)
    assert.deepStrictEqual([(error as AnswerTooLarge).maxChars, (error as AnswerTooLarge).receivedChars], [16 * 1024 * 1024, 16 * 1024 * 1024 + 1])
    assert.throws(() => parser.push("a"), "EVI1 parser: push after end")
  })

  it("past the held buffer, the listed issues are still the first in line order (body issues found after appendix ones)", () => {
    const garbage = Array.from({ length: 10_000 }, () => "garbage").join("\n")
    const error = invalidOf(`x {c1}\nEVI1\n${garbage}\nEND_EVI1`)
    assert.strictEqual(error.issues.length, 100)
    assert.deepStrictEqual(error.issues[0], { _tag: "Evi1OrphanMarker", line: 1, claimId: "c1" })
    assert.deepStrictEqual(error.issues.slice(1).map((i) => i.line), Array.from({ length: 99 }, (_, i) => i + 3))
    assert.strictEqual(error.omitted, 10_001 - 100)
  })

})
