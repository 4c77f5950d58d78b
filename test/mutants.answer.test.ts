/**
 * Mutation-killing tests for src/answer/Answer.ts: sentence splitting and the
 * uncited rule at their edges, code-point offsets beyond the BMP (values counted
 * by hand), manifest binding, the size limits, and the verify step's per-claim
 * decisions with every field of the result and of each failure.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Either, Layer, Schema } from "effect"
import * as Answer from "../src/answer/Answer.js"
import { Answer as AnswerSchema, type BoundAnswer, limits } from "../src/answer/Records.js"
import type { PipelineConfig } from "../src/Config.js"
import { makeCaptureRecord, type SourceUrl } from "../src/Domain.js"
import {
  AnchorMismatch,
  AnchorUnsupported,
  AnswerRejected,
  InvalidAnswer,
  SnippetAbsent,
  SpanMismatch,
  StaleManifest,
  UncitedSentence
} from "../src/Errors.js"
import * as Manifest from "../src/Manifest.js"
import * as Policy from "../src/verify/Policy.js"
import * as MemoryStore from "../src/store/Memory.js"
import * as Verifier from "../src/verify/Verifier.js"
import { failureOf, left, right, spanNames } from "./mutants.support.js"
import { accessedAt } from "./support.js"

const A = "https://answers.northwind.test/a.txt" as SourceUrl
const E = "https://answers.northwind.test/emoji.txt" as SourceUrl
const MISSING = "https://answers.northwind.test/missing.txt" as SourceUrl

// Code units:  0..4 "Alpha", 6..9 "beta", 11..16 "gamma", 17 ".", 19..23 "Alpha", 25..28 "beta", 30..34 "delta".
const textA = "Alpha beta gamma. Alpha beta delta.\n"
// Code points: "😀" 0, " " 1, "one" 2..4, " " 5, "😀" 6, " " 7, "one" 8..10, " two" 11..14.
// UTF-16:      "😀" 0-1, " " 2, "one" 3..5, " " 6, "😀" 7-8, " " 9, "one" 10..12, " two" 13..16.
const textE = "😀 one 😀 one two"
const recordA = makeCaptureRecord({ source: A, text: textA, accessedAt, contentType: "text/plain" })
const recordE = makeCaptureRecord({ source: E, text: textE, accessedAt, contentType: "text/plain" })
const config = { sources: [A, E, MISSING], labels: ["unused"] } as unknown as PipelineConfig

const storeLayer = MemoryStore.layer({ records: [recordA, recordE] }).pipe(Layer.orDie)
const layerFor = (options: Answer.AnswersOptions) =>
  Answer.layer(options).pipe(
    Layer.provide(Verifier.layer),
    Layer.provide(Policy.layer(config)),
    Layer.provideMerge(storeLayer)
  )
const manifestOf = Manifest.make(config).pipe(Effect.provide(storeLayer))
const answersWith = (options: Answer.AnswersOptions) =>
  Effect.gen(function*() {
    return yield* Answer.Answers
  }).pipe(Effect.provide(layerFor(options)))

const OTHER = "b".repeat(64)
const answerJson = (fields: object) => JSON.stringify({ format: "citegate.answer/1", ...fields })

describe("sentences", () => {
  it("split after . ! ? followed by white space only; trimmed; blanks dropped", () => {
    assert.deepStrictEqual(Answer.sentences("One. Two! Three? Four"), ["One.", "Two!", "Three?", "Four"])
    assert.deepStrictEqual(Answer.sentences("a.b 3.5 e.g.x end."), ["a.b 3.5 e.g.x end."])
    assert.deepStrictEqual(Answer.sentences("Tab.\tNew.\nLast.  "), ["Tab.", "New.", "Last."])
    assert.deepStrictEqual(Answer.sentences("Wait... what?! Yes."), ["Wait...", "what?!", "Yes."])
    assert.deepStrictEqual(Answer.sentences("x. "), ["x."])
    assert.deepStrictEqual(Answer.sentences("  lead. "), ["lead."])
    assert.deepStrictEqual(Answer.sentences("   "), [])
    assert.deepStrictEqual(Answer.sentences(""), [])
    assert.deepStrictEqual(Answer.sentences("a,b;c d"), ["a,b;c d"])
  })
})

describe("looksFactual", () => {
  const a = (n: number) => "a".repeat(n)
  it("at least 20 code points, after trimming", () => {
    assert.isFalse(Answer.looksFactual(a(19)))
    assert.isTrue(Answer.looksFactual(a(20)))
    assert.isFalse(Answer.looksFactual(` ${a(19)} `))
    assert.strictEqual(Answer.minFactualLength, 20)
  })

  it("headings, lead-ins and questions are not factual; the marks elsewhere do not matter", () => {
    assert.isFalse(Answer.looksFactual(`#${a(45)}`))
    assert.isFalse(Answer.looksFactual(`${a(45)}:`))
    assert.isFalse(Answer.looksFactual(`${a(45)}?`))
    assert.isFalse(Answer.looksFactual(`  #${a(45)}  `))
    assert.isTrue(Answer.looksFactual(`${a(45)}#`))
    assert.isTrue(Answer.looksFactual(`:${a(45)}`))
    assert.isTrue(Answer.looksFactual(`?${a(45)}`))
    assert.isTrue(Answer.looksFactual(`${a(45)}.`))
  })

  it("code points at the edges of the high-surrogate range; lone low surrogates and U+E000 count as one each", () => {
    // U+10000 is \ud800\udc00, U+10FFFF is \udbff\udfff: 19 of them are 38 code units but 19 code points.
    assert.isFalse(Answer.looksFactual("\u{10000}".repeat(19)))
    assert.isTrue(Answer.looksFactual("\u{10000}".repeat(20)))
    assert.isFalse(Answer.looksFactual("\u{10FFFF}".repeat(19)))
    assert.isTrue(Answer.looksFactual("\u{10FFFF}".repeat(20)))
    assert.isTrue(Answer.looksFactual("\udc00".repeat(20)))
    assert.isTrue(Answer.looksFactual("\ue000".repeat(20)))
    assert.isFalse(Answer.looksFactual("\ue000".repeat(19)))
  })
})

describe("uncitedFindings", () => {
  it("each factual-looking sentence of each text, with the text's line", () => {
    const long1 = "The warehouse in Leeds held most of the stock in September."
    const long2 = "Online orders were the largest share of all the unit sales."
    const findings = Answer.uncitedFindings([
      { text: `Short one. ${long1} Was that the largest share of all the stock held?`, line: 7 },
      { text: long2, line: null }
    ])
    assert.deepStrictEqual(findings, [new UncitedSentence({ sentence: long1, line: 7 }), new UncitedSentence({ sentence: long2, line: null })])
    assert.deepStrictEqual(Answer.uncitedFindings([]), [])
  })
})

describe("offsets", () => {
  it("BMP text: the identity, undefined past the end", () => {
    const o = Answer.offsets("abc")
    assert.deepStrictEqual([0, 1, 2, 3, 4].map(o.toUtf16), [0, 1, 2, 3, undefined])
    assert.deepStrictEqual([0, 2, 3].map(o.toCodePoint), [0, 2, 3])
    assert.strictEqual(o.codePoints, 3)
    const empty = Answer.offsets("")
    assert.deepStrictEqual([empty.toUtf16(0), empty.toUtf16(1), empty.codePoints], [0, undefined, 0])
  })

  it("astral text: hand-counted positions both ways", () => {
    // UTF-16: a 0, 😀 1-2, b 3, 😀 4-5, 😀 6-7, c 8; code points: a 0, 😀 1, b 2, 😀 3, 😀 4, c 5.
    const o = Answer.offsets("a😀b😀😀c")
    assert.deepStrictEqual([0, 1, 2, 3, 4, 5, 6, 7].map(o.toUtf16), [0, 1, 3, 4, 6, 8, 9, undefined])
    assert.deepStrictEqual([0, 1, 3, 4, 6, 8, 9].map(o.toCodePoint), [0, 1, 2, 3, 4, 5, 6])
    assert.strictEqual(o.codePoints, 6)
  })

  it("the first and last astral code points (high surrogates \\ud800 and \\udbff)", () => {
    // UTF-16: U+10000 0-1, x 2, U+10FFFF 3-4, y 5; code points: 0, x 1, 2, y 3.
    const o = Answer.offsets("\u{10000}x\u{10FFFF}y")
    assert.deepStrictEqual([0, 1, 2, 3, 4, 5].map(o.toUtf16), [0, 2, 3, 5, 6, undefined])
    assert.deepStrictEqual([0, 2, 3, 5, 6].map(o.toCodePoint), [0, 1, 2, 3, 4])
    assert.strictEqual(o.codePoints, 4)
    const last = Answer.offsets("\u{10FFFF}")
    assert.deepStrictEqual([last.toUtf16(0), last.toUtf16(1), last.toUtf16(2), last.codePoints], [0, 2, undefined, 1])
  })
})

describe("offsets beside characters above the surrogates", () => {
  it("U+E000 and U+FFFD are single units, also in a text beyond the BMP", () => {
    // UTF-16: U+1F600 0-1, U+E000 2, U+FFFD 3, x 4; code points: 0, 1, 2, x 3.
    const o = Answer.offsets("\u{1F600}\ue000\ufffdx")
    assert.deepStrictEqual([0, 1, 2, 3, 4, 5].map(o.toUtf16), [0, 2, 3, 4, 5, undefined])
    assert.deepStrictEqual([0, 2, 3, 4, 5].map(o.toCodePoint), [0, 1, 2, 3, 4])
    assert.strictEqual(o.codePoints, 4)
  })
})

describe("checkManifest and resolveNumber", () => {
  it.effect("named digests: none is stale (null), every one given must be this run's", () =>
    Effect.gen(function*() {
      const manifest = yield* manifestOf
      const current = manifest.digest
      assert.deepStrictEqual(left(Answer.checkManifest(manifest, [])), new StaleManifest({ named: null, current }))
      assert.deepStrictEqual(left(Answer.checkManifest(manifest, [undefined, undefined])), new StaleManifest({ named: null, current }))
      assert.strictEqual(right(Answer.checkManifest(manifest, [current])), current)
      assert.strictEqual(right(Answer.checkManifest(manifest, [undefined, current])), current)
      assert.strictEqual(right(Answer.checkManifest(manifest, [current, current])), current)
      assert.deepStrictEqual(left(Answer.checkManifest(manifest, [current, OTHER])), new StaleManifest({ named: OTHER, current }))
      assert.deepStrictEqual(left(Answer.checkManifest(manifest, [OTHER, undefined])), new StaleManifest({ named: OTHER, current }))
    }))

  it.effect("a number: the captured source and digest, or why not, in words", () =>
    Effect.gen(function*() {
      const manifest = yield* manifestOf
      assert.deepStrictEqual(right(Answer.resolveNumber(manifest, 1)), { source: A, captureSha256: recordA.sha256 })
      assert.deepStrictEqual(right(Answer.resolveNumber(manifest, 2)), { source: E, captureSha256: recordE.sha256 })
      assert.strictEqual(left(Answer.resolveNumber(manifest, 0)), "source 0 is not in the manifest (sources are numbered 1 to 3)")
      assert.strictEqual(left(Answer.resolveNumber(manifest, 4)), "source 4 is not in the manifest (sources are numbered 1 to 3)")
      assert.strictEqual(
        left(Answer.resolveNumber(manifest, 3)),
        `source 3 (${MISSING}) has no usable capture in this run (MissingCapture); it cannot be cited`
      )
    }))
})

describe("bind and fromJson", () => {
  it.effect("citations by URL without a named manifest: bound as given, manifest null, uncited kept with line null", () =>
    Effect.gen(function*() {
      const manifest = yield* manifestOf
      const citation = { source: A, captureSha256: recordA.sha256, quote: "beta gamma" }
      const bound = right(Answer.fromJson(
        answerJson({ claims: [{ id: "c1", text: "Beta.", citations: [citation] }], uncited: ["One.", "Two."] }),
        manifest
      ))
      assert.deepStrictEqual(bound, {
        manifest: null,
        claims: [{ id: "c1", text: "Beta.", citations: [citation] }],
        uncited: [{ text: "One.", line: null }, { text: "Two.", line: null }]
      })
      // No uncited key: none.
      const bare = right(Answer.fromJson(answerJson({ claims: [{ id: "c1", text: "Beta.", citations: [citation] }] }), manifest))
      assert.deepStrictEqual(bare.uncited, [])
      // Named by the caller only: checked and kept.
      const named = right(Answer.fromJson(
        answerJson({ claims: [{ id: "c1", text: "Beta.", citations: [citation] }] }),
        manifest,
        { manifestDigest: manifest.digest }
      ))
      assert.strictEqual(named.manifest, manifest.digest)
      // Named by the answer, wrongly, though nothing is numbered: stale.
      const stale = left(Answer.fromJson(answerJson({ manifest: OTHER, claims: [{ id: "c1", text: "Beta.", citations: [citation] }] }), manifest))
      assert.deepStrictEqual(stale, new StaleManifest({ named: OTHER, current: manifest.digest }))
      const staleByCaller = left(Answer.fromJson(
        answerJson({ claims: [{ id: "c1", text: "Beta.", citations: [citation] }] }),
        manifest,
        { manifestDigest: OTHER }
      ))
      assert.deepStrictEqual(staleByCaller, new StaleManifest({ named: OTHER, current: manifest.digest }))
    }))

  it.effect("numbered citations: bound with every location field kept; every bad number an issue at its path", () =>
    Effect.gen(function*() {
      const manifest = yield* manifestOf
      const bound = right(Answer.fromJson(
        answerJson({
          manifest: manifest.digest,
          claims: [
            { id: "c1", text: "Beta.", citations: [{ source: 1, quote: "beta", chars: { start: 6, end: 10 }, prefix: "Alpha " }] },
            { id: "c2", text: "One.", citations: [{ source: E, captureSha256: recordE.sha256, quote: "one" }, { source: 2, quote: "one" }] }
          ]
        }),
        manifest
      ))
      assert.deepStrictEqual(bound, {
        manifest: manifest.digest,
        claims: [
          { id: "c1", text: "Beta.", citations: [{ source: A, captureSha256: recordA.sha256, quote: "beta", chars: { start: 6, end: 10 }, prefix: "Alpha " }] },
          { id: "c2", text: "One.", citations: [{ source: E, captureSha256: recordE.sha256, quote: "one" }, { source: E, captureSha256: recordE.sha256, quote: "one" }] }
        ],
        uncited: []
      })
      const invalid = left(Answer.fromJson(
        answerJson({
          manifest: manifest.digest,
          claims: [
            { id: "c1", text: "Beta.", citations: [{ source: 1, quote: "beta" }, { source: 3, quote: "x" }] },
            { id: "c2", text: "One.", citations: [{ source: 9, quote: "one" }] }
          ]
        }),
        manifest
      ))
      assert.deepStrictEqual(invalid, new InvalidAnswer({
        issues: [
          { path: ["claims", 0, "citations", 1, "source"], message: `source 3 (${MISSING}) has no usable capture in this run (MissingCapture); it cannot be cited` },
          { path: ["claims", 1, "citations", 0, "source"], message: "source 9 is not in the manifest (sources are numbered 1 to 3)" }
        ]
      }))
    }))

  it.effect("the size limit: exactly maxChars is read, one more is refused before decoding", () =>
    Effect.gen(function*() {
      const manifest = yield* manifestOf
      const json = answerJson({ claims: [{ id: "c1", text: "Beta.", citations: [{ source: A, captureSha256: recordA.sha256, quote: "beta" }] }] })
      const padded = json + " ".repeat(limits.maxChars - json.length)
      assert.strictEqual(padded.length, 16 * 1024 * 1024)
      assert.strictEqual(right(Answer.fromJson(padded, manifest)).claims.length, 1)
      assert.deepStrictEqual(
        left(Answer.fromJson(padded + " ", manifest)),
        new InvalidAnswer({ issues: [{ path: [], message: "is longer than 16777216 characters" }] })
      )
    }))

  it.effect("arrays longer than the claim limit are refused by the structural pass (uncited has no other bound)", () =>
    Effect.gen(function*() {
      const manifest = yield* manifestOf
      const claims = [{ id: "c1", text: "Beta.", citations: [{ source: A, captureSha256: recordA.sha256, quote: "beta" }] }]
      const atLimit = right(Answer.fromJson(answerJson({ claims, uncited: Array.from({ length: limits.maxClaims }, () => "x") }), manifest))
      assert.strictEqual(atLimit.uncited.length, 10_000)
      const over = left(Answer.fromJson(answerJson({ claims, uncited: Array.from({ length: limits.maxClaims + 1 }, () => "x") }), manifest))
      assert.instanceOf(over, InvalidAnswer)
      assert.deepStrictEqual(over.issues.map((i) => i.path), [["uncited"]])
      assert.match(over.issues[0]!.message, /10000/)
    }))
})

const cite = (source: string, quote: string, extra: object = {}) => ({
  source,
  captureSha256: source === A ? recordA.sha256 : recordE.sha256,
  quote,
  ...extra
})
const bound = (claims: BoundAnswer["claims"], uncited: BoundAnswer["uncited"] = [], manifest: string | null = null): BoundAnswer => ({
  manifest: manifest as BoundAnswer["manifest"],
  claims,
  uncited
})

describe("Answers.verify", () => {
  it.effect("a grounded answer: every field of the result; only the captures of verified citations", () =>
    Effect.gen(function*() {
      const answers = yield* answersWith({ mode: "drop", uncited: "report" })
      const uncitedLong = "This sentence has no citation and is long enough to be flagged."
      const { answer, captures } = yield* answers.verify(bound([
        { id: "c1", text: "Gamma.", citations: [cite(A, "beta gamma", { chars: { start: 6, end: 16 } })] },
        // E's quote is found, but the page anchor retracts it: E is not among the captures.
        { id: "c2", text: "One.", citations: [cite(A, "delta"), cite(E, "one", { page: { start: 1, end: 2 } })] }
      ], [{ text: uncitedLong, line: 4 }], OTHER))
      assert.strictEqual(answer.format, "citegate.verified-answer/1")
      assert.strictEqual(answer.outcome, "grounded")
      assert.strictEqual(answer.mode, "drop")
      assert.strictEqual(answer.manifest, OTHER)
      assert.strictEqual(answer.proves, "provenance-only")
      assert.strictEqual(answer.semanticReview, "not-performed")
      assert.deepStrictEqual(answer.summary, { claims: 2, claimsGrounded: 2, claimsRemoved: 0, citations: 3, citationsVerified: 2 })
      assert.deepStrictEqual(answer.uncited, [new UncitedSentence({ sentence: uncitedLong, line: 4 })])
      assert.deepStrictEqual(answer.removed, [])
      assert.deepStrictEqual(answer.claims.map((c) => [c.index, c.id, c.text, c.citations.map((v) => [v.index, v.citation.quote])]), [
        [0, "c1", "Gamma.", [[0, "beta gamma"]]],
        [1, "c2", "One.", [[0, "delta"]]]
      ])
      assert.deepStrictEqual(answer.claims[0]!.citations[0]!.evidence.span, { start: 6, end: 16 })
      assert.deepStrictEqual(answer.claims[0]!.retracted, [])
      assert.deepStrictEqual(answer.claims[1]!.retracted, [{
        index: 1,
        citation: cite(E, "one", { page: { start: 1, end: 2 } }),
        // E is plain text: no pages, so the page cannot hold (the Verifier's AnchorMismatch, as for a report).
        error: new AnchorMismatch({ source: E, captureSha256: recordE.sha256, snippet: "one", anchor: "page 1", reason: "no-such-anchor" })
      }])
      assert.deepStrictEqual([...captures.keys()], [A])
      assert.deepStrictEqual(captures.get(A), recordA)
    }))

  it.effect("spans in code points: right, too long, past the end, and with an astral character before", () =>
    Effect.gen(function*() {
      const answers = yield* answersWith({ mode: "drop", uncited: "report" })
      const { answer } = yield* answers.verify(bound([
        // "one" first at code point 2, again at 8 (UTF-16 10): the second occurrence, named right.
        { id: "ok", text: "One.", citations: [cite(E, "one", { chars: { start: 8, end: 11 } }), cite(E, "one", { chars: { start: 2, end: 5 } })] },
        // The right start, one code point too many: the quote is there, the span is not its span.
        { id: "long", text: "One.", citations: [cite(E, "one", { chars: { start: 8, end: 12 } })] },
        // Past the end of the text.
        { id: "past", text: "One.", citations: [cite(E, "one", { chars: { start: 100, end: 103 } })] },
        // Counted in UTF-16 units (10): a mismatch; found first at code point 2.
        { id: "utf16", text: "One.", citations: [cite(E, "one", { chars: { start: 10, end: 13 } })] },
        // The end inside the text, the start past it.
        { id: "startPast", text: "Two.", citations: [cite(E, "two", { chars: { start: 20, end: 14 } })] }
      ]))
      assert.deepStrictEqual(answer.claims.map((c) => c.id), ["ok"])
      assert.deepStrictEqual(answer.claims[0]!.citations.map((c) => c.evidence.span), [{ start: 3, end: 6 }, { start: 3, end: 6 }])
      const mismatch = (claimedStart: number, claimedEnd: number, quote = "one", foundStart = 2, occurrences = 2) =>
        new SpanMismatch({ source: E, captureSha256: recordE.sha256, quote, claimedStart, claimedEnd, foundStart, occurrences })
      assert.deepStrictEqual(answer.removed.map((r) => [r.index, r.id, r.text, r.reasons.map((x) => x.error)]), [
        [1, "long", "One.", [mismatch(8, 12)]],
        [2, "past", "One.", [mismatch(100, 103)]],
        [3, "utf16", "One.", [mismatch(10, 13)]],
        [4, "startPast", "Two.", [mismatch(20, 14, "two", 12, 1)]]
      ])
      assert.deepStrictEqual(answer.summary, { claims: 5, claimsGrounded: 1, claimsRemoved: 4, citations: 6, citationsVerified: 2 })
      assert.strictEqual(answer.outcome, "grounded")
    }))

  it.effect("every failure of a citation, anchors first; heading and content-block values; a claim without citations is neither kept nor removed", () =>
    Effect.gen(function*() {
      const answers = yield* answersWith({ mode: "drop", uncited: "report" })
      const withAll = cite(A, "absent words", { heading: ["Intro"], blocks: { start: 0, end: 2 }, page: { start: 3, end: 5 } })
      const { answer, captures } = yield* answers.verify(bound([
        { id: "empty", text: "Nothing.", citations: [] },
        { id: "gone", text: "Gone.", citations: [withAll] }
      ]))
      assert.strictEqual(answer.outcome, "no_evidence")
      assert.deepStrictEqual(answer.claims, [])
      assert.deepStrictEqual(answer.removed, [{
        index: 1,
        id: "gone",
        text: "Gone.",
        reasons: [
          // Pages and headings are the Verifier's: a quote that is absent fails as absent, before any anchor.
          { index: 0, citation: withAll, error: new AnchorUnsupported({ source: A, anchor: "content-block", value: "0–2" }) },
          { index: 0, citation: withAll, error: new SnippetAbsent({ source: A, captureSha256: recordA.sha256, snippet: "absent words" }) }
        ]
      }])
      assert.deepStrictEqual(answer.summary, { claims: 2, claimsGrounded: 0, claimsRemoved: 1, citations: 1, citationsVerified: 0 })
      assert.strictEqual(captures.size, 0)
    }))

  it.effect("reject mode: the failures with claim and citation indices; uncited findings listed only under uncited: reject", () =>
    Effect.gen(function*() {
      const uncitedLong = "This sentence has no citation and is long enough to be flagged."
      const answer = bound([
        { id: "c1", text: "Gamma.", citations: [cite(A, "gamma"), cite(A, "omega")] },
        { id: "c2", text: "Delta.", citations: [cite(A, "delta", { heading: ["H"] })] }
      ], [{ text: uncitedLong, line: 2 }])
      const expected = [
        { claimIndex: 0, claimId: "c1", citationIndex: 1, error: new SnippetAbsent({ source: A, captureSha256: recordA.sha256, snippet: "omega" }) },
        {
          claimIndex: 1,
          claimId: "c2",
          citationIndex: 0,
          error: new AnchorMismatch({ source: A, captureSha256: recordA.sha256, snippet: "delta", anchor: "heading H", reason: "no-such-anchor" })
        }
      ]
      const fields = (error: unknown) => {
        assert.instanceOf(error, AnswerRejected)
        return { citations: (error as AnswerRejected).citations, uncited: (error as AnswerRejected).uncited }
      }
      const flagged = [new UncitedSentence({ sentence: uncitedLong, line: 2 })]
      const reported = yield* failureOf((yield* answersWith({ mode: "reject", uncited: "report" })).verify(answer))
      assert.deepStrictEqual(fields(reported), { citations: expected, uncited: [] })
      const both = yield* failureOf((yield* answersWith({ mode: "reject", uncited: "reject" })).verify(answer))
      assert.deepStrictEqual(fields(both), { citations: expected, uncited: flagged })
      // Drop mode, uncited reject: the citations' failures are listed too.
      const dropped = yield* failureOf((yield* answersWith({ mode: "drop", uncited: "reject" })).verify(answer))
      assert.deepStrictEqual(fields(dropped), { citations: expected, uncited: flagged })
    }))

  it.effect("nothing to reject: reject mode without failures, uncited: reject without factual prose", () =>
    Effect.gen(function*() {
      const answer = bound([{ id: "c1", text: "Gamma.", citations: [cite(A, "gamma")] }], [{ text: "Short prose.", line: 1 }])
      const strict = yield* (yield* answersWith({ mode: "reject", uncited: "reject" })).verify(answer)
      assert.strictEqual(strict.answer.outcome, "grounded")
      assert.strictEqual(strict.answer.mode, "reject")
      assert.deepStrictEqual(strict.answer.uncited, [])
      assert.deepStrictEqual(strict.answer.summary, { claims: 1, claimsGrounded: 1, claimsRemoved: 0, citations: 1, citationsVerified: 1 })
    }))
})

describe("Answers.verify under verify.matching normalized/2", () => {
  const N = "https://answers.northwind.test/normalized.txt" as SourceUrl
  // UTF-16: "😀" 0-1, " " 2, "Revenue grew 12%" 3..18 (end 19); code points: 2..17 (end 18).
  const recordN = makeCaptureRecord({ source: N, text: "😀 Revenue grew 12% in Q3.\n", accessedAt, contentType: "text/plain" })
  const normalizedConfig = { sources: [N], labels: ["unused"], verify: { matching: "normalized/2" } } as unknown as PipelineConfig
  const normalizedLayer = Answer.layer({ mode: "drop", uncited: "report" }).pipe(
    Layer.provide(Verifier.layer),
    Layer.provide(Policy.layer(normalizedConfig)),
    Layer.provideMerge(MemoryStore.layer({ records: [recordN] }).pipe(Layer.orDie))
  )
  const quote = "revenue GREW 12%"

  it.effect("a normalised match is accepted at its raw span only: both ends must be the span's", () =>
    Effect.gen(function*() {
      const answers = yield* Answer.Answers
      const at = (start: number, end: number) => ({ source: N, captureSha256: recordN.sha256, quote, chars: { start, end } })
      const { answer } = yield* answers.verify(bound([
        { id: "ok", text: "Grew.", citations: [at(2, 18)] },
        { id: "start", text: "Grew.", citations: [at(3, 18)] },
        { id: "end", text: "Grew.", citations: [at(2, 17)] }
      ]))
      assert.deepStrictEqual(answer.claims.map((c) => [c.id, c.citations[0]!.evidence.method, c.citations[0]!.evidence.span]), [
        ["ok", "normalized/2", { start: 3, end: 19 }]
      ])
      const mismatch = (claimedStart: number, claimedEnd: number) =>
        new SpanMismatch({ source: N, captureSha256: recordN.sha256, quote, claimedStart, claimedEnd, foundStart: 2, occurrences: 1 })
      assert.deepStrictEqual(answer.removed.map((r) => [r.id, r.reasons.map((x) => x.error)]), [
        ["start", [mismatch(3, 18)]],
        ["end", [mismatch(2, 17)]]
      ])
    }).pipe(Effect.provide(normalizedLayer)))
})

describe("mixed citations and the trace", () => {
  it.effect("one numbered citation anywhere (another claim, or beside a URL citation) requires the manifest", () =>
    Effect.gen(function*() {
      const manifest = yield* manifestOf
      const byUrl = { source: A, captureSha256: recordA.sha256, quote: "beta" }
      const unnamed = new StaleManifest({ named: null, current: manifest.digest })
      const otherClaim = answerJson({
        claims: [
          { id: "c1", text: "Beta.", citations: [byUrl] },
          { id: "c2", text: "Beta.", citations: [{ source: 1, quote: "beta" }] }
        ]
      })
      assert.deepStrictEqual(left(Answer.fromJson(otherClaim, manifest)), unnamed)
      const sameClaim = answerJson({ claims: [{ id: "c1", text: "Beta.", citations: [byUrl, { source: 1, quote: "beta" }] }] })
      assert.deepStrictEqual(left(Answer.fromJson(sameClaim, manifest)), unnamed)
    }))

  it.effect("verify runs in a span named Answers.verify", () =>
    Effect.gen(function*() {
      const answers = yield* answersWith({ mode: "drop", uncited: "report" })
      const names = yield* spanNames(answers.verify(bound([{ id: "c1", text: "Gamma.", citations: [cite(A, "gamma")] }])))
      assert.include(names, "Answers.verify")
    }))
})

describe("citegate.answer/1 records (Records.ts)", () => {
  it.effect("ranges are non-empty (end exclusive); at most 100 citations a claim; unknown keys at every level refused", () =>
    Effect.gen(function*() {
      const manifest = yield* manifestOf
      const claim = (citations: ReadonlyArray<object>, extra: object = {}) => ({ id: "c1", text: "Beta.", citations, ...extra })
      const byUrl = (extra: object = {}) => ({ source: A, captureSha256: recordA.sha256, quote: "beta", ...extra })
      const decodes = (fields: object) => Either.isRight(Answer.fromJson(answerJson(fields), manifest))
      const refusedAt = (fields: object) => invalidPaths(Answer.fromJson(answerJson(fields), manifest))
      assert.isTrue(decodes({ claims: [claim([byUrl({ chars: { start: 6, end: 7 }, page: { start: 1, end: 2 }, blocks: { start: 0, end: 1 } })])] }))
      for (const key of ["chars", "page", "blocks"]) {
        const start = key === "page" ? 1 : 0
        assert.isFalse(decodes({ claims: [claim([byUrl({ [key]: { start, end: start } })])] }), `${key} empty`)
      }
      assert.isFalse(decodes({ claims: [claim([byUrl({ page: { start: 0, end: 1 } })])] }), "pages from 1")
      assert.isTrue(decodes({ claims: [claim(Array.from({ length: 100 }, () => byUrl()))] }))
      assert.deepStrictEqual(refusedAt({ claims: [claim(Array.from({ length: 101 }, () => byUrl()))] }), [["claims", 0, "citations"]])
      assert.deepStrictEqual(refusedAt({ claims: [claim([byUrl()], { note: 1 })] }), [["claims", 0, "note"]])
      assert.deepStrictEqual(refusedAt({ claims: [claim([byUrl()])], note: 1 }), [["note"]])
      assert.deepStrictEqual(refusedAt({ claims: [claim([byUrl()], { id: "x".repeat(201) })] }), [["claims", 0, "id"]])
      assert.isTrue(decodes({ claims: [claim([byUrl()], { id: "x".repeat(200) })] }))
    }))
})

const invalidPaths = <A>(either: Either.Either<A, unknown>) => {
  const error = left(either)
  assert.instanceOf(error, InvalidAnswer)
  return [...new Set((error as InvalidAnswer).issues.map((i) => JSON.stringify(i.path)))].map((p) => JSON.parse(p))
}

describe("the exported answer Schema", () => {
  it("is strict on its own, for callers that decode without options", () => {
    const claim = { id: "c1", text: "Beta.", citations: [{ source: 1, quote: "beta" }] }
    const decode = Schema.decodeUnknownEither(AnswerSchema)
    assert.isTrue(Either.isRight(decode({ format: "citegate.answer/1", claims: [claim] })))
    assert.isTrue(Either.isLeft(decode({ format: "citegate.answer/1", claims: [claim], note: 1 })))
    assert.isTrue(Either.isLeft(decode({ format: "citegate.answer/1", claims: [{ ...claim, note: 1 }] })))
    assert.isTrue(Either.isLeft(decode({ format: "citegate.answer/1", claims: [{ ...claim, citations: [{ source: 1, quote: "beta", note: 1 }] }] })))
  })
})
