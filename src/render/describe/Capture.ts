/**
 * Descriptions of capture failures (`CaptureError`).
 */
import * as Match from "effect/Match"
import type { CaptureError } from "../../Errors.js"
import { type Description, shown } from "./Shared.js"

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
