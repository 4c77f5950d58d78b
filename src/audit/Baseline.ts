/**
 * Audit step 1, the baseline: every audited citation re-verified against the
 * old run on the Verifier's one path (checked, not trusted), and where each
 * stood in its old capture.
 *
 * @since 0.3.0
 */
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import type { Evidence, SourceUrl } from "../Domain.js"
import { AuditBaselineRejected, type BaselineFailure, type VerificationTimeout } from "../Errors.js"
import { locate } from "../internal/anchors.js"
import type * as Verifier from "../verify/Verifier.js"
import type { Location, Subject } from "./Records.js"

/** One citation to audit, whatever it came from. */
export interface Item {
  readonly subject: Subject
  /** How errors name it: `fact 3 "label"`, `claim c1 citation 0`. */
  readonly name: string
  readonly source: string
  readonly captureSha256: string
  readonly snippet: string
  readonly page?: number | undefined
  readonly heading?: ReadonlyArray<string> | undefined
  /** The evidence recorded when it was verified. */
  readonly evidence: Evidence
}

export interface Baseline {
  /** The old run's results and the captures they were verified against. */
  readonly old: Verifier.CitationsChecked
  /** Each item's place in its old capture, in item order. */
  readonly locations: ReadonlyArray<Location>
}

/** Every citation re-verified against the old run; any failure rejects the audit, listing every one. */
export const baseline = (
  oldVerifier: Verifier.VerifierShape,
  items: ReadonlyArray<Item>
): Effect.Effect<Baseline, AuditBaselineRejected | VerificationTimeout> =>
  Effect.gen(function*() {
    const old = yield* oldVerifier.checkCitations(items.map((item) => ({
      source: item.source,
      captureSha256: item.captureSha256,
      snippet: item.snippet,
      page: item.page,
      heading: item.heading
    })))
    const failures: Array<BaselineFailure> = []
    old.results.forEach((result, i) => {
      if (Either.isLeft(result)) for (const error of result.left) failures.push({ citation: items[i]!.name, error })
    })
    if (failures.length > 0) return yield* new AuditBaselineRejected({ failures: failures as [BaselineFailure, ...Array<BaselineFailure>] })

    const locations = items.map((item, i): Location => {
      const record = old.captures.get(item.source as SourceUrl)!
      const verified = (old.results[i] as Either.Right<ReadonlyArray<unknown>, Evidence>).right
      // The span recorded at verification when the excerpt is there (an answer's `chars` may name a later
      // occurrence than the first); otherwise the span verification finds now.
      const recorded = item.evidence.span
      const span = record.text.startsWith(item.snippet, recorded.start) &&
          recorded.end - recorded.start === item.snippet.length
        ? recorded
        : verified.span
      return { captureSha256: record.sha256, accessedAt: record.accessedAt, span, ...locate(record, span) }
    })
    return { old, locations }
  })
