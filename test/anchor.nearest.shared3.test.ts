/**
 * The shared path end to end: several absent quotes of one capture verified through the Gate (one
 * normalisation of the capture, one exact search and one trigram look-up for all of them, block
 * bounds per quote, the direct or hashed trigram ids), under the matching policies exact,
 * normalized/1 and normalized/2. Every `SnippetAbsent` must carry exactly the diagnostic that the
 * old search (test/support/nearestReference.ts), run for that quote alone, gives: method, score,
 * span, text and differences. Captures: the bench's kind of prose, CRLF, long runs of one
 * character, astral characters, a large alphabet (hashed ids); quotes: near misses, runs, empty-ish
 * ones (nothing left after normalisation, or too short for a fuzzy search).
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { differences } from "../src/anchor/Differences.js"
import { maxPassageText } from "../src/anchor/Diagnostic.js"
import { prepare } from "../src/anchor/Nearest.js"
import type { SourceUrl } from "../src/Domain.js"
import { makeCaptureRecord, type Rfc3339Utc } from "../src/Domain.js"
import { ReportRejected, SnippetAbsent } from "../src/Errors.js"
import { cut } from "../src/internal/bounded.js"
import { cited, gateFor, runDirectoryWith } from "./support.js"
import { referenceNearestIn } from "./support/nearestReference.js"
import { hostileCaptures as captures } from "./support/hostileCaptures.js"

const accessedAt = "2026-12-03T00:00:00.000Z" as Rfc3339Utc

describe("the shared path through the Gate: every SnippetAbsent's diagnostic as the old search gives it alone", () => {
  for (const matching of [undefined, "normalized/1", "normalized/2"] as const) {
    it.scoped(`under matching ${matching ?? "exact"}`, () =>
      Effect.gen(function*() {
        for (const capture of captures()) {
          const record = makeCaptureRecord({
            source: "https://example.com/hostile.txt" as SourceUrl,
            text: capture.text,
            accessedAt,
            contentType: "text/plain"
          })
          const quotes = capture.quotes(capture.text)
          assert.isAtMost(quotes.length, 8)
          const labels = quotes.map((_, k) => `fact_${k}`)
          const config = {
            sources: [record.source],
            labels,
            verify: { maxFacts: 100, mode: "reject", ...(matching === undefined ? {} : { matching }) }
          }
          const directory = yield* runDirectoryWith([record])
          const report = { facts: quotes.map((quote, k) => cited(labels[k]!, record, quote)) }
          const error = yield* Effect.flip(Effect.flatMap(gateFor(directory, config), (gate) => gate.check(report)))
          assert.instanceOf(error, ReportRejected)
          const prepared = prepare(capture.text)
          let found = 0
          quotes.forEach((quote, k) => {
            const failure = error.failures.find((f) => f.label === labels[k])?.error
            assert.instanceOf(failure, SnippetAbsent, `${capture.name}, quote ${k}`)
            const expected = referenceNearestIn(prepared, quote)
            if (expected === undefined) {
              assert.isUndefined(failure.nearest, `${capture.name}, quote ${k}: no passage`)
              return
            }
            found++
            assert.deepStrictEqual(failure.nearest, {
              method: expected.method,
              score: expected.score,
              span: expected.span,
              text: cut(expected.text, maxPassageText),
              differences: differences(quote, expected.text)
            }, `${capture.name}, quote ${k}`)
          })
          // Not vacuous: most captures give passages to compare.
          if (capture.name !== "astral characters") assert.isAtLeast(found, 2, capture.name)
        }
      }), 120_000)
  }
})
