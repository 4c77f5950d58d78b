/**
 * The response policy of the capture stage, checked on the status line and
 * headers before any body byte is read: 200 only, no redirects, unambiguous
 * framing headers, no transfer coding but `chunked`, identity encoding, `text/plain` UTF-8, and an announced
 * length within the byte cap.
 */
import * as Effect from "effect/Effect"
import type { SourceUrl } from "../Domain.js"
import {
  AmbiguousHeader,
  RedirectRejected,
  TooLarge,
  UnexpectedStatus,
  UnsupportedContentEncoding,
  UnsupportedContentType,
  UnsupportedTransferEncoding
} from "../Errors.js"

/** `text/plain`, with no parameter but an optional `charset=utf-8` (case-insensitive, quoted allowed). */
export const isPlainTextUtf8 = (contentType: string): boolean => {
  const [mediaType, ...parameters] = contentType.split(";").map((part) => part.trim())
  if (mediaType?.toLowerCase() !== "text/plain") return false
  const nonEmpty = parameters.filter((p) => p !== "")
  if (nonEmpty.length === 0) return true
  if (nonEmpty.length > 1) return false
  const match = /^charset\s*=\s*(?:"utf-8"|utf-8)$/i.exec(nonEmpty[0]!)
  return match !== null
}

/**
 * Whether a Content-Type is one the operator allows. `text/plain` keeps its
 * v1 rule exactly (UTF-8 or no charset, no other parameter); the extracted
 * types accept parameters, and a non-UTF-8 charset among them is refused later
 * as `UnsupportedEncoding`, a typed answer rather than a content-type refusal.
 */
export const isAllowedContentType = (contentType: string, allowed: ReadonlyArray<string>): boolean => {
  const mediaType = contentType.split(";")[0]!.trim().toLowerCase()
  if (!allowed.includes(mediaType)) return false
  return mediaType === "text/plain" ? isPlainTextUtf8(contentType) : true
}

/**
 * A response's status line and headers, as the HTTP client hands them over: lowercase names, and a
 * header sent more than once as an array of its values.
 */
export interface ResponseHead {
  readonly status: number
  readonly headers: Readonly<Record<string, string | ReadonlyArray<string> | undefined>>
}

/** A header's value; one sent more than once is joined with ", " (as HTTP folds repeated fields). */
export const headerValue = (response: ResponseHead, name: string): string | null => {
  const value = response.headers[name]
  return value === undefined ? null : typeof value === "string" ? value : value.join(", ")
}

/** What the checks let through: the content type to record and the announced length, if any. */
export interface CheckedResponse {
  readonly contentType: string
  readonly declared: number | null
}

export type ResponseRefusal =
  | AmbiguousHeader
  | RedirectRejected
  | TooLarge
  | UnexpectedStatus
  | UnsupportedContentEncoding
  | UnsupportedContentType
  | UnsupportedTransferEncoding

/** The checks as one plain step: what passes, or the typed refusal (no Effect per check, on every capture). */
export const checked = (
  source: SourceUrl,
  response: ResponseHead,
  budgets: { readonly maxBytes: number; readonly contentTypes: ReadonlyArray<string> }
): CheckedResponse | ResponseRefusal => {
  const status = response.status
  if (status >= 300 && status < 400) {
    return new RedirectRejected({ source, status, location: headerValue(response, "location") })
  }
  if (status !== 200) return new UnexpectedStatus({ source, status })
  // A repeated header arrives joined with ", "; none of these legitimately contains a comma.
  for (const name of ["content-type", "content-length", "content-encoding"]) {
    const value = headerValue(response, name)
    if (value !== null && value.includes(",")) return new AmbiguousHeader({ source, header: name, value })
  }
  // The parser decodes only the final `chunked` coding; any other coding would reach the record still encoded.
  // Not trimmed: the parser keeps a trailing blank and then does not decode `chunked `, so neither may this check.
  const transferEncoding = headerValue(response, "transfer-encoding")
  if (transferEncoding !== null && transferEncoding.toLowerCase() !== "chunked") {
    return new UnsupportedTransferEncoding({ source, transferEncoding })
  }
  const encoding = headerValue(response, "content-encoding")
  if (encoding !== null && encoding.trim().toLowerCase() !== "identity") {
    return new UnsupportedContentEncoding({ source, contentEncoding: encoding })
  }
  const contentType = headerValue(response, "content-type")
  if (contentType === null || !isAllowedContentType(contentType, budgets.contentTypes)) {
    return new UnsupportedContentType({ source, contentType })
  }
  const contentLength = headerValue(response, "content-length")
  if (contentLength === null) return { contentType, declared: null }
  if (!/^\d+$/.test(contentLength.trim())) {
    return new AmbiguousHeader({ source, header: "content-length", value: contentLength })
  }
  const declared = Number(contentLength.trim())
  if (declared > budgets.maxBytes) {
    return new TooLarge({ source, maxBytes: budgets.maxBytes, declaredBytes: declared, receivedBytes: 0 })
  }
  return { contentType, declared }
}

/** Checks status and headers; yields the content type and the declared length, if any. */
export const checkResponse = (
  source: SourceUrl,
  response: ResponseHead,
  budgets: { readonly maxBytes: number; readonly contentTypes: ReadonlyArray<string> }
): Effect.Effect<CheckedResponse, ResponseRefusal> => {
  const result = checked(source, response, budgets)
  return "_tag" in result ? Effect.fail(result) : Effect.succeed(result)
}
