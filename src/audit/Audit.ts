/**
 * The drift audit: what became of each verified citation of an OLD run in a
 * NEW capture of the same source (docs/audit.md).
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
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import type { VerifiedAnswer } from "../answer/Records.js"
import { CaptureStore, type CaptureStoreShape } from "../store/CaptureStore.js"
import type { CaptureRecord, Evidence, SourceUrl } from "../Domain.js"
import { auditLimits } from "../Config.js"
import {
  AuditBaselineRejected,
  AuditTimeout,
  type BaselineFailure,
  type CaptureReadError,
  type VerificationTimeout
} from "../Errors.js"
import { locate, namedAnchors } from "../internal/anchors.js"
import { Policy } from "../verify/Policy.js"
import * as Verifier from "../verify/Verifier.js"
import type { VerifiedReport } from "../verify/VerifiedReport.js"
import { keepsBoundaries, occurrenceKeepingBoundaries, widened } from "./Boundaries.js"
import { materialChanges } from "./Material.js"
import { ratio } from "../anchor/Similarity.js"
import { type Nearest, nearestIn, type Prepared, prepare } from "../anchor/Nearest.js"
import {
  type Affected,
  type AffectedClaim,
  type AuditResult,
  type Candidate,
  auditFormat,
  auditNote,
  type AuditStatus,
  type Finding,
  limits,
  type Location,
  type MissingReason,
  type Subject,
  type Thresholds
} from "./Records.js"

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

/** One citation to audit, whatever it came from. */
interface Item {
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

/** Yields to the event loop's timers between citations' candidate searches (an interrupt can land). */
const yieldToTimers: Effect.Effect<void> = Effect.async<void>((resume) => {
  const handle = setImmediate(() => resume(Effect.void))
  return Effect.sync(() => clearImmediate(handle))
})

/** Milliseconds of candidate search between yields. */
const sliceMs = 20

/** A caller's threshold, kept within [0, 1] (a result must decode); the default when absent or not a number. */
const threshold = (given: number | undefined, fallback: number) =>
  given === undefined || Number.isNaN(given) ? fallback : Math.min(1, Math.max(0, given))

const readReason = (error: CaptureReadError): MissingReason => (error._tag === "MissingCapture" ? "not-captured" : "unreadable")

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

  const search = (of: "report" | "answer", items: ReadonlyArray<Item>, options: AuditOptions | undefined) =>
    Effect.gen(function*() {
      const thresholds: Thresholds = {
        anchor: threshold(options?.thresholds?.anchor, defaultThresholds.anchor),
        document: threshold(options?.thresholds?.document, defaultThresholds.document)
      }

      // 1. The baseline: every citation re-verified against the old run, on the Verifier's one path.
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

      const oldLocations = items.map((item, i): Location => {
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

      // 2. The new run: each distinct source read once, for the digest the new Verifier is asked about.
      const newRecords = new Map<string, Either.Either<CaptureRecord, CaptureReadError>>()
      for (const item of items) {
        if (!newRecords.has(item.source)) {
          newRecords.set(item.source, yield* Effect.either(newStore.read(item.source as SourceUrl)))
        }
      }

      // 3. Exact search in the new captures: inside the old heading path / page first, then anywhere.
      const searchable = items.flatMap((item, i) => {
        const record = newRecords.get(item.source)!
        return Either.isRight(record) ? [i] : []
      })
      const inputOf = (i: number, anchored: boolean): Verifier.CitationInput => {
        const item = items[i]!
        const record = Either.getOrThrow(newRecords.get(item.source)!)
        const where = oldLocations[i]!
        return {
          source: item.source,
          captureSha256: record.sha256,
          snippet: item.snippet,
          ...(anchored ? { page: where.page, heading: where.heading } : {})
        }
      }
      const first = yield* newVerifier.checkCitations(searchable.map((i) => inputOf(i, true)))
      const results = new Map<number, Verifier.CitationResult>()
      const retry: Array<number> = []
      searchable.forEach((i, k) => {
        const result = first.results[k]!
        if (Either.isLeft(result) && result.left.some((e) => e._tag === "AnchorMismatch")) retry.push(i)
        else results.set(i, result)
      })
      if (retry.length > 0) {
        const second = yield* newVerifier.checkCitations(retry.map((i) => inputOf(i, false)))
        retry.forEach((i, k) => results.set(i, second.results[k]!))
      }

      // 4. One finding per citation. Each new text (or section of it) is prepared once for the candidate search.
      const preparedTexts = new Map<CaptureRecord, Map<string, Prepared>>()
      const prepared = (record: CaptureRecord, from: number, to: number): Prepared => {
        let byRange = preparedTexts.get(record)
        if (byRange === undefined) preparedTexts.set(record, byRange = new Map())
        const key = `${from}:${to}`
        let entry = byRange.get(key)
        if (entry === undefined) byRange.set(key, entry = prepare(record.text, { from, to }))
        return entry
      }
      const findings: Array<Finding> = []
      let sliceStart = Date.now()
      for (let i = 0; i < items.length; i++) {
        const item = items[i]!
        const head = { subject: item.subject, source: item.source, snippet: item.snippet, old: oldLocations[i]! }
        const newRecord = newRecords.get(item.source)!
        if (Either.isLeft(newRecord)) {
          const failure = options?.captureFailures?.get(item.source)
          findings.push(
            failure !== undefined && newRecord.left._tag === "MissingCapture"
              ? { status: "source_missing", ...head, reason: "capture-failed", errorTag: failure.tag, detail: failure.detail }
              : {
                status: "source_missing",
                ...head,
                reason: readReason(newRecord.left),
                errorTag: newRecord.left._tag,
                detail: newRecord.left.message
              }
          )
          continue
        }
        const record = newRecord.right
        const result = results.get(i)!
        if (Either.isRight(result)) {
          // Found, but only where it keeps the old occurrence's token boundaries: `4,210` inside `4,210,000` is a change.
          const oldText = old.captures.get(item.source as SourceUrl)!.text
          const at = boundedMatch(oldText, head.old.span, record.text, item.snippet, result.right.span)
          if (at !== undefined) {
            findings.push({
              status: at === head.old.span ? "unchanged" : "relocated",
              ...head,
              new: { captureSha256: record.sha256, accessedAt: record.accessedAt, span: at, ...locate(record, at) }
            })
          } else {
            const candidate = grownCandidate(record, item.snippet, head.old.span, result.right.span, thresholds)
            findings.push({
              status: "changed",
              ...head,
              new: { captureSha256: record.sha256, accessedAt: record.accessedAt },
              candidate,
              material: materialChanges(item.snippet, candidate.text)
            })
          }
          continue
        }
        const notAbsent = result.left.find((e) => e._tag !== "SnippetAbsent")
        if (notAbsent !== undefined) {
          // The new capture was read but does not check out (its text no longer hashes to its digest, or it
          // changed between the two reads): there is no trustworthy new text to compare with.
          findings.push({ status: "source_missing", ...head, reason: "unreadable", errorTag: notAbsent._tag, detail: notAbsent.message })
          continue
        }
        const newCapture = { captureSha256: record.sha256, accessedAt: record.accessedAt }
        if (item.snippet.length > limits.maxCandidateExcerpt) {
          findings.push({ status: "deleted", ...head, new: newCapture, unsearched: "excerpt-too-long" })
          continue
        }
        const { best, passed } = candidateOf(
          record,
          item.snippet,
          head.old,
          thresholds,
          prepared,
          old.captures.get(item.source as SourceUrl)!.text.length
        )
        if (passed) {
          findings.push({ status: "changed", ...head, new: newCapture, candidate: best!, material: materialChanges(item.snippet, best!.text) })
        } else {
          findings.push({ status: "deleted", ...head, new: newCapture, ...(best === undefined ? {} : { nearest: best }) })
        }
        if (Date.now() - sliceStart >= sliceMs) {
          yield* yieldToTimers
          sliceStart = Date.now()
        }
      }
      return summarise(of, thresholds, findings)
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

/** Code units each side of the old position searched first (at least; 16 excerpt lengths when longer). */
export const nearbyRadius = 16 * 1024

/**
 * The window around `center` searched before the whole text, or `undefined` when it would cover
 * most of the text anyway. Its ends never split a surrogate pair.
 */
const nearbyRange = (text: string, snippetLength: number, center: number): { from: number; to: number } | undefined => {
  const radius = Math.max(nearbyRadius, 16 * snippetLength)
  if (2 * radius + snippetLength >= text.length / 2) return undefined
  let from = Math.max(0, center - radius)
  let to = Math.min(text.length, center + snippetLength + radius)
  if (from > 0 && isLowSurrogate(text.charCodeAt(from))) from--
  if (to < text.length && isLowSurrogate(text.charCodeAt(to))) to++
  return { from, to }
}

const isLowSurrogate = (unit: number) => unit >= 0xdc00 && unit <= 0xdfff

/**
 * The candidate for an excerpt gone from the new text: the nearest passage
 * inside the sections with the old heading path (or the old page), held to
 * the anchor threshold; failing that, the nearest in the whole text, held to
 * the document threshold. `best` is the better of the two even when neither
 * passes (a deleted finding's `nearest`). Each text and section is prepared
 * (normalised) once per audit, through `prepared`.
 */
const candidateOf = (
  record: CaptureRecord,
  snippet: string,
  old: Location,
  thresholds: Thresholds,
  prepared: (record: CaptureRecord, from: number, to: number) => Prepared,
  oldLength: number
): { readonly best: Candidate | undefined; readonly passed: boolean } => {
  const toCandidate = (found: Nearest, scope: "anchor" | "document"): Candidate => {
    const span = { start: found.span.start, end: found.span.end }
    return {
      text: found.text,
      span,
      // Rounded for stable renderings; the comparison with the threshold uses the same rounded value.
      similarity: Math.round(found.score * 1e4) / 1e4,
      method: found.method,
      scope,
      threshold: scope === "anchor" ? thresholds.anchor : thresholds.document,
      ...locate(record, span)
    }
  }
  let anchored: Candidate | undefined
  const named = namedAnchors(record, { page: old.page, heading: old.heading })
  for (const anchor of named ?? []) {
    for (const [from, to] of anchor.ranges) {
      const found = nearestIn(prepared(record, from, to), snippet, { minScore: 0 })
      if (found !== undefined && (anchored === undefined || found.score > anchored.similarity)) {
        anchored = toCandidate(found, "anchor")
      }
    }
  }
  if (anchored !== undefined && anchored.similarity >= thresholds.anchor) return { best: anchored, passed: true }
  // Near the old position first (scaled to the new length): most edited passages stay roughly where
  // they were, and a window costs its size, not the text's. Held to the document threshold; the whole
  // text is searched only when nothing nearby passes.
  const near = nearbyRange(record.text, snippet.length, Math.round(old.span.start * (record.text.length / Math.max(1, oldLength))))
  if (near !== undefined) {
    const found = nearestIn(prepare(record.text, near), snippet, { minScore: 0 })
    if (found !== undefined) {
      const candidate = toCandidate(found, "document")
      if (candidate.similarity >= thresholds.document) return { best: candidate, passed: true }
    }
  }
  const found = nearestIn(prepared(record, 0, record.text.length), snippet, { minScore: 0 })
  const anywhere = found === undefined ? undefined : toCandidate(found, "document")
  if (anywhere !== undefined && anywhere.similarity >= thresholds.document) return { best: anywhere, passed: true }
  const best = anchored === undefined
    ? anywhere
    : anywhere === undefined || anchored.similarity >= anywhere.similarity
    ? anchored
    : anywhere
  return { best, passed: false }
}

type Span = { readonly start: number; readonly end: number }

/**
 * Where an excerpt the new Verifier found still stands as it did: the old position, else the
 * Verifier's, else the first verbatim occurrence, each only when it keeps the old occurrence's token
 * boundaries (src/audit/Boundaries.ts); undefined when every occurrence cuts a number or word.
 */
const boundedMatch = (oldText: string, oldSpan: Span, text: string, snippet: string, found: Span): Span | undefined => {
  const keeps = (span: Span) => keepsBoundaries(oldText, oldSpan, text, span)
  if (text.startsWith(snippet, oldSpan.start) && oldSpan.end - oldSpan.start === snippet.length && keeps(oldSpan)) return oldSpan
  if (keeps(found)) return found
  const at = occurrenceKeepingBoundaries(oldText, oldSpan, text, snippet)
  return at === undefined ? undefined : { start: at, end: at + snippet.length }
}

/** The excerpt's occurrence widened to the tokens it cuts (`4,210,000`): the candidate of a grown number. */
const grownCandidate = (record: CaptureRecord, snippet: string, oldSpan: Span, found: Span, thresholds: Thresholds): Candidate => {
  const cut = record.text.startsWith(snippet, oldSpan.start) ? { start: oldSpan.start, end: oldSpan.start + snippet.length } : found
  const span = widened(record.text, cut.start, cut.end)
  const text = record.text.slice(span.start, span.end)
  return {
    text,
    span,
    similarity: Math.round(ratio(snippet, text) * 1e4) / 1e4,
    method: grownMethod,
    scope: "document",
    threshold: thresholds.document,
    ...locate(record, span)
  }
}

/** A candidate's `method` when the excerpt is there verbatim but inside a longer number or word. */
export const grownMethod = "token-boundary"

const drifted = (status: AuditStatus): status is "changed" | "deleted" | "source_missing" =>
  status === "changed" || status === "deleted" || status === "source_missing"

/** Counts, affected facts and claims (in finding order), outcome. */
export const summarise = (of: "report" | "answer", thresholds: Thresholds, findings: ReadonlyArray<Finding>): AuditResult => {
  const summary = { citations: findings.length, unchanged: 0, relocated: 0, changed: 0, deleted: 0, source_missing: 0, material: 0 }
  const affected: Array<Affected> = []
  // Each claim's citation list, filled in place (the claim entry holds the same array).
  const claims = new Map<number, Array<AffectedClaim["citations"][number]>>()
  for (const finding of findings) {
    summary[finding.status]++
    if (finding.status === "changed" && finding.material.length > 0) summary.material++
    if (!drifted(finding.status)) continue
    const subject = finding.subject
    if (subject.kind === "fact") {
      affected.push({ kind: "fact", index: subject.index, label: subject.label, status: finding.status })
    } else {
      const citation = { citationIndex: subject.citationIndex, status: finding.status }
      const list = claims.get(subject.claimIndex)
      if (list === undefined) {
        const citations: [typeof citation] = [citation]
        claims.set(subject.claimIndex, citations)
        affected.push({ kind: "claim", claimIndex: subject.claimIndex, claimId: subject.claimId, citations })
      } else {
        list.push(citation)
      }
    }
  }
  return {
    format: auditFormat,
    of,
    outcome: affected.length > 0 ? "drifted" : "stable",
    thresholds,
    summary,
    findings,
    affected,
    note: auditNote
  }
}

/**
 * @since 0.1.0
 * @category layers
 */
export const layer: Layer.Layer<Audit, never, Verifier.Verifier | Policy | NewRun> = Layer.effect(Audit, make)
