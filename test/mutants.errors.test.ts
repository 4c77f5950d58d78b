/**
 * Every error of src/Errors.ts, pinned exactly: its `_tag`, its `message` for hand-chosen field
 * values (every branch of each getter: singular and plural, optional fields present and absent,
 * omitted counts, paths), its fields after a JSON round trip, and each family Schema decoding a
 * JSON-encoded instance of every member (and refusing what is not a member). The expected
 * messages and JSON are written out by hand, never computed by the code under test. Pure: no I/O.
 */
import { assert, describe, it } from "@effect/vitest"
import { Either, Schema } from "effect"
import * as E from "../src/Errors.js"

// Digests whose first 12 characters differ from the rest, so a message that forgets to cut them shows.
const D1 = "0123456789abcdef".repeat(4)
const D2 = "fedcba9876543210".repeat(4)
const D3 = "00112233445566778899aabbccddeeff".repeat(2)
const P1 = "0123456789ab…"
const P2 = "fedcba987654…"
const P3 = "001122334455…"

const S = "https://s.test/a"

type Json = { readonly _tag: string } & Record<string, unknown>
// A schema of one error class or one family: decodes JSON into error instances.
type AnySchema = Schema.Schema<any, any, never>

/** Decode hand-written JSON, check that encoding it gives the same JSON back (every field kept). */
const roundTrip = (schema: AnySchema, json: unknown): any => {
  const decoded = Schema.decodeUnknownSync(schema)(json)
  assert.deepStrictEqual(JSON.parse(JSON.stringify(Schema.encodeSync(schema)(decoded))), json)
  return decoded
}

const refusal = (schema: AnySchema, json: unknown): string => {
  const result = Schema.decodeUnknownEither(schema)(json)
  if (Either.isRight(result)) return assert.fail(`decoded: ${JSON.stringify(json)}`)
  return result.left.message
}

// --- hand-written JSON of one instance of every class, with its exact message ---------------------

const fuzzy = { method: "fuzzy", score: 0.75, span: { start: 3, end: 9 }, text: "near text", differences: "[-a-] {+b+}" }
const normalized = { method: "normalized/1", score: 1, span: { start: 4, end: 8 }, text: "norm", differences: "{+N+}" }

const missing = { _tag: "MissingCapture", source: S }
const unknownLabel = { _tag: "UnknownLabel", label: "rev" }
const notApproved = { _tag: "NotApproved", source: S, reason: "not-canonical", detail: "trailing dot" }
const spanMismatch = {
  _tag: "SpanMismatch",
  source: S,
  captureSha256: D1,
  quote: "q",
  claimedStart: 5,
  claimedEnd: 9,
  foundStart: 12,
  occurrences: 1
}
const anchorUnsupported = { _tag: "AnchorUnsupported", source: S, anchor: "page", value: "3" }
const uncited = (line: number | null) => ({ _tag: "UncitedSentence", sentence: "Revenue grew by 12 percent in the third quarter.", line })
const failure = (index: number, label: string, error: Json) => ({ index, label, error })
const baseline = (citation: string) => ({ citation, error: missing })
const evi1Issues: ReadonlyArray<Json> = [
  { _tag: "Evi1MalformedLine", line: 1, detail: "no bar" },
  { _tag: "Evi1DuplicateClaimId", line: 2, claimId: "c1", firstLine: 1 },
  { _tag: "Evi1DuplicateEvidence", line: 3, claimId: "c1", source: 2, firstLine: 2 },
  { _tag: "Evi1MissingEvidence", line: 4, claimId: "c2", source: 1 },
  { _tag: "Evi1UnusedEvidence", line: 5, claimId: "c3", source: 3 },
  { _tag: "Evi1SourceOutOfRange", line: 6, claimId: "c4", source: 9, sources: 3 },
  { _tag: "Evi1SourceUnavailable", line: 7, claimId: "c5", source: 2, url: "https://u.test/" },
  { _tag: "Evi1OrphanMarker", line: 8, claimId: "c6" }
]

const longId = "x".repeat(80) + "TAIL-NOT-SHOWN"
const longSentence = "A".repeat(80) + "never shown"

/** [class, JSON, message]: at least one per class, one per branch of its message. */
const cases: ReadonlyArray<readonly [AnySchema & (new(...args: any) => any), Json, string]> = [
  [E.MissingCapture, missing, `No capture of ${S} exists in this run`],
  [E.CorruptCapture, { _tag: "CorruptCapture", source: S, reason: "invalid-json", detail: "line 3" }, `The capture of ${S} is corrupt (invalid-json): line 3`],
  [E.LegacyCapture, { _tag: "LegacyCapture", source: S, detail: "no format" }, `The capture of ${S} is a legacy record (no format); migrate it explicitly with run-pipeline migrate`],
  [E.CaptureExists, { _tag: "CaptureExists", source: S }, `A capture of ${S} already exists in this run; the existing record was left untouched`],
  [E.CaptureWriteFailed, { _tag: "CaptureWriteFailed", source: S, detail: "disk full" }, `Writing the capture of ${S} failed: disk full`],
  [E.InvalidRunDirectory, { _tag: "InvalidRunDirectory", path: "runs/x", detail: "not a directory" }, "Run directory runs/x cannot be used: not a directory"],
  [E.StoreUnavailable, { _tag: "StoreUnavailable", run: "r1", detail: "db down" }, "The capture store cannot be used for run \"r1\": db down"],
  [E.StoreUnavailable, { _tag: "StoreUnavailable", run: "", detail: "db down" }, "The capture store cannot be used: db down"],
  [E.NotApproved, notApproved, `Source "${S}" is not approved: trailing dot`],
  [E.UnknownLabel, unknownLabel, "Label \"rev\" is not an approved label"],
  [E.DuplicateLabel, { _tag: "DuplicateLabel", label: "rev", firstIndex: 2 }, "Label \"rev\" is already used by fact 3"],
  [
    E.DigestMismatch,
    { _tag: "DigestMismatch", source: S, kind: "report", reported: D1, stored: D2, computed: D3 },
    `The report names capture ${P1} of ${S}, but this run's capture is ${P2}`
  ],
  [
    E.DigestMismatch,
    { _tag: "DigestMismatch", source: S, kind: "stored", reported: D1, stored: D2, computed: D3 },
    `The capture of ${S} was altered: its text hashes to ${P3}, not its recorded ${P2}`
  ],
  [E.SnippetAbsent, { _tag: "SnippetAbsent", source: S, captureSha256: D1, snippet: "snip" }, `The snippet does not occur verbatim in capture ${P1} of ${S}`],
  [
    E.SnippetAbsent,
    { _tag: "SnippetAbsent", source: S, captureSha256: D2, snippet: "snip", nearest: fuzzy },
    `The snippet does not occur verbatim in capture ${P2} of ${S} (nearest passage: fuzzy, score 0.75)`
  ],
  [
    E.SnippetAbsent,
    { _tag: "SnippetAbsent", source: S, captureSha256: D3, snippet: "snip", nearest: normalized },
    `The snippet does not occur verbatim in capture ${P3} of ${S} (nearest passage: normalized/1, score 1)`
  ],
  [
    E.AnchorMismatch,
    { _tag: "AnchorMismatch", source: S, captureSha256: D1, snippet: "snip", anchor: "page 3", reason: "outside" },
    `The snippet occurs in capture ${P1} of ${S}, but not inside page 3`
  ],
  [
    E.AnchorMismatch,
    { _tag: "AnchorMismatch", source: S, captureSha256: D2, snippet: "snip", anchor: "heading X", reason: "no-such-anchor" },
    `Capture ${P2} of ${S} has no heading X`
  ],
  [
    E.AmbiguousSnippet,
    { _tag: "AmbiguousSnippet", source: S, captureSha256: D1, snippet: "twice", occurrences: 2 },
    `The snippet occurs more than once in capture ${P1} of ${S}; exactly one occurrence must be named`
  ],
  [
    E.AmbiguousSnippet,
    { _tag: "AmbiguousSnippet", source: S, captureSha256: D1, snippet: "thrice", occurrences: 3, prefix: "pre" },
    `The snippet occurs more than once with the given prefix/suffix in capture ${P1} of ${S}; exactly one occurrence must be named`
  ],
  [
    E.AmbiguousSnippet,
    { _tag: "AmbiguousSnippet", source: S, captureSha256: D2, snippet: "four", occurrences: 4, suffix: "suf" },
    `The snippet occurs more than once with the given prefix/suffix in capture ${P2} of ${S}; exactly one occurrence must be named`
  ],
  [
    E.AmbiguousSnippet,
    { _tag: "AmbiguousSnippet", source: S, captureSha256: D3, snippet: "five", occurrences: 5, prefix: "p", suffix: "s" },
    `The snippet occurs more than once with the given prefix/suffix in capture ${P3} of ${S}; exactly one occurrence must be named`
  ],
  [
    E.HiddenEvidence,
    { _tag: "HiddenEvidence", source: S, captureSha256: D1, snippet: "white", span: { start: 3, end: 8 }, page: 2, hiddenBy: ["background", "tiny"] },
    `The snippet occurs in capture ${P1} of ${S} on page 2 (characters 3–8), but as text no reader sees ` +
    `(text in the colour of what lies beneath it; text smaller than 1 pt); the policy is verify.hidden: "reject": quote the text the page shows`
  ],
  [
    E.SnippetCutsToken,
    { _tag: "SnippetCutsToken", source: S, captureSha256: D1, snippet: "4,210", span: { start: 3, end: 8 }, token: "4,210,000" },
    `The snippet occurs in capture ${P1} of ${S} only as part of a longer number or word (characters 3–8, within "4,210,000"); ` +
    `the policy is verify.boundaries: "tokens": quote whole numbers and words`
  ],
  [
    E.SemanticMismatch,
    {
      _tag: "SemanticMismatch",
      source: S,
      captureSha256: D1,
      mismatches: [{ aspect: "period", expected: ["Q2 2026"], found: ["Q3 2026"] }]
    },
    `The excerpt (verified in ${P1} of ${S}) states another period than the label: expected Q2 2026, found "Q3 2026"`
  ],
  [
    E.SemanticMismatch,
    {
      _tag: "SemanticMismatch",
      source: S,
      captureSha256: D1,
      mismatches: [
        { aspect: "value-kind", expected: ["currency-amount"], found: ["n/a"], missing: true },
        { aspect: "unit", expected: ["USD", "CAD"], found: [] }
      ]
    },
    `The excerpt (verified in ${P1} of ${S}) states another value-kind than the label: expected currency-amount, found "n/a" (and unit)`
  ],
  [
    E.InvalidReport,
    { _tag: "InvalidReport", issues: [{ path: ["facts", 2, "source"], message: "is missing" }] },
    "The report is invalid: facts[2].source: is missing"
  ],
  [
    E.InvalidReport,
    { _tag: "InvalidReport", issues: [{ path: [], message: "not an object" }, { path: [0, "a", "b"], message: "m" }], omitted: 1 },
    "The report is invalid: (root): not an object; [0].a.b: m; and 1 more issue not listed"
  ],
  [
    E.InvalidReport,
    { _tag: "InvalidReport", issues: [{ path: ["facts"], message: "m" }], omitted: 0 },
    "The report is invalid: facts: m"
  ],
  [
    E.InvalidReport,
    { _tag: "InvalidReport", issues: [{ path: ["facts", 0], message: "m" }], omitted: 7 },
    "The report is invalid: facts[0]: m; and 7 more issues not listed"
  ],
  [
    E.ReportRejected,
    { _tag: "ReportRejected", failures: [failure(0, "a", unknownLabel)] },
    "The report was rejected: 1 fact failure: fact 1 (\"a\"): UnknownLabel"
  ],
  [
    E.ReportRejected,
    { _tag: "ReportRejected", failures: [failure(0, "a", unknownLabel), failure(3, "b", missing)] },
    "The report was rejected: 2 fact failures: fact 1 (\"a\"): UnknownLabel, fact 4 (\"b\"): MissingCapture"
  ],
  [E.VerificationTimeout, { _tag: "VerificationTimeout", timeoutMs: 500 }, "Verification did not finish within 500 ms; nothing in the report is accepted"],
  [
    E.InvalidConfig,
    { _tag: "InvalidConfig", issues: [{ path: ["capture", "maxBytes"], message: "too big" }], omitted: 2 },
    "The configuration is invalid: capture.maxBytes: too big; and 2 more issues not listed"
  ],
  [
    E.InvalidMigrationMap,
    { _tag: "InvalidMigrationMap", issues: [{ path: ["entries", 1, "file"], message: "bad" }] },
    "The migration map is invalid: entries[1].file: bad"
  ],
  [
    E.AddressRejected,
    { _tag: "AddressRejected", source: S, host: "h.test", address: "10.0.0.1", reason: "private" },
    `Refused to connect to h.test at 10.0.0.1 for ${S}: private`
  ],
  [
    E.RedirectRejected,
    { _tag: "RedirectRejected", source: S, status: 302, location: "https://t.test/" },
    `${S} answered 302 redirecting to https://t.test/; redirects are not followed: approve the exact target URL instead`
  ],
  [
    E.RedirectRejected,
    { _tag: "RedirectRejected", source: S, status: 301, location: null },
    `${S} answered 301 redirecting to (no location); redirects are not followed: approve the exact target URL instead`
  ],
  [E.UnexpectedStatus, { _tag: "UnexpectedStatus", source: S, status: 404 }, `${S} answered with status 404; only 200 is captured`],
  [
    E.UnsupportedContentType,
    { _tag: "UnsupportedContentType", source: S, contentType: "text/html" },
    `${S} sent content type "text/html"; only text/plain in UTF-8 is captured`
  ],
  [
    E.UnsupportedContentType,
    { _tag: "UnsupportedContentType", source: S, contentType: null },
    `${S} sent content type (none); only text/plain in UTF-8 is captured`
  ],
  [
    E.UnsupportedContentEncoding,
    { _tag: "UnsupportedContentEncoding", source: S, contentEncoding: "gzip" },
    `${S} sent Content-Encoding "gzip"; only identity bodies are captured`
  ],
  [
    E.AmbiguousHeader,
    { _tag: "AmbiguousHeader", source: S, header: "content-length", value: "1, 2" },
    `${S} sent an ambiguous content-length header ("1, 2")`
  ],
  [
    E.TooLarge,
    { _tag: "TooLarge", source: S, maxBytes: 100, declaredBytes: 5000, receivedBytes: 0 },
    `${S} announced 5000 bytes, over the 100 byte budget; the body was not read`
  ],
  [
    E.TooLarge,
    { _tag: "TooLarge", source: S, maxBytes: 100, declaredBytes: null, receivedBytes: 101 },
    `${S} sent more than the 100 byte budget; the transfer was aborted`
  ],
  [E.TruncatedBody, { _tag: "TruncatedBody", source: S, expectedBytes: 20, receivedBytes: 10 }, `${S} sent 10 of the 20 bytes it announced`],
  [E.TruncatedBody, { _tag: "TruncatedBody", source: S, expectedBytes: 20, receivedBytes: 0 }, `${S} sent 0 of the 20 bytes it announced`],
  // The count is unknown when the connection broke before it was reported.
  [E.TruncatedBody, { _tag: "TruncatedBody", source: S, expectedBytes: 20, receivedBytes: null }, `${S} sent fewer than the 20 bytes it announced`],
  [E.InvalidEncoding, { _tag: "InvalidEncoding", source: S, byteLength: 7 }, `${S} sent a body that is not valid UTF-8`],
  [E.Timeout, { _tag: "Timeout", source: S, timeoutMs: 1000 }, `Capturing ${S} did not finish within 1000 ms`],
  [E.ConnectionFailed, { _tag: "ConnectionFailed", source: S, detail: "ECONNREFUSED" }, `Could not fetch ${S}: ECONNREFUSED`],
  [
    E.InvalidBudget,
    { _tag: "InvalidBudget", budget: "maxBytes", value: 0, detail: "must be positive" },
    "Capture budget maxBytes = 0 is invalid: must be positive"
  ],
  [
    E.UnsupportedTransferEncoding,
    { _tag: "UnsupportedTransferEncoding", source: S, transferEncoding: "gzip, chunked" },
    `${S} sent Transfer-Encoding "gzip, chunked"; only chunked (or no transfer coding) is captured`
  ],
  [
    E.CertificateRejected,
    { _tag: "CertificateRejected", source: S, host: "h.test", code: "DEPTH_ZERO_SELF_SIGNED_CERT", detail: "self-signed" },
    `The TLS certificate of h.test for ${S} was rejected (DEPTH_ZERO_SELF_SIGNED_CERT): self-signed`
  ],
  [E.InvalidCaFile, { _tag: "InvalidCaFile", path: "ca.pem", detail: "no certificate" }, "The CA file ca.pem cannot be used: no certificate"],
  [E.InvalidCaFile, { _tag: "InvalidCaFile", path: null, detail: "no certificate" }, "The ca option cannot be used: no certificate"],
  [
    E.ExtractionFailed,
    { _tag: "ExtractionFailed", source: S, format: "pdf", reason: "encrypted", detail: "password" },
    `Extracting text from the pdf body of ${S} failed (encrypted): password`
  ],
  [
    E.UnsupportedEncoding,
    { _tag: "UnsupportedEncoding", source: S, charset: "latin1", declaredIn: "meta" },
    `${S} declares the charset "latin1" (in its meta); only UTF-8 is captured`
  ],
  [
    E.ExtractionTooLarge,
    { _tag: "ExtractionTooLarge", source: S, format: "html", cap: "maxDepth", limit: 64 },
    `The html body of ${S} passes the maxDepth cap of 64; nothing was written`
  ],
  [
    E.MigrationRejected,
    { _tag: "MigrationRejected", file: "a.json", source: S, reason: "digest-mismatch", detail: "d" },
    "Legacy record a.json was not migrated (digest-mismatch): d"
  ],
  [E.SpanMismatch, spanMismatch, `The quote occurs in capture ${P1} of ${S} at code point 12 (1 occurrence), not at the claimed 5–9`],
  [
    E.SpanMismatch,
    { ...spanMismatch, captureSha256: D2, occurrences: 2 },
    `The quote occurs in capture ${P2} of ${S} at code point 12 (more than one occurrence), not at the claimed 5–9`
  ],
  [E.AnchorUnsupported, anchorUnsupported, `The citation of ${S} names a page (3), but no capture has that kind of anchor (captures carry PDF pages and heading paths, never content blocks): cite the quote with its page or heading, or without an anchor`],
  [E.UncitedSentence, uncited(4), "An uncited sentence on line 4 looks factual: \"Revenue grew by 12 percent in the third quarter.\""],
  [E.UncitedSentence, uncited(null), "An uncited sentence looks factual: \"Revenue grew by 12 percent in the third quarter.\""],
  [E.UncitedSentence, { _tag: "UncitedSentence", sentence: longSentence, line: 1 }, `An uncited sentence on line 1 looks factual: "${"A".repeat(80)}"`],
  [E.InvalidAnswer, { _tag: "InvalidAnswer", issues: [{ path: ["claims", 0, "text"], message: "empty" }] }, "The answer is invalid: claims[0].text: empty"],
  [
    E.StaleManifest,
    { _tag: "StaleManifest", named: null, current: D1 },
    // The current digest in full: the drafter copies it into the MANIFEST line.
    `The answer names no manifest; this run's manifest is ${D1} (name it to cite by number)`
  ],
  [
    E.StaleManifest,
    { _tag: "StaleManifest", named: D2, current: D1 },
    `The answer was drafted against manifest ${P2}, not this run's ${D1}`
  ],
  [E.Evi1Invalid, { _tag: "Evi1Invalid", issues: [evi1Issues[0]!] }, "The EVI1 answer is invalid: line 1: Evi1MalformedLine"],
  [
    E.Evi1Invalid,
    { _tag: "Evi1Invalid", issues: evi1Issues, omitted: 1 },
    "The EVI1 answer is invalid: line 1: Evi1MalformedLine, line 2: Evi1DuplicateClaimId, line 3: Evi1DuplicateEvidence, " +
    "line 4: Evi1MissingEvidence, line 5: Evi1UnusedEvidence, line 6: Evi1SourceOutOfRange, line 7: Evi1SourceUnavailable, " +
    "line 8: Evi1OrphanMarker; and 1 more issue not listed"
  ],
  [
    E.Evi1Invalid,
    { _tag: "Evi1Invalid", issues: [evi1Issues[7]!], omitted: 250 },
    "The EVI1 answer is invalid: line 8: Evi1OrphanMarker; and 250 more issues not listed"
  ],
  // No issue left out: nothing more to say, as for the other issue lists.
  [E.Evi1Invalid, { _tag: "Evi1Invalid", issues: [evi1Issues[3]!], omitted: 0 }, "The EVI1 answer is invalid: line 4: Evi1MissingEvidence"],
  [E.AnswerTooLarge, { _tag: "AnswerTooLarge", maxChars: 100, receivedChars: 101 }, "The answer has more than 100 characters (received at least 101)"],
  [
    E.AnswerRejected,
    {
      _tag: "AnswerRejected",
      citations: [{ claimIndex: 1, claimId: "c2", citationIndex: 0, error: anchorUnsupported }],
      uncited: [uncited(3), uncited(null)]
    },
    "The answer was rejected: 1 failed citation(s), 2 uncited sentence(s)"
  ],
  [E.AnswerRejected, { _tag: "AnswerRejected", citations: [], uncited: [] }, "The answer was rejected: 0 failed citation(s), 0 uncited sentence(s)"],
  [E.StreamLineInvalid, { _tag: "StreamLineInvalid", line: 2, detail: "bad json" }, "Input line 2 is not a delta: bad json"],
  [
    E.StreamLimitExceeded,
    { _tag: "StreamLimitExceeded", limit: "claims", max: 10, received: 11 },
    "The stream passed its claims limit of 10 (received at least 11)"
  ],
  [E.StreamDeadline, { _tag: "StreamDeadline", timeoutMs: 3000 }, "The stream did not finish within 3000 ms"],
  [
    E.StreamGone,
    { _tag: "StreamGone", streamId: "s1", reason: "unknown-stream", oldestRetained: null },
    "No stream \"s1\" is retained (unknown or expired)"
  ],
  [
    E.StreamGone,
    { _tag: "StreamGone", streamId: longId, reason: "unknown-stream", oldestRetained: null },
    `No stream "${"x".repeat(80)}" is retained (unknown or expired)`
  ],
  [
    E.StreamGone,
    { _tag: "StreamGone", streamId: "s1", reason: "not-retained", oldestRetained: 7 },
    "Stream \"s1\" retains events from id 7 only; resume from the start"
  ],
  [
    E.StreamGone,
    { _tag: "StreamGone", streamId: longId, reason: "not-retained", oldestRetained: 9 },
    `Stream "${"x".repeat(80)}" retains events from id 9 only; resume from the start`
  ],
  [E.StreamRequestInvalid, { _tag: "StreamRequestInvalid", parameter: "run", detail: "bad id" }, "The streaming request's run is invalid: bad id"],
  [
    E.StreamRetentionFull,
    { _tag: "StreamRetentionFull", retainedBytes: 70_000, maxBytes: 65_536 },
    "Streams being answered retain 70000 bytes of events, at the 65536 byte limit; try again shortly"
  ],
  [E.Unauthorized, { _tag: "Unauthorized", reason: "missing" }, "The request carries no bearer token"],
  [E.Unauthorized, { _tag: "Unauthorized", reason: "malformed" }, "The Authorization header is not a single `Bearer <token>`"],
  [E.Unauthorized, { _tag: "Unauthorized", reason: "unknown-token" }, "The bearer token is not one of the configured tokens"],
  [
    E.Unauthorized,
    { _tag: "Unauthorized", reason: "unknown-session" },
    "The session cookie names no live session (expired or signed out): sign in again with a token"
  ],
  [E.Forbidden, { _tag: "Forbidden", action: "capture", runId: null }, "This token may not start capture runs"],
  [E.Forbidden, { _tag: "Forbidden", action: "read-run", runId: "r1" }, "This token may not read run r1"],
  [E.Forbidden, { _tag: "Forbidden", action: "read-run", runId: null }, "This token may not read run (none)"],
  [E.PayloadTooLarge, { _tag: "PayloadTooLarge", maxBytes: 1024, declaredBytes: null }, "The request body passes the 1024 byte limit"],
  [
    E.PayloadTooLarge,
    { _tag: "PayloadTooLarge", maxBytes: 1024, declaredBytes: 2048 },
    "The request body announces 2048 bytes, over the 1024 byte limit; it was not read"
  ],
  [E.LengthRequired, { _tag: "LengthRequired", maxBytes: 1024 }, "The request body has no Content-Length; send one (at most 1024 bytes)"],
  [E.RequestTimeout, { _tag: "RequestTimeout", timeoutMs: 5000 }, "The request did not finish within 5000 ms; its work was stopped"],
  [E.RunNotFound, { _tag: "RunNotFound", runId: "r9" }, "No run \"r9\" exists"],
  [E.NotReady, { _tag: "NotReady", reason: "draining" }, "The server is shutting down"],
  [E.NotReady, { _tag: "NotReady", reason: "run-root-unusable" }, "The run root cannot be used"],
  [
    E.AuditBaselineRejected,
    { _tag: "AuditBaselineRejected", failures: [baseline("fact 0 \"a\"")] },
    "The audited citations do not verify against the old run: 1 failure: fact 0 \"a\": MissingCapture"
  ],
  [
    E.AuditBaselineRejected,
    { _tag: "AuditBaselineRejected", failures: [baseline("fact 0 \"a\""), { citation: "claim c1 citation 2", error: spanMismatch }] },
    "The audited citations do not verify against the old run: 2 failures: fact 0 \"a\": MissingCapture, claim c1 citation 2: SpanMismatch"
  ]
]

// The signature family (src/errors/Signature.ts): exports' envelopes and captures' attestations.
const signatureCases: typeof cases = [
  [E.UnsignedCapture, { _tag: "UnsignedCapture", source: S }, `The capture of ${S} carries no signed attestation`],
  [
    E.SignatureInvalid,
    { _tag: "SignatureInvalid", keyid: "k1", source: S },
    `The attestation of ${S}: The signature by key k1 does not verify: the signed statement or the signature was altered`
  ],
  [E.SignatureInvalid, { _tag: "SignatureInvalid", keyid: "k1" }, "The signature by key k1 does not verify: the signed statement or the signature was altered"],
  [
    E.SignatureInvalid,
    { _tag: "SignatureInvalid", keyid: "", source: S, detail: "the attestation is malformed: x" },
    `The attestation of ${S}: the attestation is malformed: x`
  ],
  [
    E.UnknownSigningKey,
    { _tag: "UnknownSigningKey", keyids: ["k1"], source: S },
    `The attestation of ${S}: No trusted key has the key id the envelope names: k1`
  ],
  [E.UnknownSigningKey, { _tag: "UnknownSigningKey", keyids: [] }, "The envelope names no key id and no trusted key verifies it"],
  [E.UnknownSigningKey, { _tag: "UnknownSigningKey", keyids: ["k1", "k2"] }, "No trusted key has the key ids the envelope names: k1, k2"],
  [E.SigningKeyInvalid, { _tag: "SigningKeyInvalid", path: "k.pem", detail: "not a PEM public key" }, "The key file k.pem cannot be used: not a PEM public key"],
  [E.EnvelopeMalformed, { _tag: "EnvelopeMalformed", detail: "not JSON" }, "The signature envelope is malformed: not JSON"],
  [
    E.SubjectMismatch,
    { _tag: "SubjectMismatch", path: "a.warc", signedSha256: "aa", fileSha256: "bb" },
    "a.warc is not the signed file: its SHA-256 is bb, the statement names aa"
  ]
]

// The signed-result family (src/errors/ResultAttestation.ts).
const resultAttestationCases: typeof cases = [
  [
    E.AttestationSubjectMismatch,
    { _tag: "AttestationSubjectMismatch", path: "r.json", signedSha256: "aa", actualSha256: "bb" },
    "r.json is not the attested input: its SHA-256 is bb, the signed result names aa"
  ],
  [
    E.AttestationTypeMismatch,
    { _tag: "AttestationTypeMismatch", expected: "urn:a", found: "urn:b" },
    "The signed statement is not a verification result: its predicate type is urn:b, expected urn:a"
  ],
  [
    E.AttestationCaptureMismatch,
    { _tag: "AttestationCaptureMismatch", source: S, detail: "it cannot be read (MissingCapture)" },
    `The signed result's capture of ${S} is not the run's: it cannot be read (MissingCapture)`
  ],
  [
    E.ResultNotPassed,
    { _tag: "ResultNotPassed", kind: "report", outcome: "no_evidence" },
    "The report did not pass the gate (outcome no_evidence): only a grounded result is signed"
  ],
  [
    E.ResultSigningUnavailable,
    { _tag: "ResultSigningUnavailable" },
    "This service signs no verification results: verify.resultSigning.keyFile is not configured"
  ]
]

// 20 and 21 baseline failures: the first 20 are listed, a 21st only as "…".
const f = (n: number) => Array.from({ length: n }, (_, i) => baseline(`f${i}`))
const listed20 = "f0: MissingCapture, f1: MissingCapture, f2: MissingCapture, f3: MissingCapture, f4: MissingCapture, " +
  "f5: MissingCapture, f6: MissingCapture, f7: MissingCapture, f8: MissingCapture, f9: MissingCapture, " +
  "f10: MissingCapture, f11: MissingCapture, f12: MissingCapture, f13: MissingCapture, f14: MissingCapture, " +
  "f15: MissingCapture, f16: MissingCapture, f17: MissingCapture, f18: MissingCapture, f19: MissingCapture"
const longCases: typeof cases = [
  [E.AuditBaselineRejected, { _tag: "AuditBaselineRejected", failures: f(20) }, `The audited citations do not verify against the old run: 20 failures: ${listed20}`],
  [E.AuditBaselineRejected, { _tag: "AuditBaselineRejected", failures: f(21) }, `The audited citations do not verify against the old run: 21 failures: ${listed20}, …`]
]

// Every class name of src/Errors.ts, written out: a class missing from the cases above fails.
const everyClass = [
  "MissingCapture", "CorruptCapture", "LegacyCapture", "CaptureExists", "CaptureWriteFailed", "InvalidRunDirectory",
  "StoreUnavailable", "NotApproved", "UnknownLabel", "DuplicateLabel", "DigestMismatch", "SnippetAbsent", "AnchorMismatch",
  "AmbiguousSnippet", "InvalidReport", "ReportRejected", "VerificationTimeout", "InvalidConfig", "InvalidMigrationMap",
  "AddressRejected", "RedirectRejected", "UnexpectedStatus", "UnsupportedContentType", "UnsupportedContentEncoding",
  "AmbiguousHeader", "TooLarge", "TruncatedBody", "InvalidEncoding", "Timeout", "ConnectionFailed", "InvalidBudget",
  "UnsupportedTransferEncoding", "CertificateRejected", "InvalidCaFile", "ExtractionFailed", "UnsupportedEncoding",
  "ExtractionTooLarge", "MigrationRejected", "SpanMismatch", "AnchorUnsupported", "UncitedSentence", "InvalidAnswer",
  "StaleManifest", "Evi1Invalid", "AnswerTooLarge", "AnswerRejected", "StreamLineInvalid", "StreamLimitExceeded",
  "StreamDeadline", "StreamGone", "StreamRequestInvalid", "StreamRetentionFull", "Unauthorized", "Forbidden", "PayloadTooLarge", "LengthRequired",
  "RequestTimeout", "RunNotFound", "NotReady", "AuditBaselineRejected", "HiddenEvidence", "SemanticMismatch", "SnippetCutsToken",
  "SigningKeyInvalid", "EnvelopeMalformed", "UnknownSigningKey", "SignatureInvalid", "SubjectMismatch", "UnsignedCapture",
  "AttestationSubjectMismatch", "AttestationTypeMismatch", "AttestationCaptureMismatch", "ResultNotPassed", "ResultSigningUnavailable"
]

const allCases = [...cases, ...signatureCases, ...resultAttestationCases]
const jsonOf = (tag: string): Json => allCases.find(([, json]) => json._tag === tag)![1]

describe("every error: tag, exact message, JSON round trip", () => {
  it("the cases cover all 74 classes", () => {
    assert.strictEqual(everyClass.length, 74)
    assert.deepStrictEqual([...new Set(allCases.map(([, json]) => json._tag))].sort(), [...everyClass].sort())
    for (const name of everyClass) assert.strictEqual((E as Record<string, any>)[name].name, name)
  })

  for (const [Class, json, message] of [...allCases, ...longCases]) {
    it(`${json._tag}: ${message.slice(0, 70)}`, () => {
      const error = roundTrip(Class, json)
      assert.instanceOf(error, Class)
      assert.isTrue(error instanceof Error)
      assert.strictEqual(error._tag, json._tag)
      assert.strictEqual(error.message, message)
      // Built by its constructor from the decoded fields: the same message.
      const { _tag, ...fields } = error
      assert.strictEqual(_tag, json._tag)
      assert.strictEqual(new Class(fields).message, message)
    })
  }

  it("a class refuses another class's tag and a missing field", () => {
    assert.include(refusal(E.MissingCapture, { _tag: "CaptureExists", source: S }), "actual \"CaptureExists\"")
    assert.include(refusal(E.CorruptCapture, { _tag: "CorruptCapture", source: S, reason: "invalid-json" }), "[\"detail\"]")
  })
})

describe("formatPath", () => {
  it("root, numbers in brackets, the first name bare, later names after a dot", () => {
    assert.strictEqual(E.formatPath([]), "(root)")
    assert.strictEqual(E.formatPath(["facts"]), "facts")
    assert.strictEqual(E.formatPath([3]), "[3]")
    assert.strictEqual(E.formatPath(["facts", 2, "source"]), "facts[2].source")
    assert.strictEqual(E.formatPath([0, "a", 1, 2, "b", "c"]), "[0].a[1][2].b.c")
    assert.strictEqual(E.formatPath(["", "x"]), ".x")
  })
})

describe("the literal fields decode every documented value", () => {
  const values: ReadonlyArray<readonly [string, AnySchema, ReadonlyArray<string>]> = [
    ["CorruptReason", E.CorruptReason, [
      "unreadable", "symlink", "hard-linked", "not-a-regular-file", "too-large", "invalid-utf8", "invalid-json",
      "not-a-v1-record", "source-mismatch", "byte-length-mismatch", "body-missing", "body-mismatch", "invalid-anchor",
      "record-digest-mismatch"
    ]],
    ["NotApprovedReason", E.NotApprovedReason, ["not-in-approved-set", "not-canonical", "scheme-not-allowed", "userinfo", "fragment", "host-not-allowed"]],
    ["DigestMismatchKind", E.DigestMismatchKind, ["report", "stored"]],
    ["ExtractionFormat", E.ExtractionFormat, ["markdown", "html", "pdf"]],
    ["MigrationRejectionReason", E.MigrationRejectionReason, ["missing", "unreadable", "not-a-legacy-record", "digest-mismatch", "source-conflict", "write-failed"]],
    ["AnchorKind", E.AnchorKind, ["page", "heading", "content-block"]],
    ["StreamLimit", E.StreamLimit, ["line-length", "input-size", "answer-size", "claims", "citations"]],
    ["StreamGoneReason", E.StreamGoneReason, ["unknown-stream", "not-retained"]],
    ["UnauthorizedReason", E.UnauthorizedReason, ["missing", "malformed", "unknown-token", "unknown-session"]],
    ["ForbiddenAction", E.ForbiddenAction, ["capture", "read-run"]]
  ]
  for (const [name, schema, literals] of values) {
    it(name, () => {
      for (const value of literals) assert.strictEqual(Schema.decodeUnknownSync(schema)(value), value)
      refusal(schema, "")
      refusal(schema, "other")
    })
  }

  it("the reasons, formats and caps inside the error classes, each in its message", () => {
    for (const reason of ["unreadable", "symlink", "hard-linked", "not-a-regular-file", "too-large", "invalid-utf8", "invalid-json", "not-a-v1-record", "source-mismatch", "byte-length-mismatch", "body-missing", "body-mismatch", "invalid-anchor", "record-digest-mismatch"]) {
      const error = roundTrip(E.CaptureReadError, { _tag: "CorruptCapture", source: S, reason, detail: "d" })
      assert.strictEqual(error.message, `The capture of ${S} is corrupt (${reason}): d`)
    }
    for (const reason of ["not-in-approved-set", "not-canonical", "scheme-not-allowed", "userinfo", "fragment", "host-not-allowed"]) {
      assert.strictEqual(roundTrip(E.FactError, { ...notApproved, reason }).reason, reason)
    }
    for (const method of ["fuzzy", "normalized/1"]) {
      const error = roundTrip(E.FactError, { _tag: "SnippetAbsent", source: S, captureSha256: D1, snippet: "s", nearest: { ...fuzzy, method } })
      assert.strictEqual(error.message, `The snippet does not occur verbatim in capture ${P1} of ${S} (nearest passage: ${method}, score 0.75)`)
    }
    for (const format of ["markdown", "html", "pdf"]) {
      for (const reason of ["malformed", "truncated", "encrypted", "worker-failed"]) {
        const error = roundTrip(E.CaptureError, { _tag: "ExtractionFailed", source: S, format, reason, detail: "d" })
        assert.strictEqual(error.message, `Extracting text from the ${format} body of ${S} failed (${reason}): d`)
      }
      for (const cap of ["maxPages", "maxCharacters", "maxDepth"]) {
        const error = roundTrip(E.CaptureError, { _tag: "ExtractionTooLarge", source: S, format, cap, limit: 5 })
        assert.strictEqual(error.message, `The ${format} body of ${S} passes the ${cap} cap of 5; nothing was written`)
      }
    }
    for (const declaredIn of ["content-type", "meta"]) {
      const error = roundTrip(E.CaptureError, { _tag: "UnsupportedEncoding", source: S, charset: "koi8-r", declaredIn })
      assert.strictEqual(error.message, `${S} declares the charset "koi8-r" (in its ${declaredIn}); only UTF-8 is captured`)
    }
    for (const reason of ["missing", "unreadable", "not-a-legacy-record", "digest-mismatch", "source-conflict", "write-failed"]) {
      const error = roundTrip(E.MigrationRejected, { _tag: "MigrationRejected", file: "f.json", source: S, reason, detail: "d" })
      assert.strictEqual(error.message, `Legacy record f.json was not migrated (${reason}): d`)
    }
    for (const anchor of ["page", "heading", "content-block"]) {
      const error = roundTrip(E.CitationError, { ...anchorUnsupported, anchor })
      assert.strictEqual(error.message, `The citation of ${S} names a ${anchor} (3), but no capture has that kind of anchor (captures carry PDF pages and heading paths, never content blocks): cite the quote with its page or heading, or without an anchor`)
    }
    for (const limit of ["line-length", "input-size", "answer-size", "claims", "citations"]) {
      const error = roundTrip(E.StreamError, { _tag: "StreamLimitExceeded", limit, max: 1, received: 2 })
      assert.strictEqual(error.message, `The stream passed its ${limit} limit of 1 (received at least 2)`)
    }
    for (const kind of ["outside", "no-such-anchor"]) {
      assert.strictEqual(roundTrip(E.FactError, { ...jsonOf("AnchorMismatch"), reason: kind }).reason, kind)
    }
  })

  it("values outside the lists are refused inside the classes too", () => {
    refusal(E.CorruptCapture, { _tag: "CorruptCapture", source: S, reason: "", detail: "d" })
    refusal(E.AnchorMismatch, { ...jsonOf("AnchorMismatch"), reason: "inside" })
    refusal(E.ExtractionFailed, { ...jsonOf("ExtractionFailed"), reason: "" })
    refusal(E.ExtractionTooLarge, { ...jsonOf("ExtractionTooLarge"), cap: "" })
    refusal(E.UnsupportedEncoding, { ...jsonOf("UnsupportedEncoding"), declaredIn: "" })
    refusal(E.NotReady, { _tag: "NotReady", reason: "" })
    refusal(E.SnippetAbsent, { ...jsonOf("SnippetAbsent"), nearest: { ...fuzzy, method: "" } })
  })
})

describe("the nearest passage is decoded strictly", () => {
  const snippetAbsent = (nearest: unknown) => ({ _tag: "SnippetAbsent", source: S, captureSha256: D1, snippet: "s", nearest })

  it("an extra key in the passage or in its span is refused", () => {
    assert.include(refusal(E.SnippetAbsent, snippetAbsent({ ...fuzzy, extra: 1 })), "is unexpected")
    assert.include(refusal(E.SnippetAbsent, snippetAbsent({ ...fuzzy, span: { start: 1, end: 2, extra: 1 } })), "is unexpected")
  })

  it("a bad passage is reported under its name, NearestPassage", () => {
    assert.include(refusal(E.SnippetAbsent, snippetAbsent({ ...fuzzy, score: 2 })), "├─ NearestPassage\n")
    assert.include(refusal(E.NearestPassage, { ...fuzzy, score: -1 }), "NearestPassage\n└─ [\"score\"]")
  })
})

describe("the named Structs carry their names into decoding errors", () => {
  it("FactRejection, CitationRejection, BaselineFailure", () => {
    assert.include(refusal(E.ReportRejected, { _tag: "ReportRejected", failures: [failure(-1, "a", unknownLabel)] }), "─ FactRejection\n")
    assert.include(
      refusal(E.AnswerRejected, { _tag: "AnswerRejected", citations: [{ claimIndex: -1, claimId: "c", citationIndex: 0, error: missing }], uncited: [] }),
      "─ CitationRejection\n"
    )
    assert.include(refusal(E.AuditBaselineRejected, { _tag: "AuditBaselineRejected", failures: [{ citation: 1, error: missing }] }), "─ BaselineFailure\n")
  })
})

describe("the families decode every member and nothing else", () => {
  const families: ReadonlyArray<readonly [string, AnySchema, ReadonlyArray<string>]> = [
    ["CaptureReadError", E.CaptureReadError, ["MissingCapture", "CorruptCapture", "LegacyCapture"]],
    ["CaptureWriteError", E.CaptureWriteError, ["CaptureExists", "CaptureWriteFailed"]],
    ["CaptureSignatureError", E.CaptureSignatureError, ["UnsignedCapture", "SignatureInvalid", "UnknownSigningKey"]],
    ["SignatureError", E.SignatureError, [
      "SigningKeyInvalid", "EnvelopeMalformed", "UnknownSigningKey", "SignatureInvalid", "SubjectMismatch", "UnsignedCapture"
    ]],
    ["FactError", E.FactError, [
      "NotApproved", "UnknownLabel", "DuplicateLabel", "MissingCapture", "CorruptCapture", "LegacyCapture", "DigestMismatch",
      "SnippetAbsent", "AnchorMismatch", "AmbiguousSnippet", "HiddenEvidence", "SnippetCutsToken", "SemanticMismatch",
    "UnsignedCapture", "SignatureInvalid", "UnknownSigningKey"
    ]],
    ["VerifyError", E.VerifyError, ["InvalidReport", "ReportRejected", "VerificationTimeout"]],
    ["CaptureError", E.CaptureError, [
      "NotApproved", "AddressRejected", "RedirectRejected", "UnexpectedStatus", "UnsupportedContentType",
      "UnsupportedContentEncoding", "AmbiguousHeader", "TooLarge", "TruncatedBody", "InvalidEncoding", "Timeout",
      "ConnectionFailed", "CaptureExists", "CaptureWriteFailed", "UnsupportedTransferEncoding", "CertificateRejected",
      "ExtractionFailed", "UnsupportedEncoding", "ExtractionTooLarge"
    ]],
    ["CitationError", E.CitationError, [
      "NotApproved", "MissingCapture", "CorruptCapture", "LegacyCapture", "DigestMismatch", "SnippetAbsent", "SpanMismatch",
      "AnchorUnsupported", "AnchorMismatch", "AmbiguousSnippet", "HiddenEvidence", "SnippetCutsToken",
      "UnsignedCapture", "SignatureInvalid", "UnknownSigningKey"
    ]],
    ["AnswerError", E.AnswerError, ["InvalidAnswer", "StaleManifest", "Evi1Invalid", "AnswerTooLarge", "AnswerRejected", "VerificationTimeout"]],
    ["StreamError", E.StreamError, ["StreamLineInvalid", "StreamLimitExceeded", "StreamDeadline", "StreamGone", "StreamRequestInvalid", "StreamRetentionFull"]],
    ["ServiceError", E.ServiceError, ["Unauthorized", "Forbidden", "PayloadTooLarge", "LengthRequired", "RequestTimeout", "RunNotFound", "NotReady"]],
    ["AuditError", E.AuditError, ["AuditBaselineRejected", "VerificationTimeout"]],
    ["ResultAttestationError", E.ResultAttestationError, [
      "AttestationSubjectMismatch", "AttestationTypeMismatch", "AttestationCaptureMismatch", "ResultNotPassed", "ResultSigningUnavailable"
    ]]
  ]
  for (const [name, family, members] of families) {
    it(name, () => {
      for (const tag of members) {
        for (const [Class, json, message] of allCases.filter(([, json]) => json._tag === tag)) {
          const error = roundTrip(family, json)
          assert.instanceOf(error, Class)
          assert.strictEqual(error.message, message)
        }
      }
      for (const tag of everyClass.filter((tag) => !members.includes(tag))) {
        assert.include(refusal(family, jsonOf(tag)), `actual "${tag}"`)
      }
      assert.include(refusal(family, { _tag: "Unknown" }), "actual \"Unknown\"")
    })
  }

  it("Evi1Issue: every issue kind with every field; an unknown kind is refused", () => {
    for (const issue of evi1Issues) assert.deepStrictEqual(roundTrip(E.Evi1Issue, issue), issue)
    assert.include(refusal(E.Evi1Issue, { _tag: "Evi1Unknown", line: 1 }), "actual \"Evi1Unknown\"")
    assert.include(refusal(E.Evi1Issue, { _tag: "Evi1OrphanMarker", line: 1 }), "[\"claimId\"]")
    const schemas: ReadonlyArray<readonly [AnySchema, Json]> = [
      [E.Evi1MalformedLine, evi1Issues[0]!],
      [E.Evi1DuplicateClaimId, evi1Issues[1]!],
      [E.Evi1DuplicateEvidence, evi1Issues[2]!],
      [E.Evi1MissingEvidence, evi1Issues[3]!],
      [E.Evi1UnusedEvidence, evi1Issues[4]!],
      [E.Evi1SourceOutOfRange, evi1Issues[5]!],
      [E.Evi1SourceUnavailable, evi1Issues[6]!],
      [E.Evi1OrphanMarker, evi1Issues[7]!]
    ]
    for (const [schema, issue] of schemas) assert.deepStrictEqual(roundTrip(schema, issue), issue)
  })

  it("the Issue Struct keeps path and message", () => {
    const issue = { path: ["a", 1], message: "m" }
    assert.deepStrictEqual(roundTrip(E.Issue, issue), issue)
    assert.deepStrictEqual(roundTrip(E.IssuePath, []), [])
    refusal(E.IssuePath, [true])
    // A path that is not a list, or a message that is not a string, is refused (inside a report too).
    assert.include(refusal(E.Issue, { path: "a", message: "m" }), "[\"path\"]")
    assert.include(refusal(E.Issue, { path: [], message: 5 }), "[\"message\"]")
    assert.include(refusal(E.InvalidReport, { _tag: "InvalidReport", issues: [{ path: [], message: null }] }), "[\"message\"]")
  })
})

describe("groupFailures", () => {
  const order = [
    "NotApproved", "UnknownLabel", "DuplicateLabel", "MissingCapture", "CorruptCapture", "LegacyCapture", "DigestMismatch",
    "SnippetAbsent", "AnchorMismatch", "AmbiguousSnippet", "HiddenEvidence", "SnippetCutsToken", "SemanticMismatch",
    "UnsignedCapture", "SignatureInvalid", "UnknownSigningKey"
  ]

  it("factErrorTags lists the FactError tags in their fixed order", () => {
    assert.deepStrictEqual([...E.factErrorTags], order)
  })

  it("every tag is a key, in order; each failure under its tag, report order kept", () => {
    const rejected = Schema.decodeUnknownSync(E.ReportRejected)({
      _tag: "ReportRejected",
      failures: [failure(0, "a", unknownLabel), failure(1, "b", missing), failure(2, "c", unknownLabel)]
    })
    for (const input of [rejected, rejected.failures]) {
      const groups = E.groupFailures(input)
      assert.deepStrictEqual(Object.keys(groups), order)
      assert.deepStrictEqual(groups.UnknownLabel.map((f) => f.label), ["a", "c"])
      assert.deepStrictEqual(groups.MissingCapture.map((f) => f.label), ["b"])
      for (const tag of order.filter((tag) => tag !== "UnknownLabel" && tag !== "MissingCapture")) {
        assert.deepStrictEqual(groups[tag as E.FactError["_tag"]], [])
      }
    }
  })
})
