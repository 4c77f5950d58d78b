/**
 * What the review page reads beyond the typed API: a PDF capture's stored body, for drawing its
 * pages in the browser (`GET /v1/runs/{id}/captures/{captureSha256}/body`), and the drift audit of
 * a report against a newer run with the word diff of each changed excerpt
 * (`POST /v1/runs/{id}/audits?against={newRunId}`, read-only: it writes nothing; any other query
 * parameter is refused as the typed routes refuse theirs).
 *
 * The body route serves stored bytes that came from the network, so the response can never act as
 * a page: `Content-Type: application/pdf` fixed by citegate (never the source's header),
 * `X-Content-Type-Options: nosniff`, `Content-Disposition: attachment`, and a sandboxing
 * Content-Security-Policy (`default-src 'none'; sandbox`). Only PDF captures are served; every other
 * capture is shown as its extracted text.
 *
 * @since 0.3.0
 */
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import { HttpApiDecodeError } from "@effect/platform/HttpApiError"
import * as HttpRouter from "@effect/platform/HttpRouter"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import * as Audit from "../audit/Audit.js"
import { type AuditResult, AuditResult as AuditResultSchema } from "../audit/Records.js"
import { wordDiff, type WordDiff } from "../audit/WordDiff.js"
import * as Config from "../Config.js"
import { recordBody } from "../Domain.js"
import { AuditError, CaptureBodyUnavailable, type Forbidden, type RunNotFound, ServiceError, UiError, type Unauthorized } from "../Errors.js"
import * as Json from "../render/Json.js"
import { fromOutcome } from "../render/Rendering.js"
import { CaptureStore } from "../store/CaptureStore.js"
import * as Gate from "../verify/Gate.js"
import * as Policy from "../verify/Policy.js"
import * as Verifier from "../verify/Verifier.js"
import { readable } from "./Api.js"
import { Auth } from "./Auth.js"
import { ServerContext } from "./Context.js"
import { readableRun } from "./Handlers.js"
import { Runs, type RunView } from "./Runs.js"

/** The headers of a served capture body: a download of fixed type that no browser renders as a page. */
export const bodyHeaders = {
  "content-type": "application/pdf",
  "x-content-type-options": "nosniff",
  "content-disposition": "attachment; filename=\"capture.pdf\"",
  "content-security-policy": "default-src 'none'; sandbox",
  "cross-origin-resource-policy": "same-origin",
  "cache-control": "private, no-store"
} as const

const digestPattern = /^[0-9a-f]{64}$/

/** `citegate.audit-view/1`: the audit record and, per finding, the word diff the page shows beside it. */
export const auditViewFormat = "citegate.audit-view/1" as const

/** One finding's word diff: the old excerpt against its candidate (changed) or nearest passage (deleted); null otherwise. */
export const diffOf = (finding: AuditResult["findings"][number]): WordDiff | null =>
  finding.status === "changed"
    ? wordDiff(finding.snippet, finding.candidate.text)
    : finding.status === "deleted" && finding.nearest !== undefined
    ? wordDiff(finding.snippet, finding.nearest.text)
    : null

const encodeAudit = Schema.encodeSync(AuditResultSchema)
const encodeError = Schema.encodeSync(Schema.Union(ServiceError, UiError, AuditError))

type Refusal = Unauthorized | Forbidden | RunNotFound | CaptureBodyUnavailable

const statusOf = (tag: string) =>
  tag === "Unauthorized" ? 401 : tag === "Forbidden" ? 403 : tag === "AuditTimeout" || tag === "VerificationTimeout" ? 503 : tag === "AuditBaselineRejected" ? 422 : 404

const refusals = <R>(effect: Effect.Effect<HttpServerResponse.HttpServerResponse, Refusal | AuditError, R>) =>
  Effect.catchAll(effect, (error) =>
    Effect.succeed(HttpServerResponse.unsafeJson(encodeError(error), { status: statusOf(error._tag), headers: { "cache-control": "no-store" } })))

/** The review page's data routes as a raw-route layer of the service (Server.ts). */
export const layer = HttpApiBuilder.Router.use((router) =>
  Effect.gen(function*() {
    const auth = yield* Auth
    const runs = yield* Runs
    const context = yield* ServerContext
    const readable = (headers: HttpServerRequest.HttpServerRequest["headers"], id: string) =>
      Effect.flatMap(auth.authenticate(headers), (principal) => readableRun(principal, id).pipe(Effect.provideService(Runs, runs)))

    const captureBody = Effect.gen(function*() {
      const { headers } = yield* HttpServerRequest.HttpServerRequest
      const params = yield* HttpRouter.params
      const run = yield* readable(headers, params["id"] ?? "")
      const digest = params["sha256"] ?? ""
      const missing = new CaptureBodyUnavailable({ runId: run.id, captureSha256: digest.slice(0, 64), reason: "not-in-run" })
      if (!digestPattern.test(digest)) return yield* missing
      const manifest = yield* runs.manifest(run)
      const source = manifest.sources.find((s) => s.status === "captured" && s.captureSha256 === digest)
      if (source === undefined) return yield* missing
      const bytes = yield* Effect.gen(function*() {
        const store = yield* CaptureStore
        const body = recordBody(yield* store.read(source.source))
        if (!/^application\/pdf\s*(;|$)/i.test(body.contentType)) {
          return yield* new CaptureBodyUnavailable({ runId: run.id, captureSha256: digest, reason: "not-pdf" })
        }
        return yield* store.readBody(body.sha256)
      }).pipe(
        Effect.provide(runs.store(run)),
        Effect.catchIf((e): e is Exclude<typeof e, CaptureBodyUnavailable | RunNotFound> => e._tag !== "CaptureBodyUnavailable" && e._tag !== "RunNotFound", () => missing)
      )
      return HttpServerResponse.uint8Array(bytes, { contentType: bodyHeaders["content-type"], headers: bodyHeaders })
    })

    const audit = Effect.gen(function*() {
      const request = yield* HttpServerRequest.HttpServerRequest
      const refused = yield* auditQueryRefusal(request.url)
      if (refused !== undefined) return refused
      const params = yield* HttpRouter.params
      const oldRun = yield* readable(request.headers, params["id"] ?? "")
      const against = new URL(request.url, "http://localhost").searchParams.get("against") ?? ""
      const newRun = yield* readable(request.headers, against)
      // The body was read (and bounded) by the server middleware.
      const text = yield* Effect.orDie(request.text)
      return yield* auditReport(context.config, oldRun, newRun, text)
    }).pipe(Effect.provideService(Runs, runs))

    yield* router.concat(HttpRouter.empty.pipe(
      HttpRouter.get("/v1/runs/:id/captures/:sha256/body", refusals(captureBody)),
      HttpRouter.post("/v1/runs/:id/audits", refusals(audit))
    ))
  })
)

/**
 * The audit route's query: `against`, a run id (`RunId`, as the report routes' `run`), required and
 * given once (the run it names is looked up as the route's own; missing, empty or not a run id, it is
 * the 400 below, not a 404), and no other parameter. Any other name, `__proto__` included (every parameter an own key of the record decoded,
 * defined, not assigned), is the 400 `HttpApiDecodeError` the typed routes answer for a parameter
 * they do not take, with the same one-line message.
 */
const AuditParams = readable(Schema.Struct({ against: Config.RunId }))
const decodeAuditParams = Schema.decodeUnknownEither(AuditParams)
const encodeDecodeError = Schema.encodeSync(HttpApiDecodeError)

const auditQueryRefusal = (url: string) => {
  const search = new URL(url, "http://localhost").searchParams
  const record: Record<string, unknown> = {}
  for (const key of new Set(search.keys())) {
    const values = search.getAll(key)
    Object.defineProperty(record, key, { value: values.length === 1 ? values[0] : values, enumerable: true, writable: true, configurable: true })
  }
  const decoded = decodeAuditParams(record)
  if (Either.isRight(decoded)) return Effect.void
  return Effect.map(HttpApiDecodeError.fromParseError(decoded.left), (error) =>
    HttpServerResponse.unsafeJson(encodeDecodeError(error), { status: 400, headers: { "cache-control": "no-store" } }))
}

/**
 * Verifies `text` (a drafted report) against the old run as `POST /v1/verify/report` does, then audits
 * its verified facts against the new run. A report that does not verify has nothing to audit: 422 with
 * the verification's own rendering (`citegate.result/1`, rejected).
 */
const auditReport = (config: Config.PipelineConfig, oldRun: RunView, newRun: RunView, text: string) =>
  Effect.gen(function*() {
    const runs = yield* Runs
    const oldStore = Layer.orDie(runs.store(oldRun))
    const newStore = Layer.orDie(runs.store(newRun))
    const mode = Config.resolvedMode(config)
    const checked = yield* Effect.flatMap(Gate.Gate, (gate) => Effect.either(gate.checkJson(text))).pipe(
      Effect.provide(Gate.layerWithStore({ ...config, verify: { ...config.verify, mode } }).pipe(Layer.provide(oldStore), Layer.orDie))
    )
    if (Either.isLeft(checked)) {
      return HttpServerResponse.text(Json.compact(Json.toJson(fromOutcome(Either.left(checked.left)))), { status: 422, contentType: "application/json" })
    }
    const auditLayer = Audit.layer.pipe(
      Layer.provide(Verifier.layer),
      Layer.provide(Audit.fromStore(newStore)),
      Layer.provide(oldStore),
      Layer.provide(Policy.layer(config))
    )
    const result = yield* Effect.flatMap(Audit.Audit, (a) => a.auditReport(checked.right, { timeoutMs: Config.resolvedAuditTimeoutMs(config) })).pipe(
      Effect.provide(auditLayer)
    )
    return HttpServerResponse.unsafeJson(
      { format: auditViewFormat, run: oldRun.id, against: newRun.id, audit: encodeAudit(result), diffs: result.findings.map(diffOf) },
      { headers: { "cache-control": "no-store" } }
    )
  })
