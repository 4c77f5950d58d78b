/**
 * The description of every error tag, written out by hand: title, each field's name and value in
 * order, and what to do. Every renderer (text, Markdown, HTML, repair, the service) shows these,
 * so a changed word, a dropped field or a swapped branch fails here. Values are distinct per
 * field so that a field showing the wrong value is caught too.
 */
import { assert, describe, it } from "@effect/vitest"
import {
  AddressRejected,
  AmbiguousHeader,
  AmbiguousSnippet,
  AnchorMismatch,
  AnchorUnsupported,
  AnswerRejected,
  AnswerTooLarge,
  AuditBaselineRejected,
  CaptureExists,
  CaptureWriteFailed,
  CertificateRejected,
  ConnectionFailed,
  CorruptCapture,
  DigestMismatch,
  DuplicateLabel,
  Evi1Invalid,
  ExtractionFailed,
  ExtractionTooLarge,
  Forbidden,
  InvalidAnswer,
  InvalidConfig,
  InvalidEncoding,
  InvalidMigrationMap,
  InvalidRunDirectory,
  LegacyCapture,
  LengthRequired,
  MissingCapture,
  NotApproved,
  NotReady,
  PayloadTooLarge,
  RedirectRejected,
  RequestTimeout,
  RunNotFound,
  SnippetAbsent,
  SpanMismatch,
  StaleManifest,
  StoreUnavailable,
  StreamDeadline,
  StreamGone,
  StreamLimitExceeded,
  StreamLineInvalid,
  StreamRequestInvalid,
  Timeout,
  TooLarge,
  TruncatedBody,
  Unauthorized,
  UncitedSentence,
  UnexpectedStatus,
  UnknownLabel,
  UnsupportedContentEncoding,
  UnsupportedContentType,
  UnsupportedEncoding,
  UnsupportedTransferEncoding,
  VerificationTimeout
} from "../src/Errors.js"
import * as Describe from "../src/render/Describe.js"

const D1 = "0123456789abcdef".repeat(4)
const D2 = "fedcba9876543210".repeat(4)
const D3 = "00112233445566778899aabbccddeeff".repeat(2)
const P1 = "0123456789ab…"
const P2 = "fedcba987654…"
const P3 = "001122334455…"

const fuzzy = { method: "fuzzy" as const, score: 0.75, span: { start: 3, end: 9 }, text: "near text", differences: "[-a-] {+b+}" }
const normalized = { method: "normalized/1" as const, score: 1, span: { start: 4, end: 8 }, text: "norm", differences: "{+N+}" }

const fuzzyFix =
  "A similar passage exists but differs (see differences: a changed number or an added \"not\" changes the meaning): quote the capture exactly only if it supports the fact, or mark the fact unavailable."
const normalizedFix =
  "The capture has this text with other typography, case or spacing: quote the nearest passage exactly as shown, or mark the fact unavailable."
const nearestFuzzy = [["nearest passage", "near text"], ["found by", "fuzzy, score 0.75, characters 3–9"], ["differences", "[-a-] {+b+}"]] as const
const nearestNormalized = [["nearest passage", "norm"], ["found by", "normalized/1, score 1, characters 4–8"], ["differences", "{+N+}"]] as const

type Expected = { readonly title: string; readonly fields: ReadonlyArray<readonly [string, string]>; readonly fix: string }
const d = (title: string, fields: ReadonlyArray<readonly [string, string]>, fix: string): Expected => ({ title, fields, fix })

const check = (actual: Describe.Description, expected: Expected) =>
  assert.deepStrictEqual({ title: actual.title, fields: actual.fields.map(([n, v]) => [n, v]), fix: actual.fix }, {
    title: expected.title,
    fields: expected.fields.map(([n, v]) => [n, v]),
    fix: expected.fix
  })

// Shared by factError and citationError: the report-fact descriptions of these tags.
const notApproved = new NotApproved({ source: "https://n.test/", reason: "not-canonical", detail: "trailing dot" })
const missing = new MissingCapture({ source: "https://m.test/" })
const corrupt = new CorruptCapture({ source: "https://c.test/", reason: "invalid-json", detail: "line 3" })
const legacy = new LegacyCapture({ source: "https://l.test/", detail: "no format" })
const digestReport = new DigestMismatch({ source: "https://d.test/", kind: "report", reported: D1, stored: D2, computed: D3 })
const digestStored = new DigestMismatch({ source: "https://d.test/", kind: "stored", reported: D1, stored: D2, computed: D3 })
const anchorOutside = new AnchorMismatch({ source: "https://a.test/", captureSha256: D1, snippet: "snip", anchor: "page 3", reason: "outside" })
const anchorNone = new AnchorMismatch({ source: "https://a.test/", captureSha256: D2, snippet: "snap", anchor: "heading X", reason: "no-such-anchor" })
const ambiguousPlain = new AmbiguousSnippet({ source: "https://s.test/", captureSha256: D1, snippet: "twice", occurrences: 2 })
const ambiguousPrefix = new AmbiguousSnippet({ source: "https://s.test/", captureSha256: D1, snippet: "thrice", occurrences: 3, prefix: "pre" })
const ambiguousSuffix = new AmbiguousSnippet({ source: "https://s.test/", captureSha256: D2, snippet: "four", occurrences: 4, suffix: "suf" })
const ambiguousBoth = new AmbiguousSnippet({ source: "https://s.test/", captureSha256: D3, snippet: "five", occurrences: 5, prefix: "p", suffix: "s" })

const shared: ReadonlyArray<readonly [Parameters<typeof Describe.citationError>[0] & Parameters<typeof Describe.factError>[0], Expected]> = [
  [notApproved, d("Source not approved", [["source", "https://n.test/"], ["reason", "trailing dot"]], "Cite one of the approved sources, spelled exactly as approved.")],
  [missing, d("No capture of this source in this run", [["source", "https://m.test/"]], "Capture the source in this run, or mark the fact unavailable. No other capture is consulted.")],
  [corrupt, d("Capture is corrupt", [["source", "https://c.test/"], ["reason", "invalid-json"], ["detail", "line 3"]], "Do not trust this run's capture of the source; capture it again into a new run.")],
  [legacy, d("Capture is in a legacy format", [["source", "https://l.test/"], ["detail", "no format"]], "Migrate it explicitly with `run-pipeline migrate` into a new run directory.")],
  [digestReport, d("Report names a different capture", [["source", "https://d.test/"], ["report names", P1], ["this run has", D2]], "Cite the digest of this run's capture, and quote from that capture.")],
  [digestStored, d("Capture was altered after capture", [["source", "https://d.test/"], ["recorded digest", P2], ["text now hashes to", P3]], "Treat the run as tampered with; capture the source again into a new run.")],
  [anchorOutside, d("Snippet not inside the named page or section", [["source", "https://a.test/"], ["capture", P1], ["anchor", "page 3"], ["snippet", "snip"]], "Name the page or heading the excerpt is on (as the capture's anchors give it), or leave the anchor out.")],
  [anchorNone, d("No such page or section", [["source", "https://a.test/"], ["capture", P2], ["anchor", "heading X"], ["snippet", "snap"]], "Name the page or heading the excerpt is on (as the capture's anchors give it), or leave the anchor out.")],
  [ambiguousPlain, d("Snippet occurs more than once", [["source", "https://s.test/"], ["capture", P1], ["occurrences", "2"], ["snippet", "twice"]], "Add a prefix and/or suffix (the capture's text right before or after the excerpt) that only one occurrence has, or quote a longer, unique excerpt.")],
  [ambiguousPrefix, d("Snippet occurs more than once with the given prefix/suffix", [["source", "https://s.test/"], ["capture", P1], ["occurrences", "3"], ["prefix", "pre"], ["snippet", "thrice"]], "Add a prefix and/or suffix (the capture's text right before or after the excerpt) that only one occurrence has, or quote a longer, unique excerpt.")],
  [ambiguousSuffix, d("Snippet occurs more than once with the given prefix/suffix", [["source", "https://s.test/"], ["capture", P2], ["occurrences", "4"], ["suffix", "suf"], ["snippet", "four"]], "Add a prefix and/or suffix (the capture's text right before or after the excerpt) that only one occurrence has, or quote a longer, unique excerpt.")],
  [ambiguousBoth, d("Snippet occurs more than once with the given prefix/suffix", [["source", "https://s.test/"], ["capture", P3], ["occurrences", "5"], ["prefix", "p"], ["suffix", "s"], ["snippet", "five"]], "Add a prefix and/or suffix (the capture's text right before or after the excerpt) that only one occurrence has, or quote a longer, unique excerpt.")]
]

const long = (n: number) => "x".repeat(n)

describe("Describe: every error tag, exactly", () => {
  it("report facts", () => {
    for (const [error, expected] of shared) check(Describe.factError(error), expected)
    check(Describe.factError(new UnknownLabel({ label: "lbl" })), d("Unknown label", [["label", "lbl"]], "Use one of the approved labels."))
    // Renderings number facts from 1: firstIndex 4 is fact 5.
    check(
      Describe.factError(new DuplicateLabel({ label: "dup", firstIndex: 4 })),
      d("Duplicate label", [["label", "dup"], ["first used by fact", "5"]], "Report each label once.")
    )
    const absent = (nearest?: typeof fuzzy | typeof normalized) =>
      new SnippetAbsent({ source: "https://x.test/", captureSha256: D2, snippet: "quote", ...(nearest === undefined ? {} : { nearest }) })
    const absentFields = [["source", "https://x.test/"], ["capture", P2], ["snippet", "quote"]] as const
    check(
      Describe.factError(absent()),
      d("Snippet not found verbatim", absentFields, "Quote the capture exactly (no paraphrase, case, spacing or punctuation changes), or mark the fact unavailable.")
    )
    check(Describe.factError(absent(fuzzy)), d("Snippet not found verbatim", [...absentFields, ...nearestFuzzy], fuzzyFix))
    check(Describe.factError(absent(normalized)), d("Snippet not found verbatim", [...absentFields, ...nearestNormalized], normalizedFix))
  })

  it("answer citations: their own wording for quotes, the report wording for the shared tags", () => {
    for (const [error, expected] of shared) check(Describe.citationError(error), expected)
    const absent = (nearest?: typeof fuzzy | typeof normalized) =>
      new SnippetAbsent({ source: "https://q.test/", captureSha256: D3, snippet: "said", ...(nearest === undefined ? {} : { nearest }) })
    const absentFields = [["source", "https://q.test/"], ["capture", P3], ["quote", "said"]] as const
    check(
      Describe.citationError(absent()),
      d("Quote not found verbatim", absentFields, "Quote the capture exactly (no paraphrase, case, spacing or punctuation changes), or drop the claim.")
    )
    check(Describe.citationError(absent(fuzzy)), d("Quote not found verbatim", [...absentFields, ...nearestFuzzy], fuzzyFix))
    check(Describe.citationError(absent(normalized)), d("Quote not found verbatim", [...absentFields, ...nearestNormalized], normalizedFix))
    check(
      Describe.citationError(
        new SpanMismatch({ source: "https://q.test/", captureSha256: D1, quote: "qq", claimedStart: 5, claimedEnd: 7, foundStart: 11, occurrences: 1 })
      ),
      d(
        "Quote is not at the cited position",
        [["source", "https://q.test/"], ["capture", P1], ["claimed code points", "5–7"], ["first found at code point", "11"], ["quote", "qq"]],
        "The quote is elsewhere in the capture: cite code points 11–13 (end exclusive; the first occurrence), or give the quote without indices."
      )
    )
    check(
      Describe.citationError(new AnchorUnsupported({ source: "https://q.test/", anchor: "page", value: "7" })),
      d("Anchor cannot be checked", [["source", "https://q.test/"], ["anchor", "page"], ["value", "7"]], "Captures carry PDF pages and heading paths but no content blocks: cite the quote with its page or heading, or without an anchor.")
    )
  })

  it("captures", () => {
    const cases: ReadonlyArray<readonly [Parameters<typeof Describe.captureError>[0], Expected]> = [
      [notApproved, d("Source not approved", [["source", "https://n.test/"], ["reason", "trailing dot"]], "List the exact canonical URL in the configuration's sources.")],
      [
        new AddressRejected({ source: "s", host: "h.test", address: "10.0.0.1", reason: "private" }),
        d("Address refused", [["host", "h.test"], ["address", "10.0.0.1"], ["reason", "private"]], "Only public unicast addresses are fetched; sources on private networks cannot be captured.")
      ],
      [new RedirectRejected({ source: "s", status: 301, location: "https://r.test/" }), d("Redirect not followed", [["status", "301"], ["location", "https://r.test/"]], "Approve and capture the redirect target URL itself.")],
      [new RedirectRejected({ source: "s", status: 302, location: null }), d("Redirect not followed", [["status", "302"], ["location", "(none)"]], "Approve and capture the redirect target URL itself.")],
      [new UnexpectedStatus({ source: "s", status: 404 }), d("Unexpected HTTP status", [["status", "404"]], "Only 200 responses are captured.")],
      [
        new UnsupportedContentType({ source: "s", contentType: "image/png" }),
        d("Unsupported content type", [["content type", "image/png"]], "Only the content types listed in capture.contentTypes are captured (default: text/plain).")
      ],
      [
        new UnsupportedContentType({ source: "s", contentType: null }),
        d("Unsupported content type", [["content type", "(none)"]], "Only the content types listed in capture.contentTypes are captured (default: text/plain).")
      ],
      [new UnsupportedContentEncoding({ source: "s", contentEncoding: "gzip" }), d("Encoded body refused", [["content encoding", "gzip"]], "The server must send an identity (uncompressed) body.")],
      [new AmbiguousHeader({ source: "s", header: "content-length", value: "1, 2" }), d("Ambiguous header", [["header", "content-length"], ["value", "1, 2"]], "The server must send this header once.")],
      [
        new TooLarge({ source: "s", maxBytes: 100, declaredBytes: 250, receivedBytes: 0 }),
        d("Body over the size budget", [["max bytes", "100"], ["announced", "250"], ["received", "0"]], "Raise capture.maxBytes if the source is legitimately this large.")
      ],
      [
        new TooLarge({ source: "s", maxBytes: 100, declaredBytes: null, receivedBytes: 101 }),
        d("Body over the size budget", [["max bytes", "100"], ["announced", "(not announced)"], ["received", "101"]], "Raise capture.maxBytes if the source is legitimately this large.")
      ],
      [new TruncatedBody({ source: "s", expectedBytes: 50, receivedBytes: 20 }), d("Body shorter than announced", [["announced", "50"], ["received", "20"]], "Retry the capture in a new run.")],
      [new TruncatedBody({ source: "s", expectedBytes: 50, receivedBytes: null }), d("Body shorter than announced", [["announced", "50"], ["received", "fewer"]], "Retry the capture in a new run.")],
      [new InvalidEncoding({ source: "s", byteLength: 33 }), d("Body is not valid UTF-8", [["bytes", "33"]], "Only UTF-8 text is captured.")],
      [new Timeout({ source: "s", timeoutMs: 750 }), d("Timed out", [["budget ms", "750"]], "Raise capture.timeoutMs, or retry in a new run.")],
      [new ConnectionFailed({ source: "s", detail: "ECONNRESET" }), d("Connection failed", [["detail", "ECONNRESET"]], "Check that the source is reachable; retry in a new run.")],
      [new CaptureExists({ source: "s" }), d("Already captured in this run", [], "Each source is captured once per run; the first capture was kept.")],
      [new CaptureWriteFailed({ source: "s", detail: "ENOSPC" }), d("Could not write the capture", [["detail", "ENOSPC"]], "Check the run directory's disk; nothing was written under the final name.")],
      [
        new UnsupportedTransferEncoding({ source: "s", transferEncoding: "gzip, chunked" }),
        d("Transfer coding refused", [["transfer encoding", "gzip, chunked"]], "The server must send the body plainly or chunked, with no other transfer coding.")
      ],
      [
        new CertificateRejected({ source: "s", host: "t.test", code: "CERT_HAS_EXPIRED", detail: "expired" }),
        d("TLS certificate rejected", [["host", "t.test"], ["code", "CERT_HAS_EXPIRED"], ["detail", "expired"]], "The server needs a valid certificate for this host; for a private CA, set capture.caFile to its PEM file.")
      ],
      [
        new ExtractionFailed({ source: "s", format: "pdf", reason: "encrypted", detail: "owner password" }),
        d("Text extraction failed", [["format", "pdf"], ["reason", "encrypted"], ["detail", "owner password"]], "The body cannot be read as its content type says (malformed, truncated or encrypted); capture a readable copy.")
      ],
      [
        new UnsupportedEncoding({ source: "s", charset: "latin1", declaredIn: "meta" }),
        d("Charset not UTF-8", [["charset", "latin1"], ["declared in", "meta"]], "Only UTF-8 bodies are captured; the server must send the document in UTF-8.")
      ],
      [
        new ExtractionTooLarge({ source: "s", format: "html", cap: "maxDepth", limit: 64 }),
        d("Extraction cap passed", [["format", "html"], ["cap", "maxDepth"], ["limit", "64"]], "Raise capture.maxDepth (within its documented range) if the source is legitimately this large.")
      ]
    ]
    for (const [error, expected] of cases) check(Describe.captureError(error), expected)
  })

  it("configuration, migration map, run directory, store", () => {
    const issues = [{ path: ["sources", 1], message: "duplicate" }, { path: [], message: "bad root" }] as const
    check(
      Describe.configError(new InvalidConfig({ issues: [...issues] as never, omitted: 3 })),
      d("Invalid configuration", [["sources[1]", "duplicate"], ["(root)", "bad root"], ["…", "and 3 more issues not listed"]], "Correct the configuration at the paths shown.")
    )
    check(
      Describe.configError(new InvalidConfig({ issues: [issues[0]] as never })),
      d("Invalid configuration", [["sources[1]", "duplicate"]], "Correct the configuration at the paths shown.")
    )
    check(
      Describe.configError(new InvalidMigrationMap({ issues: [{ path: ["entries", 0, "file"], message: "traversal" }], omitted: 1 })),
      d(
        "Invalid migration map",
        [["entries[0].file", "traversal"], ["…", "and 1 more issue not listed"]],
        "Correct the migration map at the paths shown: { \"entries\": [{ \"file\": …, \"source\": … }] }."
      )
    )
    check(
      Describe.configError(new InvalidRunDirectory({ path: "runs/x", detail: "missing" })),
      d("Unusable run directory", [["path", "runs/x"], ["detail", "missing"]], "Point --run-dir at the run directory written by `run-pipeline capture`.")
    )
    check(
      Describe.configError(new StoreUnavailable({ run: "r1", detail: "refused" })),
      d(
        "Capture store unavailable",
        [["run", "r1"], ["detail", "refused"]],
        "Check the database URL and credentials, run the store's migration, and name with --run-dir a run written by `run-pipeline capture --store …`."
      )
    )
    check(
      Describe.verifyError(new VerificationTimeout({ timeoutMs: 1500 })),
      d(
        "Verification timed out",
        [["deadline ms", "1500"]],
        "Nothing in this report is accepted. Cite fewer or smaller excerpts, or raise verify.timeoutMs if the captures are legitimately this large."
      )
    )
  })

  it("the omitted-issues line: none for absent or zero, singular, plural", () => {
    assert.deepStrictEqual(Describe.omittedIssues(undefined), [])
    assert.deepStrictEqual(Describe.omittedIssues(0), [])
    assert.deepStrictEqual(Describe.omittedIssues(1), ["and 1 more issue not listed"])
    assert.deepStrictEqual(Describe.omittedIssues(2), ["and 2 more issues not listed"])
  })

  it("EVI1 issues and uncited sentences", () => {
    const cases: ReadonlyArray<readonly [Parameters<typeof Describe.evi1Issue>[0], Expected]> = [
      [
        { _tag: "Evi1MalformedLine", line: 2, detail: "no quote" },
        d("Malformed line", [["line", "2"], ["detail", "no quote"]], "Evidence lines are cX|n|\"quote\" between EVI1 and END_EVI1; escape only \\\", \\\\ and \\n.")
      ],
      [{ _tag: "Evi1DuplicateClaimId", line: 3, claimId: "c1", firstLine: 1 }, d("Claim id used twice", [["line", "3"], ["claim", "c1"], ["first used on line", "1"]], "Give every claim its own id.")],
      [
        { _tag: "Evi1DuplicateEvidence", line: 4, claimId: "c2", source: 2, firstLine: 3 },
        d("Evidence given twice", [["line", "4"], ["claim", "c2"], ["source", "2"], ["first given on line", "3"]], "Give one evidence line per claim and source.")
      ],
      [
        { _tag: "Evi1MissingEvidence", line: 5, claimId: "c3", source: 1 },
        d("Citation without evidence", [["line", "5"], ["claim", "c3"], ["source", "1"]], "Add the evidence line cX|n|\"quote\" for this claim and source, or remove the [n].")
      ],
      [
        { _tag: "Evi1UnusedEvidence", line: 6, claimId: "c4", source: 3 },
        d("Evidence without citation", [["line", "6"], ["claim", "c4"], ["source", "3"]], "Cite the source in that claim's group, or remove the evidence line.")
      ],
      [
        { _tag: "Evi1SourceOutOfRange", line: 7, claimId: "c5", source: 9, sources: 4 },
        d("Source number out of range", [["line", "7"], ["claim", "c5"], ["source", "9"], ["manifest sources", "4"]], "Cite sources by their numbers in this run's manifest (1 to n).")
      ],
      [
        { _tag: "Evi1SourceUnavailable", line: 8, claimId: "c6", source: 2, url: "https://u.test/" },
        d("Source not available in this run", [["line", "8"], ["claim", "c6"], ["source", "2"], ["url", "https://u.test/"]], "The manifest lists this source as missing; do not cite it.")
      ],
      [{ _tag: "Evi1OrphanMarker", line: 9, claimId: "c7" }, d("Claim id without citation", [["line", "9"], ["claim", "c7"]], "Put the sources directly before the claim id: [n]{cX}.")]
    ]
    for (const [issue, expected] of cases) check(Describe.evi1Issue(issue), expected)
    check(
      Describe.uncitedSentence(new UncitedSentence({ sentence: "Sales rose 5%.", line: 12 })),
      d("Uncited factual-looking sentence", [["line", "12"], ["sentence", "Sales rose 5%."]], "Cite the sentence with a verbatim quote, or remove it.")
    )
    check(
      Describe.uncitedSentence(new UncitedSentence({ sentence: "No line.", line: null })),
      d("Uncited factual-looking sentence", [["sentence", "No line."]], "Cite the sentence with a verbatim quote, or remove it.")
    )
  })

  it("answers", () => {
    check(
      Describe.answerError(new InvalidAnswer({ issues: [{ path: ["claims", 0, "text"], message: "empty" }], omitted: 4 })),
      d("Invalid answer", [["claims[0].text", "empty"], ["…", "and 4 more issues not listed"]], "Correct the answer at the paths shown.")
    )
    check(
      Describe.answerError(new StaleManifest({ named: null, current: D1 })),
      d(
        "Answer names no manifest",
        [["answer names", "(none)"], ["this run's manifest", D1]],
        "Draft against this run's manifest and name its digest (MANIFEST line or --manifest-digest); numbers are never re-bound."
      )
    )
    check(
      Describe.answerError(new StaleManifest({ named: D2, current: D3 })),
      d(
        "Answer drafted against another manifest",
        [["answer names", P2], ["this run's manifest", D3]],
        "Draft against this run's manifest and name its digest (MANIFEST line or --manifest-digest); numbers are never re-bound."
      )
    )
    check(
      Describe.answerError(
        new Evi1Invalid({
          issues: [{ _tag: "Evi1OrphanMarker", line: 9, claimId: "c7" }, { _tag: "Evi1MalformedLine", line: 11, detail: "x" }],
          omitted: 1
        })
      ),
      d(
        "EVI1 protocol violated",
        [["line 9", "Evi1OrphanMarker: Claim id without citation"], ["line 11", "Evi1MalformedLine: Malformed line"], ["…", "and 1 more issue not listed"]],
        "Correct every line shown."
      )
    )
    check(
      Describe.answerError(new AnswerTooLarge({ maxChars: 1000, receivedChars: 1001 })),
      d("Answer too large", [["max characters", "1000"], ["received", "1001"]], "Answers are limited in size; split the answer.")
    )
    check(
      Describe.answerError(new VerificationTimeout({ timeoutMs: 900 })),
      d(
        "Verification timed out",
        [["deadline ms", "900"]],
        "Nothing in this answer is accepted. Cite fewer or smaller quotes, or raise verify.timeoutMs if the captures are legitimately this large."
      )
    )
    check(
      Describe.answerError(
        new AnswerRejected({
          citations: [
            { claimIndex: 0, claimId: "c1", citationIndex: 0, error: missing },
            { claimIndex: 1, claimId: "c2", citationIndex: 1, error: missing }
          ],
          uncited: [new UncitedSentence({ sentence: "s", line: 1 })]
        })
      ),
      d("Answer rejected", [["failed citations", "2"], ["uncited sentences", "1"]], "Every failure is listed; in drop mode failed citations are retracted instead.")
    )
  })

  it("streams", () => {
    check(
      Describe.streamError(new StreamLineInvalid({ line: 4, detail: "not JSON" })),
      d("Malformed stream line", [["line", "4"], ["detail", "not JSON"]], "Send one JSON object per line: {\"type\":\"delta\",\"text\":\"…\"}.")
    )
    check(
      Describe.streamError(new StreamLimitExceeded({ limit: "claims", max: 10, received: 11 })),
      d("Stream limit exceeded", [["limit", "claims"], ["max", "10"], ["received", "11"]], "Streamed answers are bounded; shorten the answer (or its lines), or cite fewer claims.")
    )
    check(
      Describe.streamError(new StreamDeadline({ timeoutMs: 3000 })),
      d("Stream deadline passed", [["deadline ms", "3000"]], "Nothing of this answer is accepted; send the answer faster or in a shorter stream.")
    )
    check(
      Describe.streamError(new StreamGone({ streamId: "st1", reason: "unknown-stream", oldestRetained: null })),
      d("Unknown stream", [["stream", "st1"], ["oldest retained id", "(none)"]], "Resume promptly, or send the answer again.")
    )
    check(
      Describe.streamError(new StreamGone({ streamId: "st2", reason: "not-retained", oldestRetained: 17 })),
      d("Events no longer retained", [["stream", "st2"], ["oldest retained id", "17"]], "Resume promptly, or send the answer again.")
    )
    check(
      Describe.streamError(new StreamRequestInvalid({ parameter: "run", detail: "twice" })),
      d("Invalid streaming request", [["parameter", "run"], ["detail", "twice"]], "Name one run (`run`), at most one manifest digest and mode, and a numeric Last-Event-ID.")
    )
  })

  it("the service", () => {
    check(
      Describe.serviceError(new Unauthorized({ reason: "malformed" })),
      d("Unauthorized", [["reason", "malformed"]], "Send `Authorization: Bearer <token>` with a token whose SHA-256 digest is listed in server.tokens.")
    )
    check(
      Describe.serviceError(new Forbidden({ action: "capture", runId: null })),
      d("Forbidden", [["action", "capture"], ["run", "(none)"]], "Use a token with `capture: true` to start runs.")
    )
    check(
      Describe.serviceError(new Forbidden({ action: "read-run", runId: "r9" })),
      d("Forbidden", [["action", "read-run"], ["run", "r9"]], "Use a token whose `runs` lists this run (or \"*\"), or the token that started it.")
    )
    check(
      Describe.serviceError(new PayloadTooLarge({ maxBytes: 1024, declaredBytes: 2048 })),
      d("Request body too large", [["max bytes", "1024"], ["announced", "2048"]], "Send a smaller body, or raise server.maxBodyBytes.")
    )
    check(
      Describe.serviceError(new PayloadTooLarge({ maxBytes: 1024, declaredBytes: null })),
      d("Request body too large", [["max bytes", "1024"], ["announced", "(chunked)"]], "Send a smaller body, or raise server.maxBodyBytes.")
    )
    check(
      Describe.serviceError(new LengthRequired({ maxBytes: 512 })),
      d("Content-Length required", [["max bytes", "512"]], "Send the body with a Content-Length header (curl --data-binary @file does).")
    )
    check(
      Describe.serviceError(new RequestTimeout({ timeoutMs: 250 })),
      d("Request timed out", [["deadline ms", "250"]], "Nothing of this request is accepted. Send less, or raise server.requestTimeoutMs.")
    )
    check(
      Describe.serviceError(new RunNotFound({ runId: "gone" })),
      d("Run not found", [["run", "gone"]], "Use a run id returned by POST /v1/runs (or a run directory's name under the run root).")
    )
    check(
      Describe.serviceError(new NotReady({ reason: "draining" })),
      d("Not ready", [["reason", "draining"]], "The server is shutting down; retry against another instance.")
    )
    check(
      Describe.serviceError(new NotReady({ reason: "run-root-unusable" })),
      d("Not ready", [["reason", "run-root-unusable"]], "Check that the run root exists and is writable.")
    )
  })

  it("audits: at most 20 failures listed, the rest counted", () => {
    const auditFix = "Audit against the old run the report or answer was verified in, with its captures intact; re-verify it there first."
    const failures = (n: number) =>
      Array.from({ length: n }, (_, i) => ({ citation: `fact ${i + 1}`, error: i % 2 === 0 ? missing : anchorNone }))
    const listed = (n: number) =>
      Array.from({ length: n }, (_, i) =>
        [`fact ${i + 1}`, i % 2 === 0 ? "MissingCapture: No capture of this source in this run" : "AnchorMismatch: No such page or section"] as const
      )
    check(Describe.auditError(new AuditBaselineRejected({ failures: failures(20) as never })), d("Audit baseline does not verify", listed(20), auditFix))
    check(
      Describe.auditError(new AuditBaselineRejected({ failures: failures(23) as never })),
      d("Audit baseline does not verify", [...listed(20), ["…", "and 3 more"]], auditFix)
    )
    check(
      Describe.auditError(new VerificationTimeout({ timeoutMs: 60 })),
      d(
        "Verification timed out",
        [["deadline ms", "60"]],
        "The old citations could not be re-verified in time. Audit fewer citations, or raise verify.timeoutMs if the captures are legitimately this large."
      )
    )
  })

  it("every family cuts long values to maxShownLength with the true total length", () => {
    assert.strictEqual(Describe.maxShownLength, 2000)
    const cutTo = (n: number) => `${long(2000)}… (${n} characters)`
    const value = (description: Describe.Description, name: string) => description.fields.find(([n]) => n === name)?.[1]
    // Exactly at the limit: kept whole.
    assert.strictEqual(value(Describe.factError(new UnknownLabel({ label: long(2000) })), "label"), long(2000))
    assert.strictEqual(value(Describe.factError(new UnknownLabel({ label: long(2001) })), "label"), cutTo(2001))
    assert.strictEqual(value(Describe.captureError(new ConnectionFailed({ source: "s", detail: long(5000) })), "detail"), cutTo(5000))
    assert.strictEqual(
      value(Describe.citationError(new SpanMismatch({ source: "s", captureSha256: D1, quote: long(3000), claimedStart: 0, claimedEnd: 1, foundStart: 2, occurrences: 1 })), "quote"),
      cutTo(3000)
    )
    // A shared tag described through the report wording is cut once, not twice: the total is the value's own length.
    assert.strictEqual(value(Describe.citationError(new MissingCapture({ source: long(5000) })), "source"), cutTo(5000))
    assert.strictEqual(value(Describe.evi1Issue({ _tag: "Evi1MalformedLine", line: 1, detail: long(2500) }), "detail"), cutTo(2500))
    assert.strictEqual(value(Describe.uncitedSentence(new UncitedSentence({ sentence: long(2002), line: null })), "sentence"), cutTo(2002))
    // A digest the drafter must copy is shown in full, never cut to its first 12 characters.
    assert.strictEqual(value(Describe.answerError(new StaleManifest({ named: null, current: long(64) })), "this run's manifest"), long(64))
    assert.strictEqual(
      value(Describe.answerError(new InvalidAnswer({ issues: [{ path: ["k"], message: long(4000) }] })), "k"),
      cutTo(4000)
    )
    assert.strictEqual(value(Describe.streamError(new StreamRequestInvalid({ parameter: "p", detail: long(2100) })), "detail"), cutTo(2100))
    assert.strictEqual(value(Describe.serviceError(new RunNotFound({ runId: long(2200) })), "run"), cutTo(2200))
    assert.strictEqual(
      value(Describe.auditError(new AuditBaselineRejected({ failures: [{ citation: "c", error: missing }] as never })), "c"),
      "MissingCapture: No capture of this source in this run"
    )
  })
})
