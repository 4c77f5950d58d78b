/**
 * The only way older captures become evidence: an explicit, operator-approved
 * migration into a NEW run. Legacy records (`{ source?, text, sha256,
 * accessedAt }`) are restored as v1 records only for the entries the operator's
 * map approves, each legacy digest checked first. The legacy directory is only
 * read, never modified.
 *
 * Trusted pipeline code: it writes through CaptureStore.
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import * as fsp from "node:fs/promises"
import * as path from "node:path"
import { CaptureStore } from "./CaptureStore.js"
import { defaultMaxRecordBytes } from "./Format.js"
import { makeCaptureRecord, NonBlankString, Rfc3339Utc, Sha256Hex, sha256Of, SourceUrl } from "../Domain.js"
import { InvalidMigrationMap, MigrationRejected } from "../Errors.js"
import { decodeJson, decodeUnknown } from "../internal/decode.js"
import { readRegularFile } from "../internal/safeRead.js"

const strict = { parseOptions: { onExcessProperty: "error" } } as const

const FileName = NonBlankString.pipe(
  Schema.filter((s) => (!/[/\\\u0000]/.test(s) && s !== "." && s !== "..") || "must be a plain file name")
)

const unique = (key: "file" | "source") => (entries: ReadonlyArray<{ readonly file: string; readonly source: string }>) =>
  new Set(entries.map((e) => e[key])).size === entries.length || `each ${key} may appear only once`

/** The operator's approval: which legacy file is a capture of which exact source. */
export const MigrationMap = Schema.Struct({
  entries: Schema.Array(
    Schema.Struct({ file: FileName, source: SourceUrl }).annotations({ ...strict, identifier: "MigrationEntry" })
  ).pipe(Schema.filter(unique("file")), Schema.filter(unique("source")))
}).annotations({ ...strict, identifier: "MigrationMap" })
export type MigrationMap = typeof MigrationMap.Type

/** The older record format. */
export const LegacyRecord = Schema.Struct({
  source: Schema.optional(Schema.String),
  text: Schema.String.pipe(Schema.filter((s) => s.isWellFormed() || "must be well-formed Unicode")),
  sha256: Sha256Hex,
  accessedAt: Rfc3339Utc
}).annotations({ ...strict, identifier: "LegacyRecord" })

/** Content type recorded for migrated captures: the legacy format never recorded one. */
export const migratedContentType = "text/plain (migrated; original content type not recorded)"

export interface MigrationResult {
  readonly migrated: ReadonlyArray<{ readonly file: string; readonly source: string; readonly sha256: string }>
  readonly rejected: ReadonlyArray<MigrationRejected>
  /** Files in the legacy directory that the map does not approve: left alone, never migrated. */
  readonly skipped: ReadonlyArray<string>
}

const decodeMapJson = decodeJson(MigrationMap)
const decodeLegacy = decodeUnknown(LegacyRecord)
const utf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true })

/**
 * Decode a migration map from JSON text.
 *
 * @since 0.1.0
 */
export const decodeMap = (text: string): Effect.Effect<MigrationMap, InvalidMigrationMap> =>
  Effect.mapError(decodeMapJson(text), (invalid) => new InvalidMigrationMap(invalid))

/**
 * Migrate the approved legacy entries into the CaptureStore's (new) run.
 *
 * @since 0.1.0
 */
export const migrate = Effect.fn("Migrate.migrate")(function*(options: {
  readonly legacyDirectory: string
  readonly map: MigrationMap
}) {
  const store = yield* CaptureStore
  const approvedFiles = new Set(options.map.entries.map((e) => e.file))
  const present = yield* Effect.promise(() => fsp.readdir(options.legacyDirectory).catch(() => [] as Array<string>))
  const skipped = present.filter((name) => !approvedFiles.has(name)).sort()

  const migrateOne = (entry: MigrationMap["entries"][number]) =>
    Effect.gen(function*() {
      const reject = (reason: typeof MigrationRejected.fields.reason.Type, detail: string) =>
        new MigrationRejected({ file: entry.file, source: entry.source, reason, detail })
      const bytes = yield* readRegularFile(path.join(options.legacyDirectory, entry.file), defaultMaxRecordBytes)
        .pipe(Effect.mapError((f) => reject(f.reason === "missing" ? "missing" : "unreadable", f.detail)))
      let text: string
      try {
        text = utf8.decode(bytes)
      } catch {
        return yield* reject("unreadable", "not valid UTF-8")
      }
      const legacy = yield* Effect.mapError(
        decodeJson(Schema.Unknown)(text),
        (invalid) => reject("not-a-legacy-record", invalid.issues.map((i) => i.message).join("; "))
      ).pipe(
        Effect.flatMap((value) =>
          Effect.mapError(
            decodeLegacy(value),
            (invalid) =>
              reject("not-a-legacy-record", invalid.issues.map((i) => `${i.path.join(".") || "(root)"}: ${i.message}`).join("; "))
          )
        )
      )
      // The digest is checked before anything is written.
      const actual = sha256Of(legacy.text)
      if (actual !== legacy.sha256) {
        return yield* reject("digest-mismatch", `the text hashes to ${actual}, the record says ${legacy.sha256}`)
      }
      if (legacy.source !== undefined && legacy.source !== entry.source) {
        return yield* reject("source-conflict", `the record names ${legacy.source}, the map names ${entry.source}`)
      }
      const record = makeCaptureRecord({
        source: entry.source,
        text: legacy.text,
        accessedAt: legacy.accessedAt,
        contentType: migratedContentType
      })
      yield* Effect.mapError(store.write(record), (error) => reject("write-failed", error.message))
      return { file: entry.file, source: entry.source as string, sha256: record.sha256 as string }
    })

  const results = yield* Effect.forEach(options.map.entries, (entry) => Effect.either(migrateOne(entry)))
  const result: MigrationResult = {
    migrated: results.flatMap((r) => (r._tag === "Right" ? [r.right] : [])),
    rejected: results.flatMap((r) => (r._tag === "Left" ? [r.left] : [])),
    skipped
  }
  return result
})
