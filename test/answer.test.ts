import { assert, describe, it } from "@effect/vitest"
import { Effect, Either, Layer, Schema } from "effect"
import * as Answer from "../src/answer/Answer.js"
import * as Anthropic from "../src/answer/Anthropic.js"
import * as Evi1 from "../src/answer/Evi1.js"
import { type BoundAnswer, limits } from "../src/answer/Records.js"
import * as AnswerRender from "../src/answer/Render.js"
import { decodeOptions, makeCaptureRecord } from "../src/Domain.js"
import {
  AnchorMismatch,
  AnchorUnsupported,
  AnswerRejected,
  DigestMismatch,
  type Evi1Invalid,
  InvalidAnswer,
  NotApproved,
  SnippetAbsent,
  SpanMismatch,
  StaleManifest,
  UncitedSentence,
  VerificationTimeout
} from "../src/Errors.js"
import * as Manifest from "../src/Manifest.js"
import * as Policy from "../src/verify/Policy.js"
import * as MemoryStore from "../src/store/Memory.js"
import * as Verifier from "../src/verify/Verifier.js"
import { config, emojiRecord } from "./answerSupport.js"
import { accessedAt, INVENTORY, inventoryRecord, SALES, salesRecord } from "./support.js"

const layerFor = (options: Answer.AnswersOptions, records = [salesRecord, inventoryRecord, emojiRecord]) =>
  Answer.layer(options).pipe(
    Layer.provide(Verifier.layer),
    Layer.provide(Policy.layer(config)),
    Layer.provideMerge(MemoryStore.layer({ records }).pipe(Layer.orDie))
  )

/** The run's manifest and the Answers service under the given options. */
const setup = (options: Answer.AnswersOptions = { mode: "drop", uncited: "report" }) =>
  Effect.gen(function*() {
    const manifest = yield* Manifest.make(config)
    const answers = yield* Answer.Answers
    return { manifest, answers }
  }).pipe(Effect.provide(layerFor(options)))

const right = <A, E>(either: Either.Either<A, E>): A => {
  if (Either.isLeft(either)) assert.fail(`expected Right, got ${JSON.stringify(either.left)}`)
  return (either as Either.Right<E, A>).right
}
const left = <A, E>(either: Either.Either<A, E>): E => {
  if (Either.isRight(either)) assert.fail(`expected Left, got ${JSON.stringify(either.right)}`)
  return (either as Either.Left<E, A>).left
}

const answerJson = (manifest: string | undefined, claims: ReadonlyArray<unknown>, uncited?: ReadonlyArray<string>) =>
  JSON.stringify({ format: "citegate.answer/1", ...(manifest === undefined ? {} : { manifest }), claims, ...(uncited ? { uncited } : {}) })

describe("Verifier.checkCitations", () => {
  it.effect("the report path's checks for bare citations: evidence, or every typed failure; only verified captures returned", () =>
    Effect.gen(function*() {
      const verifier = yield* Verifier.Verifier
      const checked = yield* verifier.checkCitations([
        { source: SALES, captureSha256: salesRecord.sha256, snippet: "4,210 units" },
        { source: "https://elsewhere.test/x.txt", captureSha256: salesRecord.sha256, snippet: "4,210 units" },
        { source: INVENTORY, captureSha256: salesRecord.sha256, snippet: "1,180 units" },
        { source: SALES, captureSha256: salesRecord.sha256, snippet: "4,211 units" }
      ])
      const ok = right(checked.results[0]!)
      assert.strictEqual(salesRecord.text.slice(ok.span.start, ok.span.end), "4,210 units")
      assert.strictEqual(ok.occurrences, 1)
      const notApproved = left(checked.results[1]!)[0]!
      assert.instanceOf(notApproved, NotApproved)
      assert.strictEqual((notApproved as NotApproved).reason, "not-in-approved-set")
      const mismatch = left(checked.results[2]!)[0] as DigestMismatch
      assert.instanceOf(mismatch, DigestMismatch)
      assert.deepStrictEqual([mismatch.kind, mismatch.reported, mismatch.stored], ["report", salesRecord.sha256, inventoryRecord.sha256])
      const absent = left(checked.results[3]!)[0] as SnippetAbsent
      assert.instanceOf(absent, SnippetAbsent)
      assert.deepStrictEqual([absent.source, absent.snippet], [SALES, "4,211 units"])
      assert.deepStrictEqual([...checked.captures.keys()], [SALES])
    }).pipe(Effect.provide(Verifier.layer.pipe(
      Layer.provide(Policy.layer(config)),
      Layer.provide(MemoryStore.layer({ records: [salesRecord, inventoryRecord] }).pipe(Layer.orDie))
    ))))
})

describe("citegate.answer/1", () => {
  it.effect("numbered handles are bound to the manifest's sources and digests; a claim is grounded by one verified citation", () =>
    Effect.gen(function*() {
      const { answers, manifest } = yield* setup()
      const bound = right(Answer.fromJson(
        answerJson(manifest.digest, [
          { id: "sales", text: "Net sales were 4,210 units.", citations: [{ source: 1, quote: "4,210 units" }] },
          { id: "stock", text: "Stock was 1,180 units.", citations: [{ source: 2, quote: "1,180 units" }, { source: 1, quote: "Online orders" }] }
        ]),
        manifest
      ))
      assert.deepStrictEqual(bound.claims[0]!.citations[0], { source: SALES, captureSha256: salesRecord.sha256, quote: "4,210 units" })
      const { answer, captures } = yield* answers.verify(bound)
      assert.strictEqual(answer.outcome, "grounded")
      assert.strictEqual(answer.manifest, manifest.digest)
      assert.deepStrictEqual(answer.summary, { claims: 2, claimsGrounded: 2, claimsRemoved: 0, citations: 3, citationsVerified: 3 })
      assert.deepStrictEqual([...captures.keys()].sort(), [INVENTORY, SALES].sort())
    }))

  it.effect("drop mode: a claim that loses every citation is removed with its text; a failed citation of a surviving claim is retracted", () =>
    Effect.gen(function*() {
      const { answers, manifest } = yield* setup({ mode: "drop", uncited: "report" })
      const bound = right(Answer.fromJson(
        answerJson(manifest.digest, [
          { id: "kept", text: "Net sales were 4,210 units.", citations: [{ source: 1, quote: "4,210 units" }, { source: 1, quote: "4,999 units" }] },
          { id: "gone", text: "Sales tripled.", citations: [{ source: 1, quote: "sales tripled" }] }
        ]),
        manifest
      ))
      const { answer } = yield* answers.verify(bound)
      assert.deepStrictEqual(answer.claims.map((c) => c.id), ["kept"])
      assert.isFalse(answer.claims.some((c) => c.text === "Sales tripled."), "a removed claim's text is not in the answer")
      assert.deepStrictEqual(answer.claims[0]!.retracted.map((r) => [r.index, r.error._tag]), [[1, "SnippetAbsent"]])
      assert.deepStrictEqual(answer.removed.map((c) => [c.id, c.text, c.reasons.map((r) => r.error._tag)]), [["gone", "Sales tripled.", ["SnippetAbsent"]]])
      assert.deepStrictEqual(answer.uncited, [], "a removed claim is never demoted to uncited prose")
      assert.deepStrictEqual(answer.summary, { claims: 2, claimsGrounded: 1, claimsRemoved: 1, citations: 3, citationsVerified: 1 })
    }))

  it.effect("drop mode: no claim survives: no_evidence", () =>
    Effect.gen(function*() {
      const { answers, manifest } = yield* setup({ mode: "drop", uncited: "report" })
      const bound = right(Answer.fromJson(
        answerJson(manifest.digest, [{ id: "gone", text: "Sales tripled.", citations: [{ source: 1, quote: "sales tripled" }] }]),
        manifest
      ))
      const { answer } = yield* answers.verify(bound)
      assert.strictEqual(answer.outcome, "no_evidence")
      assert.deepStrictEqual(answer.claims, [])
    }))

  it.effect("reject mode: any failed citation rejects the answer, every failure listed with claim and citation", () =>
    Effect.gen(function*() {
      const { answers, manifest } = yield* setup({ mode: "reject", uncited: "report" })
      const bound = right(Answer.fromJson(
        answerJson(manifest.digest, [
          { id: "kept", text: "Net sales were 4,210 units.", citations: [{ source: 1, quote: "4,210 units" }, { source: 1, quote: "4,999 units" }] }
        ]),
        manifest
      ))
      const error = yield* Effect.flip(answers.verify(bound))
      assert.instanceOf(error, AnswerRejected)
      assert.strictEqual(error.citations.length, 1)
      const [failure] = error.citations
      assert.deepStrictEqual([failure!.claimIndex, failure!.claimId, failure!.citationIndex], [0, "kept", 1])
      assert.instanceOf(failure!.error, SnippetAbsent)
      assert.strictEqual((failure!.error as SnippetAbsent).snippet, "4,999 units")
    }))

  it.effect("StaleManifest: an answer drafted against another run's manifest is never re-bound", () =>
    Effect.gen(function*() {
      const { manifest } = yield* setup()
      // Another run: same configuration, a different capture of the sales source.
      const other = yield* Manifest.make(config).pipe(Effect.provide(MemoryStore.layer({
        records: [makeCaptureRecord({ source: SALES, text: "Net sales were 9,999 units.", accessedAt, contentType: "text/plain" })]
      }).pipe(Layer.orDie)))
      assert.notStrictEqual(other.digest, manifest.digest)
      const text = answerJson(other.digest, [{ id: "a", text: "Net sales were 9,999 units.", citations: [{ source: 1, quote: "9,999 units" }] }])
      const stale = left(Answer.fromJson(text, manifest))
      assert.instanceOf(stale, StaleManifest)
      assert.deepStrictEqual([stale.named, stale.current], [other.digest, manifest.digest])
      // Naming no manifest while citing by number is stale too.
      const unnamed = left(Answer.fromJson(answerJson(undefined, [{ id: "a", text: "x y.", citations: [{ source: 1, quote: "Net" }] }]), manifest))
      assert.instanceOf(unnamed, StaleManifest)
      assert.deepStrictEqual([unnamed.named, unnamed.current], [null, manifest.digest])
      // The caller's digest and the answer's must agree.
      const disagree = left(Answer.fromJson(
        answerJson(manifest.digest, [{ id: "a", text: "x y.", citations: [{ source: 1, quote: "Net" }] }]),
        manifest,
        { manifestDigest: other.digest }
      ))
      assert.instanceOf(disagree, StaleManifest)
      assert.strictEqual(disagree.named, other.digest)
    }))

  it.effect("InvalidAnswer: a number outside the manifest or of a missing source, at its path; strict keys; unique ids", () =>
    Effect.gen(function*() {
      const { manifest } = yield* setup()
      const error = left(Answer.fromJson(
        answerJson(manifest.digest, [
          { id: "a", text: "One.", citations: [{ source: 5, quote: "x" }, { source: 4, quote: "x" }] }
        ]),
        manifest
      ))
      assert.instanceOf(error, InvalidAnswer)
      assert.deepStrictEqual(error.issues.map((i) => i.path), [["claims", 0, "citations", 0, "source"], ["claims", 0, "citations", 1, "source"]])
      assert.match(error.issues[0]!.message, /not in the manifest \(sources are numbered 1 to 4\)/)
      assert.match(error.issues[1]!.message, /no usable capture in this run \(MissingCapture\)/)
      const extra = left(Answer.fromJson(
        answerJson(manifest.digest, [{ id: "a", text: "One.", citations: [{ source: 1, quote: "x", value: 3 }] }]),
        manifest
      ))
      assert.instanceOf(extra, InvalidAnswer)
      const dup = left(Answer.fromJson(
        answerJson(manifest.digest, [
          { id: "a", text: "One.", citations: [{ source: 1, quote: "Net" }] },
          { id: "a", text: "Two.", citations: [{ source: 1, quote: "Net" }] }
        ]),
        manifest
      ))
      assert.instanceOf(dup, InvalidAnswer)
      assert.match(dup.message, /claim ids must be unique/)
    }))

  it.effect("a page or heading on a plain-text capture: AnchorMismatch no-such-anchor, as in reports (retracted in drop mode)", () =>
    Effect.gen(function*() {
      const { answers, manifest } = yield* setup({ mode: "drop", uncited: "report" })
      const bound = right(Answer.fromJson(
        answerJson(manifest.digest, [
          { id: "a", text: "Net sales were 4,210 units.", citations: [{ source: 1, quote: "4,210 units", page: { start: 2, end: 3 } }] },
          { id: "b", text: "Stock was 1,180 units.", citations: [{ source: 2, quote: "1,180 units", heading: ["Stock"] }] }
        ]),
        manifest
      ))
      const { answer } = yield* answers.verify(bound)
      assert.strictEqual(answer.outcome, "no_evidence")
      const [a, b] = answer.removed.map((c) => c.reasons[0]!.error)
      assert.instanceOf(a, AnchorMismatch)
      assert.deepStrictEqual([(a as AnchorMismatch).source, (a as AnchorMismatch).anchor, (a as AnchorMismatch).reason], [SALES, "page 2", "no-such-anchor"])
      assert.instanceOf(b, AnchorMismatch)
      assert.deepStrictEqual([(b as AnchorMismatch).anchor, (b as AnchorMismatch).reason], ["heading Stock", "no-such-anchor"])
    }))
})

describe("uncited sentences", () => {
  const uncited = [
    "Online share was the highest in the company's history so far.", // factual-looking: flagged
    "What drove the growth in online orders over the period?", // question
    "# A heading that is long enough to count as a sentence", // heading
    "Details by region and warehouse follow in the table below:", // lead-in
    "Short and sweet." // under 40 code points
  ]

  it.effect("report (default): UncitedSentence findings, the answer kept", () =>
    Effect.gen(function*() {
      const { answers, manifest } = yield* setup({ mode: "reject", uncited: "report" })
      const bound = right(Answer.fromJson(
        answerJson(manifest.digest, [{ id: "a", text: "Net sales were 4,210 units.", citations: [{ source: 1, quote: "4,210 units" }] }], uncited),
        manifest
      ))
      const { answer } = yield* answers.verify(bound)
      assert.strictEqual(answer.outcome, "grounded")
      assert.strictEqual(answer.uncited.length, 1)
      assert.instanceOf(answer.uncited[0], UncitedSentence)
      assert.deepStrictEqual([answer.uncited[0]!.sentence, answer.uncited[0]!.line], [uncited[0], null])
    }))

  it.effect("reject: an uncited factual-looking sentence rejects the answer, even in drop mode", () =>
    Effect.gen(function*() {
      const { answers, manifest } = yield* setup({ mode: "drop", uncited: "reject" })
      const bound = right(Answer.fromJson(
        answerJson(manifest.digest, [{ id: "a", text: "Net sales were 4,210 units.", citations: [{ source: 1, quote: "4,210 units" }] }], uncited),
        manifest
      ))
      const error = yield* Effect.flip(answers.verify(bound))
      assert.instanceOf(error, AnswerRejected)
      assert.deepStrictEqual(error.citations, [])
      assert.deepStrictEqual(error.uncited.map((u) => u.sentence), [uncited[0]])
    }))

  it("the rule counts code points, not UTF-16 units", () => {
    const astral = "😀".repeat(19) + "." // 39 UTF-16 units, 20 code points
    assert.isTrue(Answer.looksFactual(astral))
    assert.isFalse(Answer.looksFactual("😀".repeat(10) + ".")) // 21 UTF-16 units, 11 code points
  })
})

const anthropicResponse = (blocks: ReadonlyArray<unknown>) =>
  JSON.stringify({
    id: "msg_01",
    type: "message",
    role: "assistant",
    model: "claude-x",
    stop_reason: "end_turn",
    usage: { input_tokens: 10, output_tokens: 20, new_field: true },
    content: blocks
  })

const charCitation = (documentIndex: number, citedText: string, start: number, end: number, extra: object = {}) => ({
  type: "char_location",
  cited_text: citedText,
  document_index: documentIndex,
  document_title: null,
  start_char_index: start,
  end_char_index: end,
  ...extra
})

const cpIndexOf = (text: string, quote: string, from = 0) => {
  const at = text.indexOf(quote, from)
  return [...text.slice(0, at)].length
}

describe("Anthropic Citations", () => {
  it.effect("char_location: document_index i is manifest source i + 1; cited_text found at the claimed code points; vendor keys ignored", () =>
    Effect.gen(function*() {
      const { answers, manifest } = yield* setup({ mode: "reject", uncited: "report" })
      const start = cpIndexOf(salesRecord.text, "4,210 units")
      const text = anthropicResponse([
        { type: "thinking", thinking: "…", signature: "x" },
        { type: "text", text: "Net sales were 4,210 units.", citations: [charCitation(0, "4,210 units", start, start + 11, { file_id: null })] },
        { type: "text", text: " (no citation here)", citations: null }
      ])
      const bound = right(Anthropic.fromJson(text, manifest, { manifestDigest: manifest.digest }))
      assert.deepStrictEqual(bound.claims.map((c) => [c.id, c.text]), [["block-1", "Net sales were 4,210 units."]])
      assert.deepStrictEqual(bound.claims[0]!.citations[0], {
        source: SALES,
        captureSha256: salesRecord.sha256,
        quote: "4,210 units",
        chars: { start, end: start + 11 }
      })
      const { answer } = yield* answers.verify(bound)
      assert.strictEqual(answer.outcome, "grounded")
    }))

  it.effect("SpanMismatch: the cited text exists, but only elsewhere than the indices say", () =>
    Effect.gen(function*() {
      const { answers, manifest } = yield* setup({ mode: "drop", uncited: "report" })
      const start = cpIndexOf(salesRecord.text, "4,210 units")
      const bound = right(Anthropic.fromJson(
        anthropicResponse([{ type: "text", text: "Net sales were 4,210 units.", citations: [charCitation(0, "4,210 units", start + 3, start + 14)] }]),
        manifest,
        { manifestDigest: manifest.digest }
      ))
      const { answer } = yield* answers.verify(bound)
      assert.strictEqual(answer.outcome, "no_evidence")
      const error = answer.removed[0]!.reasons[0]!.error as SpanMismatch
      assert.instanceOf(error, SpanMismatch)
      assert.deepStrictEqual(
        [error.source, error.captureSha256, error.quote, error.claimedStart, error.claimedEnd, error.foundStart, error.occurrences],
        [SALES, salesRecord.sha256, "4,210 units", start + 3, start + 14, start, 1]
      )
    }))

  it.effect("beyond the BMP: indices count code points; the same span counted in UTF-16 units is a SpanMismatch", () =>
    Effect.gen(function*() {
      const { answers, manifest } = yield* setup({ mode: "drop", uncited: "report" })
      const quote = "fleet grew to 42 bikes"
      const cp = cpIndexOf(emojiRecord.text, quote)
      const utf16 = emojiRecord.text.indexOf(quote)
      assert.strictEqual(utf16 - cp, 3, "three astral characters before the quote")
      const response = (s: number) =>
        anthropicResponse([{ type: "text", text: "The fleet grew.", citations: [charCitation(2, quote, s, s + [...quote].length)] }])
      const ok = yield* answers.verify(right(Anthropic.fromJson(response(cp), manifest, { manifestDigest: manifest.digest })))
      assert.strictEqual(ok.answer.outcome, "grounded")
      assert.deepStrictEqual(ok.answer.claims[0]!.citations[0]!.evidence.span, { start: utf16, end: utf16 + quote.length })
      const wrong = yield* answers.verify(right(Anthropic.fromJson(response(utf16), manifest, { manifestDigest: manifest.digest })))
      const error = wrong.answer.removed[0]!.reasons[0]!.error as SpanMismatch
      assert.instanceOf(error, SpanMismatch)
      // The quote occurs twice; the first occurrence is reported in code points.
      assert.deepStrictEqual([error.claimedStart, error.foundStart, error.occurrences], [utf16, cp, 2])
    }))

  it.effect("page_location on a plain-text capture: AnchorMismatch no-such-anchor; content_block_location: AnchorUnsupported", () =>
    Effect.gen(function*() {
      const { answers, manifest } = yield* setup({ mode: "reject", uncited: "report" })
      const bound = right(Anthropic.fromJson(
        anthropicResponse([{
          type: "text",
          text: "Sales and stock.",
          citations: [
            { type: "page_location", cited_text: "4,210 units", document_index: 0, document_title: "s", start_page_number: 1, end_page_number: 2 },
            { type: "content_block_location", cited_text: "1,180 units", document_index: 1, document_title: null, start_block_index: 0, end_block_index: 1 }
          ]
        }]),
        manifest,
        { manifestDigest: manifest.digest }
      ))
      const error = yield* Effect.flip(answers.verify(bound))
      assert.instanceOf(error, AnswerRejected)
      const [page, block] = error.citations
      assert.deepStrictEqual([page!.citationIndex, page!.error._tag, (page!.error as AnchorMismatch).anchor, (page!.error as AnchorMismatch).reason], [0, "AnchorMismatch", "page 1", "no-such-anchor"])
      assert.deepStrictEqual([block!.citationIndex, block!.error._tag, (block!.error as AnchorUnsupported).anchor, (block!.error as AnchorUnsupported).value], [1, "AnchorUnsupported", "content-block", "0–1"])
    }))

  it.effect("strict where citegate reads: a citation field missing or mistyped, an unknown citation type, an index outside the manifest", () =>
    Effect.gen(function*() {
      const { manifest } = yield* setup()
      const opts = { manifestDigest: manifest.digest }
      const missing = left(Anthropic.fromJson(
        anthropicResponse([{ type: "text", text: "x", citations: [{ type: "char_location", cited_text: "4,210", document_index: 0, start_char_index: "3" }] }]),
        manifest,
        opts
      ))
      assert.instanceOf(missing, InvalidAnswer)
      const paths = missing.issues.map((i) => i.path.join("."))
      assert.include(paths.join(" "), "start_char_index")
      const unknownType = left(Anthropic.fromJson(
        anthropicResponse([{ type: "text", text: "x", citations: [{ type: "web_search_result_location", cited_text: "x", url: "https://x.test/" }] }]),
        manifest,
        opts
      ))
      assert.instanceOf(unknownType, InvalidAnswer)
      const outside = left(Anthropic.fromJson(
        anthropicResponse([{ type: "text", text: "x", citations: [charCitation(9, "4,210", 0, 5)] }]),
        manifest,
        opts
      ))
      assert.instanceOf(outside, InvalidAnswer)
      assert.deepStrictEqual(outside.issues.map((i) => i.path), [["content", 0, "citations", 0, "document_index"]])
      const emptyPages = left(Anthropic.fromJson(
        anthropicResponse([{ type: "text", text: "x", citations: [{ type: "page_location", cited_text: "x", document_index: 0, start_page_number: 2, end_page_number: 2 }] }]),
        manifest,
        opts
      ))
      assert.instanceOf(emptyPages, InvalidAnswer)
      assert.deepStrictEqual(emptyPages.issues.map((i) => i.path), [["content", 0, "citations", 0, "end_page_number"]])
      const repeated = left(Anthropic.fromJson('{"content":[],"content":[]}', manifest, opts))
      assert.instanceOf(repeated, InvalidAnswer)
      // The response names no manifest: the caller must.
      const unnamed = left(Anthropic.fromJson(anthropicResponse([]), manifest, {}))
      assert.instanceOf(unnamed, StaleManifest)
      assert.strictEqual(unnamed.named, null)
      const tooLong = left(Anthropic.fromJson(" ".repeat(limits.maxChars + 1), manifest, opts))
      assert.instanceOf(tooLong, InvalidAnswer)
    }))
})

describe("answer renderings", () => {
  const hostile = "Sales <script>alert(1)</script> [link](javascript:alert(1)) were 4,210 units."

  const checkedHostile = Effect.gen(function*() {
    const { answers, manifest } = yield* setup({ mode: "drop", uncited: "report" })
    const bound: BoundAnswer = right(Answer.fromJson(
      answerJson(manifest.digest, [
        { id: "a", text: hostile, citations: [{ source: 1, quote: "4,210 units" }, { source: 1, quote: "<b>absent</b>" }] },
        { id: "b\u202e", text: "- removed <img src=x onerror=alert(1)> claim", citations: [{ source: 2, quote: "not there" }] }
      ], ["An uncited sentence that is long enough to be flagged <i>here</i>."]),
      manifest
    ))
    return yield* answers.verify(bound)
  })

  it.effect("every format escapes untrusted text; removed claims struck out with the reason; JSON decodes", () =>
    Effect.gen(function*() {
      const { answer, captures } = yield* checkedHostile
      const rendering = AnswerRender.AnswerRendering.Verified({ answer, captures })
      const html = AnswerRender.render("html", rendering)
      assert.notInclude(html, "<script>alert")
      assert.notInclude(html, "<img src=x")
      assert.notInclude(html, "<b>absent")
      assert.include(html, "<del>- removed &lt;img src=x onerror=alert(1)&gt; claim</del>")
      assert.include(html, "&lt;script&gt;")
      assert.include(html, 'data-tag="SnippetAbsent"')
      const md = AnswerRender.render("markdown", rendering)
      // Brackets and angle brackets escaped: no link, no HTML can form.
      assert.include(md, "\\[link\\](javascript:alert(1))")
      assert.notInclude(md, "<script>")
      assert.include(md, "~~- removed \\<img src=x onerror=alert(1)\\> claim~~")
      const text = AnswerRender.render("text", rendering)
      assert.include(text, "REMOVED")
      assert.include(text, "\\u{202e}")
      assert.notInclude(text, "\u202e")
      const decoded = Schema.decodeUnknownEither(AnswerRender.RenderedAnswer, decodeOptions)(
        JSON.parse(AnswerRender.render("json", rendering))
      )
      const result = right(decoded)
      assert.strictEqual(result.status, "verified")
      if (result.status === "verified") assert.deepStrictEqual(result.answer, answer)
    }))

  it.effect("a rejection renders in every format, and its JSON decodes to the same typed error", () =>
    Effect.gen(function*() {
      const error = new AnswerRejected({
        citations: [{ claimIndex: 0, claimId: "<c1>", citationIndex: 0, error: new SnippetAbsent({ source: SALES, captureSha256: salesRecord.sha256, snippet: "<x>" }) }],
        uncited: [new UncitedSentence({ sentence: "<u>uncited</u> and long enough to count as a factual one.", line: 3 })]
      })
      const rendering = AnswerRender.AnswerRendering.Rejected({ error })
      const html = AnswerRender.render("html", rendering)
      assert.include(html, "SnippetAbsent")
      assert.notInclude(html, "<x>")
      assert.notInclude(html, "<u>uncited")
      const md = AnswerRender.render("markdown", rendering)
      // The quote is an inert code block; other untrusted text is escaped.
      assert.include(md, "```text\n<x>\n```")
      assert.include(md, "\\<u\\>uncited")
      const text = AnswerRender.render("text", rendering)
      assert.include(text, 'quote: "<x>"')
      assert.include(text, "UncitedSentence (line 3)")
      const result = right(Schema.decodeUnknownEither(AnswerRender.RenderedAnswer, decodeOptions)(
        JSON.parse(AnswerRender.render("json", rendering))
      ))
      assert.strictEqual(result.status, "rejected")
      if (result.status === "rejected") assert.deepStrictEqual(result.error, error)
    }))

  it("Evi1Invalid (with omitted issues) and StaleManifest render in every format and decode back from JSON", () => {
    const evi1 = Evi1.parse("{c1}".repeat(150) + "\n")
    assert.isTrue(Either.isLeft(evi1))
    const errors = [
      (evi1 as Either.Left<Evi1Invalid, unknown>).left,
      new StaleManifest({ named: null, current: salesRecord.sha256 })
    ]
    for (const error of errors) {
      const rendering = AnswerRender.AnswerRendering.Rejected({ error })
      assert.include(AnswerRender.render("text", rendering), error._tag)
      assert.include(AnswerRender.render("markdown", rendering), error._tag)
      assert.include(AnswerRender.render("html", rendering), error._tag)
      const result = right(Schema.decodeUnknownEither(AnswerRender.RenderedAnswer, decodeOptions)(
        JSON.parse(AnswerRender.render("json", rendering))
      ))
      if (result.status === "rejected") assert.deepStrictEqual(result.error, error)
      else assert.fail("expected a rejection")
    }
    assert.include(AnswerRender.render("text", AnswerRender.AnswerRendering.Rejected({ error: errors[0]! })), "and 50 more issues not listed")
  })
})


describe("the verification deadline on answers", () => {
  it.live("a hostile answer (long near-matching quotes over a repetitive capture) ends with VerificationTimeout", () =>
    Effect.gen(function*() {
      const SOURCE = "https://reports.northwind.test/repetitive.txt"
      // A flat string (as decoded from JSON), 1 MiB of one character; quotes that almost match everywhere.
      const record = makeCaptureRecord({
        source: SOURCE as never,
        text: JSON.parse(JSON.stringify("a".repeat(1 << 20))) as string,
        accessedAt,
        contentType: "text/plain"
      })
      const cfg = { sources: [SOURCE], labels: ["unused"], verify: { timeoutMs: 200 } } as unknown as typeof config
      const timedLayer = Answer.layer({ mode: "drop", uncited: "report" }).pipe(
        Layer.provide(Verifier.layer),
        Layer.provide(Policy.layer(cfg)),
        Layer.provideMerge(MemoryStore.layer({ records: [record] }).pipe(Layer.orDie))
      )
      const error = yield* Effect.gen(function*() {
        const manifest = yield* Manifest.make(cfg)
        const answers = yield* Answer.Answers
        const claims = Array.from({ length: 200 }, (_, i) => ({
          id: `c${i}`,
          text: "A claim.",
          citations: [{ source: 1, quote: "a".repeat(1000 + i) + "b" }]
        }))
        const bound = right(Answer.fromJson(answerJson(manifest.digest, claims), manifest))
        return yield* Effect.flip(answers.verify(bound))
      }).pipe(Effect.provide(timedLayer))
      assert.instanceOf(error, VerificationTimeout)
      assert.strictEqual((error as VerificationTimeout).timeoutMs, 200)
    }), 60_000)
})
