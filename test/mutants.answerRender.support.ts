/** Answer renderings built by hand (no verification run) for the exact-output tests of src/answer/Render.ts. */
import * as AnswerRender from "../src/answer/Render.js"
import type { VerifiedAnswer } from "../src/answer/Records.js"
import type { Rfc3339Utc, Sha256Hex } from "../src/Domain.js"
import { AnchorUnsupported, AnswerRejected, Evi1Invalid, SnippetAbsent, SpanMismatch, StaleManifest, UncitedSentence } from "../src/Errors.js"

export const A = "https://answers.northwind.test/a.txt"
export const B = "https://answers.northwind.test/b.txt"
export const shaA = "a1".repeat(32) as Sha256Hex
export const shaB = "b2".repeat(32) as Sha256Hex
export const at = "2026-10-01T09:30:00.000Z" as Rfc3339Utc

const citation = (source: string, sha: Sha256Hex, quote: string) => ({ source, captureSha256: sha, quote })

export const grounded: VerifiedAnswer = {
  format: "citegate.verified-answer/1",
  outcome: "grounded",
  mode: "drop",
  manifest: null,
  claims: [
    {
      index: 0,
      id: "c<1>",
      text: "Sales *rose* to 4,210.",
      citations: [{ index: 0, citation: citation(A, shaA, "4,210 units"), evidence: { span: { start: 10, end: 21 }, occurrences: 1, accessedAt: at } }],
      retracted: [{ index: 1, citation: citation(A, shaA, "5,000"), error: new SnippetAbsent({ source: A, captureSha256: shaA, snippet: "5,000" }) }]
    },
    {
      index: 2,
      id: "c3",
      text: "Stock fell.",
      citations: [
        { index: 0, citation: citation(B, shaB, "stock \"fell\""), evidence: { span: { start: 0, end: 12 }, occurrences: 2, accessedAt: at, ambiguous: true, method: "normalized/1" } },
        { index: 1, citation: citation(A, shaA, "fell"), evidence: { span: { start: 30, end: 34 }, occurrences: 1, accessedAt: at, ambiguous: false, method: "exact" } }
      ],
      retracted: []
    }
  ],
  removed: [{
    index: 1,
    id: "c2",
    text: "- Returns <b>doubled</b>.",
    reasons: [
      { index: 0, citation: citation(A, shaA, "doubled"), error: new SnippetAbsent({ source: A, captureSha256: shaA, snippet: "doubled" }) },
      { index: 1, citation: citation(B, shaB, "x"), error: new AnchorUnsupported({ source: B, anchor: "page", value: "2–3" }) }
    ]
  }],
  uncited: [new UncitedSentence({ sentence: "An uncited <i>factual</i> sentence of some length here.", line: null }), new UncitedSentence({ sentence: "Another one on a line.", line: 3 })],
  summary: { claims: 3, claimsGrounded: 2, claimsRemoved: 1, citations: 5, citationsVerified: 3 },
  proves: "provenance-only",
  semanticReview: "not-performed"
}

export const noEvidence: VerifiedAnswer = {
  format: "citegate.verified-answer/1",
  outcome: "no_evidence",
  mode: "reject",
  manifest: shaA,
  claims: [],
  removed: [],
  uncited: [],
  summary: { claims: 1, claimsGrounded: 0, claimsRemoved: 0, citations: 1, citationsVerified: 0 },
  proves: "provenance-only",
  semanticReview: "not-performed"
}

export const oneOfOne: VerifiedAnswer = {
  ...noEvidence,
  outcome: "grounded",
  claims: [{ index: 0, id: "only", text: "One.", citations: [{ index: 0, citation: citation(A, shaA, "one"), evidence: { span: { start: 0, end: 3 }, occurrences: 1, accessedAt: at } }], retracted: [] }],
  summary: { claims: 1, claimsGrounded: 1, claimsRemoved: 0, citations: 1, citationsVerified: 1 }
}

export const rejected = new AnswerRejected({
  citations: [
    { claimIndex: 0, claimId: "c<1>", citationIndex: 1, error: new SpanMismatch({ source: A, captureSha256: shaA, quote: "4,210\nunits", claimedStart: 3, claimedEnd: 14, foundStart: 10, occurrences: 1 }) },
    { claimIndex: 2, claimId: "c3", citationIndex: 0, error: new SnippetAbsent({ source: B, captureSha256: shaB, snippet: "<q>\u202e" }) }
  ],
  uncited: [new UncitedSentence({ sentence: "Uncited <u>and</u> long.", line: 4 }), new UncitedSentence({ sentence: "No line.", line: null })]
})

export const evi1 = new Evi1Invalid({
  issues: [
    { _tag: "Evi1MalformedLine", line: 3, detail: "bad <line>" },
    { _tag: "Evi1OrphanMarker", line: 5, claimId: "c9" }
  ],
  omitted: 7
})

export const stale = new StaleManifest({ named: shaB, current: shaA })

export const renderings = {
  grounded: AnswerRender.AnswerRendering.Verified({ answer: grounded, captures: new Map() }),
  noEvidence: AnswerRender.AnswerRendering.Verified({ answer: noEvidence, captures: new Map() }),
  oneOfOne: AnswerRender.AnswerRendering.Verified({ answer: oneOfOne, captures: new Map() }),
  rejected: AnswerRender.AnswerRendering.Rejected({ error: rejected }),
  evi1: AnswerRender.AnswerRendering.Rejected({ error: evi1 }),
  stale: AnswerRender.AnswerRendering.Rejected({ error: stale })
}
