/**
 * A run directory of small and large, v1 and v2, ASCII and non-ASCII captures, and records that fail
 * every way a read fails (missing, not JSON, not UTF-8, an extra key, another source, a wrong length,
 * pre-v1, a symlink, a directory, a v2 body missing); seeded reports over it, and Gates to compare
 * (verify.small.equivalence.test.ts, verify.readAheadThread.test.ts).
 */
import { Effect, Either, Layer } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import type { PipelineConfig } from "../../src/Config.js"
import { type CaptureRecord, makeCaptureRecord, sha256Of, type SourceUrl } from "../../src/Domain.js"
import { syncReadLimit } from "../../src/internal/safeRead.js"
import * as CaptureStore from "../../src/store/CaptureStore.js"
import * as Gate from "../../src/verify/Gate.js"
import { flat } from "../searchSupport.js"
import { accessedAt, fixtureText, recordPath, tempDirectory } from "../support.js"

export const source = (name: string) => `https://small.example.com/${name}` as SourceUrl
export const prose = "Net sales rose 4% to 1,180 units in Q3 2026. Revenue was 4,210,000 euros. "
export const plain = (name: string, text: string) => makeCaptureRecord({ source: source(name), text: flat(text), accessedAt, contentType: "text/plain" })

export const small = Array.from({ length: 24 }, (_, i) => plain(`small-${i}.txt`, `Capture ${i}: ${prose.slice(i % 20)}units ${i * 7} in the north region.\n`))
export const readable: ReadonlyArray<CaptureRecord> = [
  ...small,
  plain("nfc.txt", fixtureText("unicode-nfc.txt")),
  plain("nfd.txt", fixtureText("unicode-nfd.txt")),
  plain("repeated.txt", prose.repeat(40) + "A unique closing line, once."),
  // Past syncReadLimit: read asynchronously (the synchronous read hands an effect back).
  plain("large.txt", prose.repeat(Math.ceil((syncReadLimit + 10_000) / prose.length)))
]
export const v2Body = Buffer.from("<!doctype html><p>Net sales rose 4% to 1,180 units.</p>")
export const v2Text = "Net sales rose 4% to 1,180 units."
export const v2Of = (name: string): CaptureRecord => ({
  format: "citegate.capture/2",
  source: source(name),
  sha256: sha256Of(v2Text),
  accessedAt,
  extraction: "html/1",
  body: { sha256: sha256Of(v2Body), byteLength: v2Body.byteLength, contentType: "text/html" },
  headings: [],
  text: v2Text
} as unknown as CaptureRecord)
export const v2 = v2Of("v2.html")

/** Records whose files are broken by hand after they are written, each its own way. */
export const broken = ["truncated", "not-utf8", "extra-key", "other-source", "wrong-length", "pre-v1", "symlink", "directory"].map((name) =>
  plain(`${name}.txt`, `The ${name} capture: net sales rose 4% to 1,180 units.`)
)
export const missing = plain("missing.txt", "Never written.")
export const v2Missing = { ...v2Of("v2-missing.html"), body: { sha256: sha256Of("another body"), byteLength: 12, contentType: "text/html" } } as unknown as CaptureRecord
export const unapproved = source("not-approved.txt")
export const all: ReadonlyArray<CaptureRecord> = [...readable, v2, ...broken, missing, v2Missing]
export const labels = Array.from({ length: 60 }, (_, i) => `fact_${i}`)

export const breakRecords = (directory: string) => {
  const fileOf = (name: string) => recordPath(directory, source(`${name}.txt`))
  const edit = (name: string, change: (stored: Record<string, unknown>) => string | Buffer) => {
    const file = fileOf(name)
    const stored = JSON.parse(fs.readFileSync(file, "utf8")) as Record<string, unknown>
    fs.rmSync(file)
    fs.writeFileSync(file, change(stored))
  }
  edit("truncated", (r) => JSON.stringify(r).slice(0, 60))
  edit("not-utf8", (r) => Buffer.concat([Buffer.from(JSON.stringify(r).slice(0, -2)), Buffer.from([0xff, 0x22, 0x7d])]))
  edit("extra-key", (r) => JSON.stringify({ ...r, extra: 1 }))
  edit("other-source", (r) => JSON.stringify({ ...r, source: source("elsewhere.txt") }))
  edit("wrong-length", (r) => JSON.stringify({ ...r, byteLength: (r["byteLength"] as number) + 1 }))
  edit("pre-v1", (r) => JSON.stringify({ text: r["text"], sha256: r["sha256"] }))
  const symlinked = fileOf("symlink")
  fs.rmSync(symlinked)
  fs.symlinkSync(recordPath(directory, small[0]!.source), symlinked)
  const directoryRecord = fileOf("directory")
  fs.rmSync(directoryRecord)
  fs.mkdirSync(directoryRecord)
}

export const runDirectory = Effect.gen(function*() {
  const directory = yield* tempDirectory
  const store = yield* CaptureStore.makeFileSystem({ directory })
  for (const record of [...readable, ...broken]) yield* store.write(record)
  yield* store.write(v2, v2Body)
  // A v2 record whose body is not stored: written by hand (the store refuses to write it so).
  fs.writeFileSync(recordPath(directory, v2Missing.source), JSON.stringify(v2Missing))
  breakRecords(directory)
  // A hard link to a record is read like the record itself (a second name changes nothing).
  fs.linkSync(recordPath(directory, small[1]!.source), path.join(directory, "linked"))
  return directory
}).pipe(Effect.orDie)

/** One fact of a kind drawn by `next` (a quote found or not, a wrong digest, context, ...), citing `r`. */
const factOf = (next: () => number, r: CaptureRecord, label: string): Record<string, unknown> => {
  const slice = (length: number) => {
    const from = next() % Math.max(1, r.text.length - length)
    return { from, text: r.text.slice(from, from + length) || "a" }
  }
  const base = { state: "cited", label, source: r.source, captureSha256: r.sha256 }
  switch (next() % 10) {
    case 0:
      return { ...base, snippet: next() % 2 === 0 ? slice(30).text.replace(/.$/su, "#") : "nowhere in any capture at all" }
    case 1:
      return { ...base, captureSha256: next() % 2 === 0 ? all[next() % all.length]!.sha256 : sha256Of(String(next())), snippet: slice(20).text }
    case 2:
      return { ...base, source: unapproved, snippet: "anything" }
    case 3: { // context: the right prefix and suffix, or a wrong one
      const { from, text } = slice(12)
      const prefix = r.text.slice(Math.max(0, from - 6), from)
      const suffix = r.text.slice(from + text.length, from + text.length + 5)
      return { ...base, snippet: text, ...(prefix === "" ? {} : { prefix: next() % 3 === 0 ? prefix + "~" : prefix }), ...(suffix === "" ? {} : { suffix }) }
    }
    case 4: { // ambiguous phrases, numbers cut
      const pool = ["Net sales rose 4%", "4,210", "rose", "units", "1,18", "Capture 1", "north region."]
      return { ...base, snippet: pool[next() % pool.length]! }
    }
    case 5: // found only after normalisation
      return { ...base, snippet: slice(30).text.toUpperCase().replace(/ /g, "  ") }
    default:
      return { ...base, snippet: slice(1 + (next() % 70)).text }
  }
}

/** One seeded report: 1 to 30 facts of every kind, drawn by `next`. */
export const seededReport = (next: () => number) => {
  const facts: Array<Record<string, unknown>> = []
  const count = 1 + (next() % 30)
  for (let k = 0; k < count; k++) {
    const label = next() % 40 === 0 ? "not_a_label" : labels[k]!
    facts.push(factOf(next, all[next() % all.length]!, label))
  }
  return JSON.stringify({ facts })
}

/** A seeded report that cites every record of `all` once, in an order drawn by `next`, each fact of a drawn kind. */
export const everyRecordReport = (next: () => number) => {
  const order = all.map((r) => ({ r, key: next() })).sort((a, b) => a.key - b.key).map(({ r }) => r)
  return JSON.stringify({ facts: order.map((r, k) => factOf(next, r, next() % 40 === 0 ? "not_a_label" : labels[k]!)) })
}

export const policies: ReadonlyArray<Record<string, unknown>> = [
  { mode: "drop" },
  {},
  { mode: "drop", matching: "normalized/2" },
  { mode: "drop", ambiguous: "reject", boundaries: "tokens" }
]

export const configOf = (verify: Record<string, unknown>) =>
  ({ sources: all.map((r) => r.source), labels, verify: { maxFacts: 100, ...verify } }) as unknown as PipelineConfig

/**
 * The filesystem store (with `options`), or the same behind a wrapper of `read` (so with no
 * synchronous read, and nothing read ahead).
 */
export const storeLayer = (directory: string, wrapped: boolean, options: Partial<CaptureStore.FileSystemOptions> = {}) =>
  Layer.effect(
    CaptureStore.CaptureStore,
    Effect.map(CaptureStore.makeFileSystem({ ...options, directory }), (store): CaptureStore.CaptureStoreShape =>
      wrapped ? { ...store, read: (s) => store.read(s) } : store)
  )

export const gateOf = (
  directory: string,
  verify: Record<string, unknown>,
  wrapped: boolean,
  options: Partial<CaptureStore.FileSystemOptions> = {}
) =>
  Effect.provide(Gate.Gate, Gate.layerWithStore(configOf(verify)).pipe(Layer.provide(storeLayer(directory, wrapped, options)), Layer.orDie))

export const outcomeOf = <E>(checked: Effect.Effect<Gate.Checked, E>) =>
  Effect.map(Effect.either(checked), (outcome) => Either.map(outcome, (c) => ({ ...c, captures: [...c.captures.entries()] })))

/** An outcome as JSON, with every error's message. */
export const comparable = (outcome: unknown): string =>
  JSON.stringify(outcome, (_, value) => value instanceof Error ? { json: { ...value }, message: value.message } : value)
