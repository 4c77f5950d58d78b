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
import { random } from "./support/seeded.js"

const prose = (size: number, seed: number, lineBreak: string) => {
  const words = ["net", "sales", "units", "quarter", "Inventory", "rose", "fell", "by", "to", "the", "Q3", "per", "cent"]
  const next = random(seed)
  let text = ""
  while (text.length < size) {
    const word = next() % 7 === 0 ? String(next() % 100_000) : words[next() % words.length]!
    text += next() % 13 === 0 ? `${word}.${lineBreak}` : `${word} `
  }
  return text
}

/** Hostile captures: each with the quotes (at most 8, all diagnosed) asked of it. */
const captures = (): ReadonlyArray<{ readonly name: string; readonly text: string; readonly quotes: (text: string) => Array<string> }> => {
  const nearMisses = (seed: number) => (text: string) => {
    const next = random(seed)
    return Array.from({ length: 6 }, (_, k) => {
      const start = next() % (text.length - 80)
      const exact = text.slice(start, start + 40 + (next() % 40))
      return k % 3 === 0 ? `absent ${k} ${exact}` : k % 3 === 1 ? exact.replace(/\d/, "#") + " x" : exact.toUpperCase() + " not"
    })
  }
  const emptyish = ["\u00ad\u200b\u00adx", "ab", "\u200b\u200b q \u200b", "zz"]
  return [
    { name: "prose", text: prose(40_000, 1, "\n"), quotes: (t) => [...nearMisses(2)(t).slice(0, 5), ...emptyish.slice(0, 3)] },
    { name: "prose, CRLF", text: prose(30_000, 3, "\r\n"), quotes: (t) => [...nearMisses(4)(t), "net sales\r\nrose by 12 per cent absent", "\r\n\r\n\r\n\r\nx"] },
    {
      name: "a long run of one character",
      text: prose(5_000, 5, "\n") + "a".repeat(30_000) + prose(5_000, 6, "\n"),
      quotes: () => ["a".repeat(200) + "b", "b" + "a".repeat(60), "aaaaaaaaaaaaaaaaaaaaaaab aaaa", "a".repeat(999) + "c", "ab"]
    },
    {
      name: "astral characters",
      text: Array.from({ length: 3_000 }, (_, k) => ["\u{1F600}", "\u{10348}", "net ", "Sales ", "\u{1D400}x "][k % 5]!).join(""),
      quotes: () => ["\u{1F600}\u{10348}net sales \u{1D400}x \u{1F600}absent", "\u{10348}net Sales \u{1D400}y \u{1F600}\u{10348}", "\u{1F600}\u{1F600}"]
    },
    {
      name: "a large alphabet (hashed trigram ids)",
      text: Array.from({ length: 20_000 }, (_, k) => String.fromCharCode(0x4e00 + ((k * 7919) % 200))).join(""),
      quotes: (t) => [t.slice(1_000, 1_090) + "\u00e9", "\u00e9" + t.slice(5_000, 5_070), t.slice(9_000, 9_040).split("").reverse().join("")]
    }
  ]
}

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
