/**
 * A run's captures as a WARC/1.1 file (ISO 28500:2017), so web-archive tools (warcio, pywb) can read
 * and replay what was cited. Per capture, in source order (the store's `list`), from any store:
 *
 * - `response`: the stored body as the payload of an HTTP message. citegate keeps no response
 *   headers: the message has the status line every capture had (only a 200 is ever stored) and the
 *   Content-Type recorded at capture, nothing else (no invented Content-Length, Date or Server).
 * - `metadata` (`WARC-Concurrent-To` the response): citegate's own fields (application/warc-fields).
 * - `conversion` (`WARC-Refers-To` the response, v2 records only): the extracted text reports cite,
 *   whose SHA-256 is the capture digest. A v1 record's text is its body, so it has none.
 *
 * Digests are `sha256:` and lowercase hex, as warcio.js writes and checks them by default. Record ids
 * are UUIDs derived from the capture, so exporting the same run twice gives the same records.
 *
 * @since 0.3.0
 */
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import { createHash, randomUUID } from "node:crypto"
import * as fsp from "node:fs/promises"
import * as path from "node:path"
import { captureFormat, recordBody, recordExtraction } from "../Domain.js"
import { CaptureStore, makeFileSystem } from "../store/CaptureStore.js"
import { ExportOutputExists, ExportWriteFailed, WarcFieldInvalid } from "../Errors.js"
import { errorCode, errorText } from "../internal/safeRead.js"
import { uuidOf } from "../internal/uuid.js"
import { version } from "../version.js"
import { listSources, readCapture, type RunCapturesOptions, type StoredCapture } from "./RunCaptures.js"

const crlf = "\r\n"
const encoder = new TextEncoder()

/** A record id: the urn:uuid of `name` (src/internal/uuid.ts) in angle brackets, as WARC writes ids. */
export const recordId = (name: string): string => `<${uuidOf(name)}>`

const sha256Label = (...parts: ReadonlyArray<Uint8Array>): string => {
  const hash = createHash("sha256")
  for (const part of parts) hash.update(part)
  return `sha256:${hash.digest("hex")}`
}

// A header value is one line of visible characters and spaces: a CR or LF would forge header lines.
const controlCharacter = /[\u0000-\u001f\u007f]/

/** A WARC header or warc-fields line: its name and value. */
export type Field = readonly [name: string, value: string]

export type { RunCapturesOptions, StoredCapture } from "./RunCaptures.js"

const checkFields = (source: string, fields: ReadonlyArray<Field>): WarcFieldInvalid | undefined => {
  for (const [name, value] of fields) {
    if (controlCharacter.test(value)) {
      return new WarcFieldInvalid({ source, field: name, detail: "holds a control character (CR, LF, …)" })
    }
  }
  return undefined
}

const head = (fields: ReadonlyArray<Field>, blockLength: number): Uint8Array =>
  encoder.encode(`WARC/1.1${crlf}${fields.map(([n, v]) => `${n}: ${v}${crlf}`).join("")}Content-Length: ${blockLength}${crlf}${crlf}`)

const trailer = encoder.encode(crlf + crlf)

/** One WARC record: its header, block pieces and the two CRLFs after it. */
const record = (fields: ReadonlyArray<Field>, block: ReadonlyArray<Uint8Array>): Array<Uint8Array> => {
  const length = block.reduce((n, piece) => n + piece.byteLength, 0)
  return [head(fields, length), ...block, trailer]
}

const warcFields = (fields: ReadonlyArray<Field>): Uint8Array =>
  encoder.encode(fields.map(([n, v]) => `${n}: ${v}${crlf}`).join(""))

/** The metadata fields of a capture (application/warc-fields). */
export const metadataFields = (capture: StoredCapture): ReadonlyArray<Field> => {
  const { record } = capture
  const body = recordBody(record)
  return [
    ["citegate-record-format", record.format],
    ["citegate-source", record.source],
    ["citegate-capture-sha256", record.sha256],
    ["citegate-body-sha256", body.sha256],
    ["citegate-body-length", String(body.byteLength)],
    ["citegate-accessed-at", record.accessedAt],
    ["citegate-content-type", body.contentType],
    ["citegate-extraction", recordExtraction(record)],
    // Says, in the file itself, that the HTTP message holds no headers but the recorded Content-Type.
    ["citegate-http-headers", "content-type-only"]
  ]
}

/**
 * The WARC records of one capture (response, metadata and, for v2 records, conversion), as byte
 * pieces to write in order; `warcinfoId` names the file's warcinfo record.
 *
 * @since 0.3.0
 * @category encoding
 */
export const captureRecords = (capture: StoredCapture, warcinfoId: string): Array<Uint8Array> | WarcFieldInvalid => {
  const { body, record: r } = capture
  const contentType = recordBody(r).contentType
  const meta = metadataFields(capture)
  const invalid = checkFields(r.source, [["Content-Type", contentType], ...meta])
  if (invalid !== undefined) return invalid
  const responseId = recordId(`response ${r.source} ${r.accessedAt} ${recordBody(r).sha256}`)
  const common: ReadonlyArray<Field> = [["WARC-Date", r.accessedAt], ["WARC-Target-URI", r.source], ["WARC-Warcinfo-ID", warcinfoId]]
  const httpHead = encoder.encode(`HTTP/1.1 200 OK${crlf}${contentType === "" ? "" : `Content-Type: ${contentType}${crlf}`}${crlf}`)
  const response = record([
    ["WARC-Type", "response"],
    ["WARC-Record-ID", responseId],
    ...common,
    ["WARC-Payload-Digest", `sha256:${recordBody(r).sha256}`],
    ["WARC-Block-Digest", sha256Label(httpHead, body)],
    ["Content-Type", "application/http;msgtype=response"]
  ], [httpHead, body])
  const metaBlock = warcFields(meta)
  const metadata = record([
    ["WARC-Type", "metadata"],
    ["WARC-Record-ID", recordId(`metadata ${responseId}`)],
    ...common,
    ["WARC-Concurrent-To", responseId],
    ["WARC-Block-Digest", sha256Label(metaBlock)],
    ["Content-Type", "application/warc-fields"]
  ], [metaBlock])
  if (r.format === captureFormat) return [...response, ...metadata]
  const text = encoder.encode(r.text)
  const conversion = record([
    ["WARC-Type", "conversion"],
    ["WARC-Record-ID", recordId(`conversion ${responseId}`)],
    ...common,
    ["WARC-Refers-To", responseId],
    ["WARC-Payload-Digest", `sha256:${r.sha256}`],
    ["WARC-Block-Digest", `sha256:${r.sha256}`],
    ["Content-Type", "text/plain; charset=utf-8"]
  ], [text])
  return [...response, ...metadata, ...conversion]
}

/** The file's first record: what wrote it and when. */
export const warcinfoRecord = (date: string, fileName: string): { readonly id: string; readonly bytes: Array<Uint8Array> } => {
  const id = recordId(`warcinfo ${fileName} ${date}`)
  const block = warcFields([
    ["software", `citegate/${version}`],
    ["format", "WARC File Format 1.1"],
    ["conformsTo", "https://iipc.github.io/warc-specifications/specifications/warc-format/warc-1.1/"],
    ["description", "citegate captures: response (stored body), metadata (citegate fields), conversion (cited text)"]
  ])
  const invalid = controlCharacter.test(fileName) ? "" : fileName
  return {
    id,
    bytes: record([
      ["WARC-Type", "warcinfo"],
      ["WARC-Record-ID", id],
      ["WARC-Date", date],
      ...(invalid === "" ? [] : [["WARC-Filename", fileName] as const]),
      ["WARC-Block-Digest", sha256Label(block)],
      ["Content-Type", "application/warc-fields"]
    ], [block])
  }
}

export interface WarcExportOptions extends RunCapturesOptions {
  /** The WARC file to create; it must not exist. */
  readonly out: string
}

/**
 * @since 0.3.0
 * @category models
 */
export interface RunExportOptions {
  /** The WARC file to create; it must not exist. */
  readonly out: string
  /** Captures one export takes at most (default 10 000), checked on the store's listing before any is read. */
  readonly maxCaptures?: number
}

export interface WarcExportSummary {
  readonly captures: number
  readonly records: number
  readonly bytes: number
  /** SHA-256 (hex) of the file written, computed while writing (what a signature names). */
  readonly sha256: string
}

const writeFailed = (out: string, temp: string) => (error: unknown) =>
  errorCode(error) === "EEXIST"
    ? new ExportOutputExists({ path: out })
    : new ExportWriteFailed({ path: out, detail: errorText(error).split(temp).join(out) })

/**
 * Writes every capture of the run in context (the `CaptureStore`: a run directory, a PostgreSQL run,
 * …) to a new WARC file: into a temporary file beside it, synced, then linked to `out` (an existing
 * name is never replaced: `ExportOutputExists`) and the temporary name removed, so a complete file
 * appears under the name or nothing does. The run's sources come from the store's bounded `list`
 * (`ExportTooLarge` past `maxCaptures`); one capture is held in memory at a time; a capture that does
 * not read back exactly as verification would read it stops the export (the store's typed error).
 *
 * @since 0.3.0
 * @category exports
 */
export const exportRun = Effect.fn("Warc.exportRun")(function*(options: RunExportOptions) {
  const store = yield* CaptureStore
  const out = path.resolve(options.out)
  const exists = yield* Effect.promise(() => fsp.lstat(out).then(() => true, () => false))
  if (exists) return yield* new ExportOutputExists({ path: out })
  const sources = yield* listSources(store, options.maxCaptures)
  const temp = path.join(path.dirname(out), `.${path.basename(out)}.${randomUUID()}.partial`)
  const failed = writeFailed(out, temp)
  const date = new Date(yield* Clock.currentTimeMillis).toISOString()
  const info = warcinfoRecord(date, path.basename(out))
  let bytes = 0
  let records = 1
  const digest = createHash("sha256")
  const write = (handle: fsp.FileHandle, pieces: ReadonlyArray<Uint8Array>) =>
    Effect.tryPromise({
      try: async () => {
        for (const piece of pieces) {
          await handle.write(piece)
          digest.update(piece)
          bytes += piece.byteLength
        }
      },
      catch: failed
    })
  yield* Effect.acquireUseRelease(
    Effect.tryPromise({ try: () => fsp.open(temp, "wx", 0o444), catch: failed }),
    (handle) =>
      Effect.gen(function*() {
        yield* write(handle, info.bytes)
        for (const source of sources) {
          const capture = yield* readCapture(store, source)
          const pieces = captureRecords(capture, info.id)
          if (pieces instanceof WarcFieldInvalid) return yield* pieces
          records += capture.record.format === captureFormat ? 2 : 3
          yield* write(handle, pieces)
        }
        yield* Effect.tryPromise({ try: () => handle.sync(), catch: failed })
      }),
    (handle) => Effect.promise(() => handle.close().catch(() => undefined))
  ).pipe(
    Effect.zipRight(Effect.tryPromise({ try: () => fsp.link(temp, out), catch: failed })),
    Effect.ensuring(Effect.promise(() => fsp.rm(temp, { force: true })))
  )
  return { captures: sources.length, records, bytes, sha256: digest.digest("hex") } satisfies WarcExportSummary
})

/**
 * `exportRun` over a run directory (the filesystem store on `directory`, with the size limits given).
 *
 * @since 0.3.0
 * @category exports
 */
export const exportWarc = Effect.fn("Warc.exportWarc")(function*(options: WarcExportOptions) {
  const store = yield* makeFileSystem({
    directory: options.directory,
    ...(options.maxRecordBytes === undefined ? {} : { maxRecordBytes: options.maxRecordBytes }),
    ...(options.maxBodyBytes === undefined ? {} : { maxBodyBytes: options.maxBodyBytes })
  })
  return yield* exportRun({ out: options.out, ...(options.maxCaptures === undefined ? {} : { maxCaptures: options.maxCaptures }) }).pipe(
    Effect.provideService(CaptureStore, store)
  )
})
