/**
 * The judge's review of a verified answer or report: one question per verified citation (its claim
 * and the capture's own text at the verified span), then per citation a combined score
 * `min(textMatch, confidence)`, per claim and per answer a summary.
 *
 * It reads verification RESULTS only (the evidence's span, method and selector), never the matching
 * internals, and changes nothing in them: the review is a separate outcome beside provenance.
 *
 * `textMatch` is 1 for a verbatim match (`method` absent or `exact`). For a normalised match
 * (`normalized/2`) it is the normalised edit similarity of the quote as given and the capture's text
 * at the span: 1 − Levenshtein distance / the longer length (anchor/Similarity.ts `ratioNormalized`,
 * each side cut to 2,048 code units), so a citation is never scored above how closely it quotes.
 *
 * @since 0.3.0
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { ratioNormalized } from "../anchor/Similarity.js"
import type { CaptureRecord, Evidence } from "../Domain.js"
import type { VerifiedAnswer } from "../answer/Records.js"
import type { VerifiedReport } from "../verify/VerifiedReport.js"
import { Judge, type JudgeShape } from "./Judge.js"
import {
  type CitationJudgement,
  type ClaimJudgement,
  type JudgeReview,
  judgeReviewFormat,
  type JudgeSummary,
  promptVersion,
  supporting
} from "./Records.js"
import { ownedSlice } from "../internal/ownedSlice.js"

/** What the judge is asked about one verified citation, and where it sits. */
interface Asked {
  readonly claimIndex: number
  readonly claimId: string
  readonly citationIndex: number
  readonly claim: string
  readonly quote: string
  readonly evidence: Evidence
  readonly source: string
}

const round = (x: number) => Math.round(x * 1e4) / 1e4

/** The capture's text at the verified span (what was proved), or the quote when it cannot be read. */
const provedText = (asked: { readonly quote: string; readonly evidence: Evidence; readonly source: string }, captures: ReadonlyMap<string, CaptureRecord>) => {
  const selected = asked.evidence.selector?.[0].exact
  if (selected !== undefined) return selected
  const record = captures.get(asked.source)
  return record === undefined ? asked.quote : ownedSlice(record.text, asked.evidence.span.start, asked.evidence.span.end)
}

/** 1 for a verbatim match; otherwise the quote's normalised edit similarity to the capture's text at the span. */
export const textMatch = (quote: string, evidence: Evidence, proved: string): number =>
  evidence.method === undefined || evidence.method === "exact" ? 1 : round(ratioNormalized(quote, proved))

const summarize = (citations: ReadonlyArray<CitationJudgement>, claims: ReadonlyArray<ClaimJudgement>): JudgeSummary => {
  const count = (v: string) => citations.filter((c) => c.verdict === v).length
  const scores = claims.map((c) => c.bestScore)
  const judged = scores.filter((s): s is number => s !== null)
  return {
    citations: citations.length,
    entailed: count("entailed"),
    partially_entailed: count("partially_entailed"),
    overstated: count("overstated"),
    insufficient: count("insufficient"),
    contradicted: count("contradicted"),
    error: count("error"),
    claims: claims.length,
    claimsSupported: claims.filter((c) => c.supported).length,
    // A claim with no judged citation has no score, so neither has the weakest claim.
    minClaimScore: judged.length === 0 || judged.length < scores.length ? null : Math.min(...judged),
    supported: claims.every((c) => c.supported) && count("error") === 0
  }
}

const claimSummaries = (citations: ReadonlyArray<CitationJudgement>): Array<ClaimJudgement> => {
  const byClaim = new Map<number, Array<CitationJudgement>>()
  for (const c of citations) {
    const list = byClaim.get(c.claimIndex)
    if (list === undefined) byClaim.set(c.claimIndex, [c])
    else list.push(c)
  }
  return [...byClaim.values()].map((list) => {
    // The best citation: highest score; an `error` (null score) only when nothing was judged.
    const best = list.reduce((a, b) => ((b.score ?? -1) > (a.score ?? -1) ? b : a))
    return {
      claimIndex: list[0]!.claimIndex,
      claimId: list[0]!.claimId,
      citations: list.length,
      supported: list.some((c) => supporting.has(c.verdict)),
      bestScore: best.score,
      verdict: best.verdict
    }
  })
}

const review = (judge: JudgeShape, asked: ReadonlyArray<Asked>, captures: ReadonlyMap<string, CaptureRecord>) =>
  Effect.gen(function*() {
    const proved = asked.map((a) => provedText(a, captures))
    const results = yield* judge.judge(asked.map((a, i) => ({ id: `${a.claimIndex + 1}.${a.citationIndex + 1}`, claim: a.claim, quote: proved[i]! })))
    const citations = asked.map((a, i): CitationJudgement => {
      const r = results[i]!
      const match = textMatch(a.quote, a.evidence, proved[i]!)
      const base = { claimIndex: a.claimIndex, claimId: a.claimId, citationIndex: a.citationIndex, textMatch: match, cut: r.cut }
      return r.verdict === "error"
        ? { ...base, verdict: "error", confidence: null, score: null, error: r.error }
        : { ...base, verdict: r.verdict, confidence: r.confidence, score: round(Math.min(match, r.confidence)) }
    })
    const claims = claimSummaries(citations)
    const result: JudgeReview = {
      format: judgeReviewFormat,
      prompt: promptVersion,
      provider: judge.settings.provider,
      model: judge.settings.model,
      mode: judge.settings.mode,
      citations,
      claims,
      summary: summarize(citations, claims),
      proves: "nothing: a model's judgement of support, beside provenance"
    }
    return result
  })

/**
 * The judge's review of a verified answer: every verified citation of every grounded claim (removed
 * claims and retracted citations have no verified text to judge).
 *
 * @since 0.3.0
 */
export const reviewAnswer = Effect.fn("JudgeReview.reviewAnswer")(function*(
  judge: JudgeShape,
  answer: VerifiedAnswer,
  captures: ReadonlyMap<string, CaptureRecord>
) {
  const asked = answer.claims.flatMap((claim) =>
    claim.citations.map((c): Asked => ({
      claimIndex: claim.index,
      claimId: claim.id,
      citationIndex: c.index,
      claim: claim.text,
      quote: c.citation.quote,
      evidence: c.evidence,
      source: c.citation.source
    }))
  )
  return yield* review(judge, asked, captures)
})

/** The claim a report's fact makes: its excerpt gives the value of its label. */
export const factClaim = (label: string) => `The quoted excerpt states the value of the metric labelled "${label}".`

/**
 * The judge's review of a verified report: every verified cited fact, its claim being that the excerpt
 * gives the value of its label (the question the demo's `wrong-label` sample asks).
 *
 * @since 0.3.0
 */
export const reviewReport = Effect.fn("JudgeReview.reviewReport")(function*(
  judge: JudgeShape,
  report: VerifiedReport,
  captures: ReadonlyMap<string, CaptureRecord>
) {
  const asked = report.facts.flatMap((entry): Array<Asked> =>
    entry.fact.state === "cited" && "evidence" in entry
      ? [{
        claimIndex: entry.index,
        claimId: entry.fact.label,
        citationIndex: 0,
        claim: factClaim(entry.fact.label),
        quote: entry.fact.snippet,
        evidence: entry.evidence,
        source: entry.fact.source
      }]
      : []
  )
  return yield* review(judge, asked, captures)
})

/**
 * The judge's review of a verified answer when a `Judge` is provided, else `undefined` (judging off:
 * capability gating at start has already refused a configuration that asks for a judge it lacks).
 *
 * @since 0.3.0
 */
export const ofAnswer = (answer: VerifiedAnswer, captures: ReadonlyMap<string, CaptureRecord>): Effect.Effect<JudgeReview | undefined> =>
  Effect.flatMap(Effect.serviceOption(Judge), (judge) =>
    Option.isSome(judge) ? reviewAnswer(judge.value, answer, captures) : Effect.succeed(undefined))

/**
 * The judge's review of a verified report when a `Judge` is provided, else `undefined`.
 *
 * @since 0.3.0
 */
export const ofReport = (report: VerifiedReport, captures: ReadonlyMap<string, CaptureRecord>): Effect.Effect<JudgeReview | undefined> =>
  Effect.flatMap(Effect.serviceOption(Judge), (judge) =>
    Option.isSome(judge) ? reviewReport(judge.value, report, captures) : Effect.succeed(undefined))

/** Whether a review fails the run: `review.judge.mode: require` and not every claim supported (or any error). */
export const failsRun = (review: JudgeReview | undefined): boolean =>
  review !== undefined && review.mode === "require" && !review.summary.supported
