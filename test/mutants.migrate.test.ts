/**
 * Migration: the map names plain file names only (no path traversal), legacy
 * records are decoded strictly (an unknown key is a rejection, never silently
 * dropped), and a migrated record says it was migrated instead of claiming a
 * content type that was never recorded.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Either, Schema } from "effect"
import { createHash } from "node:crypto"
import * as fsp from "node:fs/promises"
import * as path from "node:path"
import * as CaptureStore from "../src/store/CaptureStore.js"
import { makeCaptureRecord, type Rfc3339Utc, type SourceUrl } from "../src/Domain.js"
import { InvalidMigrationMap, MigrationRejected } from "../src/Errors.js"
import * as Migrate from "../src/store/Migrate.js"
import { failureOf } from "./mutants.support.js"
import { tempDirectory } from "./support.js"

const SOURCE = "https://reports.northwind.test/q3-sales.txt" as SourceUrl
const text = "Net sales for Q3 2026 were 4,210 units.\n"
const digest = createHash("sha256").update(text, "utf8").digest("hex")
const legacy = { source: SOURCE, text, sha256: digest, accessedAt: "2025-06-01T08:00:00.000Z" }

const mapText = (file: string) => JSON.stringify({ entries: [{ file, source: SOURCE }] })

/** A legacy directory with the given files, an empty run directory, and migrate() over them. */
const setup = (files: Record<string, unknown>) =>
  Effect.gen(function*() {
    const work = yield* tempDirectory
    const legacyDirectory = path.join(work, "legacy")
    const runDirectory = path.join(work, "run")
    yield* Effect.promise(async () => {
      await fsp.mkdir(legacyDirectory)
      await fsp.mkdir(runDirectory)
      for (const [name, content] of Object.entries(files)) {
        await fsp.writeFile(path.join(work, name), typeof content === "string" ? content : JSON.stringify(content))
      }
    })
    const run = (file: string) =>
      Effect.gen(function*() {
        const map = yield* Migrate.decodeMap(mapText(file))
        return yield* Migrate.migrate({ legacyDirectory, map }).pipe(
          Effect.provide(CaptureStore.layerFileSystem({ directory: runDirectory }))
        )
      })
    return { work, legacyDirectory, runDirectory, run }
  })

describe("Migrate: the map names plain file names only", () => {
  for (const file of ["../x", "..", ".", "../legacy/sales.json", "sub/sales.json", "sub\\sales.json", "/etc/passwd", "a\u0000b"]) {
    it.effect(`refuses ${JSON.stringify(file)}`, () =>
      Effect.gen(function*() {
        const error = yield* failureOf(Migrate.decodeMap(mapText(file)))
        assert.instanceOf(error, InvalidMigrationMap)
        assert.deepStrictEqual(error.issues.map((i) => [i.path.join("."), i.message]), [["entries.0.file", "must be a plain file name"]])
      }))
  }

  it.scoped("a traversal entry never reads the file outside the legacy directory", () =>
    Effect.gen(function*() {
      // `work/outside.json` is a valid legacy record one level above the legacy directory.
      const s = yield* setup({ "outside.json": legacy })
      const error = yield* failureOf(s.run("../outside.json"))
      assert.instanceOf(error, InvalidMigrationMap)
      assert.deepStrictEqual(yield* Effect.promise(() => fsp.readdir(s.runDirectory)), [])
    }))

  it.effect("a name with dots inside is a plain name", () =>
    Effect.gen(function*() {
      const map = yield* Migrate.decodeMap(mapText("..sales.v1.json"))
      assert.strictEqual(map.entries[0]!.file, "..sales.v1.json")
    }))
})

describe("Migrate: legacy records are decoded strictly", () => {
  it.scoped("an unknown key is a rejection naming the key, and nothing is written", () =>
    Effect.gen(function*() {
      const s = yield* setup({ "legacy/sales.json": { ...legacy, verified: true } })
      const result = yield* s.run("sales.json")
      assert.deepStrictEqual(result.migrated, [])
      assert.strictEqual(result.rejected.length, 1)
      const rejection = result.rejected[0]!
      assert.instanceOf(rejection, MigrationRejected)
      assert.strictEqual(rejection.reason, "not-a-legacy-record")
      assert.strictEqual(rejection.file, "sales.json")
      assert.strictEqual(rejection.source, SOURCE)
      assert.match(rejection.detail, /^verified: is unexpected/)
      assert.deepStrictEqual(yield* Effect.promise(() => fsp.readdir(s.runDirectory)), [])
    }))

  it("the exported LegacyRecord Schema refuses an unknown key with default options too", () => {
    const result = Schema.decodeUnknownEither(Migrate.LegacyRecord)({ ...legacy, verified: true })
    assert.isTrue(Either.isLeft(result))
  })

  it("the exported MigrationMap Schema refuses unknown keys at both levels with default options", () => {
    for (const input of [
      { entries: [{ file: "a.json", source: SOURCE }], force: true },
      { entries: [{ file: "a.json", source: SOURCE, trusted: true }] }
    ]) {
      assert.isTrue(Either.isLeft(Schema.decodeUnknownEither(Migrate.MigrationMap)(input)), JSON.stringify(input))
    }
  })
})

describe("Migrate: a migrated record says so", () => {
  it.scoped("its content type is the migration marker, not a claimed text/plain; charset=utf-8", () =>
    Effect.gen(function*() {
      const s = yield* setup({ "legacy/sales.json": legacy })
      const result = yield* s.run("sales.json")
      assert.deepStrictEqual(result.rejected, [])
      assert.deepStrictEqual(result.migrated, [{ file: "sales.json", source: SOURCE, sha256: digest }])
      const store = yield* CaptureStore.makeFileSystem({ directory: s.runDirectory })
      const record = yield* store.read(SOURCE)
      // Migration writes v1 records.
      if (record.format !== "citegate.capture/1") return assert.fail(`a ${record.format} record`)
      assert.strictEqual(record.contentType, "text/plain (migrated; original content type not recorded)")
      assert.strictEqual(record.contentType, Migrate.migratedContentType)
      assert.strictEqual(record.text, text)
      assert.strictEqual(record.sha256, digest)
      assert.strictEqual(record.accessedAt, legacy.accessedAt)
      assert.strictEqual(record.byteLength, Buffer.byteLength(text, "utf8"))
      // The file on disk says the same.
      const raw = yield* Effect.promise(() =>
        fsp.readFile(path.join(s.runDirectory, `${createHash("sha256").update(SOURCE).digest("hex")}.json`), "utf8"))
      assert.strictEqual(JSON.parse(raw).contentType, "text/plain (migrated; original content type not recorded)")
    }))
})

describe("Migrate: every rejection reason, with its fields", () => {
  /** Migrates with a map of several entries over the given legacy files (names relative to the legacy directory). */
  const migrateAll = (files: Record<string, string | Uint8Array>, entries: ReadonlyArray<{ file: string; source: string }>, existing: ReadonlyArray<string> = []) =>
    Effect.gen(function*() {
      const s = yield* setup({})
      yield* Effect.promise(async () => {
        for (const [name, content] of Object.entries(files)) {
          if (name.endsWith("/")) await fsp.mkdir(path.join(s.legacyDirectory, name))
          else await fsp.writeFile(path.join(s.legacyDirectory, name), content)
        }
      })
      // Sources already captured in the run: the migration must not replace them.
      const store = yield* CaptureStore.makeFileSystem({ directory: s.runDirectory })
      for (const source of existing) {
        yield* store.write(makeCaptureRecord({
          source: source as SourceUrl,
          text: "already here",
          accessedAt: legacy.accessedAt as Rfc3339Utc,
          contentType: "text/plain"
        }))
      }
      const map = yield* Migrate.decodeMap(JSON.stringify({ entries }))
      const result = yield* Migrate.migrate({ legacyDirectory: s.legacyDirectory, map }).pipe(
        Effect.provide(CaptureStore.layerFileSystem({ directory: s.runDirectory }))
      )
      return { result, runDirectory: s.runDirectory }
    })

  const other = (n: number) => `https://reports.northwind.test/other-${n}.txt`

  it.scoped("missing, unreadable, not UTF-8, not JSON, not a record, digest, source conflict, write failed", () =>
    Effect.gen(function*() {
      const badText = "edited\n"
      const { result } = yield* migrateAll(
        {
          "dir.json/": "",
          "latin1.json": Buffer.from([0x7b, 0xe9, 0x7d]),
          "broken.json": "{\"text\":",
          "array.json": "[]",
          "tampered.json": JSON.stringify({ ...legacy, source: undefined, text: badText }),
          "conflict.json": JSON.stringify({ ...legacy, source: other(9) }),
          "lone.json": `{"text":"\\ud800","sha256":"${"0".repeat(64)}","accessedAt":"2025-06-01T08:00:00.000Z"}`,
          "exists.json": JSON.stringify({ ...legacy, source: undefined })
        },
        [
          { file: "missing.json", source: other(1) },
          { file: "dir.json", source: other(2) },
          { file: "latin1.json", source: other(3) },
          { file: "broken.json", source: other(4) },
          { file: "array.json", source: other(5) },
          { file: "tampered.json", source: other(6) },
          { file: "conflict.json", source: other(7) },
          { file: "lone.json", source: other(8) },
          { file: "exists.json", source: other(10) }
        ],
        [other(10)]
      )
      assert.deepStrictEqual(result.migrated, [])
      const rows = result.rejected.map((r) => {
        assert.instanceOf(r, MigrationRejected)
        return [r.file, r.source, r.reason]
      })
      assert.deepStrictEqual(rows, [
        ["missing.json", other(1), "missing"],
        ["dir.json", other(2), "unreadable"],
        ["latin1.json", other(3), "unreadable"],
        ["broken.json", other(4), "not-a-legacy-record"],
        ["array.json", other(5), "not-a-legacy-record"],
        ["tampered.json", other(6), "digest-mismatch"],
        ["conflict.json", other(7), "source-conflict"],
        ["lone.json", other(8), "not-a-legacy-record"],
        ["exists.json", other(10), "write-failed"]
      ])
      const detail = (file: string) => result.rejected.find((r) => r.file === file)!.detail
      assert.strictEqual(detail("latin1.json"), "not valid UTF-8")
      const actual = createHash("sha256").update(badText).digest("hex")
      assert.strictEqual(detail("tampered.json"), `the text hashes to ${actual}, the record says ${digest}`)
      assert.strictEqual(detail("conflict.json"), `the record names ${other(9)}, the map names ${other(7)}`)
      assert.match(detail("lone.json"), /^text: must be well-formed Unicode/)
      assert.match(detail("array.json"), /^\(root\): /)
      assert.match(detail("exists.json"), /already/i)
    }))

  it.scoped("a legacy record naming the same source as the map migrates; files the map does not name are skipped, sorted", () =>
    Effect.gen(function*() {
      const { result, runDirectory } = yield* migrateAll(
        { "z-unlisted.json": "{}", "sales.json": JSON.stringify(legacy), "a-unlisted.json": "{}" },
        [{ file: "sales.json", source: SOURCE }]
      )
      assert.deepStrictEqual(result.rejected, [])
      assert.deepStrictEqual(result.migrated, [{ file: "sales.json", source: SOURCE, sha256: digest }])
      assert.deepStrictEqual(result.skipped, ["a-unlisted.json", "z-unlisted.json"])
      assert.deepStrictEqual(yield* Effect.promise(() => fsp.readdir(runDirectory)), [`${createHash("sha256").update(SOURCE).digest("hex")}.json`])
    }))

  it.effect("a map naming a file or a source twice is refused", () =>
    Effect.gen(function*() {
      for (const [entries, message] of [
        [[{ file: "a.json", source: other(1) }, { file: "a.json", source: other(2) }], "each file may appear only once"],
        [[{ file: "a.json", source: other(1) }, { file: "b.json", source: other(1) }], "each source may appear only once"]
      ] as const) {
        const error = yield* failureOf(Migrate.decodeMap(JSON.stringify({ entries })))
        assert.instanceOf(error, InvalidMigrationMap)
        assert.deepStrictEqual(error.issues.map((i) => [i.path.join("."), i.message]), [["entries", message]])
      }
      const blank = yield* failureOf(Migrate.decodeMap(mapText(" ")))
      assert.deepStrictEqual(blank.issues.map((i) => i.path.join(".")), ["entries.0.file"])
    }))
})

describe("Migrate: edges", () => {
  it.scoped("a legacy directory that does not exist: every entry is missing, nothing is skipped", () =>
    Effect.gen(function*() {
      const s = yield* setup({})
      const map = yield* Migrate.decodeMap(mapText("sales.json"))
      const result = yield* Migrate.migrate({ legacyDirectory: path.join(s.work, "nope"), map }).pipe(
        Effect.provide(CaptureStore.layerFileSystem({ directory: s.runDirectory }))
      )
      assert.deepStrictEqual(result.skipped, [])
      assert.deepStrictEqual(result.migrated, [])
      assert.deepStrictEqual(result.rejected.map((r) => [r.file, r.reason]), [["sales.json", "missing"]])
    }))

  it.scoped("every issue of a bad legacy record is named, with its path, separated by semicolons", () =>
    Effect.gen(function*() {
      const s = yield* setup({ "legacy/sales.json": { text, sha256: "ABC", accessedAt: "yesterday" } })
      const result = yield* s.run("sales.json")
      const detail = result.rejected[0]!.detail
      assert.match(detail, /^sha256: .+; accessedAt: .+$/)
    }))
})
