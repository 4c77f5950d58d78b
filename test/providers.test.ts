/**
 * Provider-native citations through the official SDKs: each client is pointed at a loopback server
 * speaking its provider's wire protocol with recorded responses; the SDK parses them and citegate
 * verifies what the SDK hands back, through the one matching path (the Answers service).
 */
import { BedrockRuntimeClient, ConverseCommand } from "@aws-sdk/client-bedrock-runtime"
import { assert, describe, it } from "@effect/vitest"
import { GoogleGenAI } from "@google/genai"
import { CohereClientV2 } from "cohere-ai"
import { Effect, Either, Schema } from "effect"
import OpenAI from "openai"
import * as Bedrock from "../src/answer/Bedrock.js"
import * as Capabilities from "../src/answer/Capabilities.js"
import { answerFormats } from "../src/answer/Formats.js"
import * as Cohere from "../src/answer/Cohere.js"
import * as Gemini from "../src/answer/Gemini.js"
import * as OpenAIAnswer from "../src/answer/OpenAI.js"
import { type BoundAnswer, documentLevelLabel } from "../src/answer/Records.js"
import * as AnswerRender from "../src/answer/Render.js"
import * as Config from "../src/Config.js"
import {
  AnswerRejected,
  CoarseCitation,
  InvalidAnswer,
  NotApproved,
  SnippetAbsent,
  SpanMismatch,
  StaleManifest,
  UnresolvableSource
} from "../src/Errors.js"
import { utf8Offsets } from "../src/answer/Provider.js"
import {
  bedrockFixtures,
  bikes,
  cohereFixtures,
  cohereWire,
  geminiFixtures,
  geminiSentences,
  geminiText,
  openaiChatFixtures,
  openaiFixtures,
  REDIRECT,
  tokyo,
  utf8
} from "./providerFixtures.js"
import { answersFor, CAFE, cafeText, MISSING, PLAIN, providerServer, UNLISTED } from "./providerSupport.js"

const served = providerServer({
  bedrock: bedrockFixtures,
  gemini: geminiFixtures,
  openai: openaiFixtures,
  openaiChat: openaiChatFixtures,
  cohere: Object.fromEntries(Object.entries(cohereFixtures).map(([k, v]) => [k, cohereWire(v)]))
})

/** What each SDK hands back for the fixture `name`, as JSON text (what a caller would store or pass on). */
const viaSdk = {
  bedrock: (base: string, name: string) =>
    Effect.promise(async () => {
      const client = new BedrockRuntimeClient({
        region: "us-east-1",
        endpoint: base,
        credentials: { accessKeyId: "AKIDEXAMPLE", secretAccessKey: "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY" },
        maxAttempts: 1
      })
      const out = await client.send(new ConverseCommand({ modelId: name, messages: [{ role: "user", content: [{ text: "q" }] }] }))
      client.destroy()
      return JSON.stringify(out)
    }),
  gemini: (base: string, name: string) =>
    Effect.promise(async () => {
      const ai = new GoogleGenAI({ apiKey: "test-key", httpOptions: { baseUrl: base } })
      const out = await ai.models.generateContent({ model: name, contents: "q" })
      return JSON.stringify(out)
    }),
  openai: (base: string, name: string) =>
    Effect.promise(async () => {
      const client = new OpenAI({ apiKey: "test-key", baseURL: `${base}/v1`, maxRetries: 0 })
      return JSON.stringify(await client.responses.create({ model: name, input: "q" }))
    }),
  openaiChat: (base: string, name: string) =>
    Effect.promise(async () => {
      const client = new OpenAI({ apiKey: "test-key", baseURL: `${base}/v1`, maxRetries: 0 })
      return JSON.stringify(await client.chat.completions.create({ model: name, messages: [{ role: "user", content: "q" }] }))
    }),
  cohere: (base: string, name: string) =>
    Effect.promise(async () => {
      const client = new CohereClientV2({ token: "test-key", environment: base })
      return JSON.stringify(await client.chat({ model: name, messages: [{ role: "user", content: "q" }] }, { maxRetries: 0 }))
    })
}

const right = <A, E>(either: Either.Either<A, E>): A => {
  if (Either.isLeft(either)) assert.fail(`expected Right, got ${JSON.stringify(either.left)}`)
  return (either as Either.Right<E, A>).right
}
const left = <A, E>(either: Either.Either<A, E>): E => {
  if (Either.isRight(either)) assert.fail(`expected Left, got ${JSON.stringify(either.right)}`)
  return (either as Either.Left<E, A>).left
}

/** Bind with `bind`, verify under the policy in drop mode; the verified answer. */
const verify = (
  policy: "quote" | "document" | undefined,
  bind: (manifest: any, options: { manifestDigest: string }) => Either.Either<BoundAnswer, unknown>
) =>
  Effect.gen(function*() {
    const { answers, manifest } = yield* answersFor(policy)
    const bound = right(bind(manifest, { manifestDigest: manifest.digest }))
    return (yield* answers.verify(bound)).answer
  })

const retractedErrors = (answer: { claims: ReadonlyArray<any>; removed: ReadonlyArray<any>; documentLevel?: ReadonlyArray<any> | undefined }) => [
  ...answer.claims.flatMap((c) => c.retracted.map((r: any) => r.error)),
  ...(answer.documentLevel ?? []).flatMap((c) => c.retracted.map((r: any) => r.error)),
  ...answer.removed.flatMap((c) => c.reasons.map((r: any) => r.error))
]

describe("unit conversion", () => {
  it("UTF-8 byte offsets map to string positions; offsets inside a character are refused", () => {
    const text = "é東😀a"
    const o = utf8Offsets(text)
    assert.strictEqual(o.byteLength, utf8(text))
    assert.deepStrictEqual([0, 2, 5, 9, 10].map(o.toUtf16), [0, 1, 2, 4, 5])
    assert.deepStrictEqual([1, 3, 4, 6, 7, 8, 11, -1, 0.5].map(o.toUtf16), [undefined, undefined, undefined, undefined, undefined, undefined, undefined, undefined, undefined])
  })
})

describe("Bedrock Converse through @aws-sdk/client-bedrock-runtime", () => {
  it.scoped("grounded: code-point documentChar offsets past an emoji and CJK verify at their span; the SDK signed the request", () =>
    Effect.gen(function*() {
      const server = yield* served
      const text = yield* viaSdk.bedrock(server.bedrockBase, "grounded")
      assert.match(String(server.requests[0]!.headers["authorization"]), /^AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE\//)
      const answer = yield* verify(undefined, (m, o) => Bedrock.fromJson(text, m, o))
      assert.strictEqual(answer.outcome, "grounded")
      assert.strictEqual(answer.claims.length, 1)
      const spans = answer.claims[0]!.citations.map((c) => cafeText.slice(c.evidence.span.start, c.evidence.span.end))
      assert.deepStrictEqual(spans, [bikes, tokyo])
      assert.deepStrictEqual(answer.summary, { claims: 1, claimsGrounded: 1, claimsRemoved: 0, citations: 2, citationsVerified: 2, claimsDocumentLevel: 0, citationsDocumentLevel: 0 })
    }))

  it.scoped("a fabricated quote is SnippetAbsent; UTF-16 or byte offsets are SpanMismatch (fail closed, never matched elsewhere)", () =>
    Effect.gen(function*() {
      const server = yield* served
      for (const [name, tag] of [["fabricated", "SnippetAbsent"], ["utf16Offsets", "SpanMismatch"], ["byteOffsets", "SpanMismatch"]] as const) {
        const text = yield* viaSdk.bedrock(server.bedrockBase, name)
        const answer = yield* verify(undefined, (m, o) => Bedrock.fromJson(text, m, o))
        assert.strictEqual(answer.outcome, "no_evidence", name)
        const errors = retractedErrors(answer)
        assert.strictEqual(errors.length, 1, name)
        assert.strictEqual(errors[0]._tag, tag, name)
        assert.isTrue(errors[0] instanceof (tag === "SnippetAbsent" ? SnippetAbsent : SpanMismatch), name)
      }
    }))

  it.scoped("an unapproved web URL is NotApproved; a documentIndex of a source missing in this run is InvalidAnswer", () =>
    Effect.gen(function*() {
      const server = yield* served
      const unapproved = yield* viaSdk.bedrock(server.bedrockBase, "unapproved")
      const answer = yield* verify(undefined, (m, o) => Bedrock.fromJson(unapproved, m, o))
      const [error] = retractedErrors(answer)
      assert.instanceOf(error, NotApproved)
      assert.strictEqual((error as NotApproved).source, UNLISTED)
      const missing = yield* viaSdk.bedrock(server.bedrockBase, "missing")
      const { manifest } = yield* answersFor(undefined)
      const invalid = left(Bedrock.fromJson(missing, manifest, { manifestDigest: manifest.digest }))
      assert.instanceOf(invalid, InvalidAnswer)
      assert.include((invalid as InvalidAnswer).issues[0]!.message, MISSING)
      assert.instanceOf(left(Bedrock.fromJson(missing, manifest, { manifestDigest: "0".repeat(64) })), StaleManifest)
    }))

  it.scoped("a citation without sourceContent is document-level: CoarseCitation under quote, labelled under document", () =>
    Effect.gen(function*() {
      const server = yield* served
      const text = yield* viaSdk.bedrock(server.bedrockBase, "documentLevel")
      const strict = yield* verify("quote", (m, o) => Bedrock.fromJson(text, m, o))
      const [error] = retractedErrors(strict)
      assert.instanceOf(error, CoarseCitation)
      assert.strictEqual((error as CoarseCitation).source, PLAIN)
      const loose = yield* verify("document", (m, o) => Bedrock.fromJson(text, m, o))
      assert.strictEqual(loose.outcome, "no_evidence")
      assert.strictEqual(loose.documentLevel!.length, 1)
      assert.strictEqual(loose.documentLevel![0]!.documents[0]!.label, documentLevelLabel)
      assert.strictEqual(loose.summary.citationsVerified, 0)
      assert.strictEqual(loose.summary.citationsDocumentLevel, 1)
    }))
})

describe("Gemini grounding through @google/genai", () => {
  it.scoped("grounded: UTF-8 byte segments become the exact sentences (a naive slice would not); retrievedContext.text verifies", () =>
    Effect.gen(function*() {
      const server = yield* served
      const text = yield* viaSdk.gemini(server.base, "grounded")
      const support = (geminiFixtures.grounded.candidates![0]!.groundingMetadata!.groundingSupports!)[1]!
      // The classic mistake: bytes taken as string indices slice the wrong text.
      assert.notStrictEqual(geminiText.slice(support.segment!.startIndex!, support.segment!.endIndex!), geminiSentences.tokyo)
      const { manifest } = yield* answersFor(undefined)
      const bound = right(Gemini.fromJson(text, manifest, { manifestDigest: manifest.digest }))
      assert.deepStrictEqual(bound.claims.map((c) => c.text), [geminiSentences.cafe, geminiSentences.tokyo])
      assert.deepStrictEqual(bound.uncited.map((u) => u.text), [geminiSentences.bikes, "Das ist alles."])
      const answer = yield* verify(undefined, (m, o) => Gemini.fromJson(text, m, o))
      assert.strictEqual(answer.summary.citationsVerified, 2)
      // The second chunk names its document by a declared id ("doc-cafe").
      assert.deepStrictEqual(answer.claims.map((c) => c.citations[0]!.citation.source), [CAFE, CAFE])
    }))

  it.scoped("a fabricated retrievedContext.text is SnippetAbsent; segments in UTF-16 units are InvalidAnswer", () =>
    Effect.gen(function*() {
      const server = yield* served
      const fabricated = yield* viaSdk.gemini(server.base, "fabricated")
      const [error] = retractedErrors(yield* verify(undefined, (m, o) => Gemini.fromJson(fabricated, m, o)))
      assert.instanceOf(error, SnippetAbsent)
      const wrong = yield* viaSdk.gemini(server.base, "utf16Offsets")
      const { manifest } = yield* answersFor(undefined)
      const invalid = left(Gemini.fromJson(wrong, manifest, { manifestDigest: manifest.digest })) as InvalidAnswer
      assert.instanceOf(invalid, InvalidAnswer)
      assert.include(JSON.stringify(invalid.issues), "UTF-8 bytes")
    }))

  it.scoped("a web chunk's grounding redirect is UnresolvableSource under either policy", () =>
    Effect.gen(function*() {
      const server = yield* served
      const text = yield* viaSdk.gemini(server.base, "redirect")
      for (const policy of ["quote", "document"] as const) {
        const [error] = retractedErrors(yield* verify(policy, (m, o) => Gemini.fromJson(text, m, o)))
        assert.instanceOf(error, UnresolvableSource)
        assert.deepStrictEqual([(error as UnresolvableSource).reason, (error as UnresolvableSource).document], ["redirect-url", REDIRECT])
      }
    }))

  it.scoped("a retrieved document without text is document-level both ways", () =>
    Effect.gen(function*() {
      const server = yield* served
      const text = yield* viaSdk.gemini(server.base, "documentLevel")
      assert.instanceOf(retractedErrors(yield* verify("quote", (m, o) => Gemini.fromJson(text, m, o)))[0], CoarseCitation)
      const loose = yield* verify("document", (m, o) => Gemini.fromJson(text, m, o))
      assert.deepStrictEqual(loose.documentLevel!.map((c) => c.text), [geminiSentences.bikes])
    }))
})

describe("OpenAI annotations through openai", () => {
  it.scoped("Responses: every citation is document-level; exact URL and declared file id resolve, the rest fail typed", () =>
    Effect.gen(function*() {
      const server = yield* served
      const text = yield* viaSdk.openai(server.base, "mixed")
      const strict = yield* verify("quote", (m, o) => OpenAIAnswer.fromJson(text, m, o))
      assert.strictEqual(strict.outcome, "no_evidence")
      const tags = retractedErrors(strict).map((e) => e._tag).sort()
      assert.deepStrictEqual(tags, ["CoarseCitation", "CoarseCitation", "NotApproved", "UnresolvableSource"])
      const loose = yield* verify("document", (m, o) => OpenAIAnswer.fromJson(text, m, o))
      assert.deepStrictEqual(loose.documentLevel!.map((c) => c.documents.map((d) => d.citation.document)), [[PLAIN], ["file-plain"]])
      assert.deepStrictEqual(retractedErrors(loose).map((e) => e._tag).sort(), ["NotApproved", "UnresolvableSource"])
      assert.strictEqual(loose.summary.citationsVerified, 0)
      // No quote is ever verified, so nothing is grounded: the claim's text was not searched in the source.
      assert.strictEqual(loose.claims.length, 0)
    }))

  it.scoped("Responses and Chat: an index past the output text is InvalidAnswer; Chat resolves by exact URL only", () =>
    Effect.gen(function*() {
      const server = yield* served
      const { manifest } = yield* answersFor(undefined)
      const o = { manifestDigest: manifest.digest }
      assert.instanceOf(left(OpenAIAnswer.fromJson(yield* viaSdk.openai(server.base, "outside"), manifest, o)), InvalidAnswer)
      assert.instanceOf(left(OpenAIAnswer.chatFromJson(yield* viaSdk.openaiChat(server.base, "outside"), manifest, o)), InvalidAnswer)
      const chat = yield* viaSdk.openaiChat(server.base, "mixed")
      const loose = yield* verify("document", (m, opt) => OpenAIAnswer.chatFromJson(chat, m, opt))
      assert.strictEqual(loose.summary.citationsDocumentLevel, 1)
      assert.deepStrictEqual(retractedErrors(loose).map((e) => e._tag), ["NotApproved"])
      const strict = yield* verify("quote", (m, opt) => OpenAIAnswer.chatFromJson(chat, m, opt))
      assert.deepStrictEqual(retractedErrors(strict).map((e) => e._tag).sort(), ["CoarseCitation", "NotApproved"])
    }))
})

describe("Cohere v2 citations through cohere-ai", () => {
  it.scoped("declared ids and document urls resolve, document-level both ways; code-point spans past an emoji hold the cited text", () =>
    Effect.gen(function*() {
      const server = yield* served
      const text = yield* viaSdk.cohere(server.base, "grounded")
      // The SDK renamed the wire's content_index; both spellings are read.
      assert.include(text, "contentIndex")
      const strict = yield* verify("quote", (m, o) => Cohere.fromJson(text, m, o))
      assert.deepStrictEqual(retractedErrors(strict).map((e) => e._tag), ["CoarseCitation", "CoarseCitation"])
      const loose = yield* verify("document", (m, o) => Cohere.fromJson(text, m, o))
      assert.deepStrictEqual(loose.documentLevel!.map((c) => c.documents[0]!.citation.source), [CAFE, PLAIN])
      assert.deepStrictEqual(loose.documentLevel!.map((c) => c.text), ["Der 🚲-Bestand: 東京 hatte 42 Verkäufe.", "Warehouse B shipped 310 crates."])
    }))

  it.scoped("an undeclared id and a tool result are UnresolvableSource; UTF-16 offsets are InvalidAnswer", () =>
    Effect.gen(function*() {
      const server = yield* served
      const text = yield* viaSdk.cohere(server.base, "unresolvable")
      const errors = retractedErrors(yield* verify("document", (m, o) => Cohere.fromJson(text, m, o))) as Array<UnresolvableSource>
      assert.deepStrictEqual(errors.map((e) => [e._tag, e.reason]), [["UnresolvableSource", "undeclared-document-id"], ["UnresolvableSource", "tool-output"]])
      const { manifest } = yield* answersFor(undefined)
      const wrong = yield* viaSdk.cohere(server.base, "utf16Offsets")
      assert.instanceOf(left(Cohere.fromJson(wrong, manifest, { manifestDigest: manifest.digest })), InvalidAnswer)
    }))
})

describe("reject mode, renderings and the capability table", () => {
  it.effect("reject mode: a document-level citation under quote rejects the answer with CoarseCitation", () =>
    Effect.gen(function*() {
      const { answers, manifest } = yield* answersFor("quote", "reject")
      const bound = right(Bedrock.toAnswer(
        Schema.decodeUnknownSync(Bedrock.Response)(bedrockFixtures.documentLevel),
        manifest,
        { manifestDigest: manifest.digest }
      ))
      const error = yield* Effect.flip(answers.verify(bound))
      assert.instanceOf(error, AnswerRejected)
      assert.instanceOf((error as AnswerRejected).citations[0]!.error, CoarseCitation)
    }))

  it.effect("every rendering shows document-level citations apart, labelled, and counts them apart", () =>
    Effect.gen(function*() {
      const { answers, manifest } = yield* answersFor("document")
      const bound = right(Bedrock.toAnswer(
        Schema.decodeUnknownSync(Bedrock.Response)(bedrockFixtures.documentLevel),
        manifest,
        { manifestDigest: manifest.digest }
      ))
      const checked = yield* answers.verify(bound)
      const rendering = AnswerRender.AnswerRendering.Verified(checked)
      for (const format of ["text", "markdown", "html"] as const) {
        const out = AnswerRender.render(format, rendering)
        assert.include(out, documentLevelLabel, format)
        assert.include(out, "1 claim and 1 citation document-level", format)
        assert.notInclude(out, "VERIFIED QUOTE", format)
      }
      const json = JSON.parse(AnswerRender.render("json", rendering))
      assert.strictEqual(json.answer.summary.citationsDocumentLevel, 1)
      assert.strictEqual(json.answer.summary.citationsVerified, 0)
      assert.strictEqual(json.answer.documentLevel[0].label, documentLevelLabel)
      assert.strictEqual(json.answer.citationsPolicy, "document")
    }))

  it("the capability table decodes strictly and names every provider format", () => {
    const table = Schema.decodeUnknownSync(Capabilities.Capabilities, { onExcessProperty: "error" })(Capabilities.capabilities)
    assert.deepStrictEqual(
      table.formats.map((f) => [f.format, f.level]),
      [
        ["json", "quote"], ["evi1", "quote"], ["anthropic", "quote"], ["anthropic-sse", "quote"], ["bedrock", "quote-or-document"],
        ["bedrock-stream", "quote-or-document"], ["gemini", "quote-or-document"], ["openai", "document"], ["openai-chat", "document"],
        ["cohere", "document"]
      ]
    )
    // One row per format the dispatcher reads, in its order.
    assert.deepStrictEqual(table.formats.map((f) => f.format), [...answerFormats])
  })

  it("answers.documentIds: an id for an unconfigured source, a duplicate id, or an id equal to a source URL is InvalidConfig", () => {
    const base = { sources: [CAFE, PLAIN], labels: ["x"] }
    for (const documentIds of [
      [{ source: UNLISTED, id: "a" }],
      [{ source: CAFE, id: "a" }, { source: PLAIN, id: "a" }],
      [{ source: CAFE, id: PLAIN }],
      [{ source: CAFE, id: "has space" }],
      [{ source: CAFE, id: "a", extra: 1 }]
    ]) {
      const result = Effect.runSync(Effect.either(Config.decode({ ...base, answers: { documentIds } })))
      assert.isTrue(Either.isLeft(result), JSON.stringify(documentIds))
    }
    assert.isTrue(Either.isLeft(Effect.runSync(Effect.either(Config.decode({ ...base, answers: { citations: "loose" } })))))
  })
})
