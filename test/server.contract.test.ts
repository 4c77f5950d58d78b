/**
 * The service's contract as served: `/openapi.json` (title and version of the package, the bearer
 * scheme on every route that takes a token, request bodies as the JSON Schemas of what the routes
 * decode), `GET /v1/runs/{id}/documents` with the run's token rights, and one name for the manifest
 * parameter (`manifest`, with `manifestDigest` its alias).
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { readFileSync } from "node:fs"
import { call, salesDigest, salesText, sources, startService, tokens, waitForRun } from "./serverSupport.js"
import { fixturePath } from "./support.js"

const pkg = JSON.parse(readFileSync(fixturePath("..", "package.json"), "utf8"))

describe("the service's contract", () => {
  it.live("/openapi.json: every route, the bearer scheme, JSON Schemas of the request bodies, the package's title and version", () =>
    Effect.gen(function*() {
      const service = yield* startService({ sources: ["http://127.0.0.1:9/unused.txt"] })
      const doc = (yield* call(service, "/openapi.json")).json
      assert.deepStrictEqual([doc.info.title, doc.info.version], [pkg.name, pkg.version])
      assert.deepStrictEqual(doc.components.securitySchemes, { bearer: { type: "http", scheme: "bearer" } })
      const operations = Object.entries<any>(doc.paths).flatMap(([path, methods]) =>
        Object.entries<any>(methods).map(([method, op]) => ({ route: `${method} ${path}`, op }))
      )
      for (const { op, route } of operations) {
        const expected = route.endsWith("/healthz") || route.endsWith("/readyz") ? [] : [{ bearer: [] }]
        assert.deepStrictEqual(op.security, expected, route)
      }
      const bodyOf = (route: string, type: string) => operations.find((o) => o.route === route)!.op.requestBody.content[type].schema
      const ref = (schema: any) => doc.components.schemas[schema.$ref.replace("#/components/schemas/", "")]
      const report = ref(bodyOf("post /v1/verify/report", "application/json"))
      assert.deepStrictEqual(report.required, ["facts"])
      assert.strictEqual(report.additionalProperties, false)
      const answer = bodyOf("post /v1/verify/answer", "application/json")
      assert.deepStrictEqual(answer.anyOf[0], { $ref: "#/components/schemas/Answer" })
      assert.deepStrictEqual(ref(answer.anyOf[0]).properties.format, { type: "string", enum: ["citegate.answer/1"] })
      assert.deepStrictEqual(answer.anyOf[1].required, ["content"])
      assert.strictEqual(bodyOf("post /v1/verify/answer", "text/plain").type, "string")
      const line = ref(bodyOf("post /v1/stream/answer", "application/x-ndjson"))
      assert.deepStrictEqual(line.required, ["type", "text"])
      // The review page's routes are described too (their cookie and CSRF rules: docs/ui.md).
      for (const route of ["post /v1/session", "get /v1/session", "delete /v1/session", "get /v1/runs", "get /v1/runs/{id}/captures/{sha256}/body", "post /v1/runs/{id}/audits"]) {
        assert.isDefined(operations.find((o) => o.route === route), route)
      }
      // Signed results: `sign` on both verify routes, 409 ResultSigningUnavailable without a key (docs/signatures.md).
      for (const route of ["post /v1/verify/report", "post /v1/verify/answer"]) {
        const op = operations.find((o) => o.route === route)!.op
        assert.deepStrictEqual(op.parameters.find((p: any) => p.name === "sign").schema.enum, ["0", "1"], route)
        assert.isDefined(op.responses["409"], route)
      }
      // The documents route's answer is the union of the four hand-offs.
      const documents = operations.find((o) => o.route === "get /v1/runs/{id}/documents")!.op
      assert.strictEqual(documents.responses["200"].content["application/json"].schema.anyOf.length, 4)
    }).pipe(Effect.scoped))

  it.live("GET /v1/runs/{id}/documents: the run's texts for a token that may read it; 401, 403 and 404 as for the run", () =>
    Effect.gen(function*() {
      const { server } = yield* sources
      const source = server.url("/q3-sales.txt")
      const service = yield* startService({ sources: [source] })
      const started = yield* call(service, "/v1/runs", { method: "POST", token: tokens.admin })
      yield* waitForRun(service, started.json.id)
      const runId = started.json.id
      const documents = yield* call(service, `/v1/runs/${runId}/documents`, { token: tokens.admin })
      assert.strictEqual(documents.status, 200)
      assert.strictEqual(documents.json.format, "citegate.documents/1")
      assert.deepStrictEqual(documents.json.documents.map((d: any) => [d.text, d.captureSha256]), [[salesText, salesDigest]])
      const run = yield* call(service, `/v1/runs/${runId}`, { token: tokens.admin })
      assert.strictEqual(documents.json.manifest, run.json.manifest.digest)
      const evi1 = yield* call(service, `/v1/runs/${runId}/documents?format=evi1`, { token: tokens.admin })
      assert.include(evi1.json.prompt, salesText)
      // A wrong format is one line naming the parameter and the formats it takes, not the schema's tree.
      const badFormat = yield* call(service, `/v1/runs/${runId}/documents?format=pdf`, { token: tokens.admin })
      assert.deepStrictEqual(
        [badFormat.status, badFormat.json._tag, badFormat.json.message],
        [400, "HttpApiDecodeError", `format: must be one of documents, anthropic, bedrock, evi1; got "pdf"`]
      )
      assert.strictEqual((yield* call(service, `/v1/runs/${runId}/documents`)).status, 401)
      const forbidden = yield* call(service, `/v1/runs/${runId}/documents`, { token: tokens.reader })
      assert.deepStrictEqual([forbidden.status, forbidden.json._tag], [403, "Forbidden"])
      const missing = yield* call(service, "/v1/runs/no-such-run/documents", { token: tokens.admin })
      assert.deepStrictEqual([missing.status, missing.json._tag], [404, "RunNotFound"])
    }).pipe(Effect.scoped))

  it.live("POST /v1/verify/answer: manifest names the digest, manifestDigest is its alias; two different ones are refused", () =>
    Effect.gen(function*() {
      const { server } = yield* sources
      const source = server.url("/q3-sales.txt")
      const service = yield* startService({ sources: [source] })
      const runId = (yield* call(service, "/v1/runs", { method: "POST", token: tokens.admin })).json.id
      yield* waitForRun(service, runId)
      const digest = (yield* call(service, `/v1/runs/${runId}`, { token: tokens.admin })).json.manifest.digest
      const quote = salesText.slice(0, 20)
      const body = JSON.stringify({ format: "citegate.answer/1", claims: [{ id: "a", text: "A.", citations: [{ source: 1, quote }] }] })
      const verify = (query: string) => call(service, `/v1/verify/answer?run=${runId}${query}`, { token: tokens.admin, body })
      for (const query of [`&manifest=${digest}`, `&manifestDigest=${digest}`, `&manifest=${digest}&manifestDigest=${digest}`]) {
        const ok = yield* verify(query)
        assert.deepStrictEqual([ok.status, ok.json.status, ok.json.answer?.outcome], [200, "verified", "grounded"], query)
      }
      const stale = yield* verify(`&manifest=${"0".repeat(64)}`)
      assert.deepStrictEqual([stale.json.status, stale.json.error._tag], ["rejected", "StaleManifest"])
      const conflicting = yield* verify(`&manifest=${digest}&manifestDigest=${"0".repeat(64)}`)
      assert.strictEqual(conflicting.status, 400)
      assert.strictEqual(conflicting.json.message, "manifestDigest: manifestDigest is an alias of manifest: give one, or both equal")
      // The service decodes query parameters up to the first wrong one.
      const badQuery = yield* verify(`&format=pdf&manifest=zz`)
      assert.deepStrictEqual([badQuery.status, badQuery.json.message], [
        400,
        "format: must be one of json, evi1, anthropic, anthropic-sse, bedrock, bedrock-stream, gemini, openai, openai-chat, cohere; got \"pdf\""
      ])
      const badDigest = yield* verify(`&manifest=zz`)
      assert.deepStrictEqual([badDigest.status, badDigest.json.message], [400, "manifest: must be a SHA-256 digest: 64 lowercase hex digits"])
    }).pipe(Effect.scoped))
})
