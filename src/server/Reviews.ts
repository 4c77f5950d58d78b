/**
 * Recorded human review over HTTP: `POST /v1/runs/{id}/reviews` records a decision, `GET` lists the
 * run's log (Api.ts, `ReviewsGroup`). The reviewer is the authenticated token's name (`server.tokens[].name`,
 * else `token:<digest prefix>`), never a value of the request; the token must be able to read the run.
 * The report is verified by the same Gate as `POST /v1/verify/report` before anything is appended.
 *
 * @since 0.3.0
 */
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import * as Config from "../Config.js"
import { DecisionInvalid } from "../Errors.js"
import { decodeJson } from "../internal/decode.js"
import * as Decisions from "../review/Decisions.js"
import { decisionsFormat, RecordedDecision, withHistory } from "../review/Records.js"
import * as ReviewLog from "../store/ReviewLog.js"
import * as Gate from "../verify/Gate.js"
import { CitegateApi } from "./Api.js"
import { Access, Auth } from "./Auth.js"
import { ServerContext } from "./Context.js"
import { readableRun } from "./Handlers.js"
import { type RunView, Runs } from "./Runs.js"

/** The body of `POST /v1/runs/{id}/reviews`: strict, and without a reviewer (the token names one). */
export const ReviewBody = Schema.Struct({
  report: Schema.String,
  fact: Schema.NonNegativeInt,
  decision: Schema.String,
  note: Schema.optional(Schema.String)
}).annotations({ parseOptions: { onExcessProperty: "error" }, identifier: "ReviewBody" })

const decodeBody = decodeJson(ReviewBody)
const encodeRecorded = Schema.encodeSync(RecordedDecision)

/** The run's review log in the service's store (its directory, or PostgreSQL with `serve --store`). */
const logOf = (run: RunView) => Layer.unwrapEffect(Effect.map(Runs, (runs) => runs.reviews(run)))

export const ReviewsLive = HttpApiBuilder.group(CitegateApi, "reviews", (handlers) =>
  handlers
    // Raw: the body is read as the exact text sent (the middleware bounded it), then decoded strictly here.
    .handleRaw("recordReview", ({ path, request }) =>
      Effect.gen(function*() {
        const principal = yield* Effect.flatMap(Auth, (auth) => auth.authenticate(request.headers, Access.any))
        const run = yield* readableRun(principal, path.id)
        const body = decodeBody(yield* Effect.orDie(request.text))
        if (Either.isLeft(body)) return yield* new DecisionInvalid(body.left)
        const decided = Decisions.request({
          fact: body.right.fact,
          decision: body.right.decision,
          ...(body.right.note === undefined ? {} : { note: body.right.note }),
          reviewer: principal.name
        })
        if (Either.isLeft(decided)) return yield* decided.left
        const { config } = yield* ServerContext
        const gateLayer = Gate.layerWithStore({ ...config, verify: { ...config.verify, mode: Config.resolvedMode(config) } }).pipe(
          Layer.provide(Layer.unwrapEffect(Effect.map(Runs, (runs) => runs.store(run)))),
          Layer.orDie
        )
        const outcome = yield* Effect.flatMap(Gate.Gate, (gate) => Effect.either(gate.checkJsonWithCaptures(body.right.report))).pipe(
          Effect.provide(gateLayer)
        )
        const recorded = yield* Decisions.record({ run: run.id, reportText: body.right.report, outcome, request: decided.right }).pipe(
          Effect.provide(logOf(run))
        )
        yield* Effect.logInfo("review recorded").pipe(
          Effect.annotateLogs({ runId: run.id, token: principal.name, seq: recorded.seq, decision: recorded.record.decision })
        )
        return HttpServerResponse.unsafeJson(encodeRecorded({ ...recorded, supersededBy: null }), { status: 201 })
      }))
    .handle("listReviews", ({ path, request }) =>
      Effect.gen(function*() {
        const principal = yield* Effect.flatMap(Auth, (auth) => auth.authenticate(request.headers, Access.any))
        const run = yield* readableRun(principal, path.id)
        const logged = yield* Effect.flatMap(ReviewLog.ReviewLog, (log) => log.list).pipe(Effect.provide(logOf(run)))
        return { format: decisionsFormat, run: run.id, decisions: withHistory(logged) }
      }))
)
