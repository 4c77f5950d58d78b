/**
 * The read-only half of citegate. It decodes a drafted report strictly and
 * checks each cited fact against the capture of its exact source in this run:
 * never another capture, never another run, no fuzzy matching, and normalised
 * matching only when the policy opts in (`verify.matching: "normalized/2"`),
 * labelled in the evidence. It reads captures only through `CaptureStore.read`
 * and writes nothing.
 *
 * The matching path is a short pipeline of named steps, each its own module:
 * `Load` (approval; each distinct capture read and rehashed once), `Digests`,
 * `Match` (the exact then normalised `Search`, and `Anchors`), `Boundaries` and
 * `Visibility` (opt-in refusals), `Evidence`;
 * `Report` adds the label checks of a report around it.
 *
 * @since 0.1.0
 */
import * as Arr from "effect/Array"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import { type CaptureRecord, factLimits, makeReport, type SourceUrl, type VerifiedEntry, verifiedFormat } from "../Domain.js"
import { type FactRejection, InvalidReport, ReportRejected, VerificationTimeout } from "../Errors.js"
import { decodeJson, decodeUnknown } from "../internal/decode.js"
import { fastReport } from "../internal/reportDecode.js"
import * as Deadline from "../internal/Deadline.js"
import * as Spans from "../internal/Spans.js"
import { CaptureStore } from "../store/CaptureStore.js"
import * as CaptureSignatures from "./CaptureSignatures.js"
import { CaptureCache } from "./CaptureCache.js"
import * as Digests from "./Digests.js"
import * as Evidence from "./Evidence.js"
import * as Load from "./Load.js"
import * as Match from "./Match.js"
import { Policy } from "./Policy.js"
import type {
  CitationFailure,
  CitationInput,
  CitationsChecked,
  Verification
} from "./Records.js"
import * as ReportCheck from "./Report.js"
import * as Search from "./Search.js"
import { VerifiedReport } from "./VerifiedReport.js"
import * as Warm from "./Warm.js"

export type { CitationFailure, CitationInput, CitationResult, CitationsChecked, Verification } from "./Records.js"

/**
 * @since 0.1.0
 * @category models
 */
export interface VerifierShape {
  /**
   * The lower-level entry: check bare citations (approval, capture, digests,
   * exact search) on the same path as reports, without labels or a report
   * schema, under the same deadline. Each citation gets its evidence or its
   * typed failures; only an overrun deadline fails the whole call.
   */
  readonly checkCitations: (citations: ReadonlyArray<CitationInput>) => Effect.Effect<CitationsChecked, VerificationTimeout>
  /**
   * Check every fact and return passes and failures side by side; only an undecodable report, or
   * one whose verification overran the policy's deadline, fails.
   */
  readonly check: (report: unknown) => Effect.Effect<Verification, InvalidReport | VerificationTimeout>
  /**
   * `checkJson` of a well-formed report whose captures are all warm (each kept in the cache under
   * the stamp its store gives now, `CaptureStoreShape.stampsNow`, with its index built), answered
   * at once without an effect; `undefined` for anything else (the caller takes `checkJson`, which
   * decides it from scratch). For callers that export no spans. Optional: a Verifier may not have it.
   *
   * @since 0.5.0
   */
  readonly checkJsonWarm?: ((text: string) => Verification | undefined) | undefined
  /** `check` on report JSON text (repeated and prototype keys rejected). */
  readonly checkJson: (text: string) => Effect.Effect<Verification, InvalidReport | VerificationTimeout>
  /** Accept the report only if every fact passes; otherwise `ReportRejected` lists every failure. */
  readonly verify: (
    report: unknown
  ) => Effect.Effect<VerifiedReport, InvalidReport | ReportRejected | VerificationTimeout>
  /** `verify` on report JSON text. */
  readonly verifyJson: (
    text: string
  ) => Effect.Effect<VerifiedReport, InvalidReport | ReportRejected | VerificationTimeout>
}

/**
 * @since 0.1.0
 * @category tags
 */
export class Verifier extends Context.Tag("citegate/Verifier")<Verifier, VerifierShape>() {}

/**
 * The outcome and report once the passing entries are known. The entries were
 * decoded and checked already, so they are not validated a second time.
 */
export const toVerifiedReport = (
  entries: ReadonlyArray<VerifiedEntry>,
  options: { readonly mode: "reject" | "drop"; readonly retractions: ReadonlyArray<FactRejection> }
): VerifiedReport =>
  new VerifiedReport({
    format: verifiedFormat,
    outcome: entries.some((entry) => entry.fact.state === "cited") ? "grounded" : "no_evidence",
    mode: options.mode,
    facts: entries,
    retractions: options.retractions,
    proves: "provenance-only",
    semanticReview: "not-performed"
  }, { disableValidation: true })

/** Reject-mode acceptance: the report passes only if no fact failed. */
export const accept = (verification: Verification): Effect.Effect<VerifiedReport, ReportRejected> =>
  Arr.isNonEmptyReadonlyArray(verification.rejections)
    ? Effect.fail(new ReportRejected({ failures: verification.rejections }))
    : Effect.succeed(toVerifiedReport(verification.entries, { mode: "reject", retractions: [] }))

/**
 * @since 0.1.0
 * @category constructors
 */
export const make: Effect.Effect<VerifierShape, never, CaptureStore | Policy> = Effect.gen(function*() {
  const store = yield* CaptureStore
  const policy = yield* Policy
  // The service's verified-capture cache, when one is provided (never by default: the CLI reads each time).
  const cache = yield* Effect.serviceOption(CaptureCache)
  const indexUnits = Search.indexUnitsFor(policy.timeoutMs)
  const reportSchema = makeReport(policy.maxFacts)
  // The fact limit is checked before any fact is decoded (Domain.factLimits).
  // A valid report of the common shape is decoded by hand (internal/reportDecode.ts); the rest by the Schema.
  const decodeReport = decodeUnknown(reportSchema, factLimits(policy.maxFacts), fastReport(policy.maxFacts))
  // From text, the facts `JSON.parse` made are kept when already in the Schema's key order (not copied).
  const decodeReportJson = decodeJson(reportSchema, factLimits(policy.maxFacts), fastReport(policy.maxFacts, { parsedHere: true }))
  // The warm path (Warm.ts): on unless switched off, and only under a policy it handles.
  const warmPath = yield* Warm.WarmPath
  const warmOn = warmPath.enabled && Warm.handles(policy)

  /**
   * The one matching path: approval, each distinct capture read and rehashed once, both digests,
   * then an exact search of every quote, one capture at a time, under the policy's deadline.
   * Reports and answers both use it. When every capture came warm from the cache, steps 2 to 5
   * run in one synchronous step instead (Warm.ts), with the same functions and the same outcome.
   */
  const checkCited = (citations: ReadonlyArray<CitationInput>) =>
    Effect.gen(function*() {
      const failures: Array<Array<CitationFailure>> = citations.map(() => [])
      const loadedCaptures = yield* Load.loadCaptures(store, Load.approve(policy, citations, failures), cache)
      // A span per capture searched only when spans are exported (internal/Spans.ts `exported`).
      const spans = yield* Spans.exported
      const warm = warmOn && !spans ? Warm.check(policy, citations, loadedCaptures, failures) : undefined
      warmPath.observe?.(warm !== undefined)
      if (warm !== undefined) return warm
      // Under verify.signatures: each capture's attestation, read once; refused ones fail their citations here.
      const { captures, notes } = yield* CaptureSignatures.screen(policy, store, loadedCaptures)
      const results = Evidence.pending(citations.length) // each one set by the evidence, or by `Evidence.failed`
      const toSearch = Digests.groupByCapture(citations, captures, failures)
      const loaded = new Map<SourceUrl, CaptureRecord>()
      const diagnose = Evidence.diagnoser(policy)
      // The search runs in slices with yields in between, so the deadline can interrupt it.
      // A cached capture's index is built here once, within an allowance from the deadline (Search.indexUnitsFor).
      const search = Search.sliced(indexUnits)
      const captureOf = ([record, indices]: readonly [CaptureRecord, ReadonlyArray<number>]): Match.CaptureSearch => {
        loaded.set(record.source, record)
        return { policy, search, record, index: Load.indexOf(captures, record.source), citations, indices, failures }
      }
      // Absences, the opt-in screens (Boundaries.ts, Visibility.ts), then the evidence of what is left.
      const settle = ({ record }: Match.CaptureSearch, matches: Match.CaptureMatches) =>
        Evidence.settle(policy, record, citations, matches, diagnose, failures, results, Load.checkpointsOf(captures, record.source))
      // A capture's one citation found as it stands gets its evidence at once (Match.Direct, Evidence.settleOne).
      const direct: Match.Direct = ({ record }, i, span, n, ambiguous) => Evidence.settleOne(policy, record, i, span, n, ambiguous, results, Load.checkpointsOf(captures, record.source))
      if (!spans) yield* Match.matchEach(toSearch, captureOf, settle, direct)
      else {
        for (const entry of toSearch) {
          const capture = captureOf(entry)
          const attributes = { [Spans.spanAttributes.source]: capture.record.source, "citegate.citations": capture.indices.length }
          settle(capture, yield* Spans.perItem(spans, "Verifier.search", attributes)(Match.matchCapture(capture)))
        }
      }
      return { results: Evidence.failed(results, failures), loaded, signatureNotes: notes }
    }).pipe(
      // One deadline for reading and searching every capture (decoding is bounded by the input's size).
      (effect) =>
        Deadline.timeoutFail(effect, {
          duration: policy.timeoutMs,
          onTimeout: () => new VerificationTimeout({ timeoutMs: policy.timeoutMs })
        })
    )

  const checkReport = ReportCheck.checkReport(policy, checkCited)

  // Bounded without a deadline: Warm.check's bounds (its doc), over captures already verified and
  // indexed; decoding is bounded by the body's limit. The stamps are the store's `stampsNow`.
  const checkCitedNow = (citations: ReadonlyArray<CitationInput>) => {
    const failures: Array<Array<CitationFailure>> = citations.map(() => [])
    // The captures count as the cache's hits only when the warm path answers (else the general path counts them).
    const warm = Load.answeredWarm(Load.loadWarm(store, Load.approve(policy, citations, failures), cache), (loaded) => Warm.check(policy, citations, loaded, failures))
    if (warm !== undefined) warmPath.observe?.(true)
    return warm
  }
  const checkReportNow = ReportCheck.checkReportNow(policy, checkCitedNow)
  const checkJsonWarm = (text: string): Verification | undefined => {
    if (!warmOn) return undefined
    const report = decodeReportJson(text)
    return Either.isLeft(report) ? undefined : checkReportNow(report.right)
  }

  const checkCitations = Spans.fn("Verifier.checkCitations")(function*(citations: ReadonlyArray<CitationInput>) {
    const { loaded, results, signatureNotes } = yield* checkCited(citations)
    // Only the captures at least one citation was verified against, as for reports.
    const captures = new Map<SourceUrl, CaptureRecord>()
    results.forEach((result, i) => {
      const record = loaded.get(citations[i]!.source as SourceUrl)
      if (Either.isRight(result) && record !== undefined) captures.set(record.source, record)
    })
    return { results, captures, signatureNotes } satisfies CitationsChecked
  })

  const check = Spans.fn("Verifier.check")(function*(input: unknown) {
    const report = yield* Effect.mapError(decodeReport(input), (invalid) => new InvalidReport(invalid))
    return yield* checkReport(report)
  })

  const checkJson = Spans.fn("Verifier.checkJson")(function*(text: string) {
    const report = yield* Effect.mapError(decodeReportJson(text), (invalid) => new InvalidReport(invalid))
    return yield* checkReport(report)
  })

  return Verifier.of({
    checkCitations,
    check,
    checkJson,
    checkJsonWarm,
    verify: Spans.fn("Verifier.verify")(function*(input: unknown) {
      return yield* accept(yield* check(input))
    }),
    verifyJson: Spans.fn("Verifier.verifyJson")(function*(text: string) {
      return yield* accept(yield* checkJson(text))
    })
  })
})

/**
 * @since 0.1.0
 * @category layers
 */
export const layer: Layer.Layer<Verifier, never, CaptureStore | Policy> = Layer.effect(Verifier, make)
