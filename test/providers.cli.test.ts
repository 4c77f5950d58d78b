/**
 * Provider formats through the edges: `run-pipeline verify-answer --format-in <provider>` (a spawned
 * process on the built CLI) and `POST /v1/verify/answer?format=<provider>` (the service on
 * 127.0.0.1), with the recorded responses of the SDK tests and the configuration's
 * `answers.citations` policy.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { bedrockFixtures, cohereFixtures, cohereWire, geminiFixtures, openaiChatFixtures, openaiFixtures } from "./providerFixtures.js"
import { service, setup, verifyCli } from "./providerEdges.js"

describe("run-pipeline verify-answer --format-in <provider>", () => {
  it.scopedLive("bedrock grounded (exit 0) and wrong offsets (SpanMismatch, exit 1); gemini redirect UnresolvableSource", () =>
    Effect.gen(function*() {
      const s = yield* setup("quote")
      const grounded = yield* verifyCli(s, "bedrock", yield* s.write("grounded.json", bedrockFixtures.grounded))
      assert.strictEqual(grounded.code, 0, grounded.stderr)
      assert.strictEqual(JSON.parse(grounded.stdout).answer.summary.citationsVerified, 2)
      const wrong = yield* verifyCli(s, "bedrock", yield* s.write("wrong.json", bedrockFixtures.utf16Offsets))
      assert.strictEqual(wrong.code, 1, wrong.stderr)
      assert.strictEqual(JSON.parse(wrong.stdout).answer.removed[0].reasons[0].error._tag, "SpanMismatch")
      const redirect = yield* verifyCli(s, "gemini", yield* s.write("redirect.json", geminiFixtures.redirect))
      assert.strictEqual(redirect.code, 1, redirect.stderr)
      assert.strictEqual(JSON.parse(redirect.stdout).answer.removed[0].reasons[0].error.reason, "redirect-url")
    }), { timeout: 120_000 })

  it.scopedLive("openai, openai-chat, cohere under quote: CoarseCitation; under document: labelled document-level, exit 1 (nothing grounded)", () =>
    Effect.gen(function*() {
      for (const policy of ["quote", "document"] as const) {
        const s = yield* setup(policy)
        for (const [format, fixture] of [
          ["openai", openaiFixtures.mixed],
          ["openai-chat", openaiChatFixtures.mixed],
          ["cohere", cohereWire(cohereFixtures.grounded)]
        ] as const) {
          const ran = yield* verifyCli(s, format, yield* s.write(`${format}.json`, fixture))
          // No quote verified: never "grounded", whatever the policy.
          assert.strictEqual(ran.code, 1, `${format} ${policy}: ${ran.stderr}`)
          const answer = JSON.parse(ran.stdout).answer
          if (policy === "quote") {
            assert.include(JSON.stringify(answer.removed), "CoarseCitation", format)
            assert.strictEqual(answer.summary.citationsDocumentLevel, 0, format)
          } else {
            assert.isAbove(answer.summary.citationsDocumentLevel, 0, format)
            assert.strictEqual(answer.documentLevel[0].label, "document-level: no quote verified", format)
          }
        }
      }
    }), { timeout: 180_000 })

  it.scopedLive("an unknown provider format is a usage error listing the formats", () =>
    Effect.gen(function*() {
      const s = yield* setup("quote")
      const ran = yield* verifyCli(s, "mistral", yield* s.write("x.json", {}))
      assert.strictEqual(ran.code, 2)
      assert.include(ran.stderr, "bedrock, bedrock-stream, gemini, openai, openai-chat, cohere")
    }), { timeout: 60_000 })
})

describe("POST /v1/verify/answer?format=<provider>", () => {
  it.scopedLive("every provider format; the policy from the configuration decides document-level citations", () =>
    Effect.gen(function*() {
      const strict = yield* setup("quote")
      const post = (yield* service(strict)).verify
      const bedrock = yield* post("bedrock", bedrockFixtures.grounded)
      assert.strictEqual(bedrock.status, 200)
      assert.strictEqual(bedrock.json.answer.outcome, "grounded")
      const fabricated = yield* post("gemini", geminiFixtures.fabricated)
      assert.strictEqual(fabricated.json.answer.removed[0].reasons[0].error._tag, "SnippetAbsent")
      const openai = yield* post("openai", openaiFixtures.mixed)
      assert.include(JSON.stringify(openai.json.answer.removed), "CoarseCitation")
      const chat = yield* post("openai-chat", openaiChatFixtures.mixed)
      assert.include(JSON.stringify(chat.json.answer.removed), "NotApproved")
      const cohere = yield* post("cohere", cohereWire(cohereFixtures.unresolvable))
      assert.include(JSON.stringify(cohere.json.answer.removed), "tool-output")

      const loose = yield* setup("document")
      const postLoose = (yield* service(loose)).verify
      const accepted = yield* postLoose("cohere", cohereWire(cohereFixtures.grounded))
      assert.strictEqual(accepted.status, 200)
      assert.strictEqual(accepted.json.answer.summary.claimsDocumentLevel, 2)
      assert.strictEqual(accepted.json.answer.summary.citationsVerified, 0)
      const invalid = yield* postLoose("gemini", geminiFixtures.utf16Offsets)
      assert.strictEqual(invalid.json.error._tag, "InvalidAnswer")
    }), { timeout: 120_000 })
})
