/**
 * What each typed error means to a reader: a title, its fields, and what to do.
 * The switch is exhaustive: an error tag added without a description here is a
 * type error, so no renderer can silently forget one.
 *
 * Values are returned unescaped, each cut to `maxShownLength`; each renderer
 * escapes them for its format.
 */
import * as Match from "effect/Match"
import type {
  AnchorMismatch,
  AnswerError,
  AuditError,
  NearestPassage,
  CaptureError,
  CitationError,
  Evi1Issue,
  FactError,
  InvalidConfig,
  InvalidMigrationMap,
  InvalidRunDirectory,
  ServiceError,
  RunExists,
  StorePackageMissing,
  StoreUnavailable,
  StreamError,
  UncitedSentence,
  VerificationTimeout
} from "../Errors.js"
import { formatPath, pagesLabel } from "../Errors.js"
import { cut } from "../internal/bounded.js"

export interface Description {
  readonly title: string
  readonly fields: ReadonlyArray<readonly [name: string, value: string]>
  readonly fix: string
}

/** The line that stands for issues found but not listed (`omitted` on InvalidReport / InvalidConfig). */
export const omittedIssues = (omitted: number | undefined): ReadonlyArray<string> =>
  omitted === undefined || omitted === 0 ? [] : [`and ${omitted} more issue${omitted === 1 ? "" : "s"} not listed`]

const prefix = (digest: string) => `${digest.slice(0, 12)}…`

/** The repair diagnostic of a SnippetAbsent, when it carries one: what the capture says nearby. */
const nearestFields = (nearest: NearestPassage | undefined): ReadonlyArray<readonly [string, string]> =>
  nearest === undefined ? [] : [
    ["nearest passage", nearest.text],
    ["found by", `${nearest.method}, score ${nearest.score}, characters ${nearest.span.start}–${nearest.span.end}`],
    ["differences", nearest.differences]
  ]

/** Where an AnchorMismatch's excerpt is, and the anchors the capture has: what a repair copies. */
const anchorHintFields = (e: AnchorMismatch): ReadonlyArray<readonly [string, string]> => [
  ...(e.foundPage === undefined && e.foundHeading === undefined
    ? []
    : [[
      "excerpt is on",
      [
        ...(e.foundPage === undefined ? [] : [pagesLabel(e.foundPage, e.foundLastPage)]),
        ...(e.foundHeading === undefined ? [] : [`heading ${e.foundHeading.join(" > ")}`])
      ].join(", ")
    ] as const]),
  ...(e.pages === undefined ? [] : [["the capture's page count", String(e.pages)] as const]),
  ...(e.headings === undefined
    ? []
    : [[
      "headings in the capture",
      e.headings.map((path) => path.join(" > ")).join("; ") +
      (e.headingsOmitted === undefined ? "" : `; and ${e.headingsOmitted} more`)
    ] as const])
]

/** The number, sign or unit a quote changed (SnippetAbsent.changed), when set. */
const changedFields = (e: { readonly changed?: { readonly quote: string; readonly capture: string } | undefined }) =>
  e.changed === undefined
    ? []
    : [["quote writes", e.changed.quote === "" ? "(nothing)" : e.changed.quote] as const, ["capture has", e.changed.capture === "" ? "(nothing)" : e.changed.capture] as const]

const changedFix =
  "The quote changes a number, sign or unit of the capture (see quote writes / capture has): quote the capture's own text exactly, or mark the fact unavailable."

/** What to do about a SnippetAbsent, given its diagnostic. */
const absentFix = (nearest: NearestPassage | undefined, otherwise: string): string =>
  nearest === undefined
    ? otherwise
    : nearest.method === "normalized/1"
    ? "The capture has this text with other typography, case or spacing: quote the nearest passage exactly as shown, or mark the fact unavailable."
    : "A similar passage exists but differs (see differences: a changed number or an added \"not\" changes the meaning): quote the capture exactly only if it supports the fact, or mark the fact unavailable."

/** Longest value a description shows; past it the head, an ellipsis and the total length (a hostile snippet can be megabytes). */
export const maxShownLength = 2_000

const shown = (description: Description): Description => ({
  ...description,
  fields: description.fields.map(([name, value]) => [name, cut(value, maxShownLength)] as const)
})

export const factError = (error: FactError): Description => shown(factErrorUnbounded(error))

const factErrorUnbounded = (error: FactError): Description =>
  Match.valueTags(error, {
    NotApproved: (e): Description => ({
      title: "Source not approved",
      fields: [["source", e.source], ["reason", e.detail]],
      fix: "Cite one of the approved sources, spelled exactly as approved."
    }),
    UnknownLabel: (e): Description => ({
      title: "Unknown label",
      fields: [["label", e.label]],
      fix: "Use one of the approved labels."
    }),
    DuplicateLabel: (e): Description => ({
      title: "Duplicate label",
      // Renderings number facts from 1.
      fields: [["label", e.label], ["first used by fact", String(e.firstIndex + 1)]],
      fix: "Report each label once."
    }),
    MissingCapture: (e): Description => ({
      title: "No capture of this source in this run",
      fields: [["source", e.source]],
      fix: "Capture the source in this run, or mark the fact unavailable. No other capture is consulted."
    }),
    CorruptCapture: (e): Description => ({
      title: "Capture is corrupt",
      fields: [["source", e.source], ["reason", e.reason], ["detail", e.detail]],
      fix: "Do not trust this run's capture of the source; capture it again into a new run."
    }),
    LegacyCapture: (e): Description => ({
      title: "Capture is in a legacy format",
      fields: [["source", e.source], ["detail", e.detail]],
      fix: "Migrate it explicitly with `run-pipeline migrate` into a new run directory."
    }),
    DigestMismatch: (e): Description =>
      e.kind === "report"
        ? {
          title: "Report names a different capture",
          // In full: the drafter copies this digest into the report.
          fields: [["source", e.source], ["report names", prefix(e.reported)], ["this run has", e.stored]],
          fix: "Cite the digest of this run's capture, and quote from that capture."
        }
        : {
          title: "Capture was altered after capture",
          fields: [["source", e.source], ["recorded digest", prefix(e.stored)], ["text now hashes to", prefix(e.computed)]],
          fix: "Treat the run as tampered with; capture the source again into a new run."
        },
    SnippetAbsent: (e): Description => ({
      title: "Snippet not found verbatim",
      fields: [["source", e.source], ["capture", prefix(e.captureSha256)], ["snippet", e.snippet], ...nearestFields(e.nearest), ...changedFields(e)],
      fix: e.changed !== undefined ? changedFix : absentFix(e.nearest, "Quote the capture exactly (no paraphrase, case, spacing or punctuation changes), or mark the fact unavailable.")
    }),
    AnchorMismatch: (e): Description => ({
      title: e.reason === "outside" ? "Snippet not inside the named page or section" : "No such page or section",
      fields: [
        ["source", e.source],
        ["capture", prefix(e.captureSha256)],
        ["anchor", e.anchor],
        ["snippet", e.snippet],
        ...anchorHintFields(e)
      ],
      fix: e.foundLastPage !== undefined && e.foundPage !== undefined && e.foundLastPage !== e.foundPage
        ? `The excerpt runs across a page break: name the page range it spans (pages ${e.foundPage}–${e.foundLastPage}; ` +
          `in an answer \`"page": {"start": ${e.foundPage}, "end": ${e.foundLastPage + 1}}\`, end exclusive), or leave the anchor out.`
        : "Name the page or heading the excerpt is on (as the capture's anchors give it), or leave the anchor out."
    }),
    AmbiguousSnippet: (e): Description => ({
      title: e.prefix === undefined && e.suffix === undefined
        ? "Snippet occurs more than once"
        : "Snippet occurs more than once with the given prefix/suffix",
      fields: [
        ["source", e.source],
        ["capture", prefix(e.captureSha256)],
        ["occurrences", String(e.occurrences)],
        ...(e.prefix === undefined ? [] : [["prefix", e.prefix] as const]),
        ...(e.suffix === undefined ? [] : [["suffix", e.suffix] as const]),
        ["snippet", e.snippet]
      ],
      fix: "Add a prefix and/or suffix (the capture's text right before or after the excerpt) that only one occurrence has, or quote a longer, unique excerpt."
    })
  })

export const captureError = (error: CaptureError): Description => shown(captureErrorUnbounded(error))

const captureErrorUnbounded = (error: CaptureError): Description =>
  Match.valueTags(error, {
    NotApproved: (e): Description => ({
      title: "Source not approved",
      fields: [["source", e.source], ["reason", e.detail]],
      fix: "List the exact canonical URL in the configuration's sources."
    }),
    AddressRejected: (e): Description => ({
      title: "Address refused",
      fields: [["host", e.host], ["address", e.address], ["reason", e.reason]],
      fix: "Only public unicast addresses are fetched; sources on private networks cannot be captured."
    }),
    RedirectRejected: (e): Description => ({
      title: "Redirect not followed",
      fields: [["status", String(e.status)], ["location", e.location ?? "(none)"]],
      fix: "Approve and capture the redirect target URL itself."
    }),
    UnexpectedStatus: (e): Description => ({
      title: "Unexpected HTTP status",
      fields: [["status", String(e.status)]],
      fix: "Only 200 responses are captured."
    }),
    UnsupportedContentType: (e): Description => ({
      title: "Unsupported content type",
      fields: [["content type", e.contentType ?? "(none)"]],
      fix: "Only the content types listed in capture.contentTypes are captured (default: text/plain)."
    }),
    UnsupportedContentEncoding: (e): Description => ({
      title: "Encoded body refused",
      fields: [["content encoding", e.contentEncoding]],
      fix: "The server must send an identity (uncompressed) body."
    }),
    AmbiguousHeader: (e): Description => ({
      title: "Ambiguous header",
      fields: [["header", e.header], ["value", e.value]],
      fix: "The server must send this header once."
    }),
    TooLarge: (e): Description => ({
      title: "Body over the size budget",
      fields: [
        ["max bytes", String(e.maxBytes)],
        ["announced", e.declaredBytes === null ? "(not announced)" : String(e.declaredBytes)],
        ["received", String(e.receivedBytes)]
      ],
      fix: "Raise capture.maxBytes if the source is legitimately this large."
    }),
    TruncatedBody: (e): Description => ({
      title: "Body shorter than announced",
      fields: [["announced", String(e.expectedBytes)], ["received", e.receivedBytes === null ? "fewer" : String(e.receivedBytes)]],
      fix: "Retry the capture in a new run."
    }),
    InvalidEncoding: (e): Description => ({
      title: "Body is not valid UTF-8",
      fields: [["bytes", String(e.byteLength)]],
      fix: "Only UTF-8 text is captured."
    }),
    Timeout: (e): Description => ({
      title: "Timed out",
      fields: [["budget ms", String(e.timeoutMs)]],
      fix: "Raise capture.timeoutMs, or retry in a new run."
    }),
    ConnectionFailed: (e): Description => ({
      title: "Connection failed",
      fields: [["detail", e.detail]],
      fix: "Check that the source is reachable; retry in a new run."
    }),
    CaptureExists: (): Description => ({
      title: "Already captured in this run",
      fields: [],
      fix: "Each source is captured once per run; the first capture was kept."
    }),
    CaptureWriteFailed: (e): Description => ({
      title: "Could not write the capture",
      fields: [["detail", e.detail]],
      fix: "Check the run directory's disk; nothing was written under the final name."
    }),
    UnsupportedTransferEncoding: (e): Description => ({
      title: "Transfer coding refused",
      fields: [["transfer encoding", e.transferEncoding]],
      fix: "The server must send the body plainly or chunked, with no other transfer coding."
    }),
    CertificateRejected: (e): Description => ({
      title: "TLS certificate rejected",
      fields: [["host", e.host], ["code", e.code], ["detail", e.detail]],
      fix: "The server needs a valid certificate for this host; for a private CA, set capture.caFile to its PEM file."
    }),
    ExtractionFailed: (e): Description => ({
      title: "Text extraction failed",
      fields: [["format", e.format], ["reason", e.reason], ["detail", e.detail]],
      fix: "The body cannot be read as its content type says (malformed, truncated or encrypted); capture a readable copy."
    }),
    UnsupportedEncoding: (e): Description => ({
      title: "Charset not UTF-8",
      fields: [["charset", e.charset], ["declared in", e.declaredIn]],
      fix: "Only UTF-8 bodies are captured; the server must send the document in UTF-8."
    }),
    ExtractionTooLarge: (e): Description => ({
      title: "Extraction cap passed",
      fields: [["format", e.format], ["cap", e.cap], ["limit", String(e.limit)]],
      fix: e.cap === "memory" || e.cap === "decodedBytes"
        ? "This limit grows with capture.maxBytes (see docs/threat-model.md); a legitimate body this costly needs a larger maxBytes."
        : `Raise capture.${e.cap} (within its documented range) if the source is legitimately this large.`
    })
  })

export const configError = (
  error: InvalidConfig | InvalidMigrationMap | InvalidRunDirectory | StoreUnavailable | RunExists | StorePackageMissing
): Description =>
  Match.valueTags(error, {
    InvalidMigrationMap: (e): Description => ({
      title: "Invalid migration map",
      fields: [
        ...e.issues.map((issue) => [formatPath(issue.path), issue.message] as const),
        ...omittedIssues(e.omitted).map((line) => ["…", line] as const)
      ],
      fix: "Correct the migration map at the paths shown: { \"entries\": [{ \"file\": …, \"source\": … }] }."
    }),
    InvalidConfig: (e): Description => ({
      title: "Invalid configuration",
      fields: [
        ...e.issues.map((issue) => [formatPath(issue.path), issue.message] as const),
        ...omittedIssues(e.omitted).map((line) => ["…", line] as const)
      ],
      fix: "Correct the configuration at the paths shown."
    }),
    InvalidRunDirectory: (e): Description => ({
      title: "Unusable run directory",
      fields: [["path", e.path], ["detail", e.detail]],
      fix: "Point --run-dir at the run directory written by `run-pipeline capture`."
    }),
    StoreUnavailable: (e): Description => ({
      title: "Capture store unavailable",
      fields: [["run", e.run], ["detail", e.detail]],
      fix: "Check the database URL and credentials, run the store's migration, and name with --run-dir a run written by `run-pipeline capture --store …`."
    }),
    RunExists: (e): Description => ({
      title: "Run already exists",
      fields: [["run", e.run]],
      fix: "Captures go into a new run: name one that does not exist yet with --run-dir. The existing run was left untouched."
    }),
    StorePackageMissing: (e): Description => ({
      title: "PostgreSQL store packages not installed",
      fields: [["missing", e.missing], ["install", e.install.join(" ")]],
      fix: `Install the store's optional peer dependencies: npm install ${e.install.join(" ")}`
    })
  })



/** A whole-report failure that is neither a schema issue nor a fact failure. */
export const verifyError = (error: VerificationTimeout): Description =>
  Match.valueTags(error, {
    VerificationTimeout: (e): Description => ({
      title: "Verification timed out",
      fields: [["deadline ms", String(e.timeoutMs)]],
      fix: "Nothing in this report is accepted. Cite fewer or smaller excerpts, or raise verify.timeoutMs if the captures are legitimately this large."
    })
  })

/** Why one citation of an answer failed. The capture and search failures read as for report facts. */
export const citationError = (error: CitationError): Description => shown(citationErrorUnbounded(error))

// The shared tags read as for report facts; cut once, by `citationError` (cutting twice would report the length of the cut value).
const citationErrorUnbounded = (error: CitationError): Description =>
  Match.valueTags(error, {
    NotApproved: (e) => factErrorUnbounded(e),
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
    AmbiguousSnippet: (e) => factErrorUnbounded(e)
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

/** Why a streamed answer ended early (the `error` event before its `done`). */
export const streamError = (error: StreamError): Description => shown(streamErrorUnbounded(error))

const streamErrorUnbounded = (error: StreamError): Description =>
  Match.valueTags(error, {
    StreamLineInvalid: (e): Description => ({
      title: "Malformed stream line",
      fields: [["line", String(e.line)], ["detail", e.detail]],
      fix: 'Send one JSON object per line: {"type":"delta","text":"…"}.'
    }),
    StreamLimitExceeded: (e): Description => ({
      title: "Stream limit exceeded",
      fields: [["limit", e.limit], ["max", String(e.max)], ["received", String(e.received)]],
      fix: "Streamed answers are bounded; shorten the answer (or its lines), or cite fewer claims."
    }),
    StreamDeadline: (e): Description => ({
      title: "Stream deadline passed",
      fields: [["deadline ms", String(e.timeoutMs)]],
      fix: "Nothing of this answer is accepted; send the answer faster or in a shorter stream."
    }),
    StreamGone: (e): Description => ({
      title: e.reason === "unknown-stream" ? "Unknown stream" : "Events no longer retained",
      fields: [["stream", e.streamId], ["oldest retained id", e.oldestRetained === null ? "(none)" : String(e.oldestRetained)]],
      fix: "Resume promptly, or send the answer again."
    }),
    StreamRequestInvalid: (e): Description => ({
      title: "Invalid streaming request",
      fields: [["parameter", e.parameter], ["detail", e.detail]],
      fix: "Name one run (`run`), at most one manifest digest and mode, and a numeric Last-Event-ID."
    }),
    StreamRetentionFull: (e): Description => ({
      title: "Stream retention full",
      fields: [["retained bytes", String(e.retainedBytes)], ["max bytes", String(e.maxBytes)]],
      fix: "Retry after a short wait; an operator may raise server.streamRetainedBytes or lower server.streamRetainMs."
    })
  })

/** The service's refusals (`run-pipeline serve`): authentication, limits, unknown runs, undecodable requests. */
export const serviceError = (error: ServiceError): Description => shown(serviceErrorUnbounded(error))

const serviceErrorUnbounded = (error: ServiceError): Description =>
  Match.valueTags(error, {
    Unauthorized: (e): Description => ({
      title: "Unauthorized",
      fields: [["reason", e.reason]],
      fix: "Send `Authorization: Bearer <token>` with a token whose SHA-256 digest is listed in server.tokens."
    }),
    Forbidden: (e): Description => ({
      title: "Forbidden",
      fields: [["action", e.action], ["run", e.runId ?? "(none)"]],
      fix: e.action === "capture"
        ? "Use a token with `capture: true` to start runs."
        : "Use a token whose `runs` lists this run (or \"*\"), or the token that started it."
    }),
    PayloadTooLarge: (e): Description => ({
      title: "Request body too large",
      fields: [["max bytes", String(e.maxBytes)], ["announced", e.declaredBytes === null ? "(chunked)" : String(e.declaredBytes)]],
      fix: "Send a smaller body, or raise server.maxBodyBytes."
    }),
    LengthRequired: (e): Description => ({
      title: "Content-Length required",
      fields: [["max bytes", String(e.maxBytes)]],
      fix: "Send the body with a Content-Length header (curl --data-binary @file does)."
    }),
    RequestTimeout: (e): Description => ({
      title: "Request timed out",
      fields: [["deadline ms", String(e.timeoutMs)]],
      fix: "Nothing of this request is accepted. Send less, or raise server.requestTimeoutMs."
    }),
    RunNotFound: (e): Description => ({
      title: "Run not found",
      fields: [["run", e.runId]],
      fix: "Use a run id returned by POST /v1/runs (or a run directory's name under the run root)."
    }),
    NotReady: (e): Description => ({
      title: "Not ready",
      fields: [["reason", e.reason]],
      fix: e.reason === "draining" ? "The server is shutting down; retry against another instance." : "Check that the run root exists and is writable."
    })
  })

/** Why a drift audit produced no result (src/audit/). */
export const auditError = (error: AuditError): Description => shown(auditErrorUnbounded(error))

const auditErrorUnbounded = (error: AuditError): Description =>
  Match.valueTags(error, {
    AuditBaselineRejected: (e): Description => ({
      title: "Audit baseline does not verify",
      fields: [
        ...e.failures.slice(0, 20).map((f) => [f.citation, `${f.error._tag}: ${citationError(f.error).title}`] as const),
        ...(e.failures.length > 20 ? [["…", `and ${e.failures.length - 20} more`] as const] : [])
      ],
      fix: "Audit against the old run the report or answer was verified in, with its captures intact; re-verify it there first."
    }),
    VerificationTimeout: (e): Description => ({
      title: "Verification timed out",
      fields: [["deadline ms", String(e.timeoutMs)]],
      fix: "The old citations could not be re-verified in time. Audit fewer citations, or raise verify.timeoutMs if the captures are legitimately this large."
    }),
    AuditTimeout: (e): Description => ({
      title: "Audit timed out",
      fields: [["deadline ms", String(e.timeoutMs)]],
      fix: "Nothing was audited. Audit fewer citations, or raise audit.timeoutMs if the captures are legitimately this large."
    })
  })
