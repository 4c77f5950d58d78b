/**
 * The Answers service: verifies an answer (claims with inline citations)
 * through the Verifier's one matching path (`Verifier.checkCitations`), then
 * decides per claim. A claim is grounded when at least one of its citations
 * verifies.
 *
 * - reject mode: any failed citation rejects the answer (`AnswerRejected`).
 * - drop mode: a failed citation of a surviving claim is retracted; a claim
 *   that loses every citation is removed with its text (never kept as
 *   "uncited" prose).
 * - `uncited: "reject"` also rejects an answer with an uncited sentence that
 *   needs a citation (`Sentences.needsCitation`); `"report"` (default) lists
 *   them as findings.
 *
 * A citation's `page` range and `heading` path go to the Verifier with the
 * quote and are checked as a report's `page` and `heading` are: the quote must
 * lie within those pages and in a section with that heading path
 * (`AnchorMismatch`, `no-such-anchor` when the capture has no such page or
 * heading: an HTML capture has no pages, a plain-text one neither pages nor
 * headings). Content blocks fail with `AnchorUnsupported`: no capture has
 * them. Citations with `chars` (code points) must find the quote exactly there
 * (`SpanMismatch`).
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Spans from "../internal/Spans.js"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Arr from "effect/Array"
import type { CaptureRecord, Evidence, Sha256Hex, SourceUrl } from "../Domain.js"
import {
  AnchorUnsupported,
  type AnswerLimitExceeded,
  AnswerRejected,
  type CitationError,
  CoarseCitation,
  type CitationRejection,
  InvalidAnswer,
  type Issue,
  SpanMismatch,
  StaleManifest,
  type VerificationTimeout
} from "../Errors.js"
import { decodeJson } from "../internal/decode.js"
import type { Manifest } from "../Manifest.js"
import * as Verifier from "../verify/Verifier.js"
import { boundedFindings, needsCitation } from "./Sentences.js"
import {
  Answer,
  type BoundAnswer,
  type BoundClaim,
  type Citation,
  type CitationRule,
  type CitationsPolicy,
  defaultCitationRule,
  type DocumentLevelCitation,
  type DocumentLevelClaim,
  documentLevelLabel,
  type DraftCitation,
  type GroundedClaim,
  limits,
  type RemovedClaim,
  type RetractedCitation,
  type UncitedPolicy,
  type VerifiedAnswer,
  type VerifiedAnswerCitation,
  verifiedAnswerFormat
} from "./Records.js"

// ---------------------------------------------------------------------------
// Sentences and the uncited-sentence rule
// ---------------------------------------------------------------------------

export { needsCitation, sentences, statesQuantity, uncitedFindings } from "./Sentences.js"

/** The uncited-sentence rule's default minimum length, in code points (`answers.needsCitation.minLength`). */
export const minFactualLength = defaultCitationRule.minLength

/** Whether an uncited sentence needs a citation under the default rule (see `Sentences.needsCitation`). */
export const looksFactual = (sentence: string): boolean => needsCitation(sentence)

// ---------------------------------------------------------------------------
// Code points and UTF-16 offsets
// ---------------------------------------------------------------------------

/**
 * Converts between code-point and UTF-16 offsets of one text in O(log n) per
 * offset after one scan (only texts beyond the BMP need the scan's table).
 */
export interface Offsets {
  readonly toUtf16: (codePoint: number) => number | undefined
  readonly toCodePoint: (utf16: number) => number
  readonly codePoints: number
}

const countBelow = (sorted: Int32Array, value: number): number => {
  let lo = 0
  let hi = sorted.length
  while (lo < hi) {
    const mid = (lo + hi) >>> 1
    if (sorted[mid]! < value) lo = mid + 1
    else hi = mid
  }
  return lo
}

export const offsets = (text: string): Offsets => {
  if (!/[\ud800-\udbff]/.test(text)) {
    return {
      toUtf16: (cp) => (cp <= text.length ? cp : undefined),
      toCodePoint: (u) => u,
      codePoints: text.length
    }
  }
  // UTF-16 positions (and code-point positions) of every astral character.
  const utf16At: Array<number> = []
  const cpAt: Array<number> = []
  let cp = 0
  for (let i = 0; i < text.length; i++, cp++) {
    const c = text.charCodeAt(i)
    if (c >= 0xd800 && c <= 0xdbff) {
      utf16At.push(i)
      cpAt.push(cp)
      i++
    }
  }
  const u16 = Int32Array.from(utf16At)
  const cps = Int32Array.from(cpAt)
  return {
    toUtf16: (point) => (point <= cp ? point + countBelow(cps, point) : undefined),
    toCodePoint: (u) => u - countBelow(u16, u),
    codePoints: cp
  }
}

// ---------------------------------------------------------------------------
// Binding numbered handles to the run's manifest
// ---------------------------------------------------------------------------

/**
 * The manifest digest an answer was drafted against must be this run's. Where
 * it is named twice (in the answer and by the caller) both must agree.
 */
export const checkManifest = (
  manifest: Manifest,
  named: ReadonlyArray<string | undefined>
): Either.Either<Sha256Hex, StaleManifest> => {
  const given = named.filter((d): d is string => d !== undefined)
  if (given.length === 0) return Either.left(new StaleManifest({ named: null, current: manifest.digest }))
  const wrong = given.find((d) => d !== manifest.digest)
  return wrong === undefined
    ? Either.right(manifest.digest)
    : Either.left(new StaleManifest({ named: wrong, current: manifest.digest }))
}

/**
 * The manifest's source `n` as a citation's source and digest, or why it cannot be cited:
 * out of range, or listed as missing in this run.
 */
export const resolveNumber = (
  manifest: Manifest,
  n: number
): Either.Either<{ readonly source: SourceUrl; readonly captureSha256: Sha256Hex }, string> => {
  // Every n outside 1…length (0, negative, past the end) finds no entry.
  const entry = manifest.sources[n - 1]
  if (entry === undefined) {
    return Either.left(`source ${n} is not in the manifest (sources are numbered 1 to ${manifest.sources.length})`)
  }
  return entry.status === "captured"
    ? Either.right({ source: entry.source, captureSha256: entry.captureSha256 })
    : Either.left(`source ${n} (${entry.source}) has no usable capture in this run (${entry.reason._tag}); it cannot be cited`)
}

/**
 * The total-citation limit on a parsed value, before the Schema builds anything from it: the sum of
 * the lengths of `items[].citations` (what is not an array there is left for the Schema to name).
 */
export const citationTotalIssue = (input: unknown, items: "claims" | "content"): Issue | undefined => {
  if (typeof input !== "object" || input === null) return undefined
  const list = Object.getOwnPropertyDescriptor(input, items)?.value
  if (!Array.isArray(list)) return undefined
  let total = 0
  for (const item of list) {
    const citations = typeof item === "object" && item !== null ? Object.getOwnPropertyDescriptor(item, "citations")?.value : undefined
    if (Array.isArray(citations)) total += citations.length
  }
  return total > limits.maxCitations
    ? { path: [items], message: `must hold at most ${limits.maxCitations} citations in total, got ${total}` }
    : undefined
}

// Arrays longer than the claim limit are refused by the structural JSON pass, the citation total
// right after it: both before any decoding.
const decodeAnswerJson = decodeJson(Answer, {
  maxArrayLength: limits.maxClaims,
  precheck: (input) => citationTotalIssue(input, "claims")
})

/**
 * Bind a decoded `citegate.answer/1` to this run: numbered citations get the
 * manifest's source and digest, provided the answer (or the caller) names this
 * run's manifest. Citations by URL and digest are kept as given (the Verifier
 * checks them), but a named manifest must still be this run's.
 */
export const bind = (
  answer: Answer,
  manifest: Manifest,
  options: { readonly manifestDigest?: string | undefined } = {}
): Either.Either<BoundAnswer, InvalidAnswer | StaleManifest> => {
  const numbered = answer.claims.some((claim) => claim.citations.some((c) => typeof c.source === "number"))
  const named = [answer.manifest, options.manifestDigest]
  let digest: Sha256Hex | null = null
  if (numbered || named.some((d) => d !== undefined)) {
    const checked = checkManifest(manifest, named)
    if (Either.isLeft(checked)) return Either.left(checked.left)
    digest = checked.right
  }
  const issues: Array<Issue> = []
  const claims = answer.claims.map((claim, i) => ({
    id: claim.id,
    text: claim.text,
    citations: claim.citations.map((citation: DraftCitation, j): Citation => {
      if (typeof citation.source !== "number") return citation as Citation
      const resolved = resolveNumber(manifest, citation.source)
      if (Either.isLeft(resolved)) {
        issues.push({ path: ["claims", i, "citations", j, "source"], message: resolved.left })
        // A placeholder that is never returned: any issue rejects the whole answer below.
        return { ...citation, source: "", captureSha256: manifest.digest }
      }
      return { ...citation, ...resolved.right }
    })
  }))
  if (Arr.isNonEmptyArray(issues)) return Either.left(new InvalidAnswer({ issues }))
  return Either.right({
    manifest: digest,
    claims,
    uncited: (answer.uncited ?? []).map((text) => ({ text, line: null }))
  })
}

/** Decode `citegate.answer/1` JSON text strictly (size limit first) and bind it to the manifest. */
export const fromJson = (
  text: string,
  manifest: Manifest,
  options: { readonly manifestDigest?: string | undefined } = {}
): Either.Either<BoundAnswer, InvalidAnswer | StaleManifest> => {
  if (text.length > limits.maxChars) {
    return Either.left(new InvalidAnswer({ issues: [{ path: [], message: `is longer than ${limits.maxChars} characters` }] }))
  }
  return Either.flatMap(
    Either.mapLeft(decodeAnswerJson(text), (invalid) => new InvalidAnswer(invalid)),
    (answer) => bind(answer, manifest, options)
  )
}

// ---------------------------------------------------------------------------
// The service
// ---------------------------------------------------------------------------

/**
 * @since 0.1.0
 * @category models
 */
export interface Checked {
  readonly answer: VerifiedAnswer
  /** The captures the surviving citations were verified against (for renderers). */
  readonly captures: ReadonlyMap<string, CaptureRecord>
}

/**
 * @since 0.1.0
 * @category models
 */
export interface AnswersOptions {
  readonly mode: "reject" | "drop"
  readonly uncited: UncitedPolicy
  /** Which uncited sentences need a citation (`answers.needsCitation`); the documented default when absent. */
  readonly needsCitation?: CitationRule | undefined
  /** `answers.citations`: document-level citations fail (`quote`, the default) or are accepted, labelled (`document`). */
  readonly citations?: CitationsPolicy | undefined
}

/**
 * @since 0.1.0
 * @category models
 */
export interface AnswersShape {
  readonly options: AnswersOptions
  /** Verify a bound answer under the options' mode and uncited policy. */
  readonly verify: (answer: BoundAnswer) => Effect.Effect<Checked, AnswerRejected | AnswerLimitExceeded | VerificationTimeout>
}

/**
 * @since 0.1.0
 * @category tags
 */
export class Answers extends Context.Tag("citegate/Answers")<Answers, AnswersShape>() {}

/** Anchors no capture has (pages and headings are the Verifier's to check). */
const anchorFailures = (citation: Citation): Array<CitationError> => {
  const out: Array<CitationError> = []
  if (citation.blocks !== undefined) {
    out.push(
      new AnchorUnsupported({ source: citation.source, anchor: "content-block", value: `${citation.blocks.start}–${citation.blocks.end}` })
    )
  }
  return out
}

/**
 * A provider claim's document-level and unresolved citations under the policy: unresolved ones are
 * retracted with their error; document-level ones are accepted (labelled) under "document" and a
 * `CoarseCitation` under "quote". Nothing here searches the claim's text in a source.
 */
const documentOutcomes = (claim: BoundClaim, policy: CitationsPolicy, first: number) => {
  const accepted: Array<DocumentLevelCitation> = []
  const retracted: Array<RetractedCitation> = []
  let index = first
  for (const citation of claim.documents ?? []) {
    if (policy === "document") accepted.push({ index: index++, citation, label: documentLevelLabel })
    else {
      retracted.push({
        index: index++,
        citation,
        error: new CoarseCitation({ format: citation.format, document: citation.document, source: citation.source })
      })
    }
  }
  for (const { citation, error } of claim.unresolved ?? []) retracted.push({ index: index++, citation, error })
  return { accepted, retracted, total: index - first }
}

/**
 * A citation's claimed character range (`chars`) against where the Verifier found its quote: a
 * `SpanMismatch` when they differ. Offsets of a capture are computed once, on first use.
 */
const spanChecker = (captures: ReadonlyMap<SourceUrl, CaptureRecord>) => {
  const offsetsOf = new Map<CaptureRecord, Offsets>()
  return (citation: Citation, evidence: Evidence): CitationError | undefined => {
    if (citation.chars === undefined) return undefined
    const record = captures.get(citation.source as SourceUrl)!
    let o = offsetsOf.get(record)
    if (o === undefined) offsetsOf.set(record, o = offsets(record.text))
    const start = o.toUtf16(citation.chars.start)
    const end = o.toUtf16(citation.chars.end)
    if (start !== undefined && end !== undefined && end - start === citation.quote.length && record.text.startsWith(citation.quote, start)) {
      return undefined
    }
    // A normalised match (verify.matching: "normalized/2") is at its raw span, which the quote need not equal.
    if (evidence.method !== undefined && evidence.method !== "exact" && start === evidence.span.start && end === evidence.span.end) return undefined
    return new SpanMismatch({
      source: record.source,
      captureSha256: record.sha256,
      quote: citation.quote,
      claimedStart: citation.chars.start,
      claimedEnd: citation.chars.end,
      foundStart: o.toCodePoint(evidence.span.start),
      occurrences: evidence.occurrences
    })
  }
}

/**
 * @since 0.1.0
 * @category constructors
 */
export const make = (options: AnswersOptions): Effect.Effect<AnswersShape, never, Verifier.Verifier> =>
  Effect.gen(function*() {
    const verifier = yield* Verifier.Verifier

    const verify = Spans.fn("Answers.verify")(function*(answer: BoundAnswer) {
      const flat = answer.claims.flatMap((claim) => claim.citations)
      const checked = yield* verifier.checkCitations(
        flat.map((c) => ({
          source: c.source,
          captureSha256: c.captureSha256,
          snippet: c.quote,
          pages: c.page,
          heading: c.heading,
          prefix: c.prefix,
          suffix: c.suffix
        }))
      )
      const spanCheck = spanChecker(checked.captures)

      const claims: Array<GroundedClaim> = []
      const documentLevel: Array<DocumentLevelClaim> = []
      const provider = answer.claims.some((claim) => claim.documents !== undefined || claim.unresolved !== undefined)
      const policy = options.citations ?? "quote"
      let citationsDocumentLevel = 0
      let citationsTotal = flat.length
      const removed: Array<RemovedClaim> = []
      const rejections: Array<CitationRejection> = []
      const usedCaptures = new Map<string, CaptureRecord>()
      let k = 0
      let citationsVerified = 0
      answer.claims.forEach((claim, claimIndex) => {
        const verified: Array<VerifiedAnswerCitation> = []
        const retracted: Array<RetractedCitation> = []
        claim.citations.forEach((citation, index) => {
          const result = checked.results[k++]!
          const failures: Array<CitationError> = anchorFailures(citation)
          if (Either.isLeft(result)) failures.push(...result.left)
          else {
            const span = spanCheck(citation, result.right)
            if (span !== undefined) failures.push(span)
          }
          if (failures.length === 0 && Either.isRight(result)) verified.push({ index, citation, evidence: result.right })
          for (const error of failures) {
            retracted.push({ index, citation, error })
            rejections.push({ claimIndex, claimId: claim.id, citationIndex: index, error })
          }
        })
        // Provider formats: document-level and unresolved citations, after the quotes (see `BoundClaim`).
        const documents = documentOutcomes(claim, policy, claim.citations.length)
        for (const r of documents.retracted) {
          retracted.push(r)
          rejections.push({ claimIndex, claimId: claim.id, citationIndex: r.index, error: r.error })
        }
        citationsTotal += documents.total
        citationsDocumentLevel += documents.accepted.length
        citationsVerified += verified.length
        if (Arr.isNonEmptyArray(verified)) {
          claims.push({
            index: claimIndex,
            id: claim.id,
            text: claim.text,
            citations: verified,
            retracted,
            ...(documents.accepted.length > 0 ? { documents: documents.accepted } : {})
          })
          for (const v of verified) usedCaptures.set(v.citation.source, checked.captures.get(v.citation.source as SourceUrl)!)
        } else if (Arr.isNonEmptyArray(documents.accepted)) {
          documentLevel.push({ index: claimIndex, id: claim.id, text: claim.text, label: documentLevelLabel, documents: documents.accepted, retracted })
        } else if (Arr.isNonEmptyArray(retracted)) {
          removed.push({ index: claimIndex, id: claim.id, text: claim.text, reasons: retracted })
        }
      })
      const uncited = yield* boundedFindings(answer.uncited, options.needsCitation ?? defaultCitationRule)

      const rejectCitations = options.mode === "reject" && rejections.length > 0
      const rejectUncited = options.uncited === "reject" && uncited.length > 0
      if (rejectCitations || rejectUncited) {
        return yield* Effect.fail(new AnswerRejected({ citations: rejections, uncited: rejectUncited ? uncited : [] }))
      }
      const result: VerifiedAnswer = {
        format: verifiedAnswerFormat,
        outcome: claims.length > 0 ? "grounded" : "no_evidence",
        mode: options.mode,
        manifest: answer.manifest,
        claims,
        removed,
        ...(provider ? { citationsPolicy: policy, documentLevel } : {}),
        uncited,
        summary: {
          claims: answer.claims.length,
          claimsGrounded: claims.length,
          claimsRemoved: removed.length,
          citations: citationsTotal,
          citationsVerified,
          ...(provider ? { claimsDocumentLevel: documentLevel.length, citationsDocumentLevel } : {})
        },
        proves: "provenance-only",
        semanticReview: "not-performed"
      }
      return { answer: result, captures: usedCaptures } satisfies Checked
    })

    return Answers.of({ options, verify })
  })

/**
 * The Answers service over the Verifier (which brings the store and policy).
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (options: AnswersOptions): Layer.Layer<Answers, never, Verifier.Verifier> =>
  Layer.effect(Answers, make(options))
