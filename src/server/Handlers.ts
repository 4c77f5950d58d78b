/**
 * Handlers of the typed endpoints (Api.ts): runs and verification. Verification goes through the
 * same Gate and Answers services as the CLI and answers with the same JSON renderings
 * (`citegate.result/1`, `citegate.answer-result/1`): the same values, written compact (no
 * indentation, no trailing newline) where the CLI's `--format json` indents them.
 *
 * @since 0.2.0
 */
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Spans from "../internal/Spans.js"
import * as Option from "effect/Option"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Stream from "effect/Stream"
import * as AnswerFormats from "../answer/Formats.js"
import type { BoundAnswer } from "../answer/Records.js"
import * as AnswerRender from "../answer/Render.js"
import * as Config from "../Config.js"
import { type AnswerError, Forbidden, type ReportRejected, ResultSigningUnavailable, RunNotFound } from "../Errors.js"
import * as ResultAttestation from "../evidence/ResultAttestation.js"
import * as Signatures from "../evidence/Signatures.js"
import * as CaptureStore from "../store/CaptureStore.js"
import * as path from "node:path"
import { NotReady } from "../Errors.js"
import type * as Gate from "../verify/Gate.js"
import type { Mode } from "../Domain.js"
import * as Policy from "../verify/Policy.js"
import * as Json from "../render/Json.js"
import { fromOutcome, Rendering } from "../render/Rendering.js"
import * as Decisions from "../review/Decisions.js"
import { Judge } from "../review/Judge.js"
import * as JudgeReview from "../review/JudgeReview.js"
import type { VerifiedReport } from "../verify/VerifiedReport.js"
import { CitegateApi, namedManifest } from "./Api.js"
import * as Gates from "./Gates.js"
import * as KeptReviews from "./KeptReviews.js"
import { Access, Auth, type Principal, type RequestHeaders } from "./Auth.js"
import { Lifecycle, ServerContext, Telemetry } from "./Context.js"
import * as Metrics from "./Metrics.js"
import { RequestBytes, textOf as bodyText } from "./RequestBytes.js"
import { eventJson, type RunView, Runs } from "./Runs.js"

/**
 * Spans of one verification request: every span below carries the run id; the request's own span
 * gets the outcome (`verified` or the error's tag) and, on failure, the error tag.
 */
const verificationSpan = (runId: string, outcome: string) =>
  Spans.annotateCurrentSpanIfAny({
    [Metrics.attributes.runId]: runId,
    [Metrics.attributes.outcome]: outcome,
    ...(outcome === "verified" ? {} : { [Metrics.attributes.errorTag]: outcome })
  })

/** The error tags of a report's failed facts (rejected) or retracted facts (drop mode). */
const factTags = (outcome: Either.Either<Gate.Checked, { readonly _tag: string }>): ReadonlyArray<string> =>
  Either.isRight(outcome)
    ? outcome.right.report.retractions.map((r) => r.error._tag)
    : outcome.left._tag === "ReportRejected"
    ? (outcome.left as ReportRejected).failures.map((f) => f.error._tag)
    : [outcome.left._tag]

/** A rendering as its own span (`Render.json`). */
const rendered = (render: () => string) => Spans.withSpanExported("Render.json")(Effect.sync(render))

/**
 * The run `runId`, if `principal` may read it. A token that lists neither the run nor "*" and did
 * not start it gets 403 whether or not the run exists: ids of other tokens' runs do not leak.
 */
export const readableRun = (principal: Principal, runId: string): Effect.Effect<RunView, Forbidden | RunNotFound, Runs> =>
  Effect.gen(function*() {
    const runs = yield* Runs
    const listed = principal.runs === "*" || principal.runs.has(runId)
    const run = yield* Effect.either(runs.get(runId))
    if (listed) return yield* run
    if (Either.isRight(run) && run.right.owner === principal.digest) return run.right
    return yield* new Forbidden({ action: "read-run", runId })
  })

const authenticated = (headers: RequestHeaders, access: Access = Access.any) =>
  Effect.flatMap(Auth, (auth) => auth.authenticate(headers, access))

const json = (text: string) => HttpServerResponse.text(text, { contentType: "application/json" })

/** An SSE frame; `data` is one line of JSON (JSON.stringify never emits a raw newline). */
const sseFrame = (id: number, event: string, data: string) => `id: ${id}\nevent: ${event}\ndata: ${data}\n\n`

/** Last-Event-ID as a non-negative integer (anything else: from the start). */
const lastEventId = (headers: RequestHeaders): number => {
  const value = headers["last-event-id"]
  if (typeof value !== "string" || !/^\d{1,9}$/.test(value)) return 0
  return Number(value)
}

export const RunsLive = HttpApiBuilder.group(CitegateApi, "runs", (handlers) =>
  handlers
    .handle("startRun", ({ request }) =>
      Effect.gen(function*() {
        const principal = yield* authenticated(request.headers, Access.capture)
        const lifecycle = yield* Lifecycle
        if (yield* lifecycle.isDraining) return yield* new NotReady({ reason: "draining" })
        const run = yield* (yield* Runs).start(principal.digest)
        yield* Effect.logInfo("run started").pipe(Effect.annotateLogs({ runId: run.id, token: principal.name }))
        return { id: run.id, status: run.status }
      }))
    .handle("getRun", ({ path, request }) =>
      Effect.gen(function*() {
        const principal = yield* authenticated(request.headers)
        const run = yield* readableRun(principal, path.id)
        const manifest = yield* (yield* Runs).manifest(run)
        // Re-read: the run may have finished while its manifest was read.
        const status = (yield* (yield* Runs).get(run.id)).status
        return { id: run.id, status, manifest }
      }))
    .handle("runEvents", ({ path, request }) =>
      Effect.gen(function*() {
        const principal = yield* authenticated(request.headers)
        const run = yield* readableRun(principal, path.id)
        const runs = yield* Runs
        const after = lastEventId(request.headers)
        const body = runs.events(run, after).pipe(
          Stream.map((event) => sseFrame(event.id, event._tag, eventJson(event))),
          // A stored run whose manifest cannot be read ends the stream; the status endpoint says why.
          Stream.catchAll(() => Stream.empty),
          Stream.encodeText
        )
        return HttpServerResponse.stream(body, {
          contentType: "text/event-stream",
          headers: { "cache-control": "no-store", "x-accel-buffering": "no" }
        })
      }))
)

/** The run's recorded decisions about a verified report's facts (`undefined`: none, or the log is unreadable). */
const recordedReview = (reviews: KeptReviews.KeptReviewsShape, run: RunView, report: VerifiedReport) =>
  reviews.list(run).pipe(
    Effect.map((logged) => Decisions.humanReviewOf(report, logged)),
    Effect.catchAll((error) => Effect.as(Effect.logWarning("review log not shown").pipe(Effect.annotateLogs({ error: error._tag })), undefined))
  )

/**
 * `sign=1`: the service's result signing key (`verify.resultSigning.keyFile`, read per signed
 * request like the capture key per run; checked when `serve` starts), or `ResultSigningUnavailable`
 * when none is configured. `undefined` when the request does not ask.
 */
const signingKeyFor = (sign: "0" | "1" | undefined) =>
  Effect.gen(function*() {
    if (sign !== "1") return undefined
    const { config, configFile } = yield* ServerContext
    const keyFile = config.verify?.resultSigning?.keyFile
    if (keyFile === undefined) return yield* new ResultSigningUnavailable()
    // A key file removed or broken since start-up is the operator's fault, not the client's: a 500.
    return yield* Effect.orDie(Signatures.loadSigningKey(path.resolve(path.dirname(configFile), keyFile)))
  })

/**
 * A rendering's JSON value (`Json.toJson`, `AnswerRender.toJson`) as the service's compact JSON text
 * (`Json.compact`: the value of `Json.render`, without its indentation and trailing newline), with
 * the signed result added under `attestation`, written once from the value.
 */
const withAttestation = (value: object, envelope: Signatures.Envelope | undefined) =>
  Json.compact(value, envelope === undefined ? undefined : { attestation: envelope })

/** The run's captures behind the verifier, for one request (its directory, or its rows in PostgreSQL). */
const storeOf = (run: RunView) => Layer.unwrapEffect(Effect.map(Runs, (runs) => runs.store(run)))

/** The run's store identity, for a signed result's `run.store` (opened only when a result is signed). */
const storeIdentityOf = (run: RunView) =>
  Effect.map(CaptureStore.CaptureStore, (store) => store.identity).pipe(Effect.provide(storeOf(run)))

type VerifiedRendering = Extract<Rendering, { readonly _tag: "Verified" }>

/** A report's rendering: its provenance, with the judge's outcome and the recorded review beside a verified one. */
const reportRendering = (
  outcome: Parameters<typeof fromOutcome>[0],
  judge: VerifiedRendering["judge"],
  humanReview: VerifiedRendering["humanReview"]
): Rendering => {
  const provenance = fromOutcome(outcome)
  return provenance._tag === "Verified" ? Rendering.Verified({ ...provenance, judge, humanReview }) : provenance
}

/**
 * What `POST /v1/verify/report` answers once the run is known and the body read: the rendered JSON
 * text (always a 200; a rejected report is a rendering too). The route's handler and the server's
 * lane for plain requests (VerifyLane.ts) both answer through one of these, so both share its kept
 * Gates and review logs and answer with the same bytes.
 */
export interface ReportResponderShape {
  readonly respond: (
    run: RunView,
    mode: Mode,
    text: string,
    /** `sign=1`: the signing key and the exact bytes received. */
    signing?: { readonly key: Signatures.SigningKey; readonly input: Uint8Array | string } | undefined
  ) => Effect.Effect<string, RunNotFound, Runs>
  /**
   * `respond` (without signing) answered at once, without an effect, when everything it needs is
   * kept: the (run, mode) Gate, every capture warm (`GateShape.checkJsonWarm`) and the run's review
   * log; with telemetry and the judge off. `undefined` otherwise: the caller takes `respond`.
   */
  readonly respondWarm: (run: RunView, mode: Mode, text: string) => string | undefined
}

/** The report route's responder, shared by the route and the server's lane (provided by `Server.layer`). */
export class ReportResponder extends Context.Tag("citegate/server/ReportResponder")<ReportResponder, ReportResponderShape>() {}

/** A responder with Gates and review logs of its own, released with the scope it is made in. */
export const makeReportResponder = Effect.gen(function*() {
  // One Gate per (run, mode), built on first use and kept (Gates.ts), not one per request.
  const gates = yield* Gates.make()
  // The runs' review logs, read once and kept while unchanged (KeptReviews.ts), not per request.
  const reviews = yield* KeptReviews.make()
  const respond: ReportResponderShape["respond"] = (run, mode, text, signing) =>
    Effect.gen(function*() {
      const check = (gate: Gate.GateShape) =>
        Effect.map(Effect.either(gate.checkJsonWithCaptures(text)), (outcome) => [gate.policy, outcome] as const)
      // A kept Gate needs no scope (one made and closed per request otherwise).
      const kept = gates.keptGate(run, mode)
      const [policy, outcome] = yield* (kept !== undefined ? check(kept) : Effect.scoped(Effect.flatMap(gates.gate(run, mode), check))).pipe(
        Spans.annotateSpansExported(Metrics.attributes.runId, run.id)
      )
      const tag = Either.isRight(outcome) ? "verified" : outcome.left._tag
      yield* verificationSpan(run.id, tag)
      yield* Metrics.verification("report", tag, factTags(outcome))
      // --- semantic review hook: the judge's outcome (when review.judge is on), beside provenance ---
      const judge = Either.isRight(outcome) ? yield* JudgeReview.ofReport(outcome.right.report, outcome.right.captures) : undefined
      // --- recorded human review: the run's decisions about the verified facts (an unreadable log is logged, not shown) ---
      const humanReview = Either.isRight(outcome) ? yield* recordedReview(reviews, run, outcome.right.report) : undefined
      const passed = Either.isRight(outcome) && outcome.right.report.outcome === "grounded" && !JudgeReview.failsRun(judge)
      // --- signed result (`sign=1`): only a result that passed is signed ---
      const envelope = signing === undefined || !passed || Either.isLeft(outcome) ? undefined : yield* Effect.orDie(
        Effect.flatMap(storeIdentityOf(run), (storeIdentity) =>
          ResultAttestation.signResult({ kind: "report", ...outcome.right }, {
            name: "report",
            // The exact bytes received (sign=1 reads them: RequestBytes.readsBytes).
            input: signing.input,
            policy,
            run: { id: run.id, store: ResultAttestation.storeKindOf(storeIdentity) }
          }, signing.key))
      )
      const rendering = reportRendering(outcome, judge, humanReview)
      return yield* rendered(() => withAttestation(Json.toJson(rendering), envelope))
    })
  // What `respond` would add that takes an effect: metrics and spans (telemetry on), the judge.
  const telemetry = yield* Effect.serviceOption(Telemetry)
  const warmOn = !(Option.isSome(telemetry) && telemetry.value.enabled) && Option.isNone(yield* Effect.serviceOption(Judge))
  const respondWarm: ReportResponderShape["respondWarm"] = (run, mode, text) => {
    const gate = warmOn ? gates.keptGate(run, mode) : undefined
    if (gate?.checkJsonWarm === undefined) return undefined
    // The review log before the verification: an answer is never given up after the warm check
    // counted its cache hits (the general path would count them again).
    const decisions = reviews.listKept(run)
    if (decisions === undefined) return undefined
    const outcome = gate.checkJsonWarm(text)
    if (outcome === undefined) return undefined
    const humanReview = Either.isRight(outcome) ? Decisions.humanReviewOf(outcome.right.report, decisions) : undefined
    return withAttestation(Json.toJson(reportRendering(outcome, undefined, humanReview)), undefined)
  }
  return { respond, respondWarm } satisfies ReportResponderShape
})

/** The layer of the shared responder (`Server.layer` provides it to the route and to the lane). */
export const ReportResponderLive = Layer.scoped(ReportResponder, makeReportResponder)

export const VerifyLive = HttpApiBuilder.group(CitegateApi, "verify", (handlers) =>
  Effect.gen(function*() {
    // The service's shared responder, or (the API served without Server.layer) one of its own.
    const responder = yield* Option.match(yield* Effect.serviceOption(ReportResponder), {
      onSome: Effect.succeed,
      onNone: () => makeReportResponder
    })
    // The answer route's Answers, one per (run, mode), built on first use and kept (Gates.ts).
    const gates = yield* Gates.make()
    return handlers
      .handleRaw("verifyReport", ({ request, urlParams }) =>
        Effect.gen(function*() {
          const principal = yield* authenticated(request.headers)
          const run = yield* readableRun(principal, urlParams.run)
          const { config } = yield* ServerContext
          const key = yield* signingKeyFor(urlParams.sign)
          // The body was read (and bounded) by the server middleware: the cached text, or with sign=1
          // its bytes (what a signed result names), decoded as the text would be.
          const bytes = yield* Effect.serviceOption(RequestBytes)
          const text = Option.isSome(bytes) ? bodyText(bytes.value) : yield* Effect.orDie(request.text)
          const mode = urlParams.mode ?? Config.resolvedMode(config)
          const signing = key === undefined ? undefined : { key, input: Option.isSome(bytes) ? bytes.value : text }
          return json(yield* responder.respond(run, mode, text, signing))
        }))
      .handleRaw("verifyAnswer", ({ request, urlParams }) =>
        Effect.gen(function*() {
          const principal = yield* authenticated(request.headers)
          const run = yield* readableRun(principal, urlParams.run)
          const { config } = yield* ServerContext
          const key = yield* signingKeyFor(urlParams.sign)
          const format = urlParams.format ?? "json"
          // A binary format's body is bytes (never decoded as text, which would replace invalid UTF-8);
          // with sign=1 every format's body is read as bytes (what a signed result names).
          const bytes = yield* Effect.serviceOption(RequestBytes)
          const text = AnswerFormats.isBinary(format)
            ? yield* Option.match(bytes, { onSome: Effect.succeed, onNone: () => Effect.map(Effect.orDie(request.arrayBuffer), (b) => new Uint8Array(b)) })
            : Option.isSome(bytes) ? bodyText(bytes.value) : yield* Effect.orDie(request.text)
          const mode = urlParams.mode ?? Config.resolvedMode(config)
          const answersOptions = Gates.answerOptions(config, mode)
          // The run's manifest, kept once the run is finished (Runs.manifest).
          const runManifest = (yield* Runs).manifest(run)
          // The run's Answers, kept per (run, mode) like the report route's Gate (Gates.ts).
          const [storeIdentity, outcome] = yield* Effect.gen(function*() {
            const kept = yield* Effect.orDie(gates.answers(run, mode))
            const manifest = yield* Effect.orDie(runManifest)
            const options = { manifestDigest: namedManifest(urlParams) }
            const bound: Either.Either<BoundAnswer, AnswerError> = AnswerFormats.bind(format, text, manifest, options)
            return [kept.storeIdentity, yield* Effect.either(Effect.flatMap(bound, kept.answers.verify))] as const
          }).pipe(Effect.scoped, Effect.annotateSpans(Metrics.attributes.runId, run.id))
          const tag = Either.isRight(outcome) ? "verified" : outcome.left._tag
          yield* verificationSpan(run.id, tag)
          yield* Metrics.verification("answer", tag, Either.isRight(outcome) ? [] : [tag])
          // --- semantic review hook: the judge's outcome (when review.judge is on), beside provenance ---
          const judge = Either.isRight(outcome) ? yield* JudgeReview.ofAnswer(outcome.right.answer, outcome.right.captures) : undefined
          const rendering = Either.match(outcome, {
            onLeft: (error) => AnswerRender.AnswerRendering.Rejected({ error }),
            onRight: ({ answer, captures }) => AnswerRender.AnswerRendering.Verified({ answer, captures, judge })
          })
          const passed = Either.isRight(outcome) && outcome.right.answer.outcome === "grounded" && !JudgeReview.failsRun(judge)
          // --- signed result (`sign=1`): only a result that passed is signed ---
          const envelope = key === undefined || !passed || Either.isLeft(outcome) ? undefined : yield* Effect.orDie(
            ResultAttestation.signResult({ kind: "answer", ...outcome.right, options: answersOptions }, {
              name: "answer",
              // The exact bytes received (sign=1 reads them: RequestBytes.readsBytes).
              input: Option.isSome(bytes) ? bytes.value : text,
              policy: Policy.fromConfig(config),
              run: { id: run.id, store: ResultAttestation.storeKindOf(storeIdentity) }
            }, key)
          )
          return json(yield* rendered(() => withAttestation(AnswerRender.toJson(rendering), envelope)))
        }))
  }))
