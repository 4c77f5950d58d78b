/**
 * The one strict read path of a stored capture record, shared by every store
 * (filesystem, memory, PostgreSQL): whatever a store keeps, a record comes back
 * only through these checks, in this order, so that a value which is not a
 * valid record of its source is the same typed error in every store. A v2
 * record's body is then checked by the store that keeps it (`checkBody`).
 */
import * as Either from "effect/Either"
import { CaptureRecord, captureFormat, captureFormatV2, CaptureRecordV1, CaptureRecordV2, sha256Of } from "../Domain.js"
import { CaptureWriteFailed, CorruptCapture, type CorruptReason, LegacyCapture } from "../Errors.js"
import { decodeUnknown } from "./decode.js"
import * as StrictJson from "./strictJson.js"

const utf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true })

const decodeV1 = decodeUnknown(CaptureRecordV1)
const decodeV2 = decodeUnknown(CaptureRecordV2)
const decodeEither = decodeUnknown(CaptureRecord)

const isPlainObject = (u: unknown): u is Record<string, unknown> =>
  typeof u === "object" && u !== null && !Array.isArray(u)

export const corrupt = (source: string, reason: CorruptReason, detail: string) =>
  new CorruptCapture({ source, reason, detail })

/**
 * Strict decoding of a record value, by its `format`: one schema, one pass
 * over the text (the union would try v1 first and walk a v2 text twice).
 * Anything else goes through the union, so its issues name both formats.
 */
export const decodeRecord = (value: unknown) => {
  const format = isPlainObject(value) ? value["format"] : undefined
  return format === captureFormat ? decodeV1(value) : format === captureFormatV2 ? decodeV2(value) : decodeEither(value)
}

/**
 * The checks on a decoded record that its schema cannot make: it is stored
 * under its own source's name; a v1 text is as long as the record says; a v2
 * record's anchors lie inside its text and its pages and body map are in order.
 */
export const checkRecord = (
  source: string,
  expected: string | undefined,
  record: CaptureRecord
): Either.Either<CaptureRecord, CorruptCapture> => {
  if (expected !== undefined && record.source !== expected) {
    return Either.left(corrupt(
      source,
      "source-mismatch",
      `the record stored under this source's name is a capture of ${record.source}`
    ))
  }
  if (record.format === captureFormat) {
    const byteLength = Buffer.byteLength(record.text, "utf8")
    if (byteLength !== record.byteLength) {
      return Either.left(corrupt(
        source,
        "byte-length-mismatch",
        `the text is ${byteLength} bytes, the record says ${record.byteLength}`
      ))
    }
    return Either.right(record)
  }
  const length = record.text.length
  let previousEnd = 0
  for (const [i, page] of (record.pages ?? []).entries()) {
    if (page.number !== i + 1 || page.start < previousEnd || page.end < page.start || page.end > length) {
      return Either.left(corrupt(source, "invalid-anchor", `pages[${i}] is out of order or outside the text`))
    }
    previousEnd = page.end
  }
  for (const [i, heading] of (record.headings ?? []).entries()) {
    if (heading.end < heading.start || heading.end > length) {
      return Either.left(corrupt(source, "invalid-anchor", `headings[${i}] lies outside the text`))
    }
  }
  // The body map's runs in text and body order, inside the text, not overlapping (each body run follows the last).
  let textEnd = 0
  let bodyEnd = 0
  for (const [i, [textStart, bodyStart, runLength]] of (record.bodyMap ?? []).entries()) {
    if (textStart < textEnd || bodyStart < bodyEnd || textStart + runLength > length) {
      return Either.left(corrupt(source, "invalid-anchor", `bodyMap[${i}] is out of order or outside the text`))
    }
    textEnd = textStart + runLength
    bodyEnd = bodyStart + runLength
  }
  // Hidden runs in text order, not empty, not overlapping, inside the text: the Verifier searches them by bisection.
  let hiddenEnd = 0
  for (const [i, [start, end]] of (record.hidden ?? []).entries()) {
    if (start < hiddenEnd || end <= start || end > length) {
      return Either.left(corrupt(source, "invalid-anchor", `hidden[${i}] is out of order, empty or outside the text`))
    }
    hiddenEnd = end
  }
  return Either.right(record)
}

/** A v2 record's stored body, checked against the record: its length, then its digest. */
export const checkBody = (
  source: string,
  record: CaptureRecordV2,
  body: Uint8Array
): Either.Either<CaptureRecord, CorruptCapture> => {
  if (body.byteLength !== record.body.byteLength) {
    return Either.left(corrupt(
      source,
      "body-mismatch",
      `the stored body is ${body.byteLength} bytes, the record says ${record.body.byteLength}`
    ))
  }
  const actual = sha256Of(body)
  return actual === record.body.sha256 ? Either.right(record) : Either.left(corrupt(
    source,
    "body-mismatch",
    `the stored body hashes to ${actual}, the record says ${record.body.sha256}`
  ))
}

/**
 * The body a v2 record is written with, when it is the one the record describes (by length and by
 * digest), else why not. Bodies are stored under their digest and a stored one is kept, so a wrong
 * body let through here would stand in the way of every later right one (each would read back as
 * `body-mismatch`).
 */
export const checkWrittenBody = (
  record: CaptureRecordV2,
  body: Uint8Array | undefined
): Either.Either<Uint8Array, CaptureWriteFailed> => {
  if (body === undefined || body.byteLength !== record.body.byteLength) {
    return Either.left(
      new CaptureWriteFailed({ source: record.source, detail: "a v2 record is written with the body it describes" })
    )
  }
  const actual = sha256Of(body)
  return actual === record.body.sha256 ? Either.right(body) : Either.left(new CaptureWriteFailed({
    source: record.source,
    detail: `the body hashes to ${actual}, the record says ${record.body.sha256}`
  }))
}

/**
 * A record's serialisation as text: strict JSON (no duplicate keys), not a
 * legacy record, a strict v1 or v2 record, of `expected` when known (errors
 * name `source`), then `checkRecord`. Plain code, no Effect per step: a hot
 * path for many small captures.
 */
export const decodeRecordText = (
  source: string,
  expected: string | undefined,
  text: string
): Either.Either<CaptureRecord, CorruptCapture | LegacyCapture> => {
  const parsed = StrictJson.parse(text)
  if (parsed._tag === "Left") return Either.left(corrupt(source, "invalid-json", parsed.issue.message))
  const value = parsed.value
  if (isPlainObject(value) && !("format" in value) && ("text" in value || "sha256" in value)) {
    return Either.left(new LegacyCapture({ source, detail: "a record without a format field (pre-v1)" }))
  }
  const decoded = decodeRecord(value)
  if (decoded._tag === "Left") {
    const detail = decoded.left.issues.map((i) => `${i.path.join(".") || "(root)"}: ${i.message}`).join("; ")
    return Either.left(corrupt(source, "not-a-v1-record", `not a ${captureFormat} or ${captureFormatV2} record: ${detail}`))
  }
  return checkRecord(source, expected, decoded.right)
}

/** A record's stored bytes: valid UTF-8 (never replaced with U+FFFD), then `decodeRecordText`. */
export const decodeRecordBytes = (
  source: string,
  expected: string | undefined,
  bytes: Uint8Array
): Either.Either<CaptureRecord, CorruptCapture | LegacyCapture> => {
  let text: string
  try {
    text = utf8.decode(bytes)
  } catch {
    return Either.left(corrupt(source, "invalid-utf8", "the record is not valid UTF-8"))
  }
  return decodeRecordText(source, expected, text)
}
