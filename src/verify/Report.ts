/**
 * A decoded report checked on the one matching path: labels (approved, not
 * repeated) per fact, every cited fact's citation through the Verifier's
 * `checkCited`, and the passes and failures side by side in report order.
 *
 * @since 0.3.0
 */
import * as Arr from "effect/Array"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import type { CaptureRecord, CitedFact, Evidence, Report, SourceUrl, VerifiedEntry } from "../Domain.js"
import { type CaptureSignatureError, DuplicateLabel, type FactError, type FactRejection, UnknownLabel, type VerificationTimeout } from "../Errors.js"
import type { PolicyShape } from "./Policy.js"
import type { CitationInput, CitationResult, Verification } from "./Records.js"

/** What the matching path gives: one result per citation, the captures it loaded, and attestation notes. */
export interface CheckedCitations {
  readonly results: ReadonlyArray<CitationResult>
  readonly loaded: ReadonlyMap<SourceUrl, CaptureRecord>
  readonly signatureNotes: ReadonlyArray<CaptureSignatureError>
}

/** The matching path: one result per citation, and the captures it loaded. */
export type CheckCited = (citations: ReadonlyArray<CitationInput>) => Effect.Effect<CheckedCitations, VerificationTimeout>

/** Each fact's label failures, and the indices of the cited facts. */
const checkLabels = (policy: PolicyShape, report: Report) => {
  const failuresByIndex: Array<Array<FactError>> = report.facts.map(() => [])
  const firstIndexOfLabel = new Map<string, number>()
  const citedIndices: Array<number> = []
  report.facts.forEach((fact, index) => {
    const failures = failuresByIndex[index]!
    if (!policy.labels.has(fact.label)) failures.push(new UnknownLabel({ label: fact.label }))
    const firstIndex = firstIndexOfLabel.get(fact.label)
    if (firstIndex === undefined) firstIndexOfLabel.set(fact.label, index)
    else failures.push(new DuplicateLabel({ label: fact.label, firstIndex }))
    if (fact.state === "cited") citedIndices.push(index)
  })
  return { failuresByIndex, citedIndices }
}

/** The verification of `report` from its label failures and the matching path's results. */
const assemble = (report: Report, { citedIndices, failuresByIndex }: ReturnType<typeof checkLabels>, checked: CheckedCitations): Verification => {
  const { loaded, results, signatureNotes } = checked
  // By the fact's index (an array, not a Map: a verification may hold thousands).
  const evidenceByIndex: Array<Evidence | undefined> = new Array(report.facts.length)
  citedIndices.forEach((index, k) => {
    const result = results[k]!
    if (Either.isLeft(result)) failuresByIndex[index]!.push(...result.left)
    else evidenceByIndex[index] = result.right
  })

  const verifiedCaptures = new Map<SourceUrl, CaptureRecord>()
  const entries: Array<VerifiedEntry> = []
  const rejections: Array<FactRejection> = []
  report.facts.forEach((fact, index) => {
    const failures = failuresByIndex[index]!
    if (Arr.isNonEmptyArray(failures)) {
      for (const error of failures) rejections.push({ index, label: fact.label, error })
    } else if (fact.state === "cited") {
      entries.push({ index, fact, evidence: evidenceByIndex[index]! })
      const record = loaded.get(fact.source as SourceUrl)
      if (record !== undefined) verifiedCaptures.set(fact.source as SourceUrl, record)
    } else {
      entries.push({ index, fact })
    }
  })
  return { entries, rejections, captures: verifiedCaptures, signatureNotes }
}

export const checkReport = (
  policy: PolicyShape,
  checkCited: CheckCited
) =>
(report: Report): Effect.Effect<Verification, VerificationTimeout> =>
  Effect.suspend(() => {
    const labels = checkLabels(policy, report)
    return Effect.map(checkCited(labels.citedIndices.map((index) => report.facts[index] as CitedFact)), (checked) => assemble(report, labels, checked))
  })

/**
 * `checkReport` without an effect, over a matching path that answers at once or not at all
 * (`undefined`: the caller takes the general path).
 */
export const checkReportNow = (
  policy: PolicyShape,
  checkCitedNow: (citations: ReadonlyArray<CitationInput>) => CheckedCitations | undefined
) =>
(report: Report): Verification | undefined => {
  const labels = checkLabels(policy, report)
  const checked = checkCitedNow(labels.citedIndices.map((index) => report.facts[index] as CitedFact))
  return checked === undefined ? undefined : assemble(report, labels, checked)
}
