/**
 * The stored form of a capture record, shared by every store: the canonical
 * serialisation (fixed key order, streamed in bounded pieces), the file names
 * of records and bodies, the names of temporary files, and the size limits a
 * read accepts. Pure: no filesystem access here.
 *
 * @since 0.3.0
 */
import type * as fs from "node:fs"
import { createHash } from "node:crypto"
import { type CaptureRecord, captureFormat, type CaptureRecordV2 } from "../Domain.js"

/** A record with the body a v2 record describes, read and checked once (`undefined` for a v1 record). */
export interface RecordWithBody {
  readonly record: CaptureRecord
  readonly body: Uint8Array | undefined
}

/** The file name of a source's record: the SHA-256 hex of the exact source URL string. */
export const recordFileName = (source: string): string =>
  `${createHash("sha256").update(source, "utf8").digest("hex")}.json`

/**
 * The file name of a source's signed attestation (a DSSE envelope, src/evidence/CaptureAttestation.ts):
 * the record's name with `.dsse.json`.
 */
export const attestationFileName = (source: string): string =>
  `${createHash("sha256").update(source, "utf8").digest("hex")}.dsse.json`

/** Largest attestation a store keeps or reads, in bytes (an envelope is about 1 KiB). */
export const maxAttestationBytes = 64 * 1024

/** The file name of a stored body: its SHA-256 hex and `.body`. */
export const bodyFileName = (sha256: string): string => `${sha256}.body`

/** The fields of a v2 record before its text, in their fixed serialisation order. */
const v2Head = (record: CaptureRecordV2) => ({
  format: record.format,
  source: record.source,
  sha256: record.sha256,
  accessedAt: record.accessedAt,
  extraction: record.extraction,
  body: { sha256: record.body.sha256, byteLength: record.body.byteLength, contentType: record.body.contentType },
  ...(record.pages === undefined ? {} : { pages: record.pages.map((p) => ({ number: p.number, start: p.start, end: p.end })) }),
  ...(record.headings === undefined ? {} : {
    headings: record.headings.map((h) => ({ level: h.level, text: h.text, path: h.path, start: h.start, end: h.end }))
  }),
  ...(record.bodyMap === undefined ? {} : { bodyMap: record.bodyMap.map(([t, b, n]) => [t, b, n]) }),
  ...(record.hidden === undefined ? {} : { hidden: record.hidden.map(([start, end, kind]) => [start, end, kind]) })
})

/** The fields of a record before its text, in their fixed serialisation order. */
const recordHead = (record: CaptureRecord): string =>
  JSON.stringify(
    record.format === captureFormat
      ? {
        format: record.format,
        source: record.source,
        sha256: record.sha256,
        accessedAt: record.accessedAt,
        contentType: record.contentType,
        byteLength: record.byteLength
      }
      : v2Head(record)
  ).slice(0, -1) + ',"text":"'

const recordTail = "\"}\n"

/**
 * Code units of text escaped at once while writing a record: at most 96 KiB of
 * JSON per piece, small enough for the young generation (a larger string goes
 * to V8's large-object space, which only a full collection frees, and a 64 MiB
 * body then leaves hundreds of MiB of dead pieces behind).
 */
export const encodeChunkCodeUnits = 16 * 1024

/**
 * The canonical serialisation of a record in pieces (fixed key order, one
 * trailing newline). The pieces joined are byte-for-byte `JSON.stringify` of
 * the record: the text is escaped a slice at a time, and a slice never ends
 * between the two halves of a surrogate pair (which `JSON.stringify` would
 * escape as two lone surrogates). No piece holds more than the escape of
 * `chunkCodeUnits` code units, so writing a record never builds its whole JSON
 * (up to 6 times the text: every control character but `\b\f\n\r\t`
 * becomes a six-character `\u00XX` escape).
 */
export function* encodeRecordChunks(
  record: CaptureRecord,
  chunkCodeUnits: number = encodeChunkCodeUnits
): Generator<string, void, undefined> {
  const text = record.text
  const size = Math.max(2, chunkCodeUnits)
  let pending = recordHead(record)
  let from = 0
  while (text.length - from > size) {
    let to = from + size
    const last = text.charCodeAt(to - 1)
    if (last >= 0xd800 && last <= 0xdbff) to--
    yield pending + JSON.stringify(text.slice(from, to)).slice(1, -1)
    pending = ""
    from = to
  }
  yield pending + JSON.stringify(text.slice(from)).slice(1, -1) + recordTail
}

/**
 * The canonical serialisation of a record whose text is one piece of `encodeRecordChunks` (at most
 * `chunkCodeUnits` code units), as bytes: the same bytes as `encodeRecord`, written part by part into
 * one buffer of their exact size. Joining the parts into one string first (as the piece is) makes V8
 * copy the whole escaped text once more before encoding it, on every record written. A longer text
 * gives `undefined`: it is written a piece at a time instead.
 */
export const encodeSmallRecordBytes = (
  record: CaptureRecord,
  chunkCodeUnits: number = encodeChunkCodeUnits
): Buffer | undefined => {
  if (record.text.length > Math.max(2, chunkCodeUnits)) return undefined
  // The head up to `"text":`, the text with its quotes, then `}` and the newline: joined, `encodeRecord`.
  const head = recordHead(record).slice(0, -1)
  const text = JSON.stringify(record.text)
  const tail = "}\n"
  const size = Buffer.byteLength(head, "utf8") + Buffer.byteLength(text, "utf8") + tail.length
  const bytes = Buffer.allocUnsafe(size)
  let at = bytes.write(head, 0, "utf8")
  at += bytes.write(text, at, "utf8")
  at += bytes.write(tail, at, "utf8")
  // JSON text has no lone surrogate, so each part encodes to exactly its counted length; never trust it blindly.
  return at === size ? bytes : undefined
}

/** The canonical serialisation of a record as one string (small records and tests; `write` streams it). */
export const encodeRecord = (record: CaptureRecord): string => Array.from(encodeRecordChunks(record)).join("")

/** Temporary files of interrupted writes start with this; no record name does, so reads never see them. */
export const partialPrefix = ".partial-"

/** The whole name of citegate's temporary files: the prefix and a random UUID (`randomUUID`, lowercase). */
export const leftoverNamePattern = /^\.partial-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/

/**
 * Whether an entry is citegate's own leftover: its exact name pattern, a regular file, and created
 * read-only (mode 0444 less the umask: no write bit). A user's `.partial-thesis-draft.docx`, or a
 * writable file under a UUID name, is not one, and `sweep` leaves it alone.
 */
export const isLeftover = (name: string, stats: fs.Stats) =>
  leftoverNamePattern.test(name) && stats.isFile() && (stats.mode & 0o222) === 0

/** A record's file name: 64 lowercase hex digits and `.json`. */
export const recordNamePattern = /^[0-9a-f]{64}\.json$/

/** An attestation's file name: 64 lowercase hex digits and `.dsse.json` (the record's name, see `attestationFileName`). */
export const attestationNamePattern = /^[0-9a-f]{64}\.dsse\.json$/

/** A body's file name: 64 lowercase hex digits and `.body`. */
export const bodyNamePattern = /^[0-9a-f]{64}\.body$/

// A 64 MiB body (the largest capture budget) escapes to at most 6x its size in JSON.
export const defaultMaxRecordBytes = 400 * 1024 * 1024
export const defaultMaxBodyBytes = 64 * 1024 * 1024


/** The most sources one `list` of a run returns by default (`CaptureListTooLarge` past it). */
export const defaultMaxListedCaptures = 10_000

/** The limit a listing applies: the caller's, as a whole number of at least 0 (NaN is 0), else the default. */
export const listLimit = (limit: number | undefined): number =>
  limit === undefined ? defaultMaxListedCaptures : Number.isNaN(limit) ? 0 : Math.max(0, Math.floor(limit))
