/**
 * Mutation-killing tests for the verified-answer Schemas of src/answer/Records.ts
 * (a whole verified answer decoded back, every field kept; the strict structs
 * refuse unknown keys) and for Anthropic's binding of a response that carries
 * content blocks other than text (tool use, images: skipped, not read as prose).
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Either, Layer, Schema } from "effect"
import * as Anthropic from "../src/answer/Anthropic.js"
import { AnswerSummary, VerifiedAnswer, VerifiedAnswerCitation } from "../src/answer/Records.js"
import type { PipelineConfig } from "../src/Config.js"
import { decodeOptions, makeCaptureRecord, type SourceUrl } from "../src/Domain.js"
import * as Manifest from "../src/Manifest.js"
import * as MemoryStore from "../src/store/Memory.js"
import { grounded } from "./mutants.answerRender.support.js"
import { right } from "./mutants.support.js"
import { accessedAt } from "./support.js"

describe("verified answer Schemas", () => {
  it("a verified answer encodes to plain JSON and decodes back to the same value, every citation and summary field included", () => {
    const json = JSON.parse(JSON.stringify(Schema.encodeSync(VerifiedAnswer)(grounded)))
    // Hand-checked against the hand-built answer: the first verified citation and the summary as plain data.
    assert.deepStrictEqual(json.claims[0].citations[0], {
      index: 0,
      citation: { source: "https://answers.northwind.test/a.txt", captureSha256: "a1".repeat(32), quote: "4,210 units" },
      evidence: { span: { start: 10, end: 21 }, occurrences: 1, accessedAt: "2026-10-01T09:30:00.000Z" }
    })
    assert.deepStrictEqual(json.summary, { claims: 3, claimsGrounded: 2, claimsRemoved: 1, citations: 5, citationsVerified: 3 })
    const back = Schema.decodeUnknownSync(VerifiedAnswer, decodeOptions)(json)
    assert.deepStrictEqual(back, grounded)
  })

  it("the verified citation and the summary refuse unknown keys on their own (their strictness annotation)", () => {
    const citation = {
      index: 1,
      citation: { source: "https://answers.northwind.test/a.txt", captureSha256: "a1".repeat(32), quote: "q" },
      evidence: { span: { start: 0, end: 1 }, occurrences: 1, accessedAt: "2026-10-01T09:30:00.000Z" }
    }
    assert.deepStrictEqual(Schema.decodeUnknownSync(VerifiedAnswerCitation)(citation), citation)
    assert.isTrue(Either.isLeft(Schema.decodeUnknownEither(VerifiedAnswerCitation)({ ...citation, extra: 1 })))
    const summary = { claims: 4, claimsGrounded: 3, claimsRemoved: 1, citations: 6, citationsVerified: 5 }
    assert.deepStrictEqual(Schema.decodeUnknownSync(AnswerSummary)(summary), summary)
    assert.isTrue(Either.isLeft(Schema.decodeUnknownEither(AnswerSummary)({ ...summary, extra: 1 })))
    // Each field is required.
    for (const key of Object.keys(summary)) {
      const { [key]: _, ...rest } = summary as Record<string, number>
      assert.isTrue(Either.isLeft(Schema.decodeUnknownEither(AnswerSummary)(rest)), key)
    }
    for (const key of Object.keys(citation)) {
      const { [key]: _, ...rest } = citation as Record<string, unknown>
      assert.isTrue(Either.isLeft(Schema.decodeUnknownEither(VerifiedAnswerCitation)(rest)), key)
    }
  })
})

const A = "https://answers.northwind.test/a.txt" as SourceUrl
const recordA = makeCaptureRecord({ source: A, text: "alpha beta", accessedAt, contentType: "text/plain" })
const config = { sources: [A], labels: ["unused"] } as unknown as PipelineConfig
const manifestOf = Manifest.make(config).pipe(Effect.provide(MemoryStore.layer({ records: [recordA] }).pipe(Layer.orDie)))

describe("Anthropic responses with other content blocks", () => {
  it.effect("tool-use and image blocks are skipped: neither claims nor uncited prose, and block numbers stay their positions", () =>
    Effect.gen(function*() {
      const manifest = yield* manifestOf
      const response = {
        content: [
          { type: "tool_use", id: "t1", name: "lookup", input: {} },
          { type: "text", text: "Uncited prose here. Two sentences." },
          { type: "image", source: { type: "base64", data: "" } },
          { type: "text", text: " Alpha it is. ", citations: [{ type: "char_location", cited_text: "alpha", document_index: 0, start_char_index: 0, end_char_index: 5 }] }
        ]
      }
      const bound = right(Anthropic.fromJson(JSON.stringify(response), manifest, { manifestDigest: manifest.digest }))
      assert.deepStrictEqual(bound, {
        manifest: manifest.digest,
        claims: [{ id: "block-3", text: "Alpha it is.", citations: [{ source: A, captureSha256: recordA.sha256, quote: "alpha", chars: { start: 0, end: 5 } }] }],
        uncited: [{ text: "Uncited prose here.", line: null }, { text: "Two sentences.", line: null }]
      })
    }))
})
