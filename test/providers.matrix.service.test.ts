/**
 * The provider matrix through the service on 127.0.0.1: each row of `providerMatrix.ts` as
 * `POST /v1/verify/answer?format=<format>` (bedrock-stream's body as bytes), under the row's
 * `answers.citations` policy from the service's configuration; and the streamed rows (Anthropic
 * and Bedrock) through `POST /v1/stream/answer?format=anthropic-sse|bedrock-stream`, where a
 * fabricated quote is retracted while the answer streams and the other claim's citation verified.
 * The cases that do not apply to a provider are listed, with why, in `providerMatrix.ts`.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { bedrockFixtures } from "./providerFixtures.js"
import { service, setup } from "./providerEdges.js"
import { anthropicStreamRetraction, bedrockStreamGrounded, bedrockStreamRetraction, checkJson, rows } from "./providerMatrix.js"
import { bodyOf, streamOf } from "./support/eventStream.js"
import { byType, streamedText, wellFormed } from "./support/streamEvents.js"
import { cafeRecord } from "./providerSupport.js"

describe("POST /v1/verify/answer?format=<provider>: the matrix", () => {
  for (const row of rows) {
    it.scopedLive(`${row.format} · ${row.case} (answers.citations ${row.policy})`, () =>
      Effect.gen(function*() {
        const post = yield* service(yield* setup(row.policy))
        const { json, status } = yield* post.verify(row.format, row.input)
        // A refused response is a rendered verdict too (its typed error), not a failed request.
        assert.strictEqual(status, 200, JSON.stringify(json))
        checkJson(row, json, assert)
      }), { timeout: 60_000 })
  }
})

describe("POST /v1/stream/answer?format=<provider>: streamed rows", () => {
  for (const [format, body] of [["anthropic-sse", anthropicStreamRetraction], ["bedrock-stream", bedrockStreamRetraction]] as const) {
    it.scopedLive(`${format} · streamed answer with a retraction: SnippetAbsent retracted with its sentence, the other citation verified, one done`, () =>
      Effect.gen(function*() {
        const post = yield* service(yield* setup("quote"))
        const { events, status, text } = yield* post.stream(format, body)
        assert.strictEqual(status, 200, text)
        const done = wellFormed(events)
        const [retraction, ...more] = byType(events, "retraction")
        assert.deepStrictEqual(more, [])
        assert.deepStrictEqual([retraction!.footnote, retraction!.removeSentence, retraction!.reasons.map((r) => r._tag)], [1, true, ["SnippetAbsent"]])
        const streamed = streamedText(events)
        assert.strictEqual(streamed.slice(retraction!.sentence.start, retraction!.sentence.end), "The fleet grew to 44 bikes.[^1]")
        // The verified citation names the exact capture, after its claim's text has streamed.
        const [citation, ...others] = byType(events, "citation")
        assert.deepStrictEqual(others, [])
        assert.strictEqual(citation!.footnote, 2)
        assert.strictEqual(citation!.captureSha256, cafeRecord.sha256)
        assert.strictEqual(done.state, "grounded")
        assert.deepStrictEqual([done.summary.claimsRemoved, done.summary.citationsVerified, done.summary.citationsRetracted], [1, 1, 1])
      }), { timeout: 60_000 })
  }

  it.scopedLive("bedrock-stream · grounded: both citations verified as the answer streams", () =>
    Effect.gen(function*() {
      const post = yield* service(yield* setup("quote"))
      const { events } = yield* post.stream("bedrock-stream", bedrockStreamGrounded)
      const done = wellFormed(events)
      assert.deepStrictEqual(byType(events, "citation").map((c) => c.footnote), [1, 2])
      assert.deepStrictEqual(byType(events, "retraction"), [])
      assert.strictEqual(done.state, "grounded")
    }), { timeout: 60_000 })

  for (const policy of ["quote", "document"] as const) {
    it.scopedLive(`bedrock-stream · policy ${policy}: a citation without its text is ${policy === "quote" ? "a CoarseCitation retraction" : "a labelled document event"}`, () =>
      Effect.gen(function*() {
        const post = yield* service(yield* setup(policy))
        const { events } = yield* post.stream("bedrock-stream", bodyOf(streamOf(bedrockFixtures.documentLevel)))
        const done = wellFormed(events)
        if (policy === "quote") {
          assert.deepStrictEqual(byType(events, "retraction").map((r) => r.reasons.map((x) => x._tag)), [["CoarseCitation"]])
          assert.deepStrictEqual(byType(events, "document"), [])
        } else {
          assert.deepStrictEqual(byType(events, "retraction"), [])
          assert.deepStrictEqual(byType(events, "document").map((d) => d.label), ["document-level: no quote verified"])
          assert.strictEqual(done.summary.citationsDocumentLevel, 1)
        }
        assert.strictEqual(done.summary.citationsVerified, 0)
      }), { timeout: 60_000 })
  }
})
