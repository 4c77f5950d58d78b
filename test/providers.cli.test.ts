/**
 * Provider formats through the edges: `run-pipeline verify-answer --format-in <provider>` (a spawned
 * process on the built CLI) and `POST /v1/verify/answer?format=<provider>` (the service on
 * 127.0.0.1), with the recorded responses of the SDK tests and the configuration's
 * `answers.citations` policy.
 */
import * as HttpServer from "@effect/platform/HttpServer"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Exit, Layer, Scope } from "effect"
import * as fsp from "node:fs/promises"
import * as path from "node:path"
import type { CitationsPolicy } from "../src/answer/Records.js"
import * as Config from "../src/Config.js"
import * as Manifest from "../src/Manifest.js"
import { tokenDigest } from "../src/server/Auth.js"
import * as Server from "../src/server/Server.js"
import * as CaptureStore from "../src/store/CaptureStore.js"
import { cli } from "./cliProcess.js"
import { bedrockFixtures, cohereFixtures, cohereWire, geminiFixtures, openaiChatFixtures, openaiFixtures } from "./providerFixtures.js"
import { configJson, records } from "./providerSupport.js"
import { tempDirectory, writeRecords } from "./support.js"

/** A run directory with the provider sources, a config file under the policy, and the manifest digest. */
const setup = (policy: CitationsPolicy) =>
  Effect.gen(function*() {
    const work = yield* tempDirectory
    const runDir = path.join(work, "runs", "run-1")
    yield* Effect.promise(() => fsp.mkdir(runDir, { recursive: true }))
    yield* writeRecords(runDir, records)
    const json = configJson(policy)
    const configFile = path.join(work, "pipeline.json")
    yield* Effect.promise(() => fsp.writeFile(configFile, JSON.stringify(json)))
    const config = yield* Config.decode(json)
    const manifest = yield* Manifest.make(config).pipe(Effect.provide(CaptureStore.layerFileSystem({ directory: runDir })))
    const write = (name: string, value: unknown) =>
      Effect.promise(async () => {
        const file = path.join(work, name)
        await fsp.writeFile(file, JSON.stringify(value))
        return file
      })
    return { work, runDir, configFile, config, manifest, write }
  })

const verifyCli = (s: Effect.Effect.Success<ReturnType<typeof setup>>, format: string, file: string) =>
  cli([
    "verify-answer", "--answer", file, "--format-in", format, "--config", s.configFile, "--run-dir", s.runDir,
    "--manifest-digest", s.manifest.digest, "--mode", "drop", "--format", "json"
  ])

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

const token = "provider-test-token-0123456789abcdef"

/** The service on 127.0.0.1 over the setup's run root. */
const service = (s: Effect.Effect.Success<ReturnType<typeof setup>>) =>
  Effect.gen(function*() {
    const config = yield* Config.decode({
      ...configJson(s.config.answers?.citations),
      server: { tokens: [{ sha256: tokenDigest(token), runs: "*", capture: false, name: "reader" }] }
    })
    const scope = yield* Scope.make()
    yield* Effect.addFinalizer(() => Scope.close(scope, Exit.void))
    const context = yield* Layer.buildWithScope(
      Server.layer({ config, configFile: s.configFile, runRoot: path.join(s.work, "runs"), allowLoopbackHttp: true, host: "127.0.0.1", port: 0 }),
      scope
    )
    const address = (yield* Effect.provide(HttpServer.HttpServer, context)).address
    const port = address._tag === "TcpAddress" ? address.port : 0
    return (format: string, body: unknown) =>
      Effect.promise(async () => {
        const response = await fetch(
          `http://127.0.0.1:${port}/v1/verify/answer?run=run-1&format=${format}&mode=drop&manifest=${s.manifest.digest}`,
          { method: "POST", headers: { authorization: `Bearer ${token}`, "content-type": "application/json" }, body: JSON.stringify(body) }
        )
        return { status: response.status, json: (await response.json()) as any }
      })
  })

describe("POST /v1/verify/answer?format=<provider>", () => {
  it.scopedLive("every provider format; the policy from the configuration decides document-level citations", () =>
    Effect.gen(function*() {
      const strict = yield* setup("quote")
      const post = yield* service(strict)
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
      const postLoose = yield* service(loose)
      const accepted = yield* postLoose("cohere", cohereWire(cohereFixtures.grounded))
      assert.strictEqual(accepted.status, 200)
      assert.strictEqual(accepted.json.answer.summary.claimsDocumentLevel, 2)
      assert.strictEqual(accepted.json.answer.summary.citationsVerified, 0)
      const invalid = yield* postLoose("gemini", geminiFixtures.utf16Offsets)
      assert.strictEqual(invalid.json.error._tag, "InvalidAnswer")
    }), { timeout: 120_000 })
})
