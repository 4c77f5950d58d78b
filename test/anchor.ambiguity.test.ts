import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer, Schema } from "effect"
import * as Answer from "../src/answer/Answer.js"
import { Citation } from "../src/answer/Records.js"
import * as Config from "../src/Config.js"
import { decodeOptions } from "../src/Domain.js"
import { AmbiguousSnippet, InvalidConfig, SnippetAbsent } from "../src/Errors.js"
import * as Policy from "../src/verify/Policy.js"
import * as Render from "../src/render/Render.js"
import * as MemoryStore from "../src/store/Memory.js"
import * as Verifier from "../src/verify/Verifier.js"
import { check, configWith, fact, onlyCitation, onlyFailure, recordOf, SOURCE } from "./anchorSupport.js"

// "rose 3%" three times: after "Sales ", after "Costs " and after "Sales " again, each followed by something else.
const text = "Q1: Sales rose 3% in Q1. Q2: Costs rose 3% in Q2. Q3: Sales rose 3% to a record.\n"
const snippet = "rose 3%"
const positions = [text.indexOf(snippet), text.indexOf(snippet, text.indexOf(snippet) + 1), text.lastIndexOf(snippet)]
const sha = recordOf(text).sha256

describe("Ambiguity: a snippet found more than once", () => {
  it.scoped("default (accept): verified at the first occurrence, flagged ambiguous with the count", () =>
    Effect.gen(function*() {
      const { evidence } = onlyCitation(yield* check(text, [fact(text, snippet)]))
      assert.deepStrictEqual(evidence.span, { start: positions[0]!, end: positions[0]! + snippet.length })
      // Three occurrences; counting stops at the second (2 means "two or more").
      assert.strictEqual(evidence.occurrences, 2)
      assert.strictEqual(evidence.ambiguous, true)
    }))

  it.scoped("a snippet found once is not ambiguous", () =>
    Effect.gen(function*() {
      const { evidence } = onlyCitation(yield* check(text, [fact(text, "Costs rose 3%")]))
      assert.strictEqual(evidence.occurrences, 1)
      assert.strictEqual(evidence.ambiguous, false)
    }))

  it.scoped("a suffix picks the one occurrence it follows: that span, not the first; no longer ambiguous", () =>
    Effect.gen(function*() {
      const { evidence } = onlyCitation(yield* check(text, [fact(text, snippet, { suffix: " to a record" })]))
      assert.deepStrictEqual(evidence.span, { start: positions[2]!, end: positions[2]! + snippet.length })
      assert.strictEqual(evidence.occurrences, 2) // the snippet's own count (two or more), unchanged
      assert.strictEqual(evidence.ambiguous, false)
      assert.strictEqual(evidence.selector![0].exact, snippet)
    }))

  it.scoped("a prefix and a suffix together pick one", () =>
    Effect.gen(function*() {
      const { evidence } = onlyCitation(yield* check(text, [fact(text, snippet, { prefix: "Sales ", suffix: " in Q1" })]))
      assert.strictEqual(evidence.span.start, positions[0])
      assert.strictEqual(evidence.ambiguous, false)
    }))

  it.scoped("a prefix two occurrences still share: AmbiguousSnippet with the count that still match", () =>
    Effect.gen(function*() {
      const error = onlyFailure(yield* Effect.flip(check(text, [fact(text, snippet, { prefix: "Sales " })])))
      assert.instanceOf(error, AmbiguousSnippet)
      assert.deepStrictEqual(
        { ...error },
        { _tag: "AmbiguousSnippet", source: SOURCE, captureSha256: sha, snippet, occurrences: 2, prefix: "Sales " }
      )
      assert.match(error.message, /occurs more than once with the given prefix\/suffix/)
    }))

  it.scoped("a prefix no occurrence has: SnippetAbsent", () =>
    Effect.gen(function*() {
      const error = onlyFailure(yield* Effect.flip(check(text, [fact(text, snippet, { prefix: "Profit " })])))
      assert.instanceOf(error, SnippetAbsent)
      const { nearest: _nearest, ...fields } = error
      assert.deepStrictEqual({ ...fields }, { _tag: "SnippetAbsent", source: SOURCE, captureSha256: sha, snippet })
    }))

  it.scoped("verify.ambiguous: reject: an ambiguous snippet without prefix or suffix is AmbiguousSnippet", () =>
    Effect.gen(function*() {
      const error = onlyFailure(yield* Effect.flip(check(text, [fact(text, snippet)], { ambiguous: "reject" })))
      assert.instanceOf(error, AmbiguousSnippet)
      assert.deepStrictEqual({ ...error }, { _tag: "AmbiguousSnippet", source: SOURCE, captureSha256: sha, snippet, occurrences: 2 })
    }))

  it.scoped("verify.ambiguous: reject still accepts a unique snippet, and one a suffix makes unique", () =>
    Effect.gen(function*() {
      const report = yield* check(
        text,
        [fact(text, "Costs rose 3%"), fact(text, snippet, { suffix: " in Q2" }, "b")],
        { ambiguous: "reject" }
      )
      assert.strictEqual(report.facts.length, 2)
      const second = report.facts[1]!
      if (!("evidence" in second)) return assert.fail("expected evidence")
      assert.strictEqual(second.evidence.span.start, positions[1])
      assert.strictEqual(second.evidence.ambiguous, false)
    }))

  it.effect("verify.ambiguous: accept by default, accept or reject only", () =>
    Effect.gen(function*() {
      assert.strictEqual(Config.resolvedAmbiguous(yield* Config.decode(configWith())), "accept")
      assert.strictEqual(Policy.fromConfig(yield* Config.decode(configWith({ ambiguous: "reject" }))).ambiguous, "reject")
      const error = yield* Effect.flip(Config.decode(configWith({ ambiguous: "warn" })))
      assert.instanceOf(error, InvalidConfig)
      assert.deepStrictEqual([...new Set(error.issues.map((issue) => JSON.stringify(issue.path)))], [`["verify","ambiguous"]`])
    }))

  it.scoped("prefix and suffix are bounded and must be non-empty: InvalidReport before any search", () =>
    Effect.gen(function*() {
      const tooLong = yield* Effect.flip(check(text, [fact(text, snippet, { prefix: "x".repeat(1_001) })]))
      assert.strictEqual(tooLong._tag, "InvalidReport")
      const empty = yield* Effect.flip(check(text, [fact(text, snippet, { suffix: "" })]))
      assert.strictEqual(empty._tag, "InvalidReport")
    }))

  it.scoped("linear on hostile repetition: a long snippet and prefix on a text of one repeated character", () =>
    Effect.gen(function*() {
      const flat = "a".repeat(4 << 20)
      const started = performance.now()
      const error = onlyFailure(
        yield* Effect.flip(check(flat, [fact(flat, "a".repeat(2_000), { prefix: "a".repeat(1_000), suffix: "a".repeat(1_000) })]))
      )
      assert.instanceOf(error, AmbiguousSnippet)
      // About 4 million occurrences; counting stopped at the second.
      assert.strictEqual(error.occurrences, 2)
      const absent = onlyFailure(yield* Effect.flip(check(flat, [fact(flat, "a".repeat(2_000), { prefix: "b" })])))
      assert.instanceOf(absent, SnippetAbsent)
      // Occurrences x context length would be ~10^10 units of work; a linear search is well under this.
      assert.isBelow(performance.now() - started, 15_000)
    }), 30_000)

  it.scoped("every rendering shows the ambiguity flag and the AmbiguousSnippet failure", () =>
    Effect.gen(function*() {
      const report = yield* check(text, [fact(text, snippet)])
      const captures = new Map([[SOURCE as string, recordOf(text)]])
      const verified = Render.Rendering.Verified({ report, captures })
      assert.include(Render.render("text", verified), "AMBIGUOUS ambiguous: more than one occurrence, the first is shown")
      assert.include(Render.render("markdown", verified), "**Ambiguous:** ambiguous: more than one occurrence, the first is shown.")
      assert.include(Render.render("html", verified), `<div class="ambiguous">ambiguous: more than one occurrence, the first is shown</div>`)
      const rejected = yield* Effect.flip(check(text, [fact(text, snippet, { prefix: "Sales " })]))
      if (rejected._tag !== "ReportRejected") return assert.fail(`expected ReportRejected, got ${rejected._tag}`)
      const rendering = Render.Rendering.Rejected({ error: rejected })
      const plain = Render.render("text", rendering)
      assert.include(plain, "AmbiguousSnippet: Snippet occurs more than once with the given prefix/suffix")
      assert.include(plain, "occurrences: 2")
      assert.include(plain, `prefix: "Sales "`)
      assert.include(Render.render("markdown", rendering), "`AmbiguousSnippet`")
      assert.include(Render.render("html", rendering), "AmbiguousSnippet")
      const json = JSON.parse(Render.render("json", rendering))
      assert.deepStrictEqual(json.error.failures[0].error, {
        _tag: "AmbiguousSnippet",
        source: SOURCE,
        captureSha256: sha,
        snippet,
        occurrences: 2,
        prefix: "Sales "
      })
      Schema.decodeUnknownSync(Render.RenderedResult, decodeOptions)(json)
    }))
})

describe("Ambiguity in answer citations (the same matching path)", () => {
  const answersLayer = Answer.layer({ mode: "drop", uncited: "report" }).pipe(
    Layer.provide(Verifier.layer),
    Layer.provide(Policy.layer(Schema.decodeUnknownSync(Config.PipelineConfig)(configWith()))),
    Layer.provideMerge(MemoryStore.layer({ records: [recordOf(text)] }).pipe(Layer.orDie))
  )
  const bound = (citation: Record<string, unknown>) => ({
    manifest: null,
    claims: [{ id: "c1", text: "Sales rose.", citations: [Schema.decodeUnknownSync(Citation)({ source: SOURCE, captureSha256: sha, ...citation })] }],
    uncited: []
  })

  it.effect("a citation's suffix picks the occurrence; a shared prefix is AmbiguousSnippet", () =>
    Effect.gen(function*() {
      const answers = yield* Answer.Answers
      const { answer } = yield* answers.verify(bound({ quote: snippet, suffix: " to a record" }))
      const verified = answer.claims[0]!.citations[0]!
      assert.strictEqual(verified.evidence.span.start, positions[2])
      assert.strictEqual(verified.evidence.ambiguous, false)
      // Drop mode: the claim is removed with its reason.
      const dropped = (yield* answers.verify(bound({ quote: snippet, prefix: "Sales " }))).answer
      assert.strictEqual(dropped.claims.length, 0)
      const failure = dropped.removed[0]!.reasons[0]!.error
      assert.instanceOf(failure, AmbiguousSnippet)
      assert.deepStrictEqual(
        { ...failure },
        { _tag: "AmbiguousSnippet", source: SOURCE, captureSha256: sha, snippet, occurrences: 2, prefix: "Sales " }
      )
    }).pipe(Effect.provide(answersLayer)))
})
