/**
 * `Evidence.failed` makes a verification's final results as a new dense list (verify/Evidence.ts),
 * where it set the missing ones in the pending list itself before. Against that (written out here):
 * seeded pending lists with evidence set or not at each place, and failures empty or not, including
 * the empty verification and evidence left alongside failures. The results must be the same, in the
 * same order, with no hole (every index present).
 */
import { assert, describe, it } from "@effect/vitest"
import { Either } from "effect"
import { SnippetAbsent } from "../src/Errors.js"
import * as Evidence from "../src/verify/Evidence.js"
import type { CitationFailure, CitationResult } from "../src/verify/Records.js"
import { random } from "./support/seeded.js"

/** The previous `failed`: each citation with a failure, or with no result set, gets its failures, in place. */
const reference = (results: Array<CitationResult>, failures: ReadonlyArray<Array<CitationFailure>>): Array<CitationResult> => {
  failures.forEach((list, i) => {
    if (list.length > 0 || results[i] === undefined) results[i] = Either.left(list)
  })
  return results
}

const evidenceOf = (k: number): CitationResult => Either.right({ occurrences: k } as never)
const failureOf = (k: number): CitationFailure =>
  new SnippetAbsent({ source: `https://example.com/${k}`, captureSha256: "0".repeat(64), snippet: `snippet ${k}` }) as CitationFailure

describe("Evidence.failed: the final results as a dense list", () => {
  it("matches the results set in place, with no hole", () => {
    const next = random(27)
    for (let n = 0; n < 2000; n++) {
      const count = n === 0 ? 0 : next() % 12
      const failures = Array.from({ length: count }, (_, i) => next() % 3 === 0 ? [failureOf(i), ...(next() % 4 === 0 ? [failureOf(i + 100)] : [])] : [])
      const pending = Evidence.pending(count)
      const before: Array<CitationResult> = new Array(count)
      for (let i = 0; i < count; i++) {
        if (next() % 2 === 0) {
          const evidence = evidenceOf(i)
          pending[i] = evidence
          before[i] = evidence
        }
      }
      const got = Evidence.failed(pending, failures)
      const expected = reference(before, failures)
      assert.strictEqual(got.length, count)
      for (let i = 0; i < count; i++) {
        assert.isTrue(i in got, `a hole at ${i}`)
        assert.strictEqual(got[i]!._tag, expected[i]!._tag)
        if (Either.isRight(got[i]!)) assert.strictEqual(got[i], expected[i])
        else assert.strictEqual(Either.getLeft(got[i]!).pipe((o) => o._tag === "Some" ? o.value : undefined), failures[i])
        if (Either.isLeft(expected[i]!)) assert.strictEqual((expected[i] as Either.Left<Array<CitationFailure>, never>).left, failures[i])
      }
    }
  })
})
