import { assert, describe, it } from "@effect/vitest"
import { Effect, Either, Layer } from "effect"
import * as Answer from "../src/answer/Answer.js"
import * as Evi1 from "../src/answer/Evi1.js"
import { limits } from "../src/answer/Records.js"
import { AnswerLimitExceeded, AnswerTooLarge, Evi1Invalid, type Evi1Issue, StaleManifest, UncitedSentence } from "../src/Errors.js"
import * as Manifest from "../src/Manifest.js"
import * as Policy from "../src/verify/Policy.js"
import * as MemoryStore from "../src/store/Memory.js"
import * as Verifier from "../src/verify/Verifier.js"
import { config, emojiRecord } from "./answerSupport.js"
import { INVENTORY, inventoryRecord, SALES, salesRecord } from "./support.js"

const layer = (options: Answer.AnswersOptions) =>
  Answer.layer(options).pipe(
    Layer.provide(Verifier.layer),
    Layer.provide(Policy.layer(config)),
    Layer.provideMerge(MemoryStore.layer({ records: [salesRecord, inventoryRecord, emojiRecord] }).pipe(Layer.orDie))
  )

const setup = (options: Answer.AnswersOptions = { mode: "drop", uncited: "report" }) =>
  Effect.gen(function*() {
    return { manifest: yield* Manifest.make(config), answers: yield* Answer.Answers }
  }).pipe(Effect.provide(layer(options)))

/** A body that mentions EVI1 and END_EVI1 in prose, quotes with every escape, a non-BMP source. */
const sample = [
  "# Q3 in brief",
  "This answer follows the EVI1 protocol; the appendix ends with END_EVI1.",
  "Net sales for Q3 2026 were 4,210 units.[1]{c1} Stock was 1,180 units, 640 of them in Leeds.[2][1]{c2}",
  "The 🚲 fleet grew to 42 bikes.[3]{c3} A sentence without any citation that still looks like a fact.",
  "EVI1",
  "c1|1|\"Net sales for Q3 2026 were 4,210 units\"",
  "c2|2|\"Inventory on hand at 30 September 2026 was 1,180 units.\\nThe Leeds warehouse held 640 of those units.\"",
  "c2|1|\"4,210\"",
  "c3|3|\"The 🚲 fleet grew to 42 bikes\"",
  "END_EVI1",
  ""
].join("\n")

const right = <A, E>(either: Either.Either<A, E>): A => {
  if (Either.isLeft(either)) assert.fail(`expected Right, got ${JSON.stringify(either.left)}`)
  return (either as Either.Right<E, A>).right
}
const issuesOf = (text: string): ReadonlyArray<Evi1Issue> => {
  const result = Evi1.parse(text)
  if (Either.isRight(result)) assert.fail("expected Evi1Invalid")
  const error = (result as Either.Left<Evi1Invalid | AnswerTooLarge, unknown>).left
  assert.instanceOf(error, Evi1Invalid)
  return (error as Evi1Invalid).issues
}

describe("EVI1 parsing", () => {
  it("the appendix starts at the first EVI1 line: a body may mention EVI1 and END_EVI1 in prose", () => {
    const document = right(Evi1.parse(sample))
    assert.deepStrictEqual(document.body.filter((s) => s._tag === "Cite").map((s) => s._tag === "Cite" && [s.claimId, s.sources, s.line]), [
      ["c1", [1], 3],
      ["c2", [2, 1], 3],
      ["c3", [3], 4]
    ])
    assert.deepStrictEqual(document.appendix?.evidence.map((e) => [e.claimId, e.source, e.line]), [["c1", 1, 6], ["c2", 2, 7], ["c2", 1, 8], ["c3", 3, 9]])
    assert.strictEqual(
      document.appendix?.evidence[1]!.quote,
      "Inventory on hand at 30 September 2026 was 1,180 units.\nThe Leeds warehouse held 640 of those units."
    )
  })

  it("round trips exactly: serialize(parse(t)) === t, and parse(serialize(d)) equals d", () => {
    const escapes = "A claim with quotes.[1]{c1}\nEVI1\nc1|1|\"a \\\"b\\\" c\\\\d\\ne\"\nEND_EVI1"
    for (const text of [sample, escapes, "Just prose, no appendix.\n", "", "x[1]{c1}\nEVI1\nMANIFEST " + "a".repeat(64) + "\nc1|1|\"q\"\nEND_EVI1\n\n  \n"]) {
      const document = right(Evi1.parse(text))
      assert.strictEqual(Evi1.serialize(document), text)
      assert.deepStrictEqual(right(Evi1.parse(Evi1.serialize(document))), document)
    }
    const escaped = right(Evi1.parse(escapes))
    assert.strictEqual(escaped.appendix?.evidence[0]!.quote, "a \"b\" c\\d\ne")
  })

  it("cleanText removes the {cX} markers and the appendix and keeps [n]", () => {
    const document = right(Evi1.parse(sample))
    assert.strictEqual(
      Evi1.cleanText(document),
      "# Q3 in brief\nThis answer follows the EVI1 protocol; the appendix ends with END_EVI1.\n" +
        "Net sales for Q3 2026 were 4,210 units.[1] Stock was 1,180 units, 640 of them in Leeds.[2][1]\n" +
        "The 🚲 fleet grew to 42 bikes.[3] A sentence without any citation that still looks like a fact.\n"
    )
  })

  it("incremental: every split point into two chunks, and one code unit at a time, give the same result", () => {
    const whole = Evi1.parse(sample)
    for (let cut = 0; cut <= sample.length; cut++) {
      const parser = new Evi1.Parser()
      parser.push(sample.slice(0, cut))
      parser.push(sample.slice(cut))
      assert.deepStrictEqual(parser.end(), whole, `split at ${cut}`)
    }
    const parser = new Evi1.Parser()
    for (const unit of sample.split("")) parser.push(unit)
    assert.deepStrictEqual(parser.end(), whole)
    // An invalid text too: the same issues, with the same lines.
    const bad = "a.[1]{c1} b{c9}\nEVI1\nc1|1|\"x\nc1|2|\"y\"\nEND_EVI1\n"
    const badWhole = Evi1.parse(bad)
    assert.isTrue(Either.isLeft(badWhole))
    for (let cut = 0; cut <= bad.length; cut++) {
      const p = new Evi1.Parser()
      p.push(bad.slice(0, cut))
      p.push(bad.slice(cut))
      assert.deepStrictEqual(p.end(), badWhole, `split at ${cut}`)
    }
  })

  it("linear: one citation group of 100,000 sources is refused by the per-claim limit", () => {
    const sources = Array.from({ length: 100_000 }, (_, i) => `[${i + 1}]`).join("")
    const start = performance.now()
    const result = Evi1.parse(`A sentence.${sources}{c1}\nEVI1\nEND_EVI1`)
    assert.isBelow(performance.now() - start, 2000)
    assert.deepStrictEqual(Either.flip(result).pipe(Either.getOrThrow), new AnswerLimitExceeded({ limit: "citations-per-claim", max: 100, received: 100_000 }))
  })

  it("a million issues: the first 100 listed in line order, the rest counted in omitted", () => {
    const text = "{c1}".repeat(1_000_000) + "\nx.[1]{c2}\n"
    const result = Evi1.parse(text)
    assert.isTrue(Either.isLeft(result))
    const error = (result as Either.Left<Evi1Invalid, unknown>).left
    assert.instanceOf(error, Evi1Invalid)
    assert.strictEqual(error.issues.length, Evi1.maxListedIssues)
    assert.deepStrictEqual(error.issues[0], { _tag: "Evi1OrphanMarker", line: 1, claimId: "c1" })
    // A million orphans on line 1, and the missing evidence of c2 on line 2.
    assert.strictEqual(error.omitted, 1_000_001 - Evi1.maxListedIssues)
    assert.match(error.message, /and 999901 more issues not listed$/)
  })

  it("AnswerTooLarge past the documented limit, counted across chunks", () => {
    const parser = new Evi1.Parser()
    parser.push("x".repeat(limits.maxChars))
    parser.push("yz")
    const result = parser.end()
    assert.isTrue(Either.isLeft(result))
    const error = (result as Either.Left<AnswerTooLarge, unknown>).left
    assert.instanceOf(error, AnswerTooLarge)
    assert.deepStrictEqual([error.maxChars, error.receivedChars], [limits.maxChars, limits.maxChars + 2])
  })

  it("linear: a long line of bracket and brace noise parses quickly", () => {
    const noise = "[1][2][3".repeat(200_000) + "{c1".repeat(200_000) + "[0001]{c1}".repeat(50_000)
    const start = performance.now()
    const result = Evi1.parse(noise)
    assert.isBelow(performance.now() - start, 2000)
    assert.isTrue(Either.isLeft(result)) // orphan markers: the [0001] groups are not citations
  })
})

describe("EVI1 issues (all collected, with line numbers)", () => {
  it("Evi1MalformedLine", () => {
    const issues = issuesOf("a.[1]{c1}\nEVI1\nc1|1|\"bad \\t escape\"\nEND_EVI1\n")
    // The malformed line alone: it meant c1's evidence for source 1, so that citation is not also "missing".
    assert.deepStrictEqual(issues.map((i) => [i._tag, i.line]), [["Evi1MalformedLine", 3]])
    const first = issues[0]!
    assert.strictEqual(first._tag, "Evi1MalformedLine")
    if (first._tag === "Evi1MalformedLine") assert.match(first.detail, /unknown escape \\t/)
  })

  it("Evi1MalformedLine: a line that names no (claim, source) leaves the citation missing too", () => {
    const issues = issuesOf("a.[1]{c1}\nEVI1\nc1 1 \"quote\"\nEND_EVI1\n")
    assert.deepStrictEqual(issues.map((i) => [i._tag, i.line]), [["Evi1MissingEvidence", 1], ["Evi1MalformedLine", 3]])
  })

  it("Evi1MalformedLine: CRLF line endings are named, not read as a body without appendix", () => {
    const issues = issuesOf("a.[1]{c1}\r\nEVI1\r\nc1|1|\"a\"\r\nEND_EVI1\r\n")
    assert.deepStrictEqual(issues[issues.length - 1], {
      _tag: "Evi1MalformedLine",
      line: 4,
      detail: "END_EVI1 followed by CR: EVI1 lines end with LF alone"
    })
  })

  it("Evi1DuplicateClaimId", () => {
    const issues = issuesOf("a.[1]{c1}\nb.[1]{c1}\nEVI1\nc1|1|\"q\"\nEND_EVI1")
    assert.deepStrictEqual(issues, [{ _tag: "Evi1DuplicateClaimId", line: 2, claimId: "c1", firstLine: 1 }])
  })

  it("Evi1DuplicateEvidence", () => {
    const issues = issuesOf("a.[1]{c1}\nEVI1\nc1|1|\"q\"\nc1|1|\"r\"\nEND_EVI1")
    assert.deepStrictEqual(issues, [{ _tag: "Evi1DuplicateEvidence", line: 4, claimId: "c1", source: 1, firstLine: 3 }])
  })

  it("Evi1MissingEvidence", () => {
    const issues = issuesOf("a.[1][2]{c1}\nEVI1\nc1|1|\"q\"\nEND_EVI1")
    assert.deepStrictEqual(issues, [{ _tag: "Evi1MissingEvidence", line: 1, claimId: "c1", source: 2 }])
  })

  it("Evi1UnusedEvidence", () => {
    const issues = issuesOf("a.[1]{c1}\nEVI1\nc1|1|\"q\"\nc2|1|\"r\"\nEND_EVI1")
    assert.deepStrictEqual(issues, [{ _tag: "Evi1UnusedEvidence", line: 4, claimId: "c2", source: 1 }])
  })

  it("Evi1OrphanMarker", () => {
    const issues = issuesOf("a {c7} b.\nEVI1\nEND_EVI1")
    assert.deepStrictEqual(issues, [{ _tag: "Evi1OrphanMarker", line: 1, claimId: "c7" }])
  })

  it.effect("Evi1SourceOutOfRange and Evi1SourceUnavailable (against the manifest)", () =>
    Effect.gen(function*() {
      const { manifest } = yield* setup()
      const text = "Zero.[0]{c1}\nFive.[5]{c2}\nMissing.[4]{c3}\nEVI1\nc1|0|\"q\"\nc2|5|\"q\"\nc3|4|\"q\"\nEND_EVI1\n"
      const result = Evi1.decode(text, manifest, { manifestDigest: manifest.digest })
      assert.isTrue(Either.isLeft(result))
      const error = (result as Either.Left<Evi1Invalid, unknown>).left
      assert.instanceOf(error, Evi1Invalid)
      assert.deepStrictEqual(error.issues, [
        { _tag: "Evi1SourceOutOfRange", line: 1, claimId: "c1", source: 0, sources: 4 },
        { _tag: "Evi1SourceOutOfRange", line: 2, claimId: "c2", source: 5, sources: 4 },
        { _tag: "Evi1SourceUnavailable", line: 3, claimId: "c3", source: 4, url: "https://reports.northwind.test/q4-outlook.txt" }
      ])
    }))

  it("every issue is collected in one pass, in line order", () => {
    const issues = issuesOf("a.[1]{c1} x{c5}\nb.[1]{c1}\nEVI1\nnot evidence\nc9|1|\"q\"\nEND_EVI1\ntrailing")
    assert.deepStrictEqual(issues.map((i) => [i.line, i._tag]), [
      [1, "Evi1OrphanMarker"],
      [1, "Evi1MissingEvidence"],
      [2, "Evi1DuplicateClaimId"],
      [4, "Evi1MalformedLine"],
      [5, "Evi1UnusedEvidence"],
      [7, "Evi1MalformedLine"]
    ])
  })
})

describe("EVI1 answers", () => {
  it.effect("bound to the manifest and verified: claims are the sentences their markers end; uncited prose has its lines", () =>
    Effect.gen(function*() {
      const { answers, manifest } = yield* setup({ mode: "reject", uncited: "report" })
      const bound = right(Evi1.decode(sample, manifest, { manifestDigest: manifest.digest }))
      assert.deepStrictEqual(bound.claims.map((c) => [c.id, c.text, c.citations.map((x) => x.source)]), [
        ["c1", "Net sales for Q3 2026 were 4,210 units.", [SALES]],
        ["c2", "Stock was 1,180 units, 640 of them in Leeds.", [INVENTORY, SALES]],
        ["c3", "The 🚲 fleet grew to 42 bikes.", [emojiRecord.source]]
      ])
      const { answer } = yield* answers.verify(bound)
      assert.strictEqual(answer.outcome, "grounded")
      assert.deepStrictEqual(answer.summary, { claims: 3, claimsGrounded: 3, claimsRemoved: 0, citations: 4, citationsVerified: 4 })
      assert.deepStrictEqual(answer.uncited.map((u) => [u.sentence, u.line]), [
        ["This answer follows the EVI1 protocol; the appendix ends with END_EVI1.", 2],
        ["A sentence without any citation that still looks like a fact.", 4]
      ])
      assert.instanceOf(answer.uncited[0], UncitedSentence)
    }))

  it.effect("StaleManifest: the MANIFEST line or the caller's digest must be this run's; one of them is required", () =>
    Effect.gen(function*() {
      const { manifest } = yield* setup()
      const other = "b".repeat(64)
      const withLine = sample.replace("\nEVI1\nc1|", `\nEVI1\nMANIFEST ${other}\nc1|`)
      const stale = Evi1.decode(withLine, manifest)
      assert.isTrue(Either.isLeft(stale))
      const error = (stale as Either.Left<StaleManifest, unknown>).left
      assert.instanceOf(error, StaleManifest)
      assert.deepStrictEqual([error.named, error.current], [other, manifest.digest])
      const unnamed = (Evi1.decode(sample, manifest) as Either.Left<StaleManifest, unknown>).left
      assert.instanceOf(unnamed, StaleManifest)
      assert.strictEqual(unnamed.named, null)
      const good = sample.replace("\nEVI1\nc1|", `\nEVI1\nMANIFEST ${manifest.digest}\nc1|`)
      assert.isTrue(Either.isRight(Evi1.decode(good, manifest)))
      // Both named: they must agree.
      const disagree = (Evi1.decode(good, manifest, { manifestDigest: other }) as Either.Left<StaleManifest, unknown>).left
      assert.instanceOf(disagree, StaleManifest)
      assert.strictEqual(disagree.named, other)
    }))

  it.effect("the prompt numbers the sources, marks missing ones, states the rules, and holds no digest", () =>
    Effect.gen(function*() {
      const { manifest } = yield* setup()
      const prompt = Evi1.prompt(manifest)
      assert.include(prompt, `[1] ${SALES}`)
      assert.include(prompt, `[2] ${INVENTORY}`)
      assert.include(prompt, "[4] https://reports.northwind.test/q4-outlook.txt  NOT AVAILABLE")
      assert.include(prompt, "END_EVI1")
      assert.include(prompt, "cX|n|\"quote\"")
      assert.notMatch(prompt, /[0-9a-f]{64}/)
    }))
})
