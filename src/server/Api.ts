/**
 * The service's typed endpoints (an @effect/platform HttpApi). The OpenAPI document at
 * `/openapi.json` is generated from these definitions. Streaming routes that write their own
 * bodies (NDJSON / SSE) are mounted beside this API on the same router (see Server.ts).
 *
 * @since 0.2.0
 */
import { answerFormats } from "../answer/Formats.js"
import * as HttpApi from "@effect/platform/HttpApi"
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as HttpApiSchema from "@effect/platform/HttpApiSchema"
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"
import { RenderedAnswer } from "../answer/Render.js"
import { RunId } from "../Config.js"
import * as Documents from "../answer/Documents.js"
import {
  DecisionFactNotVerified,
  DecisionInvalid,
  DecisionLogCorrupt,
  DecisionLogFull,
  DecisionWriteFailed,
  DocumentsTooLarge,
  Forbidden,
  NotReady,
  ResultSigningUnavailable,
  RunNotFound,
  Unauthorized
} from "../Errors.js"
import { DecisionLog, RecordedDecision } from "../review/Records.js"
import { Manifest } from "../Manifest.js"
import { RenderedResult } from "../render/Rendering.js"
import { Envelope } from "../evidence/Signatures.js"

/** `GET /healthz`: the process is up. */
export const Health = Schema.Struct({ status: Schema.Literal("ok") })

export const HealthGroup = HttpApiGroup.make("health")
  .add(HttpApiEndpoint.get("healthz", "/healthz").addSuccess(Health))
  .add(HttpApiEndpoint.get("readyz", "/readyz").addSuccess(Health).addError(NotReady, { status: 503 }))

/**
 * `queued`: waiting for a capture slot (`server.maxActiveRuns`), or over PostgreSQL for a replica to
 * claim it (again after its replica died); `running`: capturing; `completed` / `interrupted`: ended
 * (by this service, or a replica); `stored`: captured by the CLI, on a run directory one from before
 * a restart, over PostgreSQL one whose finished job has expired.
 */
export const RunStatus = Schema.Literal("queued", "running", "completed", "interrupted", "stored").annotations({
  identifier: "RunStatus",
  description: "queued: waiting for a capture slot (server.maxActiveRuns), or over PostgreSQL for a replica to claim it; " +
    "running: capturing; completed: the capture ended (its done event counts captured and failed; an aborted " +
    "event before it: the capture could not start); interrupted: stopped by a shutdown; stored: a run this " +
    "service is not following (captured by the CLI; on a run directory, one from before a restart; over " +
    "PostgreSQL, one whose finished job expired): read its manifest"
})

/** `POST /v1/runs`: the new run (capturing in the background; follow `/v1/runs/{id}/events`). */
export const RunCreated = Schema.Struct({ id: Schema.String, status: RunStatus }).annotations({ identifier: "RunCreated" })

/** `GET /v1/runs/{id}`: status and the manifest of what the run holds now. */
export const RunInfo = Schema.Struct({
  id: Schema.String,
  status: RunStatus,
  manifest: Manifest
}).annotations({ identifier: "RunInfo" })

const RunPath = Schema.Struct({ id: Schema.String })

/**
 * The query of a run route that takes no parameter: any parameter is refused (400
 * `HttpApiDecodeError`), as on the routes that take some, so a misspelt one is never silently ignored.
 */
// (An empty Struct alone accepts any object: the filter names the first parameter given.)
const NoParams = readable(Schema.Struct({}).pipe(Schema.filter((params) => {
  const given = Object.keys(params)[0]
  return given === undefined || { path: [given], message: "is unexpected: this route takes no query parameter" }
})))

export const RunsGroup = HttpApiGroup.make("runs")
  .add(
    HttpApiEndpoint.post("startRun", "/v1/runs")
      .setUrlParams(NoParams)
      .addSuccess(RunCreated, { status: 202 })
      .addError(Unauthorized, { status: 401 })
      .addError(Forbidden, { status: 403 })
      .addError(NotReady, { status: 503 })
  )
  .add(
    HttpApiEndpoint.get("getRun", "/v1/runs/:id")
      .setPath(RunPath)
      .setUrlParams(NoParams)
      .addSuccess(RunInfo)
      .addError(Unauthorized, { status: 401 })
      .addError(Forbidden, { status: 403 })
      .addError(RunNotFound, { status: 404 })
  )
  .add(
    HttpApiEndpoint.get("runEvents", "/v1/runs/:id/events")
      .setPath(RunPath)
      .setUrlParams(NoParams)
      // Server-sent events: `id:` (resume with Last-Event-ID), `event:` the tag, `data:` the JSON event.
      .addSuccess(HttpApiSchema.Text({ contentType: "text/event-stream" }))
      .addError(Unauthorized, { status: 401 })
      .addError(Forbidden, { status: 403 })
      .addError(RunNotFound, { status: 404 })
  )

/**
 * A query parameter taking one of a few words: a wrong value is answered with one line naming the
 * parameter, the value and the words it takes, not the schema's whole tree.
 */
const oneOf = <const Words extends readonly [string, ...Array<string>]>(words: Words) =>
  Schema.Literal(...words).annotations({
    message: (issue) => ({
      message: `must be one of ${words.join(", ")}; got ${JSON.stringify(issue.actual)?.slice(0, 100)}`,
      override: true
    })
  })

/**
 * Strict query parameters (an unknown one is refused; QueryGuard.ts refuses `__proto__`) whose
 * decode failure reads as one line per issue (`format: format must be one
 * of …`), not the schema's whole tree: HttpApi answers it as a 400 `HttpApiDecodeError` whose
 * `message` and `issues` a client shows as they are.
 */
// A declaration, not a const: the run routes above are built with it as this module loads.
export function readable<S extends Schema.Schema.Any>(schema: S): S {
  return schema.annotations({
    // A parameter the route does not take is refused (400), not ignored.
    parseOptions: { onExcessProperty: "error" },
    message: (issue) => ({
      // A predicate's own failure (the filter's message); else the issues below this schema's own
      // (formatting its own would read this annotation again).
      message: issue._tag === "Type" ? issue.message ?? "is invalid" : below(issue)
        .flatMap((inner) => ParseResult.ArrayFormatter.formatIssueSync(inner))
        .map((i) => `${i.path.length === 0 ? "" : `${i.path.join(".")}: `}${i.message}`)
        .join("; "),
      override: true
    })
  }) as S
}

const below = (issue: ParseResult.ParseIssue): ReadonlyArray<ParseResult.ParseIssue> =>
  issue._tag === "Composite"
    ? (Array.isArray(issue.issues) ? issue.issues : [issue.issues as ParseResult.ParseIssue])
    : issue._tag === "Refinement"
    ? [issue.issue]
    : [issue]

/** A 64-digit lowercase hex digest in a query parameter, with one line past it. */
const digestParam = Schema.String.pipe(Schema.pattern(/^[0-9a-f]{64}$/)).annotations({
  message: () => ({ message: "must be a SHA-256 digest: 64 lowercase hex digits", override: true })
})

/** `GET /v1/runs/{id}/documents?format=…`: the run's capture texts for the drafting model (`Documents`). */
export const DocumentsParams = readable(Schema.Struct({
  format: Schema.optionalWith(oneOf(Documents.formats), { exact: true })
}))

export const DocumentsGroup = HttpApiGroup.make("documents")
  .add(
    HttpApiEndpoint.get("runDocuments", "/v1/runs/:id/documents")
      .setPath(RunPath)
      .setUrlParams(DocumentsParams)
      .addSuccess(Documents.Output)
      .addError(Unauthorized, { status: 401 })
      .addError(Forbidden, { status: 403 })
      .addError(RunNotFound, { status: 404 })
      .addError(DocumentsTooLarge, { status: 422 })
  )

/** `sign=1`: sign the result if it passes (docs/signatures.md, "Signed results"); `0` or absent: do not. */
const signParam = Schema.optionalWith(oneOf(["0", "1"]), { exact: true })

export const ReportParams = readable(Schema.Struct({
  run: RunId,
  mode: Schema.optionalWith(oneOf(["reject", "drop"]), { exact: true }),
  sign: signParam
}))

/**
 * `manifest` names the manifest digest the answer was drafted against (the same name as in
 * `citegate.answer/1` and `POST /v1/stream/answer`); `manifestDigest` is its alias, kept for
 * clients written before. Both given: they must be equal.
 */
export const AnswerParams = readable(Schema.Struct({
  run: RunId,
  format: Schema.optionalWith(oneOf(answerFormats), { exact: true }),
  manifest: Schema.optionalWith(digestParam, { exact: true }),
  manifestDigest: Schema.optionalWith(digestParam, { exact: true }),
  mode: Schema.optionalWith(oneOf(["reject", "drop"]), { exact: true }),
  sign: signParam
}).pipe(
  Schema.filter((p) =>
    p.manifest === undefined || p.manifestDigest === undefined || p.manifest === p.manifestDigest ||
    { path: ["manifestDigest"], message: "manifestDigest is an alias of manifest: give one, or both equal" }
  )
))

/** The manifest digest an answer request names (`manifest`, or its alias `manifestDigest`). */
export const namedManifest = (params: typeof AnswerParams.Type): string | undefined => params.manifest ?? params.manifestDigest

/**
 * A verification's JSON, and with `sign=1` on a result that passed, `attestation`: the signed
 * result (a DSSE envelope over an in-toto Statement, src/evidence/ResultAttestation.ts).
 */
const signed = <A, I>(rendered: Schema.Schema<A, I>) =>
  Schema.extend(rendered, Schema.Struct({ attestation: Schema.optional(Envelope) }))

export const VerifyGroup = HttpApiGroup.make("verify")
  .add(
    HttpApiEndpoint.post("verifyReport", "/v1/verify/report")
      .setUrlParams(ReportParams)
      // The drafted report, exactly the text `run-pipeline verify --report` reads (strictly decoded).
      .setPayload(HttpApiSchema.Text({ contentType: "application/json" }))
      .addSuccess(signed(RenderedResult))
      .addError(Unauthorized, { status: 401 })
      .addError(Forbidden, { status: 403 })
      .addError(RunNotFound, { status: 404 })
      .addError(ResultSigningUnavailable, { status: 409 })
  )
  .add(
    HttpApiEndpoint.post("verifyAnswer", "/v1/verify/answer")
      .setUrlParams(AnswerParams)
      // The drafted answer: citegate.answer/1 JSON, EVI1 text or an Anthropic Messages response.
      .setPayload(HttpApiSchema.Text())
      .addSuccess(signed(RenderedAnswer))
      .addError(Unauthorized, { status: 401 })
      .addError(Forbidden, { status: 403 })
      .addError(RunNotFound, { status: 404 })
      .addError(ResultSigningUnavailable, { status: 409 })
  )

/**
 * Recorded human review of a run. `POST` takes `{"report": "<the drafted report's JSON text>", "fact": 0,
 * "decision": "wrong-metric", "note": "…"}` (strict: any other key, `reviewer` included, is refused): the
 * report is verified against the run as `POST /v1/verify/report` verifies it, and the decision about its
 * verified fact `fact` (0-based, as in `citegate.result/1`) is appended to the run's review log with the
 * token's name as the reviewer. `GET` lists the log.
 */
export const ReviewsGroup = HttpApiGroup.make("reviews")
  .add(
    HttpApiEndpoint.post("recordReview", "/v1/runs/:id/reviews")
      .setPath(RunPath)
      .setUrlParams(NoParams)
      .setPayload(HttpApiSchema.Text({ contentType: "application/json" }))
      .addSuccess(RecordedDecision, { status: 201 })
      .addError(DecisionInvalid, { status: 400 })
      .addError(Unauthorized, { status: 401 })
      .addError(Forbidden, { status: 403 })
      .addError(RunNotFound, { status: 404 })
      .addError(DecisionLogFull, { status: 409 })
      .addError(DecisionFactNotVerified, { status: 422 })
      .addError(DecisionWriteFailed, { status: 500 })
      .addError(DecisionLogCorrupt, { status: 500 })
  )
  .add(
    HttpApiEndpoint.get("listReviews", "/v1/runs/:id/reviews")
      .setPath(RunPath)
      .setUrlParams(NoParams)
      .addSuccess(DecisionLog)
      .addError(Unauthorized, { status: 401 })
      .addError(Forbidden, { status: 403 })
      .addError(RunNotFound, { status: 404 })
      .addError(DecisionLogCorrupt, { status: 500 })
  )

export class CitegateApi extends HttpApi.make("citegate")
  .add(HealthGroup)
  .add(RunsGroup)
  .add(DocumentsGroup)
  .add(VerifyGroup)
  .add(ReviewsGroup)
{}
