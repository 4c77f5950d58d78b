/**
 * The drift audit: what became of each verified citation of an OLD run in a
 * NEW capture of the same source (docs/audit.md). The steps are modules of
 * their own: `Baseline`, `NewCaptures`, `Findings` (with `Candidates`), `Summary`.
 *
 * Two runs, two stores. The old run is the `CaptureStore` behind the
 * `Verifier`, which re-verifies every audited citation first: the baseline is
 * checked, not trusted. The new run is the `NewRun` store; its captures are
 * searched by a second Verifier built over it with the same policy, so exact
 * matching stays one path (the Verifier's). Only the citations whose excerpt
 * is gone from the new capture go on to the candidate search (nearest
 * passage, anchor-aware) and the material-change flags, which are lexical.
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type { VerifiedAnswer } from "../answer/Records.js"
import { CaptureStore, type CaptureStoreShape } from "../store/CaptureStore.js"
import { auditLimits } from "../Config.js"
import { type AuditBaselineRejected, AuditTimeout, type VerificationTimeout } from "../Errors.js"
import { Policy } from "../verify/Policy.js"
import * as Verifier from "../verify/Verifier.js"
import type { VerifiedReport } from "../verify/VerifiedReport.js"
import { baseline, type Item } from "./Baseline.js"
import { findings } from "./Findings.js"
import { readNewRun, searchNewRun } from "./NewCaptures.js"
import type { AuditResult, Thresholds } from "./Records.js"
import { summarise } from "./Summary.js"

/**
 * The new run's captures: a `CaptureStore` of its own, beside the old run's
 * (which stays the `CaptureStore` the Verifier reads). Any store layer can
 * provide it (`fromStore`).
 *
 * @since 0.1.0
 * @category tags
 */
export class NewRun extends Context.Tag("citegate/Audit/NewRun")<NewRun, CaptureStoreShape>() {}

/**
 * The `NewRun` service from any `CaptureStore` layer, e.g.
 * `NewRun.fromStore(CaptureStore.layerFileSystem({ directory: newRunDir }))`.
 *
 * @since 0.1.0
 * @category layers
 */
export const fromStore = <E, R>(store: Layer.Layer<CaptureStore, E, R>): Layer.Layer<NewRun, E, R> =>
  Layer.effect(NewRun, CaptureStore).pipe(Layer.provide(store))

/**
 * Similarity thresholds, measured on the fixtures (docs/audit.md#thresholds):
 * a candidate under the old heading path (or on the old page) passes from
 * `anchor`, one found anywhere else from `document`.
 *
 * @since 0.1.0
 */
export const defaultThresholds: Thresholds = { anchor: 0.45, document: 0.6 }

/**
 * @since 0.1.0
 * @category models
 */
export interface AuditOptions {
  readonly thresholds?: Partial<Thresholds> | undefined
  /**
   * Sources whose re-capture failed, with why (the capture error's tag and
   * message): their findings say `capture-failed` rather than `not-captured`.
   */
  readonly captureFailures?: ReadonlyMap<string, { readonly tag: string; readonly detail: string }> | undefined
  /**
   * The deadline of the whole audit in ms (baseline and search; default `auditLimits.timeoutMs.default`);
   * past it, `AuditTimeout` and no result.
   */
  readonly timeoutMs?: number | undefined
}

/**
 * @since 0.1.0
 * @category models
 */
export interface AuditShape {
  /** Audit every cited fact of a report verified against the old run. */
  readonly auditReport: (
    report: VerifiedReport,
    options?: AuditOptions
  ) => Effect.Effect<AuditResult, AuditBaselineRejected | VerificationTimeout | AuditTimeout>
  /** Audit every verified citation of every grounded claim of an answer verified against the old run. */
  readonly auditAnswer: (
    answer: VerifiedAnswer,
    options?: AuditOptions
  ) => Effect.Effect<AuditResult, AuditBaselineRejected | VerificationTimeout | AuditTimeout>
}

/**
 * @since 0.1.0
 * @category tags
 */
export class Audit extends Context.Tag("citegate/Audit")<Audit, AuditShape>() {}

/** A caller's threshold, kept within [0, 1] (a result must decode); the default when absent or not a number. */
const threshold = (given: number | undefined, fallback: number) =>
  given === undefined || Number.isNaN(given) ? fallback : Math.min(1, Math.max(0, given))

/**
 * @since 0.1.0
 * @category constructors
 */
export const make: Effect.Effect<AuditShape, never, Verifier.Verifier | Policy | NewRun> = Effect.gen(function*() {
  const oldVerifier = yield* Verifier.Verifier
  const policy = yield* Policy
  const newStore = yield* NewRun
  // The new run is searched by the same Verifier code, over the new store, under the same policy.
  const newVerifier = yield* Verifier.make.pipe(
    Effect.provideService(CaptureStore, newStore),
    Effect.provideService(Policy, policy)
  )

  const run = (of: "report" | "answer", items: ReadonlyArray<Item>, options: AuditOptions | undefined) => {
    // A caller's value within the documented range (an integer, as AuditTimeout records it); the default otherwise.
    const given = options?.timeoutMs
    const timeoutMs = given === undefined || !Number.isFinite(given)
      ? auditLimits.timeoutMs.default
      : Math.min(auditLimits.timeoutMs.max, Math.max(auditLimits.timeoutMs.min, Math.floor(given)))
    return search(of, items, options).pipe(
      Effect.timeoutFail({ duration: timeoutMs, onTimeout: () => new AuditTimeout({ timeoutMs }) })
    )
  }

  /** The audit's steps (Baseline, NewCaptures, Findings), then the summary. */
  const search = (of: "report" | "answer", items: ReadonlyArray<Item>, options: AuditOptions | undefined) =>
    Effect.gen(function*() {
      const thresholds: Thresholds = {
        anchor: threshold(options?.thresholds?.anchor, defaultThresholds.anchor),
        document: threshold(options?.thresholds?.document, defaultThresholds.document)
      }
      // 1. The baseline: every citation re-verified against the old run, on the Verifier's one path.
      const old = yield* baseline(oldVerifier, items)
      // 2. The new run: each distinct source read once, for the digest the new Verifier is asked about.
      const newRecords = yield* readNewRun(newStore, items)
      // 3. Exact search in the new captures: inside the old heading path / page first, then anywhere.
      const results = yield* searchNewRun(newVerifier, items, newRecords, old.locations)
      // 4. One finding per citation.
      const found = yield* findings({ items, baseline: old, newRecords, results, thresholds, captureFailures: options?.captureFailures })
      return summarise(of, thresholds, found)
    })

  const auditReport = Effect.fn("Audit.auditReport")(function*(report: VerifiedReport, options?: AuditOptions) {
    const items: Array<Item> = []
    for (const entry of report.facts) {
      if (entry.fact.state !== "cited" || !("evidence" in entry)) continue
      const fact = entry.fact
      items.push({
        subject: { kind: "fact", index: entry.index, label: fact.label },
        name: `fact ${entry.index} ${JSON.stringify(fact.label)}`,
        source: fact.source,
        captureSha256: fact.captureSha256,
        snippet: fact.snippet,
        page: fact.page,
        heading: fact.heading,
        evidence: entry.evidence
      })
    }
    return yield* run("report", items, options)
  })

  const auditAnswer = Effect.fn("Audit.auditAnswer")(function*(answer: VerifiedAnswer, options?: AuditOptions) {
    const items: Array<Item> = []
    for (const claim of answer.claims) {
      for (const verified of claim.citations) {
        items.push({
          subject: { kind: "claim", claimIndex: claim.index, claimId: claim.id, citationIndex: verified.index },
          name: `claim ${claim.id} citation ${verified.index}`,
          source: verified.citation.source,
          captureSha256: verified.citation.captureSha256,
          snippet: verified.citation.quote,
          evidence: verified.evidence
        })
      }
    }
    return yield* run("answer", items, options)
  })

  return Audit.of({ auditReport, auditAnswer })
})

/** Code units each side of the old position searched first (audit/Candidates.ts). */
export { grownMethod, nearbyRadius } from "./Candidates.js"

/** Counts, affected facts and claims (in finding order), outcome (audit/Summary.ts). */
export { summarise } from "./Summary.js"

/**
 * @since 0.1.0
 * @category layers
 */
export const layer: Layer.Layer<Audit, never, Verifier.Verifier | Policy | NewRun> = Layer.effect(Audit, make)
