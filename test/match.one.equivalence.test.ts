/**
 * A capture cited once without context is matched without the general loop's lists
 * (verify/Match.ts `matchNow`, `pickOne`). Against the general path (`matchCapture`: the keys of
 * `exactKeys` and `pickExact`), over seeded v1 and v2 captures (pages and headings, ASCII and
 * surrogate pairs) and single citations of every outcome: found once, found twice (accepted and
 * flagged, or refused as ambiguous), absent, found only after normalisation, on the named page or
 * heading, outside it, or naming one that does not exist; under exact and normalised matching and
 * both ambiguity rules. The matches, the failures (word for word) and the absent citations must be
 * the same, and every outcome must occur.
 *
 * With a `direct` (verify/Verifier.ts: `Evidence.settleOne`), a capture's one citation found as it
 * stands gets its evidence written at once: the results and failures after `Evidence.settle` (and
 * `Evidence.failed`) must be those of the general path, word for word and key for key, under every
 * screen (`verify.boundaries`, `verify.hidden`), and both the direct path and its refusals must occur.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import type { CaptureRecord, HeadingAnchor, PageAnchor } from "../src/Domain.js"
import type { PolicyShape } from "../src/verify/Policy.js"
import type { CitationFailure, CitationInput, CitationResult } from "../src/verify/Records.js"
import * as Evidence from "../src/verify/Evidence.js"
import * as Match from "../src/verify/Match.js"
import * as Search from "../src/verify/Search.js"
import { flat, random } from "./searchSupport.js"

const words = ["net", "sales", "rose", "4%", "to", "1,180", "units", "in", "Q3", "\ud83d\ude00", "north", "région", "Net", "SALES"]

const textOf = (next: () => number): string => {
  const parts: Array<string> = []
  const count = 5 + (next() % 120)
  for (let k = 0; k < count; k++) parts.push(words[next() % words.length]!, next() % 9 === 0 ? ".\n" : " ")
  return flat(parts.join(""))
}

/** Pages and headings cut at seeded points of the text (pages contiguous, as extraction writes them). */
const anchorsOf = (text: string, next: () => number): { pages: Array<PageAnchor>; headings: Array<HeadingAnchor> } => {
  const cuts = [0, ...Array.from({ length: next() % 4 }, () => next() % (text.length + 1)), text.length].sort((a, b) => a - b)
  const pages = cuts.slice(0, -1).map((start, i) => ({ number: i + 1, start, end: cuts[i + 1]! }))
  const headings = Array.from({ length: next() % 3 }, (_, i): HeadingAnchor => {
    const start = next() % (text.length + 1)
    const end = start + (next() % (text.length - start + 1))
    const path = i === 0 ? ["Results"] : ["Results", `Q${i}`]
    return { level: path.length, text: path[path.length - 1]!, path, start, end }
  })
  return { pages, headings }
}

const recordOf = (text: string, next: () => number): CaptureRecord => {
  const base = { source: "https://one.example.com/a", sha256: "a".repeat(64), accessedAt: "2026-12-03T00:00:00Z" }
  if (next() % 2 === 0) {
    return { ...base, format: "citegate.capture/1", contentType: "text/plain", byteLength: Buffer.byteLength(text), text } as CaptureRecord
  }
  return {
    ...base,
    format: "citegate.capture/2",
    extraction: "pdf/1",
    body: { sha256: "b".repeat(64), byteLength: 10, contentType: "application/pdf" },
    ...anchorsOf(text, next),
    text
  } as unknown as CaptureRecord
}

const citationOf = (text: string, next: () => number): CitationInput => {
  const from = next() % Math.max(1, text.length)
  const length = 1 + (next() % 24)
  let snippet = text.slice(from, from + length) || "net"
  switch (next() % 6) {
    case 0:
      snippet = "absent from every capture"
      break
    case 1:
      snippet = words[next() % words.length]!
      break
    case 2:
      snippet = snippet.toUpperCase().replace(/ /g, "  ")
      break
    default:
      break
  }
  const anchor = next() % 5
  return {
    source: "https://one.example.com/a",
    captureSha256: "a".repeat(64),
    snippet,
    ...(anchor === 1 ? { page: 1 + (next() % 5) } : {}),
    ...(anchor === 2 ? { heading: next() % 3 === 0 ? ["Nowhere"] : ["Results"] } : {}),
    ...(anchor === 3 ? { pages: { start: 1 + (next() % 3), end: 2 + (next() % 4) } } : {})
  }
}

const policyOf = (matching: PolicyShape["matching"], ambiguous: PolicyShape["ambiguous"]): PolicyShape => ({
  sources: new Set(),
  labels: new Set(),
  maxFacts: 100,
  mode: "drop",
  timeoutMs: 10_000,
  matching,
  ambiguous
})

/** The matches of one capture and the failures they pushed, comparable as JSON (errors with their messages). */
const run = (matched: Match.CaptureMatches, failures: ReadonlyArray<ReadonlyArray<CitationFailure>>) =>
  JSON.stringify({ matched, failures }, (_, value) => value instanceof Error ? { json: { ...value }, message: value.message } : value)

describe("a capture cited once: the general loop's matches", () => {
  it.effect("seeded captures and single citations, under four policies", () =>
    Effect.gen(function*() {
      // The high bits: the low bits of a power-of-two linear congruential generator cycle shortly.
      const next = random(2026_12_03)
      const policies = [policyOf("exact", "accept"), policyOf("exact", "reject"), policyOf("normalized/2", "accept"), policyOf("normalized/2", "reject")]
      const seen = new Set<string>()
      for (let n = 0; n < 3_000; n++) {
        const text = textOf(next)
        const record = recordOf(text, next)
        const policy = policies[n % policies.length]!
        // The citation at a seeded index among others that are not searched (as in a report).
        const before = next() % 3
        const citation = citationOf(text, next)
        const citations = [...Array.from({ length: before }, () => citationOf(text, next)), citation]
        const indices = [before]
        const oneFailures = citations.map((): Array<CitationFailure> => [])
        const generalFailures = citations.map((): Array<CitationFailure> => [])
        const now = Match.matchNow({ policy, search: Search.sliced(), record, citations, indices, failures: oneFailures })
        assert.isDefined(now) // no `direct` given: never settled here
        const one = Effect.isEffect(now) ? yield* now : now!
        const general = yield* Match.matchCapture({ policy, search: Search.sliced(), record, citations, indices, failures: generalFailures })
        assert.strictEqual(run(one, oneFailures), run(general, generalFailures), `${JSON.stringify(citation)} in ${JSON.stringify(record)}`)
        const failure = generalFailures[before]![0]
        seen.add(
          failure !== undefined
            ? `${failure._tag}${failure._tag === "AnchorMismatch" ? `:${failure.reason}` : ""}`
            : general.exact.matched.length > 0
            ? `exact${general.exact.matched[0]!.ambiguous ? ":ambiguous" : ""}${citation.page ?? citation.pages ?? citation.heading ? ":anchored" : ""}`
            : general.normal.matched.length > 0
            ? "normalized"
            : "absent"
        )
      }
      for (const outcome of ["exact", "exact:ambiguous", "exact:anchored", "AmbiguousSnippet", "AnchorMismatch:outside", "AnchorMismatch:no-such-anchor", "normalized", "absent"]) {
        assert.isTrue(seen.has(outcome), `${outcome} never occurred: ${[...seen].join(", ")}`)
      }
    }))
})

describe("a capture cited once, its evidence written at once: the general path's results", () => {
  it.effect("seeded captures and single citations, under every ambiguity rule, matching and screen", () =>
    Effect.gen(function*() {
      const next = random(2026_12_04)
      const policies: Array<PolicyShape> = []
      for (const matching of ["exact", "normalized/2"] as const) {
        for (const ambiguous of ["accept", "reject"] as const) {
          for (const screens of [{}, { boundaries: "tokens" as const }, { boundaries: "substring" as const, hidden: "reject" as const }, { hidden: "mark" as const }]) {
            policies.push({ ...policyOf(matching, ambiguous), ...screens })
          }
        }
      }
      let taken = 0
      let declined = 0
      for (let n = 0; n < 4_000; n++) {
        const text = textOf(next)
        const record = recordOf(text, next)
        const policy = policies[n % policies.length]!
        const before = next() % 3
        const citations = [...Array.from({ length: before }, () => citationOf(text, next)), citationOf(text, next)]
        const indices = [before]
        const comparable = (results: ReadonlyArray<CitationResult>, failures: ReadonlyArray<ReadonlyArray<CitationFailure>>) =>
          JSON.stringify({ results, failures }, (_, value) => value instanceof Error ? { json: { ...value }, message: value.message } : value)
        const fromGeneral = yield* Effect.gen(function*() {
          const failures = citations.map((): Array<CitationFailure> => [])
          const results = Evidence.pending(citations.length)
          const matches = yield* Match.matchCapture({ policy, search: Search.sliced(), record, citations, indices, failures })
          Evidence.settle(policy, record, citations, matches, Evidence.diagnoser(policy), failures, results, undefined)
          return comparable(Evidence.failed(results, failures), failures)
        })
        let took: boolean | undefined
        const fromDirect = yield* Effect.gen(function*() {
          const failures = citations.map((): Array<CitationFailure> => [])
          // As verify/Verifier.ts makes and passes them.
          const results = Evidence.pending(citations.length)
          const direct: Match.Direct = (c, i, span, occurrences, ambiguous) =>
            took = Evidence.settleOne(c.policy, c.record, i, span, occurrences, ambiguous, results, undefined)
          const capture = { policy, search: Search.sliced(), record, citations, indices, failures }
          const now = Match.matchNow(capture, direct)
          const matches = now === undefined || !Effect.isEffect(now) ? now : yield* now
          if (matches !== undefined) Evidence.settle(policy, record, citations, matches, Evidence.diagnoser(policy), failures, results, undefined)
          return comparable(Evidence.failed(results, failures), failures)
        })
        assert.strictEqual(fromDirect, fromGeneral, `${JSON.stringify(policy)}: ${JSON.stringify(citations[before])} in ${JSON.stringify(record)}`)
        if (took === true) taken++
        else if (took === false) declined++
      }
      assert.isAbove(taken, 300, `taken ${taken}, declined ${declined}`)
      assert.isAbove(declined, 300)
    }))
})
