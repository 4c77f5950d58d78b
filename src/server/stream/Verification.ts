/**
 * The verification scheduler of one stream: citations queue up as the input
 * completes them, and each batch (the citations completed by one input chunk)
 * goes to the Verifier in one call (each capture read and rehashed once per
 * call), never the whole answer again. A verified citation becomes a
 * `citation` event, a failed one a `retraction` (with `removeSentence` when its
 * claim has no citation left); nothing is emitted before its check returns.
 *
 * How a batch is checked is the input format's: EVI1 quotes go to
 * `Verifier.checkCitations` as they are (`checkQuotes`); provider citations
 * carrying offsets or anchors go through the Answers path (see `AnthropicSse`).
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import { type Citation, type DocumentCitation, documentLevelLabel, type UnresolvedCitation } from "../../answer/Records.js"
import type { Evidence } from "../../Domain.js"
import type { CitationError, CitationRejection, VerificationTimeout } from "../../Errors.js"
import type * as Verifier from "../../verify/Verifier.js"
import type { StreamEvent, StreamFailure, Summary } from "./Events.js"

/** A claim of the stream, with its citations' outcomes so far. */
export interface ClaimState {
  readonly index: number
  readonly id: string
  readonly text: string
  readonly sentence: { readonly start: number; readonly end: number }
  readonly total: number
  verified: number
  retracted: number
  /** Document-level citations accepted (provider streams under `answers.citations: "document"`). */
  documents?: number
}

/** One citation of a claim: its placeholder marker `[^footnote]`. */
export interface Footnote {
  readonly footnote: number
  readonly claim: ClaimState
  readonly citationIndex: number
  /** The manifest's source number (undefined for a provider citation naming no approved source). */
  readonly source: number | undefined
  readonly line: number
}

/**
 * A citation waiting for its check: a quote (every format), or a provider's document-level
 * citation or one whose document did not resolve (`bedrock-stream`), judged by the policy.
 */
export type Pending =
  | { readonly note: Footnote; readonly kind?: "quote"; readonly citation: Citation }
  | { readonly note: Footnote; readonly kind: "document"; readonly document: DocumentCitation }
  | {
    readonly note: Footnote
    readonly kind: "unresolved"
    readonly unresolved: { readonly citation: DocumentCitation | UnresolvedCitation; readonly error: CitationError }
  }

/** A document-level citation accepted under `answers.citations: "document"`. */
export const documentAccepted = { _tag: "DocumentAccepted" } as const

/** One result per pending citation, in order: its evidence, or why it fails (never empty), or accepted as document-level. */
export type CitationResult = Either.Either<Evidence, ReadonlyArray<CitationError>> | typeof documentAccepted

const quoteOf = (pending: Pending): Citation => {
  if (pending.kind !== undefined && pending.kind !== "quote") throw new Error("a document-level citation in a quote-only stream")
  return pending.citation
}

/** Checks a batch of pending citations. */
export type Check = (batch: ReadonlyArray<Pending>) => Effect.Effect<ReadonlyArray<CitationResult>, VerificationTimeout>

/** A failure found by the synchronous parts of a stream, carried out of them. */
export class Abort {
  constructor(readonly error: StreamFailure) {}
}

/** Quotes through `Verifier.checkCitations`, as they are (EVI1 evidence lines name no offsets or anchors). */
export const checkQuotes = (verifier: Verifier.VerifierShape): Check => (batch) =>
  Effect.map(
    verifier.checkCitations(
      batch.map((pending) => {
        const citation = quoteOf(pending)
        return { source: citation.source, captureSha256: citation.captureSha256, snippet: citation.quote }
      })
    ),
    (checked) => checked.results as ReadonlyArray<CitationResult>
  )

/**
 * The citations of one stream: queued, checked a batch at a time, and counted.
 *
 * @since 0.1.0
 */
export class Verification {
  private batch: Array<Pending> = []
  verified = 0
  retracted = 0
  removed = 0
  documents = 0
  readonly rejections: Array<CitationRejection> = []

  constructor(private readonly check: Check, private readonly id: () => number) {}

  add(pending: Pending): void {
    this.batch.push(pending)
  }

  /** The citations completed since the last call, in one check. */
  run(): Effect.Effect<Array<StreamEvent>, VerificationTimeout> {
    const batch = this.batch
    if (batch.length === 0) return Effect.succeed([])
    this.batch = []
    return Effect.map(this.check(batch), (results) => batch.map((pending, i) => this.event(pending, results[i]!)))
  }

  /** The head of an accepted citation's event (a quote or a whole document): its claim, source and capture. */
  private accepted<T extends "citation" | "document">(
    type: T,
    note: Footnote,
    sourceNumber: number,
    cited: { readonly source: string; readonly captureSha256: string }
  ) {
    return {
      id: this.id(),
      type,
      footnote: note.footnote,
      claimId: note.claim.id,
      sourceNumber,
      source: cited.source,
      captureSha256: cited.captureSha256
    }
  }

  private event(pending: Pending, checked: CitationResult): StreamEvent {
    const { note } = pending
    const claim = note.claim
    if (checked === documentAccepted) {
      if (pending.kind !== "document" || note.source === undefined) throw new Error("only a resolved document citation is accepted as one")
      claim.documents = (claim.documents ?? 0) + 1
      this.documents++
      const d = pending.document
      return {
        ...this.accepted("document", note, note.source, d),
        format: d.format,
        document: d.document,
        label: documentLevelLabel
      }
    }
    const result = checked as Either.Either<Evidence, ReadonlyArray<CitationError>>
    if (Either.isRight(result)) {
      const citation = quoteOf(pending)
      claim.verified++
      this.verified++
      const evidence = result.right
      return {
        ...this.accepted("citation", note, note.source!, citation),
        quote: citation.quote,
        span: evidence.span,
        occurrences: evidence.occurrences,
        ...(evidence.page === undefined ? {} : { page: evidence.page }),
        method: evidence.method ?? "exact",
        ...(evidence.method === undefined || evidence.method === "exact" || evidence.selector === undefined
          ? {}
          : { captureText: evidence.selector[0].exact }),
        // Absent means visible, as on the evidence.
        ...(evidence.visibility === undefined ? {} : { visibility: evidence.visibility }),
        ...(evidence.hiddenBy === undefined ? {} : { hiddenBy: evidence.hiddenBy })
      }
    }
    claim.retracted++
    this.retracted++
    const removeSentence = claim.verified === 0 && claim.retracted === claim.total
    if (removeSentence) this.removed++
    for (const error of result.left) {
      this.rejections.push({ claimIndex: claim.index, claimId: claim.id, citationIndex: note.citationIndex, error })
    }
    return {
      id: this.id(),
      type: "retraction",
      footnote: note.footnote,
      claimId: claim.id,
      claim: claim.text,
      sentence: claim.sentence,
      removeSentence,
      reasons: result.left as [CitationError, ...Array<CitationError>]
    }
  }

  /**
   * The counts of the stream so far (`claims`: every claim seen; `citations`: every footnote); with
   * `documentLevel`, the document-level counts too (a claim with accepted documents and no verified quote).
   */
  summary(claims: Iterable<ClaimState>, citations: number, documentLevel = false): Summary {
    let count = 0
    let grounded = 0
    let documentOnly = 0
    for (const claim of claims) {
      count++
      if (claim.verified > 0) grounded++
      else if ((claim.documents ?? 0) > 0) documentOnly++
    }
    return {
      claims: count,
      claimsGrounded: grounded,
      claimsRemoved: this.removed,
      citations,
      citationsVerified: this.verified,
      citationsRetracted: this.retracted,
      ...(documentLevel ? { claimsDocumentLevel: documentOnly, citationsDocumentLevel: this.documents } : {})
    }
  }
}
