/**
 * Descriptions of an answer's failures: per citation (`CitationError`), EVI1 line issues, uncited sentences and whole answers (`AnswerError`).
 */
import * as Match from "effect/Match"
import type { AnswerError, CitationError, Evi1Issue, UncitedSentence } from "../../Errors.js"
import { formatPath } from "../../Errors.js"
import { absentFix, changedFields, changedFix, type Description, nearestFields, omittedIssues, prefix, shown } from "./Shared.js"
import * as DescribeProvider from "./Provider.js"
import { factErrorUnbounded } from "./Verify.js"

/** Why one citation of an answer failed. The capture and search failures read as for report facts. */
export const citationError = (error: CitationError): Description => shown(citationErrorUnbounded(error))

// The shared tags read as for report facts; cut once, by `citationError` (cutting twice would report the length of the cut value).
const citationErrorUnbounded = (error: CitationError): Description =>
  Match.valueTags(error, {
    NotApproved: (e) => factErrorUnbounded(e),
    CoarseCitation: (e) => DescribeProvider.coarseCitation(e),
    UnresolvableSource: (e) => DescribeProvider.unresolvableSource(e),
    MissingCapture: (e) => factErrorUnbounded(e),
    CorruptCapture: (e) => factErrorUnbounded(e),
    LegacyCapture: (e) => factErrorUnbounded(e),
    DigestMismatch: (e) => factErrorUnbounded(e),
    SnippetAbsent: (e): Description => ({
      title: "Quote not found verbatim",
      fields: [["source", e.source], ["capture", prefix(e.captureSha256)], ["quote", e.snippet], ...nearestFields(e.nearest), ...changedFields(e)],
      fix: e.changed !== undefined ? changedFix : absentFix(e.nearest, "Quote the capture exactly (no paraphrase, case, spacing or punctuation changes), or drop the claim.")
    }),
    SpanMismatch: (e): Description => ({
      title: "Quote is not at the cited position",
      fields: [
        ["source", e.source],
        ["capture", prefix(e.captureSha256)],
        ["claimed code points", `${e.claimedStart}–${e.claimedEnd}`],
        ["first found at code point", String(e.foundStart)],
        ["quote", e.quote]
      ],
      fix: `The quote is elsewhere in the capture: cite code points ${e.foundStart}–${e.foundStart + [...e.quote].length} ` +
        "(end exclusive; the first occurrence), or give the quote without indices."
    }),
    AnchorUnsupported: (e): Description => ({
      title: "Anchor cannot be checked",
      fields: [["source", e.source], ["anchor", e.anchor], ["value", e.value]],
      fix: "Captures carry PDF pages and heading paths but no content blocks: cite the quote with its page or heading, or without an anchor."
    }),
    AnchorMismatch: (e) => factErrorUnbounded(e),
    AmbiguousSnippet: (e) => factErrorUnbounded(e),
    HiddenEvidence: (e) => factErrorUnbounded(e),
    SnippetCutsToken: (e) => factErrorUnbounded(e),
    UnsignedCapture: (e) => factErrorUnbounded(e),
    SignatureInvalid: (e) => factErrorUnbounded(e),
    UnknownSigningKey: (e) => factErrorUnbounded(e)
  })

/** One issue of an EVI1 text, with its line. */
export const evi1Issue = (issue: Evi1Issue): Description => shown(evi1IssueUnbounded(issue))

const evi1IssueUnbounded = (issue: Evi1Issue): Description =>
  Match.valueTags(issue, {
    Evi1MalformedLine: (i): Description => ({
      title: "Malformed line",
      fields: [["line", String(i.line)], ["detail", i.detail]],
      fix: "Evidence lines are cX|n|\"quote\" between EVI1 and END_EVI1; escape only \\\", \\\\ and \\n."
    }),
    Evi1DuplicateClaimId: (i): Description => ({
      title: "Claim id used twice",
      fields: [["line", String(i.line)], ["claim", i.claimId], ["first used on line", String(i.firstLine)]],
      fix: "Give every claim its own id."
    }),
    Evi1DuplicateEvidence: (i): Description => ({
      title: "Evidence given twice",
      fields: [["line", String(i.line)], ["claim", i.claimId], ["source", String(i.source)], ["first given on line", String(i.firstLine)]],
      fix: "Give one evidence line per claim and source."
    }),
    Evi1MissingEvidence: (i): Description => ({
      title: "Citation without evidence",
      fields: [["line", String(i.line)], ["claim", i.claimId], ["source", String(i.source)]],
      fix: "Add the evidence line cX|n|\"quote\" for this claim and source, or remove the [n]."
    }),
    Evi1UnusedEvidence: (i): Description => ({
      title: "Evidence without citation",
      fields: [["line", String(i.line)], ["claim", i.claimId], ["source", String(i.source)]],
      fix: "Cite the source in that claim's group, or remove the evidence line."
    }),
    Evi1SourceOutOfRange: (i): Description => ({
      title: "Source number out of range",
      fields: [["line", String(i.line)], ["claim", i.claimId], ["source", String(i.source)], ["manifest sources", String(i.sources)]],
      fix: "Cite sources by their numbers in this run's manifest (1 to n)."
    }),
    Evi1SourceUnavailable: (i): Description => ({
      title: "Source not available in this run",
      fields: [["line", String(i.line)], ["claim", i.claimId], ["source", String(i.source)], ["url", i.url]],
      fix: "The manifest lists this source as missing; do not cite it."
    }),
    Evi1OrphanMarker: (i): Description => ({
      title: "Claim id without citation",
      fields: [["line", String(i.line)], ["claim", i.claimId]],
      fix: "Put the sources directly before the claim id: [n]{cX}."
    }),
    Evi1ExtraAppendix: (i): Description => ({
      title: "A second EVI1 block",
      fields: [["line", String(i.line)], ["appendix starts on line", String(i.firstLine)]],
      fix: "An answer has one appendix (EVI1 … END_EVI1), at its end; remove every other EVI1 block."
    })
  })

export const uncitedSentence = (e: UncitedSentence): Description => shown({
  title: "Uncited factual-looking sentence",
  fields: [...(e.line === null ? [] : [["line", String(e.line)] as const]), ["sentence", e.sentence]],
  fix: "Cite the sentence with a verbatim quote, or remove it."
})

/** Why a whole answer was not accepted. */
export const answerError = (error: AnswerError): Description => shown(answerErrorUnbounded(error))

const answerErrorUnbounded = (error: AnswerError): Description =>
  Match.valueTags(error, {
    InvalidAnswer: (e): Description => ({
      title: "Invalid answer",
      fields: [
        ...e.issues.map((issue) => [formatPath(issue.path), issue.message] as const),
        ...omittedIssues(e.omitted).map((line) => ["…", line] as const)
      ],
      fix: "Correct the answer at the paths shown."
    }),
    StaleManifest: (e): Description => ({
      title: e.named === null ? "Answer names no manifest" : "Answer drafted against another manifest",
      // In full: the drafter copies this digest into the MANIFEST line.
      fields: [["answer names", e.named === null ? "(none)" : prefix(e.named)], ["this run's manifest", e.current]],
      fix: "Draft against this run's manifest and name its digest (MANIFEST line or --manifest-digest); numbers are never re-bound."
    }),
    Evi1Invalid: (e): Description => ({
      title: "EVI1 protocol violated",
      fields: [
        ...e.issues.map((issue) => [`line ${issue.line}`, `${issue._tag}: ${evi1Issue(issue).title}`] as const),
        ...omittedIssues(e.omitted).map((line) => ["…", line] as const)
      ],
      fix: "Correct every line shown."
    }),
    AnswerTooLarge: (e): Description => ({
      title: "Answer too large",
      fields: [["max characters", String(e.maxChars)], ["received", String(e.receivedChars)]],
      fix: "Answers are limited in size; split the answer."
    }),
    AnswerLimitExceeded: (e): Description => ({
      title: "Answer over its limit",
      fields: [["limit", e.limit], ["max", String(e.max)], ["counted", String(e.received)]],
      fix: "Answers are limited in claims and citations; split the answer or cite fewer sources per claim."
    }),
    VerificationTimeout: (e): Description => ({
      title: "Verification timed out",
      fields: [["deadline ms", String(e.timeoutMs)]],
      fix: "Nothing in this answer is accepted. Cite fewer or smaller quotes, or raise verify.timeoutMs if the captures are legitimately this large."
    }),
    AnswerRejected: (e): Description => ({
      title: "Answer rejected",
      fields: [["failed citations", String(e.citations.length)], ["uncited sentences", String(e.uncited.length)]],
      fix: "Every failure is listed; in drop mode failed citations are retracted instead."
    }),
    // --- streamed provider answers (errors/ProviderStream.ts)
    ProviderEventInvalid: (e): Description => ({
      title: "Invalid provider stream event",
      fields: [["format", e.format], ["event", String(e.event)], ["line", String(e.line)], ["detail", e.detail]],
      fix: "Pass the provider's event stream as it was received (SSE: `event:` and `data:` lines, a blank line after each event)."
    }),
    ProviderStreamError: (e): Description => ({
      title: "Provider stream reported an error",
      fields: [["format", e.format], ["error type", e.errorType], ["detail", e.detail]],
      fix: "The answer is incomplete: request it again."
    }),
    ProviderStreamIncomplete: (e): Description => ({
      title: "Provider stream incomplete",
      fields: [["format", e.format], ["ended", e.at], ["events read", String(e.events)]],
      fix: "The answer is incomplete (the connection was cut or the file truncated): request it again, or pass the whole stream."
    })
  })
