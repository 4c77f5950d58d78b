/**
 * Mutation-killing tests for src/answer/Anthropic.ts: the vendor schemas at
 * their bounds, the size and array limits, the issue list's bound, and binding
 * every citation type to the manifest, with exact paths and messages.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Either, Layer, ParseResult, Schema } from "effect"
import * as Anthropic from "../src/answer/Anthropic.js"
import { limits } from "../src/answer/Records.js"
import type { PipelineConfig } from "../src/Config.js"
import { makeCaptureRecord, type SourceUrl } from "../src/Domain.js"
import { InvalidAnswer, StaleManifest } from "../src/Errors.js"
import * as Manifest from "../src/Manifest.js"
import * as MemoryStore from "../src/store/Memory.js"
import { accessedAt } from "./support.js"
import { left, right } from "./mutants.support.js"

const invalid = <A>(either: Either.Either<A, unknown>): InvalidAnswer => {
  const error = left(either)
  assert.instanceOf(error, InvalidAnswer)
  return error as InvalidAnswer
}

const A = "https://answers.northwind.test/a.txt" as SourceUrl
const B = "https://answers.northwind.test/b.txt" as SourceUrl
const MISSING = "https://answers.northwind.test/missing.txt" as SourceUrl
const recordA = makeCaptureRecord({ source: A, text: "alpha beta", accessedAt, contentType: "text/plain" })
const recordB = makeCaptureRecord({ source: B, text: "gamma delta", accessedAt, contentType: "text/plain" })
const config = { sources: [A, B, MISSING], labels: ["unused"] } as unknown as PipelineConfig
const manifestOf = Manifest.make(config).pipe(Effect.provide(MemoryStore.layer({ records: [recordA, recordB] }).pipe(Layer.orDie)))

const char = (document_index: number, cited_text: string, start: number, end: number) => ({
  type: "char_location" as const,
  cited_text,
  document_index,
  start_char_index: start,
  end_char_index: end
})
const page = (document_index: number, start: number, end: number) => ({
  type: "page_location" as const,
  cited_text: "alpha",
  document_index,
  start_page_number: start,
  end_page_number: end
})
const block = (document_index: number, start: number, end: number) => ({
  type: "content_block_location" as const,
  cited_text: "alpha",
  document_index,
  start_block_index: start,
  end_block_index: end
})
const response = (content: ReadonlyArray<unknown>) => ({ id: "msg", type: "message", content })

describe("decodeResponse", () => {
  it("bounds: indices from 0, pages from 1; text blocks need text; other blocks need a string type other than text", () => {
    assert.isTrue(Either.isRight(Anthropic.decodeResponse(response([{ type: "text", text: "x", citations: [char(0, "a", 0, 1), block(0, 0, 1), page(0, 1, 2)] }]))))
    const cases: ReadonlyArray<readonly [unknown, ReadonlyArray<string | number>]> = [
      [char(-1, "a", 0, 1), ["content", 0, "citations", 0, "document_index"]],
      [char(0, "a", -1, 1), ["content", 0, "citations", 0, "start_char_index"]],
      [char(0, "a", 0, -1), ["content", 0, "citations", 0, "end_char_index"]],
      [char(0, "a", 0.5, 1), ["content", 0, "citations", 0, "start_char_index"]],
      [char(0, " ", 0, 1), ["content", 0, "citations", 0, "cited_text"]],
      [page(0, 0, 2), ["content", 0, "citations", 0, "start_page_number"]],
      [page(0, 1, 0), ["content", 0, "citations", 0, "end_page_number"]],
      [block(0, -1, 1), ["content", 0, "citations", 0, "start_block_index"]],
      [block(0, 0, -1), ["content", 0, "citations", 0, "end_block_index"]]
    ]
    for (const [citation, path] of cases) {
      const error = invalid(Anthropic.decodeResponse(response([{ type: "text", text: "x", citations: [citation] }])))
      assert.deepInclude(error.issues.map((i) => i.path), path, JSON.stringify(citation))
    }
    // A block typed text without a text field fails both alternatives.
    const noText = invalid(Anthropic.decodeResponse(response([{ type: "text" }])))
    assert.deepInclude(noText.issues.map((i) => i.message), "a text block must have text and valid citations")
    assert.isTrue(Either.isLeft(Anthropic.decodeResponse(response([{ type: 5 }]))))
    assert.isTrue(Either.isLeft(Anthropic.decodeResponse(response([{}]))))
    assert.isTrue(Either.isLeft(Anthropic.decodeResponse({ id: "msg" })))
    assert.deepStrictEqual(right(Anthropic.decodeResponse(response([{ type: "thinking", thinking: "…" }, { type: "text", text: "y", citations: null }]))), {
      content: [{ type: "thinking" }, { type: "text", text: "y", citations: null }]
    })
  })

  it("every issue reported (errors: all), at most maxIssues listed and the rest counted", () => {
    const two = invalid(Anthropic.decodeResponse(response([{ type: "text", text: "x", citations: [char(-1, "a", -1, 1)] }])))
    assert.deepStrictEqual(two.issues.slice(0, 2).map((i) => i.path), [
      ["content", 0, "citations", 0, "document_index"],
      ["content", 0, "citations", 0, "start_char_index"]
    ])
    const many = response(Array.from({ length: 30 }, () => ({ type: "text", text: "x", citations: [char(-1, "a", 0, 1)] })))
    // The issues the same Schema reports, counted here with Effect's own formatter.
    const all = ParseResult.ArrayFormatter.formatErrorSync(
      left(Schema.decodeUnknownEither(Anthropic.Response, { errors: "all", onExcessProperty: "ignore" })(many))
    )
    assert.isAbove(all.length, 20)
    const error = invalid(Anthropic.decodeResponse(many))
    assert.strictEqual(error.issues.length, 20)
    assert.strictEqual(error.omitted, all.length - 20)
    assert.deepStrictEqual(error.issues[0]!.path, all[0]!.path)
    assert.strictEqual(error.issues[0]!.message, all[0]!.message)
    assert.strictEqual(two.omitted, undefined)
  })

  it("messages carrying a hostile value are bounded", () => {
    const error = invalid(Anthropic.decodeResponse(response([{ type: "text", text: "x", citations: [{ ...char(0, "a", 0, 1), type: "x".repeat(5000) }] }])))
    for (const issue of error.issues) assert.isAtMost(issue.message.length, 1000)
    assert.isTrue(error.issues.some((i) => i.message.includes("xxxx")))
  })

  it("not plain data: refused before the Schema", () => {
    const error = invalid(Anthropic.decodeResponse({ content: [], at: new Date(0) }))
    assert.strictEqual(error.issues.length, 1)
    assert.deepStrictEqual(error.issues[0]!.path, ["at"])
  })

  it("more than maxClaims content blocks (a parsed value): refused by the Schema", () => {
    const error = invalid(Anthropic.decodeResponse({ content: Array.from({ length: limits.maxClaims + 1 }, () => ({ type: "thinking" })) }))
    assert.deepStrictEqual(error.issues.map((i) => i.path), [["content"]])
    assert.isTrue(Either.isRight(Anthropic.decodeResponse({ content: Array.from({ length: limits.maxClaims }, () => ({ type: "thinking" })) })))
  })
})

describe("decodeResponseJson", () => {
  it("exactly maxChars is read, one more refused before parsing", () => {
    const json = JSON.stringify(response([]))
    const padded = json + " ".repeat(limits.maxChars - json.length)
    assert.deepStrictEqual(right(Anthropic.decodeResponseJson(padded)), { content: [] })
    assert.deepStrictEqual(
      invalid(Anthropic.decodeResponseJson(padded + " ")),
      new InvalidAnswer({ issues: [{ path: [], message: "is longer than 16777216 characters" }] })
    )
  })

  it("any array over maxClaims elements is refused by the structural pass (citations have no Schema bound)", () => {
    const citations = Array.from({ length: limits.maxClaims + 1 }, () => char(0, "a", 0, 1))
    const error = invalid(Anthropic.decodeResponseJson(JSON.stringify(response([{ type: "text", text: "x", citations }]))))
    assert.deepStrictEqual(error.issues, [{ path: ["content", 0, "citations"], message: "must hold at most 10000 elements, got 10001" }])
    const repeated = invalid(Anthropic.decodeResponseJson("{\"content\":[],\"content\":[]}"))
    assert.strictEqual(repeated.issues.length, 1)
    assert.isTrue(Either.isRight(Anthropic.decodeResponseJson(JSON.stringify(response([{ type: "text", text: "x", citations: citations.slice(1) }])))))
  })
})

describe("toAnswer", () => {
  it.effect("each cited text block a claim (id by its position), uncited blocks' sentences, other blocks skipped", () =>
    Effect.gen(function*() {
      const manifest = yield* manifestOf
      const bound = right(Anthropic.toAnswer(
        {
          content: [
            { type: "thinking" },
            { type: "text", text: " Alpha beta. ", citations: [char(0, "alpha", 0, 5), page(1, 2, 3), block(0, 0, 1)] },
            { type: "text", text: "First uncited. Second one!", citations: null },
            { type: "text", text: "Third.", citations: [] },
            { type: "text", text: "Fourth." },
            { type: "text", text: "Gamma.", citations: [char(1, "gamma", 0, 5)] }
          ]
        },
        manifest,
        { manifestDigest: manifest.digest }
      ))
      assert.deepStrictEqual(bound, {
        manifest: manifest.digest,
        claims: [
          {
            id: "block-1",
            text: "Alpha beta.",
            citations: [
              { source: A, captureSha256: recordA.sha256, quote: "alpha", chars: { start: 0, end: 5 } },
              { source: B, captureSha256: recordB.sha256, quote: "alpha", page: { start: 2, end: 3 } },
              { source: A, captureSha256: recordA.sha256, quote: "alpha", blocks: { start: 0, end: 1 } }
            ]
          },
          { id: "block-5", text: "Gamma.", citations: [{ source: B, captureSha256: recordB.sha256, quote: "gamma", chars: { start: 0, end: 5 } }] }
        ],
        uncited: [
          { text: "First uncited.", line: null },
          { text: "Second one!", line: null },
          { text: "Third.", line: null },
          { text: "Fourth.", line: null }
        ]
      })
    }))

  it.effect("empty ranges, sources out of the manifest or missing, blank cited text: every issue at its path", () =>
    Effect.gen(function*() {
      const manifest = yield* manifestOf
      const error = left(Anthropic.toAnswer(
        {
          content: [
            {
              type: "text",
              text: "x",
              citations: [char(0, "a", 3, 3), char(0, "a", 4, 3), page(0, 2, 2), page(0, 3, 2), block(0, 1, 1), block(0, 2, 1), char(3, "a", 0, 1), char(2, "a", 0, 1)]
            },
            { type: "text", text: "  \n ", citations: [char(0, "a", 0, 1)] }
          ]
        },
        manifest,
        { manifestDigest: manifest.digest }
      ))
      const at = (j: number, key: string) => ["content", 0, "citations", j, key]
      assert.deepStrictEqual(error, new InvalidAnswer({
        issues: [
          { path: at(0, "end_char_index"), message: "must be greater than start_char_index" },
          { path: at(1, "end_char_index"), message: "must be greater than start_char_index" },
          { path: at(2, "end_page_number"), message: "must be greater than start_page_number" },
          { path: at(3, "end_page_number"), message: "must be greater than start_page_number" },
          { path: at(4, "end_block_index"), message: "must be greater than start_block_index" },
          { path: at(5, "end_block_index"), message: "must be greater than start_block_index" },
          { path: at(6, "document_index"), message: "source 4 is not in the manifest (sources are numbered 1 to 3)" },
          { path: at(7, "document_index"), message: `source 3 (${MISSING}) has no usable capture in this run (MissingCapture); it cannot be cited` },
          { path: ["content", 1, "text"], message: "a cited text block must have text" }
        ]
      }))
    }))

  it.effect("the manifest must be named by the caller, and be this run's", () =>
    Effect.gen(function*() {
      const manifest = yield* manifestOf
      assert.deepStrictEqual(left(Anthropic.toAnswer({ content: [] }, manifest, {})), new StaleManifest({ named: null, current: manifest.digest }))
      const other = "e".repeat(64)
      assert.deepStrictEqual(left(Anthropic.fromJson("{\"content\":[]}", manifest, { manifestDigest: other })), new StaleManifest({ named: other, current: manifest.digest }))
      assert.deepStrictEqual(right(Anthropic.fromJson("{\"content\":[]}", manifest, { manifestDigest: manifest.digest })), {
        manifest: manifest.digest,
        claims: [],
        uncited: []
      })
      const bad = invalid(Anthropic.fromJson("{\"content\":[{\"type\":\"text\"}]}", manifest, { manifestDigest: manifest.digest }))
      assert.deepStrictEqual(bad.issues.map((i) => i.path)[0], ["content", 0, "text"])
    }))
})
