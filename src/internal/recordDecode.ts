/**
 * The one strict read path of a stored capture record, shared by every store
 * (filesystem, memory, PostgreSQL): whatever a store keeps, a record comes back
 * only through these checks, in this order, so that a value which is not a
 * valid v1 record of its source is the same typed error in every store.
 */
import { Either } from "effect"
import { CaptureRecord, captureFormat } from "../Domain.js"
import { CorruptCapture, type CorruptReason, LegacyCapture } from "../Errors.js"
import { decodeUnknown } from "./decode.js"
import * as StrictJson from "./strictJson.js"

const utf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true })

const decodeRecord = decodeUnknown(CaptureRecord)

const isPlainObject = (u: unknown): u is Record<string, unknown> =>
  typeof u === "object" && u !== null && !Array.isArray(u)

export const corrupt = (source: string, reason: CorruptReason, detail: string) =>
  new CorruptCapture({ source, reason, detail })

/**
 * A record's serialisation as text: strict JSON (no duplicate keys), not a
 * legacy record, a strict v1 record, of `expected` when known (errors name
 * `source`), its text exactly `byteLength` UTF-8 bytes. Plain code, no Effect
 * per step: a hot path for many small captures.
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
    return Either.left(corrupt(source, "not-a-v1-record", `not a ${captureFormat} record: ${detail}`))
  }
  const record = decoded.right
  if (expected !== undefined && record.source !== expected) {
    return Either.left(corrupt(
      source,
      "source-mismatch",
      `the record stored under this source's name is a capture of ${record.source}`
    ))
  }
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
