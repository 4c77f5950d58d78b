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
import type { Citation } from "../../answer/Records.js"
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
}

/** One citation of a claim: its placeholder marker `[^footnote]`. */
export interface Footnote {
  readonly footnote: number
  readonly claim: ClaimState
  readonly citationIndex: number
  /** The manifest's source number. */
  readonly source: number
  readonly line: number
}

/** A citation waiting for its check. */
export interface Pending {
  readonly note: Footnote
  readonly citation: Citation
}

/** One result per pending citation, in order: its evidence, or why it fails (never empty). */
export type CitationResult = Either.Either<Evidence, ReadonlyArray<CitationError>>

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
      batch.map(({ citation }) => ({ source: citation.source, captureSha256: citation.captureSha256, snippet: citation.quote }))
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

  private event({ citation, note }: Pending, result: CitationResult): StreamEvent {
    const claim = note.claim
    if (Either.isRight(result)) {
      claim.verified++
      this.verified++
      const evidence = result.right
      return {
        id: this.id(),
        type: "citation",
        footnote: note.footnote,
        claimId: claim.id,
        sourceNumber: note.source,
        source: citation.source,
        captureSha256: citation.captureSha256,
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

  /** The counts of the stream so far (`claims`: every claim seen; `citations`: every footnote). */
  summary(claims: Iterable<ClaimState>, citations: number): Summary {
    let count = 0
    let grounded = 0
    for (const claim of claims) {
      count++
      if (claim.verified > 0) grounded++
    }
    return {
      claims: count,
      claimsGrounded: grounded,
      claimsRemoved: this.removed,
      citations,
      citationsVerified: this.verified,
      citationsRetracted: this.retracted
    }
  }
}
