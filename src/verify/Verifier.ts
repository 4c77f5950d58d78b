/**
 * The read-only half of citegate. It decodes a drafted report strictly and
 * checks each cited fact against the capture of its exact source in this run:
 * never another capture, never another run, no fuzzy matching, and normalised
 * matching only when the policy opts in (`verify.matching: "normalized/2"`),
 * labelled in the evidence. It reads captures only through `CaptureStore.read`
 * and writes nothing.
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Arr from "effect/Array"
import { CaptureStore } from "../store/CaptureStore.js"
import {
  type CaptureRecord,
  type CitedFact,
  type Evidence,
  factLimits,
  makeReport,
  type Report,
  sha256Of,
  type MatchMethod,
  type SourceUrl,
  type Span,
  urlProblem,
  type VerifiedEntry,
  verifiedFormat
} from "../Domain.js"
import {
  AmbiguousSnippet,
  AnchorMismatch,
  type CaptureReadError,
  DigestMismatch,
  DuplicateLabel,
  type FactError,
  type FactRejection,
  InvalidReport,
  type NearestPassage,
  NotApproved,
  ReportRejected,
  type SemanticMismatch,
  SnippetAbsent,
  UnknownLabel,
  VerificationTimeout
} from "../Errors.js"
import * as Diagnostic from "../anchor/Diagnostic.js"
import { decodeJson, decodeUnknown } from "../internal/decode.js"
import { anchorHints, locate, namedAnchors } from "../internal/anchors.js"
import * as MultiSearch from "../internal/multiSearch.js"
import { spanOffsets } from "../anchor/Offsets.js"
import { meaningChange, type MeaningChange } from "../anchor/MeaningGuard.js"
import * as Normalized from "../anchor/Normalize.js"
import { selectors } from "../anchor/Selectors.js"
import { Policy, type PolicyShape } from "./Policy.js"
import { VerifiedReport } from "./VerifiedReport.js"

/**
 * Every fact's result: the entries that passed (report order) and the facts
 * that failed, each with all of its failures.
 *
 * @since 0.1.0
 * @category models
 */
export interface Verification {
  readonly entries: ReadonlyArray<VerifiedEntry>
  readonly rejections: ReadonlyArray<FactRejection>
  /** The captures as read (and verified) by this call, for renderers: never read twice. */
  readonly captures: ReadonlyMap<SourceUrl, CaptureRecord>
}

/**
 * One citation to check: the exact source, the capture digest it names, and
 * the text that must occur verbatim in that capture.
 *
 * @since 0.1.0
 * @category models
 */
export interface CitationInput {
  readonly source: string
  readonly captureSha256: string
  readonly snippet: string
  /** A PDF page the snippet must lie on. */
  readonly page?: number | undefined
  /** PDF pages the snippet must lie within: `start` to `end - 1` (1-based, end exclusive), as answers name them. */
  readonly pages?: { readonly start: number; readonly end: number } | undefined
  /** A heading path whose section the snippet must lie in. */
  readonly heading?: ReadonlyArray<string> | undefined
  /** Text right before the snippet in the capture: picks one of several occurrences. */
  readonly prefix?: string | undefined
  /** Text right after the snippet in the capture: picks one of several occurrences. */
  readonly suffix?: string | undefined
}

/** Why a bare citation fails: the fact errors that do not concern labels. */
export type CitationFailure = Exclude<FactError, UnknownLabel | DuplicateLabel | SemanticMismatch>

/** Where the snippet was found, or every reason the citation failed (never empty). */
export type CitationResult = Either.Either<Evidence, ReadonlyArray<CitationFailure>>

/**
 * @since 0.1.0
 * @category models
 */
export interface CitationsChecked {
  /** One result per citation, in input order. */
  readonly results: ReadonlyArray<CitationResult>
  /** The captures at least one citation was verified against, read once by this call. */
  readonly captures: ReadonlyMap<SourceUrl, CaptureRecord>
}

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
 * Units of search work (about one code unit examined each) between yields to the event loop: a
 * few milliseconds, so the deadline's timer can fire during a long search, rarely enough that
 * yielding costs nothing measurable.
 */
const searchSlice = 1 << 22

/**
 * Yields to the event loop's timers. `Effect.yieldNow` resumes on the microtask queue, where a
 * timer (the deadline) cannot run in between.
 */
const yieldToTimers: Effect.Effect<void> = Effect.async<void>((resume) => {
  const handle = setImmediate(() => resume(Effect.void))
  return Effect.sync(() => clearImmediate(handle))
})

/** A capture as read once for this verification, with its text rehashed once. */
interface LoadedCapture {
  readonly record: CaptureRecord
  readonly textSha256: string
}

const notApproved = (source: string): NotApproved => {
  const problem = urlProblem(source)
  return problem === undefined
    ? new NotApproved({ source, reason: "not-in-approved-set", detail: "not in the approved source set" })
    : new NotApproved({ source, reason: problem.reason, detail: `URL ${problem.detail}` })
}

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
 * What a citation's search looks for: the snippet, or with a `prefix` and/or
 * `suffix` the whole string prefix + snippet + suffix (an occurrence of it is
 * exactly an occurrence of the snippet with that context), and where the
 * snippet lies inside it.
 */
interface Needle {
  readonly text: string
  /** Code units before the snippet (the prefix's length). */
  readonly lead: number
  /** Code units after the snippet (the suffix's length). */
  readonly trail: number
}

/**
 * Under any policy: when the nearest passage is the same text up to `normalized/1` (a diagnostic), the
 * number, sign or unit the quote changed in it, so that a repair does not call a meaning change typography.
 */
const changeAt = (text: string, snippet: string, nearest: NearestPassage | undefined): MeaningChange | undefined =>
  nearest?.method === "normalized/1" ? meaningChange(snippet, text.slice(nearest.span.start, nearest.span.end)) : undefined

const hasContext = (citation: CitationInput) => citation.prefix !== undefined || citation.suffix !== undefined

const needleOf = (prefix: string, snippet: string, suffix: string): Needle => ({
  text: prefix + snippet + suffix,
  lead: prefix.length,
  trail: suffix.length
})

/**
 * After the search: a fact that names a page or heading must have an
 * occurrence inside it. The first occurrence is used when it lies inside;
 * otherwise (exact matches only) each named range is searched on its own with
 * the same exact search, for the needle with its context. Returns where the
 * snippet starts, or why the anchor does not hold.
 */
const checkAnchors = (
  record: CaptureRecord,
  fact: CitationInput,
  first: Span,
  needle: Needle | undefined
): number | AnchorMismatch => {
  const named = namedAnchors(record, fact)
  if (named === undefined) return first.start
  const length = first.end - first.start
  let start = first.start
  for (const anchor of named) {
    const fail = (reason: "outside" | "no-such-anchor") =>
      new AnchorMismatch({
        source: record.source,
        captureSha256: record.sha256,
        snippet: fact.snippet,
        anchor: anchor.label,
        reason,
        ...anchorHints(record, first)
      })
    if (anchor.ranges.length === 0) return fail("no-such-anchor")
    const inside = (at: number) => anchor.ranges.some(([from, to]) => from <= at && at + length <= to)
    if (inside(start)) continue
    if (needle === undefined) return fail("outside")
    let found: number | undefined
    for (const [from, to] of anchor.ranges) {
      // The context may reach outside the range; the snippet itself must lie inside.
      const sliceFrom = Math.max(0, from - needle.lead)
      const hit = MultiSearch.searchAll(record.text.slice(sliceFrom, to + needle.trail), [needle.text])[0]
      const at = hit === undefined ? undefined : sliceFrom + hit.start + needle.lead
      if (at !== undefined && (found === undefined || at < found)) found = at
    }
    if (found === undefined) return fail("outside")
    start = found
  }
  // Both a page and a heading named: the occurrence found for the last must lie in every one.
  return named.every((anchor) => anchor.ranges.some(([from, to]) => from <= start && start + length <= to))
    ? start
    : new AnchorMismatch({
      source: record.source,
      captureSha256: record.sha256,
      snippet: fact.snippet,
      anchor: named.map((a) => a.label).join(" and "),
      reason: "outside",
      ...anchorHints(record, first)
    })
}

/** One occurrence picked for a citation (in the searched text's units), or why none can be. */
type Picked =
  | { readonly _tag: "Picked"; readonly start: number; readonly occurrences: number; readonly ambiguous: boolean }
  | { readonly _tag: "Absent" }
  | { readonly _tag: "Ambiguous"; readonly occurrences: number }

/**
 * The ambiguity rule, the same for exact and normalised matches. Without
 * context: the first occurrence, flagged `ambiguous` when there are several
 * (or refused under `verify.ambiguous: "reject"`). With a prefix and/or
 * suffix: exactly one occurrence of the needle, else absent or ambiguous.
 */
const pick = (
  policy: PolicyShape,
  withContext: boolean,
  snippetHit: MultiSearch.Found | undefined,
  needleHit: MultiSearch.Found | undefined,
  lead: number
): Picked => {
  if (snippetHit === undefined) return { _tag: "Absent" }
  if (!withContext) {
    if (snippetHit.occurrences > 1 && policy.ambiguous === "reject") {
      return { _tag: "Ambiguous", occurrences: snippetHit.occurrences }
    }
    return { _tag: "Picked", start: snippetHit.start, occurrences: snippetHit.occurrences, ambiguous: snippetHit.occurrences > 1 }
  }
  if (needleHit === undefined) return { _tag: "Absent" }
  if (needleHit.occurrences > 1) return { _tag: "Ambiguous", occurrences: needleHit.occurrences }
  return { _tag: "Picked", start: needleHit.start + lead, occurrences: snippetHit.occurrences, ambiguous: false }
}

/**
 * @since 0.1.0
 * @category constructors
 */
export const make: Effect.Effect<VerifierShape, never, CaptureStore | Policy> = Effect.gen(function*() {
  const store = yield* CaptureStore
  const policy = yield* Policy
  const reportSchema = makeReport(policy.maxFacts)
  // The fact limit is checked before any fact is decoded (Domain.factLimits).
  const decodeReport = decodeUnknown(reportSchema, factLimits(policy.maxFacts))
  const decodeReportJson = decodeJson(reportSchema, factLimits(policy.maxFacts))

  const loadCapture = (source: SourceUrl): Effect.Effect<Either.Either<LoadedCapture, CaptureReadError>> =>
    store.read(source).pipe(
      Effect.map((record) => ({ record, textSha256: sha256Of(record.text) })),
      Effect.either
    )

  /** The capture's own digest, then the digest the report names: the capture to search, or why not. */
  const checkDigests = (
    fact: CitationInput,
    capture: Either.Either<LoadedCapture, CaptureReadError>
  ): Either.Either<CaptureRecord, CitationFailure> => {
    if (Either.isLeft(capture)) return Either.left(capture.left)
    const { record, textSha256 } = capture.right
    if (textSha256 !== record.sha256) {
      return Either.left(
        new DigestMismatch({
          source: record.source,
          kind: "stored",
          reported: fact.captureSha256,
          stored: record.sha256,
          computed: textSha256
        })
      )
    }
    if (fact.captureSha256 !== record.sha256) {
      return Either.left(
        new DigestMismatch({
          source: record.source,
          kind: "report",
          reported: fact.captureSha256,
          stored: record.sha256,
          computed: textSha256
        })
      )
    }
    return Either.right(record)
  }

  /**
   * The one matching path: approval, each distinct capture read and rehashed once, both digests,
   * then an exact search of every quote, one capture at a time, under the policy's deadline.
   * Reports and answers both use it.
   */
  const checkCited = (
    citations: ReadonlyArray<CitationInput>
  ): Effect.Effect<
    { readonly results: Array<CitationResult>; readonly loaded: ReadonlyMap<SourceUrl, CaptureRecord> },
    VerificationTimeout
  > =>
    Effect.gen(function*() {
      const results: Array<CitationResult> = citations.map(() => Either.left([]))
      const failures: Array<Array<CitationFailure>> = citations.map(() => [])
      const approvedSources = new Set<SourceUrl>()
      citations.forEach((citation, i) => {
        if (policy.sources.has(citation.source as SourceUrl)) approvedSources.add(citation.source as SourceUrl)
        else failures[i]!.push(notApproved(citation.source))
      })

      // Each distinct capture is read and rehashed once, however many citations name it. One after the
      // other: the work is CPU-bound (decode, hash), small reads are synchronous, and a fiber per
      // capture costs more than it saves (measured: docs/performance.md).
      const captures = new Map(
        yield* Effect.forEach(
          approvedSources,
          (source) => Effect.map(loadCapture(source), (capture) => [source, capture] as const)
        )
      )

      // Citations whose capture and digests check out are searched together, one capture at a time.
      const toSearch = new Map<CaptureRecord, Array<number>>()
      citations.forEach((citation, i) => {
        const capture = captures.get(citation.source as SourceUrl)
        if (capture === undefined) return // not approved: already failed, nothing was read
        const checked = checkDigests(citation, capture)
        if (Either.isLeft(checked)) failures[i]!.push(checked.left)
        else {
          const group = toSearch.get(checked.right)
          if (group === undefined) toSearch.set(checked.right, [i])
          else group.push(i)
        }
      })
      const loaded = new Map<SourceUrl, CaptureRecord>()
      // Repair diagnostics on SnippetAbsent (nearest passage), bounded in count and to a quarter of the deadline (at most 500 ms).
      const diagnose = Diagnostic.forVerification(policy.timeoutMs / 4)
      // The search runs in slices with yields in between, so the deadline can interrupt it.
      let credit = searchSlice
      const searchSliced = (text: string, keys: ReadonlyArray<string>) =>
        Effect.gen(function*() {
          const search = MultiSearch.start(text, keys)
          while (!search.done) {
            credit -= search.step(credit)
            if (credit <= 0) {
              yield* yieldToTimers
              credit = searchSlice
            }
          }
          return search.results()
        })
      /** Each citation's snippet, then (with context) its needle: their positions in `keys`. */
      const keysOf = (list: ReadonlyArray<readonly [string | undefined, string, string | undefined]>) => {
        const keys: Array<string> = []
        const at = list.map(([prefix, snippet, suffix]) => {
          const k = keys.length
          keys.push(snippet)
          if (prefix !== undefined || suffix !== undefined) keys.push(needleOf(prefix ?? "", snippet, suffix ?? "").text)
          return k
        })
        return { keys, at }
      }
      for (const [record, indices] of toSearch) {
        loaded.set(record.source, record)
        const ambiguous = (i: number, occurrences: number) => {
          const { prefix, snippet, suffix } = citations[i]!
          return new AmbiguousSnippet({
            source: record.source,
            captureSha256: record.sha256,
            snippet,
            occurrences,
            ...(prefix === undefined ? {} : { prefix }),
            ...(suffix === undefined ? {} : { suffix })
          })
        }
        // Exact: every snippet (and needle) of this capture in one search.
        const exact = keysOf(indices.map((i) => [citations[i]!.prefix, citations[i]!.snippet, citations[i]!.suffix]))
        const found = yield* searchSliced(record.text, exact.keys)
        const matched: Array<{ readonly i: number; readonly span: Span; readonly occurrences: number; readonly ambiguous: boolean; readonly method: MatchMethod }> = []
        const absent: Array<number> = []
        indices.forEach((i, k) => {
          const citation = citations[i]!
          const withContext = hasContext(citation)
          const at = exact.at[k]!
          const picked = pick(policy, withContext, found[at], withContext ? found[at + 1] : undefined, citation.prefix?.length ?? 0)
          if (picked._tag === "Absent") return absent.push(i)
          if (picked._tag === "Ambiguous") return failures[i]!.push(ambiguous(i, picked.occurrences))
          const needle = needleOf(citation.prefix ?? "", citation.snippet, citation.suffix ?? "")
          const span = { start: picked.start, end: picked.start + citation.snippet.length }
          const anchored = checkAnchors(record, citation, span, needle)
          if (typeof anchored !== "number") return failures[i]!.push(anchored)
          matched.push({
            i,
            span: { start: anchored, end: anchored + citation.snippet.length },
            occurrences: picked.occurrences,
            ambiguous: picked.ambiguous,
            method: "exact"
          })
        })
        // Opt-in: what the exact search missed, in the normalised capture (normalised once, only when needed).
        let stillAbsent = absent
        // The number, sign or unit a normalised hit would have changed: refused, and said so.
        const changedBy = new Map<number, MeaningChange>()
        // `normalized/1` in a policy is a deprecated alias: every normalised match is a `normalized/2` one.
        const normal = policy.matching !== "exact" && absent.length > 0
          ? Normalized.normalizeCapture(record.text, Normalized.normalizedVersion2)
          : undefined
        // A capture whose normalised form passes the expansion cap gets exact matching only: a search in
        // its truncated form could miss a second occurrence and call an ambiguous snippet unique.
        if (normal !== undefined && !normal.truncated) {
          stillAbsent = []
          const parts = absent.map((i) => {
            const { prefix, snippet, suffix } = citations[i]!
            return [
              prefix === undefined ? undefined : Normalized.normalizeText(prefix, Normalized.normalizedVersion2),
              Normalized.normalizeText(snippet, Normalized.normalizedVersion2),
              suffix === undefined ? undefined : Normalized.normalizeText(suffix, Normalized.normalizedVersion2)
            ] as const
          })
          const normalKeys = keysOf(parts)
          const normalFound = yield* searchSliced(normal.text, normalKeys.keys)
          absent.forEach((i, k) => {
            const citation = citations[i]!
            const withContext = hasContext(citation)
            const [prefix, snippet] = parts[k]!
            const at = normalKeys.at[k]!
            // A snippet that normalises to nothing (only dropped characters) matches nothing.
            const picked = snippet.length === 0 || !/\S/u.test(snippet)
              ? { _tag: "Absent" as const }
              : pick(policy, withContext, normalFound[at], withContext ? normalFound[at + 1] : undefined, prefix?.length ?? 0)
            if (picked._tag === "Absent") return stillAbsent.push(i)
            if (picked._tag === "Ambiguous") return failures[i]!.push(ambiguous(i, picked.occurrences))
            const span = normal.toRaw(picked.start, picked.start + snippet.length)
            const changed = meaningChange(citation.snippet, record.text.slice(span.start, span.end))
            if (changed !== undefined) {
              changedBy.set(i, changed)
              return stillAbsent.push(i)
            }
            // No search inside pages or sections here: the occurrence found must lie in them.
            const anchored = checkAnchors(record, citation, span, undefined)
            if (typeof anchored !== "number") return failures[i]!.push(anchored)
            matched.push({ i, span, occurrences: picked.occurrences, ambiguous: picked.ambiguous, method: Normalized.normalizedVersion2 })
          })
        }
        for (const i of stillAbsent) {
          const snippet = citations[i]!.snippet
          // The repair diagnostic (nearest passage) only for a bare snippet: with a prefix or suffix the snippet may occur, out of context.
          const nearest: ReturnType<Diagnostic.Diagnose> = hasContext(citations[i]!) ? {} : diagnose(record, snippet)
          const changed = changedBy.get(i) ?? changeAt(record.text, snippet, nearest.nearest)
          failures[i]!.push(
            new SnippetAbsent({ source: record.source, captureSha256: record.sha256, snippet, ...nearest, ...(changed === undefined ? {} : { changed }) })
          )
        }
        // Every verified span of this capture in code points and UTF-8 bytes: one pass over the text.
        const offsets = spanOffsets(record.text, matched.map((m) => m.span))
        matched.forEach((m, k) => {
          const units = offsets[k]!
          results[m.i] = Either.right({
            span: m.span,
            occurrences: m.occurrences,
            accessedAt: record.accessedAt,
            ...locate(record, m.span),
            method: m.method,
            ambiguous: m.ambiguous,
            offsets: units,
            selector: selectors(record.text, m.span, units.codePoints)
          })
        })
      }
      failures.forEach((list, i) => {
        if (list.length > 0) results[i] = Either.left(list)
      })
      return { results, loaded }
    }).pipe(
      // One deadline for reading and searching every capture (decoding is bounded by the input's size).
      Effect.timeoutFail({
        duration: policy.timeoutMs,
        onTimeout: () => new VerificationTimeout({ timeoutMs: policy.timeoutMs })
      })
    )

  const checkReport = (report: Report): Effect.Effect<Verification, VerificationTimeout> =>
    Effect.gen(function*() {
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

      const { loaded, results } = yield* checkCited(citedIndices.map((index) => report.facts[index] as CitedFact))
      const evidenceByIndex = new Map<number, Evidence>()
      citedIndices.forEach((index, k) => {
        const result = results[k]!
        if (Either.isLeft(result)) failuresByIndex[index]!.push(...result.left)
        else evidenceByIndex.set(index, result.right)
      })

      const verifiedCaptures = new Map<SourceUrl, CaptureRecord>()
      const entries: Array<VerifiedEntry> = []
      const rejections: Array<FactRejection> = []
      report.facts.forEach((fact, index) => {
        const failures = failuresByIndex[index]!
        if (Arr.isNonEmptyArray(failures)) {
          for (const error of failures) rejections.push({ index, label: fact.label, error })
        } else if (fact.state === "cited") {
          entries.push({ index, fact, evidence: evidenceByIndex.get(index)! })
          const record = loaded.get(fact.source as SourceUrl)
          if (record !== undefined) verifiedCaptures.set(fact.source as SourceUrl, record)
        } else {
          entries.push({ index, fact })
        }
      })
      return { entries, rejections, captures: verifiedCaptures }
    })

  const checkCitations = Effect.fn("Verifier.checkCitations")(function*(citations: ReadonlyArray<CitationInput>) {
    const { loaded, results } = yield* checkCited(citations)
    // Only the captures at least one citation was verified against, as for reports.
    const captures = new Map<SourceUrl, CaptureRecord>()
    results.forEach((result, i) => {
      const record = loaded.get(citations[i]!.source as SourceUrl)
      if (Either.isRight(result) && record !== undefined) captures.set(record.source, record)
    })
    return { results, captures } satisfies CitationsChecked
  })

  const check = Effect.fn("Verifier.check")(function*(input: unknown) {
    const report = yield* Effect.mapError(decodeReport(input), (invalid) => new InvalidReport(invalid))
    return yield* checkReport(report)
  })

  const checkJson = Effect.fn("Verifier.checkJson")(function*(text: string) {
    const report = yield* Effect.mapError(decodeReportJson(text), (invalid) => new InvalidReport(invalid))
    return yield* checkReport(report)
  })

  return Verifier.of({
    checkCitations,
    check,
    checkJson,
    verify: Effect.fn("Verifier.verify")(function*(input: unknown) {
      return yield* accept(yield* check(input))
    }),
    verifyJson: Effect.fn("Verifier.verifyJson")(function*(text: string) {
      return yield* accept(yield* checkJson(text))
    })
  })
})

/**
 * @since 0.1.0
 * @category layers
 */
export const layer: Layer.Layer<Verifier, never, CaptureStore | Policy> = Layer.effect(Verifier, make)
