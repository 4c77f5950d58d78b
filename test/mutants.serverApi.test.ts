/**
 * The service's API declaration (`src/server/Api.ts`) as its OpenAPI document states it, which is
 * what clients generate code from: every endpoint's path, method, answers (status and content
 * type), body and query parameters, and the schemas of the health and run answers. Written out
 * from the declaration by hand; 400 is the platform's own answer to a request it cannot decode,
 * on every endpoint.
 */
import { assert, describe, it } from "@effect/vitest"
import { document as servedDocument } from "../src/server/OpenApi.js"

const json = ["application/json"]

interface Operation {
  readonly responses: Record<string, { readonly content?: Record<string, { readonly schema: unknown }> }>
  readonly requestBody?: { readonly content: Record<string, unknown> }
  readonly parameters?: ReadonlyArray<{ readonly in: string; readonly name: string; readonly required: boolean; readonly schema: any }>
}

const document = servedDocument() as unknown as {
  readonly paths: Record<string, Record<string, Operation>>
  readonly components: { readonly schemas: Record<string, any> }
}

const operation = (method: string, path: string): Operation => {
  const found = document.paths[path]?.[method]
  assert.isDefined(found, `${method} ${path}`)
  return found!
}

/** The schema behind a `$ref`, or the schema itself. */
const resolved = (schema: any): any =>
  typeof schema?.$ref === "string" ? document.components.schemas[schema.$ref.replace("#/components/schemas/", "")] : schema

const summary = (op: Operation) => ({
  responses: Object.fromEntries(Object.entries(op.responses).map(([status, r]) => [status, Object.keys(r.content ?? {})])),
  body: op.requestBody === undefined ? null : Object.keys(op.requestBody.content),
  params: (op.parameters ?? []).map((p) => ({ in: p.in, name: p.name, required: p.required, ...("enum" in p.schema ? { enum: p.schema.enum } : {}), ...("pattern" in p.schema ? { pattern: p.schema.pattern } : {}) }))
})

const refusals = { "400": json, "401": json, "403": json }

describe("the service's OpenAPI document", () => {
  it("lists every endpoint with its answers, body and parameters", () => {
    const listed = Object.entries(document.paths).flatMap(([path, methods]) => Object.keys(methods).map((method) => `${method} ${path}`)).sort()
    assert.deepStrictEqual(listed, [
      "delete /v1/session",
      "get /healthz",
      "get /readyz",
      "get /v1/runs",
      "get /v1/runs/{id}",
      "get /v1/runs/{id}/captures/{sha256}/body",
      "get /v1/runs/{id}/documents",
      "get /v1/runs/{id}/events",
      "get /v1/runs/{id}/reviews",
      "get /v1/session",
      "get /v1/stream/answer/{id}",
      "post /v1/runs",
      "post /v1/runs/{id}/audits",
      "post /v1/runs/{id}/reviews",
      "post /v1/session",
      "post /v1/stream/answer",
      "post /v1/verify/answer",
      "post /v1/verify/report"
    ])
    // The review page's data routes: a PDF body (404 CaptureBodyUnavailable), the drift audit (CSRF as 403).
    assert.deepStrictEqual(Object.keys(summary(operation("get", "/v1/runs/{id}/captures/{sha256}/body")).responses).sort(), ["200", "400", "401", "403", "404"])
    assert.deepStrictEqual(summary(operation("post", "/v1/runs/{id}/audits")).responses, {
      "200": json, ...refusals, "404": json, "422": json, "503": json
    })
    assert.deepStrictEqual(summary(operation("get", "/healthz")), { responses: { "200": json, "400": json }, body: null, params: [] })
    assert.deepStrictEqual(summary(operation("get", "/readyz")), {
      responses: { "200": json, "400": json, "503": json },
      body: null,
      params: []
    })
    assert.deepStrictEqual(summary(operation("post", "/v1/runs")), {
      responses: { "202": json, ...refusals, "503": json },
      body: null,
      params: []
    })
    const idPath = [{ in: "path", name: "id", required: true }]
    assert.deepStrictEqual(summary(operation("get", "/v1/runs/{id}")), {
      responses: { "200": json, ...refusals, "404": json },
      body: null,
      params: idPath
    })
    assert.deepStrictEqual(summary(operation("get", "/v1/runs/{id}/events")), {
      responses: { "200": ["text/event-stream"], ...refusals, "404": json },
      body: null,
      params: idPath
    })
    const run = { in: "query", name: "run", required: true, pattern: "^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$" }
    const mode = { in: "query", name: "mode", required: false, enum: ["reject", "drop"] }
    // `sign=1` without a result signing key is 409 ResultSigningUnavailable.
    const sign = { in: "query", name: "sign", required: false, enum: ["0", "1"] }
    assert.deepStrictEqual(summary(operation("post", "/v1/verify/report")), {
      responses: { "200": json, ...refusals, "404": json, "409": json },
      body: ["application/json"],
      params: [run, mode, sign]
    })
    const digest = { required: false, pattern: "^[0-9a-f]{64}$" }
    assert.deepStrictEqual(summary(operation("post", "/v1/verify/answer")), {
      responses: { "200": json, ...refusals, "404": json, "409": json },
      body: ["application/json", "text/plain", "application/vnd.amazon.eventstream"],
      params: [
        run,
        { in: "query", name: "format", required: false, enum: ["json", "evi1", "anthropic", "anthropic-sse", "bedrock", "bedrock-stream", "gemini", "openai", "openai-chat", "cohere"] },
        { in: "query", name: "manifest", ...digest },
        { in: "query", name: "manifestDigest", ...digest },
        mode,
        sign
      ]
    })
    assert.deepStrictEqual(summary(operation("get", "/v1/runs/{id}/documents")), {
      responses: { "200": json, ...refusals, "404": json, "422": json },
      body: null,
      params: [...idPath, { in: "query", name: "format", required: false, enum: ["documents", "anthropic", "bedrock", "evi1"] }]
    })
    assert.deepStrictEqual(summary(operation("post", "/v1/stream/answer")), {
      responses: { "200": ["application/x-ndjson"], ...refusals, "404": json },
      body: ["application/x-ndjson", "text/event-stream", "application/vnd.amazon.eventstream"],
      params: [
        run,
        { in: "query", name: "manifest", ...digest },
        { in: "query", name: "manifestDigest", ...digest },
        { ...mode, enum: ["drop", "reject"] },
        { in: "query", name: "format", required: false, enum: ["evi1-ndjson", "anthropic-sse", "bedrock-stream"] }
      ]
    })
    assert.deepStrictEqual(summary(operation("get", "/v1/stream/answer/{id}")), {
      responses: { "200": ["text/event-stream"], ...refusals, "410": json },
      body: null,
      params: [...idPath, { in: "query", name: "lastEventId", required: false }]
    })
  })

  it("states the health and run answers' schemas exactly", () => {
    const health = {
      type: "object",
      required: ["status"],
      properties: { status: { type: "string", enum: ["ok"] } },
      additionalProperties: false
    }
    assert.deepStrictEqual(resolved(operation("get", "/healthz").responses["200"]!.content!["application/json"]!.schema), health)
    assert.deepStrictEqual(resolved(operation("get", "/readyz").responses["200"]!.content!["application/json"]!.schema), health)
    const { description, ...status } = document.components.schemas["RunStatus"]
    assert.deepStrictEqual(status, { type: "string", enum: ["queued", "running", "completed", "interrupted", "stored"] })
    assert.include(description, "queued: waiting for a capture slot")
    const created = resolved(operation("post", "/v1/runs").responses["202"]!.content!["application/json"]!.schema)
    const runStatus = { $ref: "#/components/schemas/RunStatus" }
    assert.deepStrictEqual({ required: created.required, id: created.properties.id, status: created.properties.status }, {
      required: ["id", "status"],
      id: { type: "string" },
      status: runStatus
    })
    const info = document.components.schemas["RunInfo"]
    assert.deepStrictEqual(
      { required: info.required, id: info.properties.id, status: info.properties.status, manifest: info.properties.manifest },
      { required: ["id", "status", "manifest"], id: { type: "string" }, status: runStatus, manifest: { $ref: "#/components/schemas/Manifest" } }
    )
    // The list of runs (the review page's) names the same statuses.
    const listed = resolved(operation("get", "/v1/runs").responses["200"]!.content!["application/json"]!.schema)
    assert.deepStrictEqual(resolved(listed.properties.runs).items.properties.status, runStatus)
    // The refusals are the typed errors, by name.
    const refusal = (method: string, path: string, code: string) =>
      operation(method, path).responses[code]!.content!["application/json"]!.schema
    assert.deepStrictEqual(refusal("post", "/v1/runs", "401"), { $ref: "#/components/schemas/Unauthorized" })
    assert.deepStrictEqual(refusal("post", "/v1/runs", "403"), { $ref: "#/components/schemas/Forbidden" })
    assert.deepStrictEqual(refusal("post", "/v1/runs", "503"), { $ref: "#/components/schemas/NotReady" })
    assert.deepStrictEqual(refusal("get", "/v1/runs/{id}", "404"), { $ref: "#/components/schemas/RunNotFound" })
  })
})
