import { Effect, Layer } from "effect"
import { readFileSync } from "node:fs"
import * as fsp from "node:fs/promises"
import * as os from "node:os"
import * as path from "node:path"
import * as CaptureStore from "../src/store/CaptureStore.js"
import { type CaptureRecord, makeCaptureRecord, type Rfc3339Utc, type SourceUrl } from "../src/Domain.js"
import * as Gate from "../src/verify/Gate.js"

export const fixturePath = (...parts: Array<string>) =>
  path.join(path.dirname(new URL(import.meta.url).pathname), "..", "fixtures", ...parts)

export const fixtureText = (name: string) => readFileSync(fixturePath("sources", name), "utf8")

export const pipelineConfig: unknown = JSON.parse(readFileSync(fixturePath("pipeline.json"), "utf8"))

export const SALES = "https://reports.northwind.test/q3-sales.txt" as SourceUrl
export const INVENTORY = "https://reports.northwind.test/q3-inventory.txt" as SourceUrl

export const accessedAt = "2026-10-01T09:30:00.000Z" as Rfc3339Utc

export const salesRecord = makeCaptureRecord({
  source: SALES,
  text: fixtureText("q3-sales.txt"),
  accessedAt,
  contentType: "text/plain; charset=utf-8"
})

export const inventoryRecord = makeCaptureRecord({
  source: INVENTORY,
  text: fixtureText("q3-inventory.txt"),
  accessedAt,
  contentType: "text/plain"
})

/** A fresh temporary directory, removed with the scope. */
export const tempDirectory = Effect.acquireRelease(
  Effect.promise(() => fsp.mkdtemp(path.join(os.tmpdir(), "citegate-test-"))),
  (directory) => Effect.promise(() => fsp.rm(directory, { recursive: true, force: true }))
)

/** Writes records through the store's own (trusted) write path. */
export const writeRecords = (directory: string, records: ReadonlyArray<CaptureRecord>) =>
  Effect.gen(function*() {
    const store = yield* CaptureStore.makeFileSystem({ directory })
    for (const record of records) yield* store.write(record)
  }).pipe(Effect.orDie)

/** A run directory holding the given records. */
export const runDirectoryWith = (records: ReadonlyArray<CaptureRecord>) =>
  Effect.tap(tempDirectory, (directory) => writeRecords(directory, records))

export const recordPath = (directory: string, source: string) =>
  path.join(directory, CaptureStore.recordFileName(source))

export const cited = (label: string, record: CaptureRecord, snippet: string) => ({
  state: "cited" as const,
  label,
  source: record.source as string,
  captureSha256: record.sha256 as string,
  snippet
})

export const unavailable = (label: string, reason: string) => ({ state: "unavailable" as const, label, reason })

export const gateFor = (directory: string, config: unknown = pipelineConfig) =>
  Effect.provide(Gate.Gate, Gate.layer({ runDirectory: directory, config }))

export const withMode = (mode: "reject" | "drop") => ({
  ...(pipelineConfig as object),
  verify: { maxFacts: 100, mode }
})

export interface FileSnapshot {
  readonly name: string
  readonly bytes: string
  readonly mode: number
  readonly mtimeMs: number
  readonly kind: string
}

/** Names, bytes, modes, mtimes and kinds of every entry of a directory, links not followed. */
export const snapshotDirectory = (directory: string) =>
  Effect.promise(async (): Promise<Array<FileSnapshot>> => {
    const names = (await fsp.readdir(directory)).sort()
    return Promise.all(names.map(async (name) => {
      const full = path.join(directory, name)
      const st = await fsp.lstat(full)
      const kind = st.isFile() ? "file" : st.isSymbolicLink() ? "symlink" : st.isFIFO() ? "fifo" : "other"
      const bytes = st.isFile() ? (await fsp.readFile(full)).toString("base64") : ""
      return { name, bytes, mode: st.mode, mtimeMs: st.mtimeMs, kind }
    }))
  })

export const GateLayer = (directory: string, config: unknown = pipelineConfig) =>
  Gate.layer({ runDirectory: directory, config }).pipe(Layer.orDie)
