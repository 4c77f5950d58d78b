/**
 * Capture's errors: fetching an approved source (address, redirects, status, budgets, TLS) and writing it (`CaptureError`).
 *
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"
import { ExtractionFailed, ExtractionTooLarge, UnsupportedEncoding } from "./Extraction.js"
import { CaptureExists, CaptureWriteFailed } from "./Store.js"
import { NotApproved } from "./Verify.js"
import { TaggedError } from "./TaggedError.js"

// ---------------------------------------------------------------------------
// Capture (trusted pipeline code fetching approved sources)
// ---------------------------------------------------------------------------

/** A resolved (or literal) address of the source's host is not allowed; no connection was made to it. */
export class AddressRejected extends TaggedError<AddressRejected>()("AddressRejected", {
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
export class RedirectRejected extends TaggedError<RedirectRejected>()("RedirectRejected", {
  source: Schema.String,
  status: Schema.Int,
  location: Schema.NullOr(Schema.String)
}) {
  override get message() {
    return `${this.source} answered ${this.status} redirecting to ${this.location ?? "(no location)"}; redirects are not followed: approve the exact target URL instead`
  }
}

/** The server answered with a status other than 200. */
export class UnexpectedStatus extends TaggedError<UnexpectedStatus>()("UnexpectedStatus", {
  source: Schema.String,
  status: Schema.Int
}) {
  override get message() {
    return `${this.source} answered with status ${this.status}; only 200 is captured`
  }
}

/** The body is not `text/plain` in UTF-8. */
export class UnsupportedContentType extends TaggedError<UnsupportedContentType>()("UnsupportedContentType", {
  source: Schema.String,
  contentType: Schema.NullOr(Schema.String)
}) {
  override get message() {
    return `${this.source} sent content type ${this.contentType === null ? "(none)" : JSON.stringify(this.contentType)}; only text/plain in UTF-8 is captured`
  }
}

/** The body is encoded (gzip, br, …). Encoded bodies are rejected, never decompressed. */
export class UnsupportedContentEncoding extends TaggedError<UnsupportedContentEncoding>()(
  "UnsupportedContentEncoding",
  { source: Schema.String, contentEncoding: Schema.String }
) {
  override get message() {
    return `${this.source} sent Content-Encoding ${JSON.stringify(this.contentEncoding)}; only identity bodies are captured`
  }
}

/** A header that decides how the body is read was sent more than once; fail closed. */
export class AmbiguousHeader extends TaggedError<AmbiguousHeader>()("AmbiguousHeader", {
  source: Schema.String,
  header: Schema.String,
  value: Schema.String
}) {
  override get message() {
    return `${this.source} sent an ambiguous ${this.header} header (${JSON.stringify(this.value)})`
  }
}

/** The body is larger than the capture budget; the transfer was aborted. */
export class TooLarge extends TaggedError<TooLarge>()("TooLarge", {
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
export class TruncatedBody extends TaggedError<TruncatedBody>()("TruncatedBody", {
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
export class InvalidEncoding extends TaggedError<InvalidEncoding>()("InvalidEncoding", {
  source: Schema.String,
  byteLength: Schema.Int
}) {
  override get message() {
    return `${this.source} sent a body that is not valid UTF-8`
  }
}

/** The whole fetch (connect, headers and body) did not finish within the budget; the socket was closed. */
export class Timeout extends TaggedError<Timeout>()("Timeout", {
  source: Schema.String,
  timeoutMs: Schema.Int
}) {
  override get message() {
    return `Capturing ${this.source} did not finish within ${this.timeoutMs} ms`
  }
}

/** The connection failed or broke (refused, reset, TLS failure, …). */
export class ConnectionFailed extends TaggedError<ConnectionFailed>()("ConnectionFailed", {
  source: Schema.String,
  detail: Schema.String
}) {
  override get message() {
    return `Could not fetch ${this.source}: ${this.detail}`
  }
}

/** A capture budget (timeout, size, concurrency) is out of range. */
export class InvalidBudget extends TaggedError<InvalidBudget>()("InvalidBudget", {
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
export class UnsupportedTransferEncoding extends TaggedError<UnsupportedTransferEncoding>()(
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
export class CertificateRejected extends TaggedError<CertificateRejected>()("CertificateRejected", {
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
export class InvalidCaFile extends TaggedError<InvalidCaFile>()("InvalidCaFile", {
  /** The file, or null when the certificates were passed directly as `ca`. */
  path: Schema.NullOr(Schema.String),
  detail: Schema.String
}) {
  override get message() {
    return `${this.path === null ? "The ca option" : `The CA file ${this.path}`} cannot be used: ${this.detail}`
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
