/**
 * The one strict read path of a stored capture record, shared by every store
 * (filesystem, memory, PostgreSQL): whatever a store keeps, a record comes back
 * only through these checks, in this order, so that a value which is not a
 * valid record of its source is the same typed error in every store. A v2
 * record's body is then checked by the store that keeps it (`checkBody`).
 */
import * as Either from "effect/Either"
import {
  CaptureRecord,
  captureFormat,
  captureFormatV2,
  CaptureRecordV1,
  CaptureRecordV2,
  sha256Of,
  urlProblem
} from "../Domain.js"
import { CaptureWriteFailed, CorruptCapture, type CorruptReason, LegacyCapture } from "../Errors.js"
import { decodeUnknown } from "./decode.js"
import { passedMemo } from "./passedMemo.js"
import * as StrictJson from "./strictJson.js"
import { decodeStrictUtf8 } from "./strictUtf8.js"

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

const isJsonObject = (value: unknown): value is Readonly<Record<string, unknown>> =>
  typeof value === "object" && value !== null && Object.getPrototypeOf(value) === Object.prototype

/** Days in each month of a common year; February gains one in a leap year. */
const monthDays = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]

const digitsAt = (s: string, from: number, count: number): number => {
  let n = 0
  for (let i = from; i < from + count; i++) {
    const d = s.charCodeAt(i) - 0x30
    if (d < 0 || d > 9) return -1
    n = n * 10 + d
  }
  return n
}

/**
 * `Rfc3339Utc` in the form `toISOString` writes (`YYYY-MM-DDTHH:MM:SS.sssZ`, or without the
 * fraction), with every field in range: ECMAScript's date-time format defines `Date.parse` of such a
 * string, and `toISOString` gives it back, so the Schema accepts it. False for anything else,
 * valid or not: then the Schema decides.
 */
const isPlainTimestamp = (s: string): boolean => {
  if (s.length !== 24 && s.length !== 20) return false
  if (s.charCodeAt(s.length - 1) !== 0x5a /* Z */) return false
  if (s[4] !== "-" || s[7] !== "-" || s[10] !== "T" || s[13] !== ":" || s[16] !== ":") return false
  if (s.length === 24 && (s[19] !== "." || digitsAt(s, 20, 3) < 0)) return false
  const year = digitsAt(s, 0, 4)
  const month = digitsAt(s, 5, 2)
  const day = digitsAt(s, 8, 2)
  const hour = digitsAt(s, 11, 2)
  const minute = digitsAt(s, 14, 2)
  const second = digitsAt(s, 17, 2)
  if (year < 0 || month < 1 || month > 12 || day < 1 || hour < 0 || hour > 23) return false
  if (minute < 0 || minute > 59 || second < 0 || second > 59) return false
  const leap = year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0)
  return day <= monthDays[month - 1]! + (month === 2 && leap ? 1 : 0)
}

/** @internal */
export const maxRememberedSourceLength = 1024

/**
 * Sources already found canonical (`urlProblem` is a pure function of the string), bounded in
 * count and in length: a record's source is read from disk or a database row and may be as long as
 * the record, so only sources of an ordinary URL's length are remembered (at most 4,096 × 1,024
 * code units, 8 MiB); a longer one is checked again each time.
 */
const isCanonicalSource = passedMemo((s) => urlProblem(s) === undefined, {
  maxEntries: 4096,
  maxLength: maxRememberedSourceLength
})

/** @internal How many sources are remembered now (the bound's test). */
export const rememberedSources = (): number => isCanonicalSource.size()

/** A v1 record's keys, in the order its Schema decodes them. */
/**
 * `/^[0-9a-f]{64}$/.test(value)` (`Domain.Sha256Hex`): 64 lowercase hex digits, by a loop over the
 * code units. The regular expression cost more than the rest of a record's hand check (two digests
 * checked per cited capture).
 */
export const isSha256Hex = (value: string): boolean => {
  if (value.length !== 64) return false
  for (let i = 0; i < 64; i++) {
    const c = value.charCodeAt(i)
    // 0-9 or a-f
    if (c < 0x30 || (c > 0x39 && (c < 0x61 || c > 0x66))) return false
  }
  return true
}

const v1Keys = ["format", "source", "sha256", "accessedAt", "contentType", "byteLength", "text"] as const

/**
 * A hand check of a v1 record that can only accept: for a `JSON.parse` value the
 * `CaptureRecordV1` Schema accepts in the common form, the value its decode returns (keys in the
 * Schema's order: the parsed object itself when they already are, else a fresh one); for anything
 * else, or anything it is unsure of, `undefined`, and the Schema decides and words the issues. Decoding a small record with the Schema cost more
 * than reading its file (docs/performance.md); test/recordDecode.equivalence.test.ts compares the
 * two on seeded valid and invalid records.
 */
export const fastRecordV1 = (value: unknown): CaptureRecordV1 | undefined => {
  if (!isJsonObject(value)) return undefined
  // Its own enumerable keys in `Object.keys` order, without the list `Object.keys` makes (one per
  // record): `for…in` walks them first, then any enumerable key of `Object.prototype`, skipped here.
  let count = 0
  let inOrder = true
  for (const key in value) {
    if (!Object.hasOwn(value, key)) continue
    if (count === v1Keys.length) return undefined
    inOrder = inOrder && key === v1Keys[count]
    count++
    switch (key) {
      case "format":
      case "source":
      case "sha256":
      case "accessedAt":
      case "contentType":
      case "byteLength":
      case "text":
        break
      default:
        return undefined
    }
  }
  if (count !== v1Keys.length) return undefined
  // Seven distinct own keys (an object has no repeated key), each one of the seven: all are present.
  const { accessedAt, byteLength, contentType, format, sha256, source, text } = value
  if (format !== captureFormat || typeof contentType !== "string") return undefined
  if (typeof sha256 !== "string" || !isSha256Hex(sha256)) return undefined
  if (typeof byteLength !== "number" || !Number.isSafeInteger(byteLength) || byteLength < 0) return undefined
  if (typeof accessedAt !== "string" || !isPlainTimestamp(accessedAt)) return undefined
  if (typeof text !== "string" || !text.isWellFormed()) return undefined
  if (typeof source !== "string" || !isCanonicalSource(source)) return undefined
  // The Schema's values; its brands are types only. A `JSON.parse` value is the caller's alone: kept
  // as it is when its keys are already in the Schema's order (as every record citegate writes).
  return (inOrder ? value : { format, source, sha256, accessedAt, contentType, byteLength, text }) as CaptureRecordV1
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
  // `StrictJson.parse` in its steps, with the hand check between them: a value `fastRecordV1` accepts
  // holds seven distinct keys and no container, so its walk would count seven keys, and the text is
  // strict JSON exactly when it has seven members (a repeated key is one member more).
  const counted = StrictJson.countAndParse(text)
  if (counted !== undefined && counted.members === v1Keys.length) {
    const fast = fastRecordV1(counted.value)
    if (fast !== undefined) return checkRecord(source, expected, fast)
  }
  const parsed = (counted === undefined ? undefined : StrictJson.provenByCount(counted)) ?? StrictJson.parseFull(text)
  if (parsed._tag === "Left") return Either.left(corrupt(source, "invalid-json", parsed.issue.message))
  const value = parsed.value
  if (isPlainObject(value) && !("format" in value) && ("text" in value || "sha256" in value)) {
    return Either.left(new LegacyCapture({ source, detail: "a record without a format field (pre-v1)" }))
  }
  // What the hand check did not accept above it cannot accept here (a strict value it accepts has
  // seven members): the Schema decides, and words the issues.
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
    text = decodeStrictUtf8(bytes)
  } catch {
    return Either.left(corrupt(source, "invalid-utf8", "the record is not valid UTF-8"))
  }
  return decodeRecordText(source, expected, text)
}
