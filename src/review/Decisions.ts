/**
 * Recorded human review: a reviewer's decision about one verified fact, bound to what verification
 * found (the report's digest, the fact's label, source, capture digest and span, and the capture's
 * text there), appended to the run's review log. Reads the Gate's result only: the report is
 * verified by the one verification path before anything is recorded, and a fact that did not
 * verify cannot be reviewed.
 *
 * @since 0.3.0
 */
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Schema from "effect/Schema"
import { randomUUID } from "node:crypto"
import { type CaptureRecord, isVerifiedCitation, sha256Of, type VerifiedCitation } from "../Domain.js"
import { DecisionFactNotVerified, DecisionInvalid, type VerifyError } from "../Errors.js"
import { cut } from "../internal/bounded.js"
import { decodeUnknown } from "../internal/decode.js"
import type { LoggedDecision } from "../store/ReviewLog.js"
import { ReviewLog } from "../store/ReviewLog.js"
import type { VerifiedReport } from "../verify/VerifiedReport.js"
import {
  Decision,
  decisionFormat,
  decisionKey,
  decisionLimits,
  DecisionNote,
  type HumanReview,
  humanReviewFormat,
  type ReviewDecision,
  Reviewer,
  withHistory
} from "./Records.js"
import { ownedSlice } from "../internal/ownedSlice.js"

const strict = { parseOptions: { onExcessProperty: "error" } } as const

/** What a reviewer says about one fact (the CLI's options, the service's JSON body with `reviewer` from the token). */
export const DecisionRequest = Schema.Struct({
  /** The fact's index in the drafted report (0-based, as `citegate.result/1` numbers it). */
  fact: Schema.NonNegativeInt,
  decision: Decision,
  note: Schema.optionalWith(DecisionNote, { default: () => "" }),
  reviewer: Reviewer
}).annotations({ ...strict, identifier: "DecisionRequest" })
export type DecisionRequest = typeof DecisionRequest.Type

const decodeRequest = decodeUnknown(DecisionRequest)

/** A request decoded strictly (every issue listed): `DecisionInvalid` otherwise. */
export const request = (input: unknown): Either.Either<DecisionRequest, DecisionInvalid> =>
  Either.mapLeft(decodeRequest(input), (invalid) => new DecisionInvalid(invalid))

/** The verified citation the request names, or why it cannot be reviewed. */
const verifiedFact = (
  outcome: Either.Either<{ readonly report: VerifiedReport }, VerifyError>,
  fact: number
): Either.Either<VerifiedCitation, DecisionFactNotVerified> => {
  if (Either.isLeft(outcome)) {
    return Either.left(new DecisionFactNotVerified({ fact, reason: "report-rejected", detail: `the report was rejected (${outcome.left._tag})` }))
  }
  const report = outcome.right.report
  const entry = report.facts.find((e) => e.index === fact)
  if (entry !== undefined) {
    return isVerifiedCitation(entry)
      ? Either.right(entry)
      : Either.left(new DecisionFactNotVerified({ fact, reason: "unavailable", detail: "the fact is unavailable: there is no excerpt to review" }))
  }
  const retracted = report.retractions.find((r) => r.index === fact)
  return Either.left(
    retracted !== undefined
      ? new DecisionFactNotVerified({ fact, reason: "retracted", detail: `the fact was retracted (${retracted.error._tag})` })
      : new DecisionFactNotVerified({ fact, reason: "out-of-range", detail: `the report has no fact ${fact + 1}` })
  )
}

/**
 * What a decision about a report's fact is bound to: the run, the drafted report exactly as
 * verified, the Gate's outcome for it (with the captures it read), and the reviewer's request.
 */
export interface RecordInput {
  readonly run: string
  readonly reportText: string
  readonly outcome: Either.Either<
    { readonly report: VerifiedReport; readonly captures: ReadonlyMap<string, CaptureRecord> },
    VerifyError
  >
  readonly request: DecisionRequest
}

/**
 * The decision a request makes about a verified report's fact, bound to its evidence. `reportText`
 * is the drafted report exactly as verified (its SHA-256 names it).
 */
export const bind = (input: RecordInput & { readonly now: number }): Either.Either<ReviewDecision, DecisionFactNotVerified> =>
  Either.map(verifiedFact(input.outcome, input.request.fact), (entry): ReviewDecision => {
    const captures = Either.isRight(input.outcome) ? input.outcome.right.captures : new Map<string, CaptureRecord>()
    const text = captures.get(entry.fact.source)?.text ?? ""
    const excerpt = ownedSlice(text, entry.evidence.span.start, entry.evidence.span.end)
    return {
      format: decisionFormat,
      id: randomUUID(),
      run: input.run,
      report: sha256Of(input.reportText),
      fact: {
        index: entry.index,
        label: entry.fact.label,
        source: entry.fact.source,
        captureSha256: entry.fact.captureSha256,
        span: { start: entry.evidence.span.start, end: entry.evidence.span.end },
        excerpt: excerpt.length > decisionLimits.excerpt ? cut(excerpt, decisionLimits.excerpt) : excerpt,
        excerptCut: excerpt.length > decisionLimits.excerpt
      },
      decision: input.request.decision,
      note: input.request.note,
      reviewer: input.request.reviewer,
      recordedAt: new Date(input.now).toISOString()
    }
  })

/**
 * Records a decision about a verified report's fact in the run's review log (`ReviewLog`): the
 * decision as stored, with its place in the log.
 */
export const record = Effect.fn("ReviewDecisions.record")(function*(input: RecordInput) {
  const log = yield* ReviewLog
  const now = yield* Clock.currentTimeMillis
  const decision = yield* bind({ ...input, now })
  const seq = yield* log.append(decision)
  return { seq, record: decision } satisfies LoggedDecision
})

/**
 * The recorded decisions beside a verified report: per verified fact with at least one decision
 * about it (same label, source, capture digest and span), its current decision and how many it
 * superseded. `undefined` when no fact of the report has one (renderings are then unchanged).
 */
export const humanReviewOf = (report: VerifiedReport, log: ReadonlyArray<LoggedDecision>): HumanReview | undefined => {
  if (log.length === 0) return undefined
  const byKey = new Map<string, Array<ReturnType<typeof withHistory>[number]>>()
  for (const entry of withHistory(log)) {
    const key = decisionKey(entry.record.fact)
    const list = byKey.get(key) ?? []
    list.push(entry)
    byKey.set(key, list)
  }
  const facts: Array<HumanReview["facts"][number]> = []
  for (const entry of report.facts) {
    if (!isVerifiedCitation(entry)) continue
    const key = decisionKey({ label: entry.fact.label, source: entry.fact.source, captureSha256: entry.fact.captureSha256, span: entry.evidence.span })
    const decisions = byKey.get(key)
    const current = decisions?.find((d) => d.supersededBy === null)
    if (decisions !== undefined && current !== undefined) facts.push({ index: entry.index, current, superseded: decisions.length - 1 })
  }
  return facts.length === 0 ? undefined : { format: humanReviewFormat, facts, proves: "nothing: a person's recorded decision, beside provenance" }
}
