/**
 * The Gate's review step, run after verification on its result: the number
 * adapter's outcome per verified citation and, under `require`, each mismatch
 * turned into a `SemanticMismatch` failure of its fact (rejected in reject
 * mode, retracted in drop mode). Off: the verification passes through as is.
 *
 * @since 0.3.0
 */
import type { VerifiedEntry } from "../Domain.js"
import { isVerifiedCitation } from "../Domain.js"
import { type FactRejection, SemanticMismatch } from "../Errors.js"
import type { Catalogue } from "./Catalogue.js"
import { review } from "./Numbers.js"
import type { NumberReview, NumbersPolicy } from "./Records.js"
import type { CaptureRecord } from "../Domain.js"

interface Verified {
  readonly entries: ReadonlyArray<VerifiedEntry>
  readonly rejections: ReadonlyArray<FactRejection>
  readonly captures: ReadonlyMap<string, CaptureRecord>
}

export const reviewVerification = <V extends Verified>(
  settings: { readonly numbers: NumbersPolicy; readonly catalogue: Catalogue } | undefined,
  verification: V
): { readonly verification: V; readonly numberReview: NumberReview | undefined } => {
  if (settings === undefined || settings.numbers === "off") return { verification, numberReview: undefined }
  const numberReview = review(settings.catalogue, settings.numbers, verification.entries, verification.captures)
  if (settings.numbers === "report") return { verification, numberReview }
  const failed = new Map<number, FactRejection>()
  for (const entry of verification.entries) {
    if (!isVerifiedCitation(entry)) continue
    const outcome = numberReview.facts.find((f) => f.index === entry.index)
    if (outcome?.outcome !== "mismatch") continue
    failed.set(entry.index, {
      index: entry.index,
      label: entry.fact.label,
      error: new SemanticMismatch({
        source: entry.fact.source,
        captureSha256: entry.fact.captureSha256,
        mismatches: outcome.mismatches
      })
    })
  }
  if (failed.size === 0) return { verification, numberReview }
  // Failures stay in report order, as every other rejection.
  const rejections = [...verification.rejections, ...failed.values()].sort((a, b) => a.index - b.index)
  const entries = verification.entries.filter((entry) => !failed.has(entry.index))
  return { verification: { ...verification, entries, rejections }, numberReview }
}
