/**
 * Every expected way citegate can fail, one tagged error each. Each carries the
 * fields a renderer needs and a `message` for humans; families are exported as
 * union types and Schemas so renderers can switch exhaustively on `_tag` and a
 * JSON rendering can be decoded back.
 *
 * Field values that come from reports or sources (labels, snippets, URLs) are
 * untrusted data: renderers escape them for their format.
 *
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"
import { ProviderEventInvalid, ProviderStreamError, ProviderStreamIncomplete } from "./errors/ProviderStream.js"

const short = (digest: string) => digest.slice(0, 12)

/** A position in a decoded document, e.g. `["facts", 2, "source"]`. */
export const IssuePath = Schema.Array(Schema.Union(Schema.String, Schema.Number))

export const Issue = Schema.Struct({ path: IssuePath, message: Schema.String })
export type Issue = typeof Issue.Type

export const formatPath = (path: ReadonlyArray<string | number>): string =>
  path.length === 0
    ? "(root)"
    : path.map((p, i) => (typeof p === "number" ? `[${p}]` : i === 0 ? p : `.${p}`)).join("")

const formatIssues = (issues: ReadonlyArray<Issue>, omitted: number | undefined) =>
  issues.map((issue) => `${formatPath(issue.path)}: ${issue.message}`).join("; ") +
  (omitted === undefined || omitted === 0 ? "" : `; and ${omitted} more issue${omitted === 1 ? "" : "s"} not listed`)

/**
 * Issues found beyond those listed: a hostile document can carry millions of them, so only the
 * first few (20) are listed, each message cut, and the rest counted. Absent when all are listed.
 */
const Omitted = Schema.optional(Schema.NonNegativeInt)

// ---------------------------------------------------------------------------
// Capture store: reading
// ---------------------------------------------------------------------------

/** The run holds no capture of this exact source. No other capture is consulted. */
export class MissingCapture extends Schema.TaggedError<MissingCapture>()("MissingCapture", {
  source: Schema.String
}) {
  override get message() {
    return `No capture of ${this.source} exists in this run`
  }
}

export const CorruptReason = Schema.Literal(
  "unreadable",
  "symlink",
  // No longer produced (hard-linked records are read); kept so that older JSON results still decode.
  "hard-linked",
  "not-a-regular-file",
  "too-large",
  "invalid-utf8",
  "invalid-json",
  "not-a-v1-record",
  "source-mismatch",
  "byte-length-mismatch",
  // v2 records: the body file beside the record is absent, or is not the body the record describes.
  "body-missing",
  "body-mismatch",
  // v2 records: a page or heading anchor outside the text, or pages out of order.
  "invalid-anchor",
  // A database row whose record bytes no longer hash to the digest stored beside them.
  "record-digest-mismatch"
)
export type CorruptReason = typeof CorruptReason.Type

/** The stored capture cannot be trusted as a v1 record of this source. */
export class CorruptCapture extends Schema.TaggedError<CorruptCapture>()("CorruptCapture", {
  source: Schema.String,
  reason: CorruptReason,
  detail: Schema.String
}) {
  override get message() {
    return `The capture of ${this.source} is corrupt (${this.reason}): ${this.detail}`
  }
}

/** The stored record is in an older format. Migrate it explicitly; it is never accepted as is. */
export class LegacyCapture extends Schema.TaggedError<LegacyCapture>()("LegacyCapture", {
  source: Schema.String,
  detail: Schema.String
}) {
  override get message() {
    return `The capture of ${this.source} is a legacy record (${this.detail}); migrate it explicitly with run-pipeline migrate`
  }
}

export const CaptureReadError = Schema.Union(MissingCapture, CorruptCapture, LegacyCapture)
export type CaptureReadError = typeof CaptureReadError.Type

// ---------------------------------------------------------------------------
// Capture store: writing
// ---------------------------------------------------------------------------

/** One run holds one capture per source; the first one is left byte-for-byte untouched. */
export class CaptureExists extends Schema.TaggedError<CaptureExists>()("CaptureExists", {
  source: Schema.String
}) {
  override get message() {
    return `A capture of ${this.source} already exists in this run; the existing record was left untouched`
  }
}

/** The store could not persist a record (disk full, I/O error, …). Nothing is left under a final name. */
export class CaptureWriteFailed extends Schema.TaggedError<CaptureWriteFailed>()("CaptureWriteFailed", {
  source: Schema.String,
  detail: Schema.String
}) {
  override get message() {
    return `Writing the capture of ${this.source} failed: ${this.detail}`
  }
}

export const CaptureWriteError = Schema.Union(CaptureExists, CaptureWriteFailed)
export type CaptureWriteError = typeof CaptureWriteError.Type

/** The run directory a store was asked to use is not a usable directory. */
export class InvalidRunDirectory extends Schema.TaggedError<InvalidRunDirectory>()("InvalidRunDirectory", {
  path: Schema.String,
  detail: Schema.String
}) {
  override get message() {
    return `Run directory ${this.path} cannot be used: ${this.detail}`
  }
}

/**
 * A database-backed store cannot be opened for this run: the database is
 * unreachable, its schema is not migrated, or the run is missing. `run` names
 * the run; `detail` never holds credentials. (A new run whose name is taken is `RunExists`.)
 */
export class StoreUnavailable extends Schema.TaggedError<StoreUnavailable>()("StoreUnavailable", {
  run: Schema.String,
  detail: Schema.String
}) {
  override get message() {
    const run = this.run === "" ? "" : ` for run ${JSON.stringify(this.run)}`
    return `The capture store cannot be used${run}: ${this.detail}`
  }
}

/**
 * The PostgreSQL store's optional peer dependencies are not installed: `missing` is the package
 * Node could not find, `install` the packages to add (`npm install …`). Raised when the store is
 * first used, never as a module-loading crash of `citegate/PostgresStore`.
 */
export class StorePackageMissing extends Schema.TaggedError<StorePackageMissing>()("StorePackageMissing", {
  missing: Schema.String,
  install: Schema.Array(Schema.String)
}) {
  override get message() {
    return `The PostgreSQL store needs the optional peer dependencies ${this.install.join(" and ")}, ` +
      `and ${this.missing} is not installed: npm install ${this.install.join(" ")}`
  }
}

/**
 * A NEW run was asked for (capture) under a name the store already holds: captures never join
 * another run's, so evidence is never mixed. The database's counterpart of the CLI's `RunDirectoryExists`.
 */
export class RunExists extends Schema.TaggedError<RunExists>()("RunExists", {
  run: Schema.String
}) {
  override get message() {
    return `Run ${JSON.stringify(this.run)} already exists in the capture store; captures go into a new run so evidence is never mixed`
  }
}

// ---------------------------------------------------------------------------
// Verification: per-fact failures
// ---------------------------------------------------------------------------

export const NotApprovedReason = Schema.Literal(
  "not-in-approved-set",
  "not-canonical",
  "scheme-not-allowed",
  "userinfo",
  "fragment",
  "host-not-allowed"
)
export type NotApprovedReason = typeof NotApprovedReason.Type

/** The source is not an exact member of the operator's approved set (or breaks the URL policy). */
export class NotApproved extends Schema.TaggedError<NotApproved>()("NotApproved", {
  source: Schema.String,
  reason: NotApprovedReason,
  detail: Schema.String
}) {
  override get message() {
    return `Source ${JSON.stringify(this.source)} is not approved: ${this.detail}`
  }
}

/** The fact's label is not one of the approved labels. */
export class UnknownLabel extends Schema.TaggedError<UnknownLabel>()("UnknownLabel", {
  label: Schema.String
}) {
  override get message() {
    return `Label ${JSON.stringify(this.label)} is not an approved label`
  }
}

/** The label was already used by an earlier fact of the same report. */
export class DuplicateLabel extends Schema.TaggedError<DuplicateLabel>()("DuplicateLabel", {
  label: Schema.String,
  firstIndex: Schema.NonNegativeInt
}) {
  override get message() {
    // Facts are numbered from 1 for humans, as in every rendering; `firstIndex` stays 0-based.
    return `Label ${JSON.stringify(this.label)} is already used by fact ${this.firstIndex + 1}`
  }
}

/**
 * `report`: the digest the report names (`reported`) differs from this run's capture (`stored`).
 * `stored`: the stored text no longer hashes to the capture's own recorded digest (the capture was altered).
 */
export const DigestMismatchKind = Schema.Literal("report", "stored")
export type DigestMismatchKind = typeof DigestMismatchKind.Type

/**
 * Three digests, always all present, so each field means the same for both kinds:
 * `reported` is the digest the report names, `stored` the digest recorded in this
 * run's capture record, `computed` the SHA-256 of the record's text as read now.
 * `kind: "report"`: `reported` ≠ `stored` (and `computed` = `stored`).
 * `kind: "stored"`: `computed` ≠ `stored`; the capture was altered.
 */
export class DigestMismatch extends Schema.TaggedError<DigestMismatch>()("DigestMismatch", {
  source: Schema.String,
  kind: DigestMismatchKind,
  reported: Schema.String,
  stored: Schema.String,
  computed: Schema.String
}) {
  override get message() {
    return this.kind === "report"
      ? `The report names capture ${short(this.reported)}… of ${this.source}, but this run's capture is ${short(this.stored)}…`
      : `The capture of ${this.source} was altered: its text hashes to ${short(this.computed)}…, not its recorded ${short(this.stored)}…`
  }
}

/**
 * A repair diagnostic, never acceptance: the capture's passage nearest to a snippet that does not
 * occur verbatim. `method: "normalized/1"` (score 1) when the snippet occurs after normalisation,
 * else `fuzzy` (score in [0, 1)). `span` is in raw UTF-16 code units of the capture text; `text`
 * is the capture's text in it (cut past 2,000 code units); `differences` is a word diff, snippet
 * `[-…-]` against capture `{+…+}`, white space made visible (src/anchor/Differences.ts).
 */
export const NearestPassage = Schema.Struct({
  method: Schema.Literal("normalized/1", "fuzzy"),
  score: Schema.Number.pipe(Schema.between(0, 1)),
  // Strict too: the passage's `onExcessProperty: "error"` below holds for its span.
  span: Schema.Struct({ start: Schema.NonNegativeInt, end: Schema.NonNegativeInt }),
  text: Schema.String,
  differences: Schema.String
}).annotations({ identifier: "NearestPassage", parseOptions: { onExcessProperty: "error" } })
export type NearestPassage = typeof NearestPassage.Type

/**
 * The first number, sign or unit a quote changes against the capture's text where it matches after
 * normalisation (src/anchor/MeaningGuard.ts): `quote` says what the capture writes as `capture`
 * (`""`: that side has no such token). Its presence means the quote is NOT the capture's text.
 */
export const MeaningChangeInfo = Schema.Struct({
  quote: Schema.String,
  capture: Schema.String
}).annotations({ identifier: "MeaningChange", parseOptions: { onExcessProperty: "error" } })
export type MeaningChangeInfo = typeof MeaningChangeInfo.Type

/** The snippet does not occur verbatim (exact code units) in the capture text. */
export class SnippetAbsent extends Schema.TaggedError<SnippetAbsent>()("SnippetAbsent", {
  source: Schema.String,
  captureSha256: Schema.String,
  snippet: Schema.String,
  /** The nearest passage, when one scores at least the documented minimum and diagnostics ran. */
  nearest: Schema.optional(NearestPassage),
  /**
   * Set when the snippet equals the capture's text only up to a changed number, sign or unit: under
   * `normalized/2` the reason the normalised match was refused, under any policy a fact about the
   * nearest passage.
   */
  changed: Schema.optional(MeaningChangeInfo)
}) {
  override get message() {
    const nearest = this.nearest === undefined
      ? ""
      : ` (nearest passage: ${this.nearest.method}, score ${this.nearest.score})`
    const changed = this.changed === undefined
      ? ""
      : `; the quote writes ${JSON.stringify(this.changed.quote)} where the capture has ${JSON.stringify(this.changed.capture)}`
    return `The snippet does not occur verbatim in capture ${short(this.captureSha256)}… of ${this.source}${nearest}${changed}`
  }
}

/**
 * The snippet occurs in the capture, but not inside the page or heading section
 * the fact names (`reason: "outside"`), or the capture has no such anchor
 * (`reason: "no-such-anchor"`).
 */
/** `page 2`, or `pages 2–3` for an excerpt across a page break. */
export const pagesLabel = (first: number, last: number | undefined): string =>
  last === undefined || last === first ? `page ${first}` : `pages ${first}–${last}`

export class AnchorMismatch extends Schema.TaggedError<AnchorMismatch>()("AnchorMismatch", {
  source: Schema.String,
  captureSha256: Schema.String,
  snippet: Schema.String,
  /** `page 3` or `heading Results > Q3`, as the fact named it. */
  anchor: Schema.String,
  reason: Schema.Literal("outside", "no-such-anchor"),
  /** Where the excerpt's first occurrence is: its page and innermost heading path (v2 captures that have them). */
  foundPage: Schema.optional(Schema.Int),
  /** The page the excerpt ends on, when it runs past `foundPage` (a quote across a page break). */
  foundLastPage: Schema.optional(Schema.Int),
  foundHeading: Schema.optional(Schema.Array(Schema.String)),
  /** How many pages the capture has (v2 captures with pages). */
  pages: Schema.optional(Schema.NonNegativeInt),
  /** The capture's distinct heading paths in text order, at most 50 (internal/anchors.ts `maxListedHeadings`)... */
  headings: Schema.optional(Schema.Array(Schema.Array(Schema.String))),
  /** ...and how many more there are. */
  headingsOmitted: Schema.optional(Schema.NonNegativeInt)
}) {
  override get message() {
    const where = [
      ...(this.foundPage === undefined ? [] : [pagesLabel(this.foundPage, this.foundLastPage)]),
      ...(this.foundHeading === undefined ? [] : [`heading ${this.foundHeading.join(" > ")}`])
    ]
    const found = where.length === 0 ? "" : ` (it is on ${where.join(", ")})`
    return this.reason === "outside"
      ? `The snippet occurs in capture ${short(this.captureSha256)}… of ${this.source}, but not inside ${this.anchor}${found}`
      : `Capture ${short(this.captureSha256)}… of ${this.source} has no ${this.anchor}${found}`
  }
}

/**
 * What the citation quotes occurs more than once, and nothing picks one
 * occurrence: with a `prefix` and/or `suffix`, `occurrences` (at least 2) of
 * them still match with it; without, the policy is `verify.ambiguous: "reject"`
 * and `occurrences` counts the snippet itself.
 */
export class AmbiguousSnippet extends Schema.TaggedError<AmbiguousSnippet>()("AmbiguousSnippet", {
  source: Schema.String,
  captureSha256: Schema.String,
  snippet: Schema.String,
  occurrences: Schema.Int,
  prefix: Schema.optional(Schema.String),
  suffix: Schema.optional(Schema.String)
}) {
  override get message() {
    const context = this.prefix === undefined && this.suffix === undefined ? "" : " with the given prefix/suffix"
    return `The snippet occurs ${this.occurrences} times${context} in capture ${short(this.captureSha256)}… of ${this.source}; ` +
      "exactly one occurrence must be named"
  }
}

/** Why one fact of a report failed verification. */
export const FactError = Schema.Union(
  NotApproved,
  UnknownLabel,
  DuplicateLabel,
  MissingCapture,
  CorruptCapture,
  LegacyCapture,
  DigestMismatch,
  SnippetAbsent,
  AnchorMismatch,
  AmbiguousSnippet
)
export type FactError = typeof FactError.Type

/** A failed fact: its position and label in the report, and why it failed. */
export const FactRejection = Schema.Struct({
  index: Schema.NonNegativeInt,
  label: Schema.String,
  error: FactError
}).annotations({ identifier: "FactRejection" })
export type FactRejection = typeof FactRejection.Type

// ---------------------------------------------------------------------------
// Verification: whole-report failures
// ---------------------------------------------------------------------------

/** The report is not a valid report: its schema issues with their paths (the first 20, the rest counted). */
export class InvalidReport extends Schema.TaggedError<InvalidReport>()("InvalidReport", {
  issues: Schema.NonEmptyArray(Issue),
  omitted: Omitted
}) {
  override get message() {
    return `The report is invalid: ${formatIssues(this.issues, this.omitted)}`
  }
}

/** At least one fact failed verification; every failure is listed, in report order. */
export class ReportRejected extends Schema.TaggedError<ReportRejected>()("ReportRejected", {
  failures: Schema.NonEmptyArray(FactRejection)
}) {
  override get message() {
    const n = this.failures.length
    return `The report was rejected: ${n} fact failure${n === 1 ? "" : "s"}: ` +
      // Numbered from 1, as every rendering numbers facts; `index` stays 0-based.
      this.failures.map((f) => `fact ${f.index + 1} (${JSON.stringify(f.label)}): ${f.error._tag}`).join(", ")
  }
}

/** The tags of `FactError`, in a fixed order (the order of `groupFailures`' keys). */
export const factErrorTags = [
  "NotApproved",
  "UnknownLabel",
  "DuplicateLabel",
  "MissingCapture",
  "CorruptCapture",
  "LegacyCapture",
  "DigestMismatch",
  "SnippetAbsent",
  "AnchorMismatch",
  "AmbiguousSnippet"
] as const satisfies ReadonlyArray<FactError["_tag"]>
// A FactError tag missing from the list above is a type error here.
const _everyFactErrorTagListed: Exclude<FactError["_tag"], typeof factErrorTags[number]> extends never ? true : never = true
void _everyFactErrorTagListed

/** A failed fact whose error is known to carry one tag. */
export interface FactRejectionOf<Tag extends FactError["_tag"]> {
  readonly index: number
  readonly label: string
  readonly error: Extract<FactError, { readonly _tag: Tag }>
}

/** Failures grouped by error tag: every tag is a key, each with its (possibly empty) typed list, report order kept. */
export type GroupedFailures = { readonly [Tag in FactError["_tag"]]: ReadonlyArray<FactRejectionOf<Tag>> }

/**
 * Group the failures of a `ReportRejected` (or drop-mode `retractions`) by the
 * tag of their error, so each group is typed without narrowing `_tag` by hand.
 */
export const groupFailures = (failures: ReportRejected | ReadonlyArray<FactRejection>): GroupedFailures => {
  const list: ReadonlyArray<FactRejection> = "failures" in failures ? failures.failures : failures
  const groups = Object.fromEntries(factErrorTags.map((tag) => [tag, [] as Array<FactRejection>])) as Record<
    FactError["_tag"],
    Array<FactRejection>
  >
  for (const failure of list) groups[failure.error._tag].push(failure)
  return groups as unknown as GroupedFailures
}


/**
 * Verification did not finish within the configured deadline (`verify.timeoutMs`).
 * Nothing in the report is accepted; no partial result is returned.
 */
export class VerificationTimeout extends Schema.TaggedError<VerificationTimeout>()("VerificationTimeout", {
  timeoutMs: Schema.Int.pipe(Schema.positive())
}) {
  override get message() {
    return `Verification did not finish within ${this.timeoutMs} ms; nothing in the report is accepted`
  }
}

export const VerifyError = Schema.Union(InvalidReport, ReportRejected, VerificationTimeout)
export type VerifyError = typeof VerifyError.Type

// ---------------------------------------------------------------------------
// Configuration
// ---------------------------------------------------------------------------

/** A configuration document (pipeline.json, Gate options) failed strict decoding. */
export class InvalidConfig extends Schema.TaggedError<InvalidConfig>()("InvalidConfig", {
  issues: Schema.NonEmptyArray(Issue),
  omitted: Omitted
}) {
  override get message() {
    return `The configuration is invalid: ${formatIssues(this.issues, this.omitted)}`
  }
}

/** The operator's migration map does not decode (see `Migrate.decodeMap`); nothing was migrated. */
export class InvalidMigrationMap extends Schema.TaggedError<InvalidMigrationMap>()("InvalidMigrationMap", {
  issues: Schema.NonEmptyArray(Issue),
  omitted: Omitted
}) {
  override get message() {
    return `The migration map is invalid: ${formatIssues(this.issues, this.omitted)}`
  }
}

// ---------------------------------------------------------------------------
// Capture (trusted pipeline code fetching approved sources)
// ---------------------------------------------------------------------------

/** A resolved (or literal) address of the source's host is not allowed; no connection was made to it. */
export class AddressRejected extends Schema.TaggedError<AddressRejected>()("AddressRejected", {
  source: Schema.String,
  host: Schema.String,
  address: Schema.String,
  reason: Schema.String
}) {
  override get message() {
    return `Refused to connect to ${this.host} at ${this.address} for ${this.source}: ${this.reason}`
  }
}

/** The server answered with a redirect. Redirects are never followed. */
export class RedirectRejected extends Schema.TaggedError<RedirectRejected>()("RedirectRejected", {
  source: Schema.String,
  status: Schema.Int,
  location: Schema.NullOr(Schema.String)
}) {
  override get message() {
    return `${this.source} answered ${this.status} redirecting to ${this.location ?? "(no location)"}; redirects are not followed: approve the exact target URL instead`
  }
}

/** The server answered with a status other than 200. */
export class UnexpectedStatus extends Schema.TaggedError<UnexpectedStatus>()("UnexpectedStatus", {
  source: Schema.String,
  status: Schema.Int
}) {
  override get message() {
    return `${this.source} answered with status ${this.status}; only 200 is captured`
  }
}

/** The body is not `text/plain` in UTF-8. */
export class UnsupportedContentType extends Schema.TaggedError<UnsupportedContentType>()("UnsupportedContentType", {
  source: Schema.String,
  contentType: Schema.NullOr(Schema.String)
}) {
  override get message() {
    return `${this.source} sent content type ${this.contentType === null ? "(none)" : JSON.stringify(this.contentType)}; only text/plain in UTF-8 is captured`
  }
}

/** The body is encoded (gzip, br, …). Encoded bodies are rejected, never decompressed. */
export class UnsupportedContentEncoding extends Schema.TaggedError<UnsupportedContentEncoding>()(
  "UnsupportedContentEncoding",
  { source: Schema.String, contentEncoding: Schema.String }
) {
  override get message() {
    return `${this.source} sent Content-Encoding ${JSON.stringify(this.contentEncoding)}; only identity bodies are captured`
  }
}

/** A header that decides how the body is read was sent more than once; fail closed. */
export class AmbiguousHeader extends Schema.TaggedError<AmbiguousHeader>()("AmbiguousHeader", {
  source: Schema.String,
  header: Schema.String,
  value: Schema.String
}) {
  override get message() {
    return `${this.source} sent an ambiguous ${this.header} header (${JSON.stringify(this.value)})`
  }
}

/** The body is larger than the capture budget; the transfer was aborted. */
export class TooLarge extends Schema.TaggedError<TooLarge>()("TooLarge", {
  source: Schema.String,
  maxBytes: Schema.Int,
  /** The Content-Length the server announced, if that is what exceeded the budget. */
  declaredBytes: Schema.NullOr(Schema.Number),
  /** Bytes received before the transfer was aborted. */
  receivedBytes: Schema.Int
}) {
  override get message() {
    return this.declaredBytes !== null
      ? `${this.source} announced ${this.declaredBytes} bytes, over the ${this.maxBytes} byte budget; the body was not read`
      : `${this.source} sent more than the ${this.maxBytes} byte budget; the transfer was aborted`
  }
}

/** The body ended before the length the server announced. */
export class TruncatedBody extends Schema.TaggedError<TruncatedBody>()("TruncatedBody", {
  source: Schema.String,
  expectedBytes: Schema.Number,
  /** Bytes received, when known (the connection may break before the count is reported). */
  receivedBytes: Schema.NullOr(Schema.Int)
}) {
  override get message() {
    // Without a count: "sent fewer than the N bytes", not "sent fewer than the of the N bytes".
    const sent = this.receivedBytes === null ? "fewer than the" : `${this.receivedBytes} of the`
    return `${this.source} sent ${sent} ${this.expectedBytes} bytes it announced`
  }
}

/** The body is not valid UTF-8 (a truncated final sequence included). */
export class InvalidEncoding extends Schema.TaggedError<InvalidEncoding>()("InvalidEncoding", {
  source: Schema.String,
  byteLength: Schema.Int
}) {
  override get message() {
    return `${this.source} sent a body that is not valid UTF-8`
  }
}

/** The whole fetch (connect, headers and body) did not finish within the budget; the socket was closed. */
export class Timeout extends Schema.TaggedError<Timeout>()("Timeout", {
  source: Schema.String,
  timeoutMs: Schema.Int
}) {
  override get message() {
    return `Capturing ${this.source} did not finish within ${this.timeoutMs} ms`
  }
}

/** The connection failed or broke (refused, reset, TLS failure, …). */
export class ConnectionFailed extends Schema.TaggedError<ConnectionFailed>()("ConnectionFailed", {
  source: Schema.String,
  detail: Schema.String
}) {
  override get message() {
    return `Could not fetch ${this.source}: ${this.detail}`
  }
}

/** A capture budget (timeout, size, concurrency) is out of range. */
export class InvalidBudget extends Schema.TaggedError<InvalidBudget>()("InvalidBudget", {
  budget: Schema.String,
  value: Schema.Unknown,
  detail: Schema.String
}) {
  override get message() {
    return `Capture budget ${this.budget} = ${String(this.value)} is invalid: ${this.detail}`
  }
}

/**
 * The body is framed by a transfer coding other than `chunked` (e.g. `gzip, chunked`): the HTTP
 * parser would hand over still-encoded bytes. Rejected, never decoded.
 */
export class UnsupportedTransferEncoding extends Schema.TaggedError<UnsupportedTransferEncoding>()(
  "UnsupportedTransferEncoding",
  { source: Schema.String, transferEncoding: Schema.String }
) {
  override get message() {
    return `${this.source} sent Transfer-Encoding ${JSON.stringify(this.transferEncoding)}; only chunked (or no transfer coding) is captured`
  }
}

/**
 * The server's TLS certificate was not accepted: not issued by a trusted CA (the system's, or
 * `capture.caFile` when set), expired, or not valid for the source's host name.
 */
export class CertificateRejected extends Schema.TaggedError<CertificateRejected>()("CertificateRejected", {
  source: Schema.String,
  host: Schema.String,
  /** Node's verification code, e.g. `DEPTH_ZERO_SELF_SIGNED_CERT`, `ERR_TLS_CERT_ALTNAME_INVALID`. */
  code: Schema.String,
  detail: Schema.String
}) {
  override get message() {
    return `The TLS certificate of ${this.host} for ${this.source} was rejected (${this.code}): ${this.detail}`
  }
}

/** The CA certificates given by `capture.caFile` (or the `ca` option) cannot be used; nothing was fetched. */
export class InvalidCaFile extends Schema.TaggedError<InvalidCaFile>()("InvalidCaFile", {
  /** The file, or null when the certificates were passed directly as `ca`. */
  path: Schema.NullOr(Schema.String),
  detail: Schema.String
}) {
  override get message() {
    return `${this.path === null ? "The ca option" : `The CA file ${this.path}`} cannot be used: ${this.detail}`
  }
}

/** The formats citegate extracts text from. */
export const ExtractionFormat = Schema.Literal("markdown", "html", "pdf")
export type ExtractionFormat = typeof ExtractionFormat.Type

/** The body could not be turned into text (a malformed, truncated or encrypted PDF, say); nothing was written. */
export class ExtractionFailed extends Schema.TaggedError<ExtractionFailed>()("ExtractionFailed", {
  source: Schema.String,
  format: ExtractionFormat,
  reason: Schema.Literal("malformed", "truncated", "encrypted", "worker-failed"),
  detail: Schema.String
}) {
  override get message() {
    return `Extracting text from the ${this.format} body of ${this.source} failed (${this.reason}): ${this.detail}`
  }
}

/** The body declares (in its Content-Type or a `<meta charset>`) an encoding other than UTF-8. */
export class UnsupportedEncoding extends Schema.TaggedError<UnsupportedEncoding>()("UnsupportedEncoding", {
  source: Schema.String,
  /** The charset as declared. */
  charset: Schema.String,
  /** Where it was declared. */
  declaredIn: Schema.Literal("content-type", "meta")
}) {
  override get message() {
    return `${this.source} declares the charset ${JSON.stringify(this.charset)} (in its ${this.declaredIn}); only UTF-8 is captured`
  }
}

/**
 * An extraction cap was passed; extraction stopped there. The configurable caps (pages, extracted
 * characters, HTML nesting depth) go by their pipeline.json names; two are derived from `maxBytes`:
 * `memory` (the extraction process's resident memory, in bytes) and `decodedBytes` (what a PDF's
 * streams decode to, in bytes, checked before pdf.js decodes them).
 */
export class ExtractionTooLarge extends Schema.TaggedError<ExtractionTooLarge>()("ExtractionTooLarge", {
  source: Schema.String,
  format: ExtractionFormat,
  /** The cap passed, by its pipeline.json name, or `memory` / `decodedBytes`. */
  cap: Schema.Literal("maxPages", "maxCharacters", "maxDepth", "memory", "decodedBytes"),
  limit: Schema.Int
}) {
  override get message() {
    switch (this.cap) {
      case "memory":
        return `Extracting the ${this.format} body of ${this.source} passed the extraction memory limit of ${this.limit} bytes; the extraction was stopped and nothing was written`
      case "decodedBytes":
        return `The ${this.format} body of ${this.source} decodes to more than ${this.limit} bytes of streams; nothing was decoded or written`
      default:
        return `The ${this.format} body of ${this.source} passes the ${this.cap} cap of ${this.limit}; nothing was written`
    }
  }
}

/** Why capturing one source failed. */
export const CaptureError = Schema.Union(
  NotApproved,
  AddressRejected,
  RedirectRejected,
  UnexpectedStatus,
  UnsupportedContentType,
  UnsupportedContentEncoding,
  AmbiguousHeader,
  TooLarge,
  TruncatedBody,
  InvalidEncoding,
  Timeout,
  ConnectionFailed,
  CaptureExists,
  CaptureWriteFailed,
  UnsupportedTransferEncoding,
  CertificateRejected,
  ExtractionFailed,
  UnsupportedEncoding,
  ExtractionTooLarge
)
export type CaptureError = typeof CaptureError.Type

// ---------------------------------------------------------------------------
// Explicit migration of legacy records
// ---------------------------------------------------------------------------

export const MigrationRejectionReason = Schema.Literal(
  "missing",
  "unreadable",
  "not-a-legacy-record",
  "digest-mismatch",
  "source-conflict",
  "write-failed"
)

/** One legacy entry the operator's map approved could not be migrated; nothing was written for it. */
export class MigrationRejected extends Schema.TaggedError<MigrationRejected>()("MigrationRejected", {
  file: Schema.String,
  source: Schema.String,
  reason: MigrationRejectionReason,
  detail: Schema.String
}) {
  override get message() {
    return `Legacy record ${this.file} was not migrated (${this.reason}): ${this.detail}`
  }
}

// ---------------------------------------------------------------------------
// Answers: prose with inline citations (citegate.answer/1, EVI1, Anthropic)
// ---------------------------------------------------------------------------

/** The quote occurs in the capture, but not where the citation's character indices say it is. */
export class SpanMismatch extends Schema.TaggedError<SpanMismatch>()("SpanMismatch", {
  source: Schema.String,
  captureSha256: Schema.String,
  quote: Schema.String,
  /** The claimed span, in Unicode code points, end exclusive. */
  claimedStart: Schema.NonNegativeInt,
  claimedEnd: Schema.NonNegativeInt,
  /** Where the quote first occurs, in code points. */
  foundStart: Schema.NonNegativeInt,
  occurrences: Schema.Int
}) {
  override get message() {
    return `The quote occurs in capture ${short(this.captureSha256)}… of ${this.source} at code point ${this.foundStart}` +
      ` (${this.occurrences} occurrence${this.occurrences === 1 ? "" : "s"}), not at the claimed ${this.claimedStart}–${this.claimedEnd}`
  }
}

export const AnchorKind = Schema.Literal("page", "heading", "content-block")
export type AnchorKind = typeof AnchorKind.Type

/**
 * The citation names a page, heading or content block, but captures carry no
 * anchors yet (plain text): the anchor cannot be checked, so it is not accepted.
 */
export class AnchorUnsupported extends Schema.TaggedError<AnchorUnsupported>()("AnchorUnsupported", {
  source: Schema.String,
  anchor: AnchorKind,
  value: Schema.String
}) {
  override get message() {
    return `The citation of ${this.source} names a ${this.anchor} (${this.value}), but no capture has that kind of anchor ` +
      "(captures carry PDF pages and heading paths, never content blocks): cite the quote with its page or heading, or without an anchor"
  }
}

/** Why one citation of an answer failed: a report fact's capture and search failures, or a location failure. */
export const CitationError = Schema.Union(
  NotApproved,
  MissingCapture,
  CorruptCapture,
  LegacyCapture,
  DigestMismatch,
  SnippetAbsent,
  SpanMismatch,
  AnchorUnsupported,
  // From the shared matching path: produced only for citations that name a page or heading.
  AnchorMismatch,
  // From the shared matching path: several occurrences and nothing picks one.
  AmbiguousSnippet
)
export type CitationError = typeof CitationError.Type

/** A failed citation: the claim (0-based position and id) and the citation's 0-based position in it. */
export const CitationRejection = Schema.Struct({
  claimIndex: Schema.NonNegativeInt,
  claimId: Schema.String,
  citationIndex: Schema.NonNegativeInt,
  error: CitationError
}).annotations({ identifier: "CitationRejection" })
export type CitationRejection = typeof CitationRejection.Type

/** A sentence that needs a citation (it states a quantity, or is long and of no exempt kind: docs/answers.md) and cites nothing. */
export class UncitedSentence extends Schema.TaggedError<UncitedSentence>()("UncitedSentence", {
  sentence: Schema.String,
  /** 1-based line of the drafted text where the sentence starts, when the format has lines (EVI1). */
  line: Schema.NullOr(Schema.Int)
}) {
  override get message() {
    return `An uncited sentence${this.line === null ? "" : ` on line ${this.line}`} looks factual: ${JSON.stringify(this.sentence.slice(0, 80))}`
  }
}

/** The answer is not a valid answer (schema, or a numbered handle the manifest does not hold): every issue. */
export class InvalidAnswer extends Schema.TaggedError<InvalidAnswer>()("InvalidAnswer", {
  issues: Schema.NonEmptyArray(Issue),
  omitted: Omitted
}) {
  override get message() {
    return `The answer is invalid: ${formatIssues(this.issues, this.omitted)}`
  }
}

/**
 * The answer was drafted against another manifest than this run's (or names
 * none where one is required): its numbered handles are never re-bound to
 * other captures.
 */
export class StaleManifest extends Schema.TaggedError<StaleManifest>()("StaleManifest", {
  /** The manifest digest the answer names, or null when it names none. */
  named: Schema.NullOr(Schema.String),
  current: Schema.String
}) {
  override get message() {
    return this.named === null
      ? `The answer names no manifest; this run's manifest is ${this.current} (name it to cite by number)`
      : `The answer was drafted against manifest ${short(this.named)}…, not this run's ${this.current}`
  }
}

// EVI1 line issues: plain tagged records (not errors), collected into one Evi1Invalid. Lines are 1-based.

/** A line of the appendix (or a citation group) that does not follow the protocol. */
export const Evi1MalformedLine = Schema.TaggedStruct("Evi1MalformedLine", {
  line: Schema.Int,
  detail: Schema.String
})
/** A `{cX}` used by a second claim. */
export const Evi1DuplicateClaimId = Schema.TaggedStruct("Evi1DuplicateClaimId", {
  line: Schema.Int,
  claimId: Schema.String,
  firstLine: Schema.Int
})
/** A second evidence line for the same claim and source. */
export const Evi1DuplicateEvidence = Schema.TaggedStruct("Evi1DuplicateEvidence", {
  line: Schema.Int,
  claimId: Schema.String,
  source: Schema.Int,
  firstLine: Schema.Int
})
/** A claim cites a source `[n]` but no evidence line `cX|n|…` gives its quote. */
export const Evi1MissingEvidence = Schema.TaggedStruct("Evi1MissingEvidence", {
  line: Schema.Int,
  claimId: Schema.String,
  source: Schema.Int
})
/** An evidence line whose claim does not cite that source (or does not exist). */
export const Evi1UnusedEvidence = Schema.TaggedStruct("Evi1UnusedEvidence", {
  line: Schema.Int,
  claimId: Schema.String,
  source: Schema.Int
})
/** A source number outside the manifest's 1…n. */
export const Evi1SourceOutOfRange = Schema.TaggedStruct("Evi1SourceOutOfRange", {
  line: Schema.Int,
  claimId: Schema.String,
  source: Schema.Int,
  sources: Schema.Int
})
/** A source the manifest lists as missing in this run: the model was told not to cite it. */
export const Evi1SourceUnavailable = Schema.TaggedStruct("Evi1SourceUnavailable", {
  line: Schema.Int,
  claimId: Schema.String,
  source: Schema.Int,
  url: Schema.String
})
/** A `{cX}` with no citation group `[n]` directly before it. */
export const Evi1OrphanMarker = Schema.TaggedStruct("Evi1OrphanMarker", {
  line: Schema.Int,
  claimId: Schema.String
})
/**
 * A second `EVI1` line: an answer has one appendix, starting at its first `EVI1` line. A block
 * written into the body (or after the appendix) is never read as prose or as a second appendix.
 */
export const Evi1ExtraAppendix = Schema.TaggedStruct("Evi1ExtraAppendix", {
  line: Schema.Int,
  /** The line of the first `EVI1` (where the appendix starts). */
  firstLine: Schema.Int
})

export const Evi1Issue = Schema.Union(
  Evi1MalformedLine,
  Evi1DuplicateClaimId,
  Evi1DuplicateEvidence,
  Evi1MissingEvidence,
  Evi1UnusedEvidence,
  Evi1SourceOutOfRange,
  Evi1SourceUnavailable,
  Evi1OrphanMarker,
  Evi1ExtraAppendix
)
export type Evi1Issue = typeof Evi1Issue.Type

/** The EVI1 text breaks the protocol: every issue, in line order. */
export class Evi1Invalid extends Schema.TaggedError<Evi1Invalid>()("Evi1Invalid", {
  /** The first 100 issues, in line order. */
  issues: Schema.NonEmptyArray(Evi1Issue),
  omitted: Omitted
}) {
  override get message() {
    return `The EVI1 answer is invalid: ${this.issues.map((i) => `line ${i.line}: ${i._tag}`).join(", ")}` +
      (this.omitted === undefined || this.omitted === 0 ? "" : `; and ${this.omitted} more issue${this.omitted === 1 ? "" : "s"} not listed`)
  }
}

/** The drafted text is longer than the documented limit; nothing of it was parsed past the limit. */
export class AnswerTooLarge extends Schema.TaggedError<AnswerTooLarge>()("AnswerTooLarge", {
  maxChars: Schema.Int,
  receivedChars: Schema.Int
}) {
  override get message() {
    return `The answer has more than ${this.maxChars} characters (received at least ${this.receivedChars})`
  }
}

export const AnswerLimit = Schema.Literal("claims", "citations", "citations-per-claim", "uncited-sentences")
export type AnswerLimit = typeof AnswerLimit.Type

/**
 * The answer passed a documented count limit (claims, citations in total, citations of one claim);
 * counted while the text is scanned, so nothing past the limit was parsed, bound or verified.
 */
export class AnswerLimitExceeded extends Schema.TaggedError<AnswerLimitExceeded>()("AnswerLimitExceeded", {
  limit: AnswerLimit,
  max: Schema.Int,
  /** How many had been counted when the scan stopped (at least max + 1). */
  received: Schema.Int
}) {
  override get message() {
    const what = this.limit === "citations-per-claim"
      ? "citations in one claim"
      : this.limit === "uncited-sentences"
      ? "uncited sentences that need a citation"
      : this.limit
    return `The answer has more than ${this.max} ${what} (counted ${this.received} before stopping)`
  }
}

/** Reject mode (or `answers.uncited: "reject"`): at least one citation or sentence failed; every failure listed. */
export class AnswerRejected extends Schema.TaggedError<AnswerRejected>()("AnswerRejected", {
  citations: Schema.Array(CitationRejection),
  uncited: Schema.Array(UncitedSentence)
}) {
  override get message() {
    return `The answer was rejected: ${this.citations.length} failed citation(s), ${this.uncited.length} uncited sentence(s)`
  }
}

/** Why a whole answer was not accepted. */
export const AnswerError = Schema.Union(
  InvalidAnswer,
  StaleManifest,
  Evi1Invalid,
  AnswerTooLarge,
  AnswerLimitExceeded,
  AnswerRejected,
  VerificationTimeout,
  ProviderEventInvalid, ProviderStreamError, ProviderStreamIncomplete
)
export type AnswerError = typeof AnswerError.Type

// ---------------------------------------------------------------------------
// The documents hand-off (`sources --format documents|anthropic|bedrock|evi1`, GET /v1/runs/{id}/documents)
// ---------------------------------------------------------------------------

/** The run's capture texts together pass the hand-off's character limit; reading stopped at the source that passed it. */
export class DocumentsTooLarge extends Schema.TaggedError<DocumentsTooLarge>()("DocumentsTooLarge", {
  maxChars: Schema.Int,
  /** UTF-16 code units of capture text read up to and including `source`. */
  chars: Schema.Int,
  /** The manifest number and URL of the source whose text passed the limit. */
  number: Schema.Int,
  source: Schema.String
}) {
  override get message() {
    return `The run's capture texts pass the hand-off limit of ${this.maxChars} characters at source ${this.number} ` +
      `(${this.source}): ${this.chars} characters so far. Hand the model fewer sources (a smaller configuration) or raise the limit`
  }
}

// ---------------------------------------------------------------------------
// Streaming answers (POST /v1/stream/answer)
// ---------------------------------------------------------------------------

/** An input line of a streamed answer is not `{"type":"delta","text":"…"}` (strict JSON, no other keys). */
export class StreamLineInvalid extends Schema.TaggedError<StreamLineInvalid>()("StreamLineInvalid", {
  /** 1-based NDJSON line of the request body. */
  line: Schema.Int,
  detail: Schema.String
}) {
  override get message() {
    return `Input line ${this.line} is not a delta: ${this.detail}`
  }
}

export const StreamLimit = Schema.Literal("line-length", "input-size", "answer-size", "claims", "citations")
export type StreamLimit = typeof StreamLimit.Type

/** A streamed answer passed one of its documented limits; nothing past it was parsed. */
export class StreamLimitExceeded extends Schema.TaggedError<StreamLimitExceeded>()("StreamLimitExceeded", {
  limit: StreamLimit,
  max: Schema.Int,
  /** How much had arrived when the limit was passed (at least max + 1). */
  received: Schema.Int
}) {
  override get message() {
    return `The stream passed its ${this.limit} limit of ${this.max} (received at least ${this.received})`
  }
}

/** The stream did not finish within its deadline (input, parsing and verification together). */
export class StreamDeadline extends Schema.TaggedError<StreamDeadline>()("StreamDeadline", {
  timeoutMs: Schema.Int
}) {
  override get message() {
    return `The stream did not finish within ${this.timeoutMs} ms`
  }
}

export const StreamGoneReason = Schema.Literal("unknown-stream", "not-retained")
export type StreamGoneReason = typeof StreamGoneReason.Type

/** A resumed stream is unknown (or expired), or the events after the client's Last-Event-ID are no longer retained. */
export class StreamGone extends Schema.TaggedError<StreamGone>()("StreamGone", {
  streamId: Schema.String,
  reason: StreamGoneReason,
  /** The oldest event id still retained, when the stream is known. */
  oldestRetained: Schema.NullOr(Schema.Int)
}) {
  override get message() {
    return this.reason === "unknown-stream"
      ? `No stream ${JSON.stringify(this.streamId.slice(0, 80))} is retained (unknown or expired)`
      : `Stream ${JSON.stringify(this.streamId.slice(0, 80))} retains events from id ${this.oldestRetained} only; resume from the start`
  }
}

/** HTTP 400: a query parameter or header of a streaming request is malformed (the run id, the manifest digest, the mode, Last-Event-ID). */
export class StreamRequestInvalid extends Schema.TaggedError<StreamRequestInvalid>()("StreamRequestInvalid", {
  parameter: Schema.String,
  detail: Schema.String
}) {
  override get message() {
    return `The streaming request's ${this.parameter} is invalid: ${this.detail}`
  }
}

/**
 * HTTP 503: the events retained for resuming, all streams together, reached `server.streamRetainedBytes` and
 * no ended stream was left to drop: a new stream is refused until live ones end or retained ones expire.
 */
export class StreamRetentionFull extends Schema.TaggedError<StreamRetentionFull>()("StreamRetentionFull", {
  retainedBytes: Schema.Number,
  maxBytes: Schema.Number
}) {
  override get message() {
    return `Streams being answered retain ${this.retainedBytes} bytes of events, at the ${this.maxBytes} byte limit; try again shortly`
  }
}

/** Why a streamed answer ended early: its input, its limits, its deadline, or resuming it; or why the request was refused. */
export const StreamError = Schema.Union(StreamLineInvalid, StreamLimitExceeded, StreamDeadline, StreamGone, StreamRequestInvalid, StreamRetentionFull)
export type StreamError = typeof StreamError.Type

// ---------------------------------------------------------------------------
// Service (`run-pipeline serve`): authentication, request limits, runs
// ---------------------------------------------------------------------------

/** Why a request carried no usable bearer token. */
export const UnauthorizedReason = Schema.Literal("missing", "malformed", "unknown-token")
export type UnauthorizedReason = typeof UnauthorizedReason.Type

/** HTTP 401: no bearer token, a malformed Authorization header, or a token whose digest is not configured. */
export class Unauthorized extends Schema.TaggedError<Unauthorized>()("Unauthorized", {
  reason: UnauthorizedReason
}) {
  override get message() {
    return this.reason === "missing"
      ? "The request carries no bearer token"
      : this.reason === "malformed"
      ? "The Authorization header is not a single `Bearer <token>`"
      : "The bearer token is not one of the configured tokens"
  }
}

/** What a token was refused. */
export const ForbiddenAction = Schema.Literal("capture", "read-run")
export type ForbiddenAction = typeof ForbiddenAction.Type

/** HTTP 403: the token is valid but may not start captures, or may not read this run. */
export class Forbidden extends Schema.TaggedError<Forbidden>()("Forbidden", {
  action: ForbiddenAction,
  /** The run asked for (`read-run`), else null. */
  runId: Schema.NullOr(Schema.String)
}) {
  override get message() {
    return this.action === "capture"
      ? "This token may not start capture runs"
      : `This token may not read run ${this.runId ?? "(none)"}`
  }
}

/** HTTP 413: the request body is larger than `server.maxBodyBytes`; refused before (or while) reading it. */
export class PayloadTooLarge extends Schema.TaggedError<PayloadTooLarge>()("PayloadTooLarge", {
  maxBytes: Schema.Int,
  /** The Content-Length the client announced, or null when the body was chunked and counted while read. */
  declaredBytes: Schema.NullOr(Schema.Number)
}) {
  override get message() {
    return this.declaredBytes === null
      ? `The request body passes the ${this.maxBytes} byte limit`
      : `The request body announces ${this.declaredBytes} bytes, over the ${this.maxBytes} byte limit; it was not read`
  }
}

/** HTTP 411: a request body without Content-Length; the JSON endpoints measure a body before reading it. */
export class LengthRequired extends Schema.TaggedError<LengthRequired>()("LengthRequired", {
  maxBytes: Schema.Int
}) {
  override get message() {
    return `The request body has no Content-Length; send one (at most ${this.maxBytes} bytes)`
  }
}

/** HTTP 503: the request did not finish within `server.requestTimeoutMs`; its work was interrupted. */
export class RequestTimeout extends Schema.TaggedError<RequestTimeout>()("RequestTimeout", {
  timeoutMs: Schema.Int
}) {
  override get message() {
    return `The request did not finish within ${this.timeoutMs} ms; its work was stopped`
  }
}

/** HTTP 404: no run with this id exists under the run root (or the id is not a run id). */
export class RunNotFound extends Schema.TaggedError<RunNotFound>()("RunNotFound", {
  runId: Schema.String
}) {
  override get message() {
    return `No run ${JSON.stringify(this.runId)} exists`
  }
}

/** HTTP 503: the server is shutting down (`/readyz`, `POST /v1/runs`), or its run root cannot be used. */
export class NotReady extends Schema.TaggedError<NotReady>()("NotReady", {
  reason: Schema.Literal("draining", "run-root-unusable")
}) {
  override get message() {
    return this.reason === "draining" ? "The server is shutting down" : "The run root cannot be used"
  }
}

/** Why the service refused a request before (or instead of) verifying anything. */
export const ServiceError = Schema.Union(Unauthorized, Forbidden, PayloadTooLarge, LengthRequired, RequestTimeout, RunNotFound, NotReady)
export type ServiceError = typeof ServiceError.Type

// ---------------------------------------------------------------------------
// Drift audit (src/audit/)
// ---------------------------------------------------------------------------

/** One old citation that no longer verifies against the old run: which one (`fact 3 "label"`, `claim c1 citation 0`), and why. */
export const BaselineFailure = Schema.Struct({
  citation: Schema.String,
  error: CitationError
}).annotations({ identifier: "BaselineFailure" })
export type BaselineFailure = typeof BaselineFailure.Type

/**
 * The old report or answer does not verify against the old run any more (a capture missing, altered or
 * replaced): there is no verified baseline to compare the new run with. Every failure is listed.
 */
export class AuditBaselineRejected extends Schema.TaggedError<AuditBaselineRejected>()("AuditBaselineRejected", {
  failures: Schema.NonEmptyArray(BaselineFailure)
}) {
  override get message() {
    const n = this.failures.length
    return `The audited citations do not verify against the old run: ${n} failure${n === 1 ? "" : "s"}: ` +
      this.failures.slice(0, 20).map((f) => `${f.citation}: ${f.error._tag}`).join(", ") + (n > 20 ? ", …" : "")
  }
}

/** The audit did not finish within its deadline (`audit.timeoutMs`): no finding is reported, none is half-made. */
export class AuditTimeout extends Schema.TaggedError<AuditTimeout>()("AuditTimeout", {
  timeoutMs: Schema.Int
}) {
  override get message() {
    return `The audit did not finish within ${this.timeoutMs} ms; no finding is reported`
  }
}

/** Why a drift audit produced no result. */
export const AuditError = Schema.Union(AuditBaselineRejected, VerificationTimeout, AuditTimeout)
export type AuditError = typeof AuditError.Type
export * from "./errors/ProviderStream.js"
