/**
 * The service's contract, served at `/openapi.json`: every route, the typed API (Api.ts) and the
 * streaming routes mounted beside it (`POST /v1/stream/answer`, `GET /v1/stream/answer/{id}`),
 * the bearer security scheme on every route that takes a token, each request body as the JSON
 * Schema of the Schema the route really decodes with (`JSONSchema` of effect/Schema), and the
 * package's name and version.
 *
 * The streaming routes write their own bodies, so they are not served through the HttpApi; they
 * are declared here (`StreamGroup`) only to be described.
 *
 * @since 0.3.0
 */
import * as HttpApi from "@effect/platform/HttpApi"
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as HttpApiMiddleware from "@effect/platform/HttpApiMiddleware"
import * as HttpApiSchema from "@effect/platform/HttpApiSchema"
import * as HttpApiSecurity from "@effect/platform/HttpApiSecurity"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import * as OpenApi from "@effect/platform/OpenApi"
import * as JSONSchema from "effect/JSONSchema"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import { Response as AnthropicResponse } from "../answer/Anthropic.js"
import * as Bedrock from "../answer/Bedrock.js"
import * as Cohere from "../answer/Cohere.js"
import * as Gemini from "../answer/Gemini.js"
import * as OpenAI from "../answer/OpenAI.js"
import { Answer } from "../answer/Records.js"
import { RunId } from "../Config.js"
import { Report } from "../Domain.js"
import { AuditResult } from "../audit/Records.js"
import {
  AuditBaselineRejected,
  AuditTimeout,
  CaptureBodyUnavailable,
  CsrfRejected,
  Forbidden,
  RunNotFound,
  StreamGone,
  StreamRequestInvalid,
  Unauthorized
} from "../Errors.js"
import { version } from "../version.js"
import { DocumentsGroup, HealthGroup, ReviewsGroup, RunStatus, RunsGroup, VerifyGroup } from "./Api.js"
import { InputLine } from "./AnswerStream.js"

/** `Authorization: Bearer <token>`; the configuration holds only the tokens' SHA-256 digests. */
export class Bearer extends HttpApiMiddleware.Tag<Bearer>()("citegate/server/Bearer", {
  security: { bearer: HttpApiSecurity.bearer }
}) {}

const StreamQuery = Schema.Struct({
  run: RunId,
  manifest: Schema.optional(Schema.String.pipe(Schema.pattern(/^[0-9a-f]{64}$/))),
  manifestDigest: Schema.optional(Schema.String.pipe(Schema.pattern(/^[0-9a-f]{64}$/))),
  mode: Schema.optional(Schema.Literal("drop", "reject")),
  /** The body's format: `evi1-ndjson` (default), `anthropic-sse` (an Anthropic Messages event stream) or `bedrock-stream` (a Bedrock ConverseStream body). */
  format: Schema.optional(Schema.Literal("evi1-ndjson", "anthropic-sse", "bedrock-stream"))
})

/** The streaming routes (StreamRoute.ts), declared for the document only. */
export const StreamGroup = HttpApiGroup.make("stream")
  .add(
    HttpApiEndpoint.post("streamAnswer", "/v1/stream/answer")
      .setUrlParams(StreamQuery)
      // NDJSON in, NDJSON (or SSE with `Accept: text/event-stream`) out; the body is replaced below.
      .setPayload(HttpApiSchema.Text({ contentType: "application/x-ndjson" }))
      .addSuccess(HttpApiSchema.Text({ contentType: "application/x-ndjson" }))
      .addError(StreamRequestInvalid, { status: 400 })
      .addError(Unauthorized, { status: 401 })
      .addError(Forbidden, { status: 403 })
      .addError(RunNotFound, { status: 404 })
  )
  .add(
    HttpApiEndpoint.get("resumeStream", "/v1/stream/answer/:id")
      .setPath(Schema.Struct({ id: Schema.String }))
      .setUrlParams(Schema.Struct({ lastEventId: Schema.optional(Schema.String) }))
      .addSuccess(HttpApiSchema.Text({ contentType: "text/event-stream" }))
      .addError(Unauthorized, { status: 401 })
      .addError(Forbidden, { status: 403 })
      .addError(StreamGone, { status: 410 })
  )

const Piece = Schema.Struct({ text: Schema.String, changed: Schema.Boolean })

/** `POST /v1/runs/{id}/audits`: the audit and, per finding, the word diff of its excerpt (null when none). */
const AuditView = Schema.Struct({
  format: Schema.Literal("citegate.audit-view/1"),
  run: Schema.String,
  against: Schema.String,
  audit: AuditResult,
  diffs: Schema.Array(Schema.NullOr(Schema.Struct({
    old: Schema.Array(Piece),
    new: Schema.Array(Piece),
    exact: Schema.Boolean,
    oldCut: Schema.optional(Schema.Number),
    newCut: Schema.optional(Schema.Number)
  })))
}).annotations({ identifier: "AuditView" })

const SessionInfo = Schema.Struct({ name: Schema.String, csrfToken: Schema.String, expiresAt: Schema.String }).annotations({ identifier: "Session" })

/**
 * The review page's routes (Ui.ts), declared for the document only. A session (`POST /v1/session`
 * with a bearer token) sets an HttpOnly cookie that the other routes accept in place of the token;
 * a cookie-authenticated POST, PUT, PATCH or DELETE needs `x-citegate-csrf` (docs/ui.md).
 */
export const UiGroup = HttpApiGroup.make("ui")
  .add(
    HttpApiEndpoint.post("createSession", "/v1/session")
      .addSuccess(SessionInfo, { status: 201 })
      .addError(Unauthorized, { status: 401 })
  )
  .add(HttpApiEndpoint.get("readSession", "/v1/session").addSuccess(SessionInfo).addError(Unauthorized, { status: 401 }))
  .add(HttpApiEndpoint.del("endSession", "/v1/session").addSuccess(HttpApiSchema.NoContent).addError(CsrfRejected, { status: 403 }))
  .add(
    HttpApiEndpoint.get("listRuns", "/v1/runs")
      .addSuccess(Schema.Struct({ runs: Schema.Array(Schema.Struct({ id: Schema.String, status: RunStatus })), truncated: Schema.Boolean }))
      .addError(Unauthorized, { status: 401 })
  )
  .add(
    HttpApiEndpoint.get("captureBody", "/v1/runs/:id/captures/:sha256/body")
      .setPath(Schema.Struct({ id: Schema.String, sha256: Schema.String }))
      // A PDF capture's stored body (application/pdf, nosniff, Content-Disposition: attachment, a sandboxing CSP).
      .addSuccess(HttpApiSchema.Uint8Array({ contentType: "application/pdf" }))
      .addError(Unauthorized, { status: 401 })
      .addError(Forbidden, { status: 403 })
      .addError(CaptureBodyUnavailable, { status: 404 })
  )
  .add(
    HttpApiEndpoint.post("auditReport", "/v1/runs/:id/audits")
      .setPath(Schema.Struct({ id: Schema.String }))
      .setUrlParams(Schema.Struct({ against: RunId }))
      // The drafted report verified against run {id} (the old run), audited against run `against` (the new run).
      .setPayload(HttpApiSchema.Text({ contentType: "application/json" }))
      .addSuccess(AuditView)
      .addError(Unauthorized, { status: 401 })
      .addError(Forbidden, { status: 403 })
      .addError(CsrfRejected, { status: 403 })
      .addError(RunNotFound, { status: 404 })
      .addError(AuditBaselineRejected, { status: 422 })
      .addError(AuditTimeout, { status: 503 })
  )

/** The whole contract: the served API's groups and the streaming routes, each behind the bearer scheme except health. */
export class ContractApi extends HttpApi.make("citegate")
  .add(HealthGroup)
  .add(RunsGroup.middleware(Bearer))
  .add(DocumentsGroup.middleware(Bearer))
  .add(VerifyGroup.middleware(Bearer))
  .add(ReviewsGroup.middleware(Bearer))
  .add(StreamGroup.middleware(Bearer))
  .add(UiGroup.middleware(Bearer))
  .annotateContext(OpenApi.annotations({
    title: "citegate",
    version,
    description: "Provable citations: capture approved sources, hand their texts to the drafting model, and verify " +
      "reports and answers against the exact captures."
  }))
{}

type Spec = OpenApi.OpenAPISpec & { components: { schemas: Record<string, unknown> } }

/** A request body from the Schema the route decodes with, its definitions added to the document's components. */
const body = (spec: Spec, content: Record<string, { readonly schema: Schema.Schema.Any; readonly description?: string }>) => ({
  required: true,
  content: Object.fromEntries(Object.entries(content).map(([type, { description, schema }]) => [type, {
    schema: {
      ...JSONSchema.fromAST(schema.ast, {
        definitions: spec.components.schemas as Record<string, never>,
        definitionPath: "#/components/schemas/",
        target: "openApi3.1"
      }),
      ...(description === undefined ? {} : { description })
    }
  }]))
})

const setBody = (spec: Spec, path: string, method: "post", requestBody: ReturnType<typeof body>) => {
  const operation = (spec.paths as Record<string, Record<string, { requestBody?: unknown }>>)[path]?.[method]
  if (operation !== undefined) operation.requestBody = requestBody
}

/**
 * The OpenAPI document: `OpenApi.fromApi` of the contract, with each text body replaced by the JSON
 * Schema of what the route decodes (a report, an answer in either JSON format, EVI1 text, NDJSON lines).
 */
export const document = (): OpenApi.OpenAPISpec => {
  const spec = OpenApi.fromApi(ContractApi) as Spec
  setBody(spec, "/v1/verify/report", "post", body(spec, { "application/json": { schema: Report } }))
  setBody(spec, "/v1/verify/answer", "post", body(spec, {
    "application/json": {
      schema: Schema.Union(Answer, AnthropicResponse, Bedrock.Response, Gemini.Response, OpenAI.Response, OpenAI.ChatResponse, Cohere.Response),
      description: "format=json: a citegate.answer/1 answer; format=anthropic: an Anthropic Messages response with citations; " +
        "format=bedrock|gemini|openai|openai-chat|cohere: that provider's response (docs/answers.md, the capability table)"
    },
    "text/plain": { schema: Schema.String, description: "format=evi1: an EVI1 answer (prose with [n]{cX} markers and an EVI1 appendix)" },
    "application/vnd.amazon.eventstream": {
      schema: Schema.String,
      description: "format=bedrock-stream: a whole Bedrock ConverseStream body (AWS event stream messages); format=anthropic-sse: a whole Anthropic Messages stream (text/event-stream)"
    }
  }))
  setBody(spec, "/v1/stream/answer", "post", body(spec, {
    "application/x-ndjson": { schema: InputLine, description: "format=evi1-ndjson (default): one JSON object per line: the model's output as it arrives" },
    "text/event-stream": {
      schema: Schema.String,
      description: "format=anthropic-sse: an Anthropic Messages stream as the API sends it (message_start, content_block_start, " +
        "content_block_delta with text_delta or citations_delta, content_block_stop, message_delta, message_stop, ping, error); " +
        "the manifest query parameter is required"
    },
    "application/vnd.amazon.eventstream": {
      schema: Schema.String,
      description: "format=bedrock-stream: a Bedrock ConverseStream body as the API sends it (AWS event stream messages: messageStart, " +
        "contentBlockDelta with text or citation, contentBlockStop, messageStop, metadata, exceptions); the manifest query parameter is required"
    }
  }))
  return spec
}

/** `GET /openapi.json`. */
export const layer = HttpApiBuilder.Router.use((router) => {
  const json = JSON.stringify(document())
  return router.get("/openapi.json", HttpServerResponse.text(json, { contentType: "application/json" }))
}) satisfies Layer.Layer<never>
