/**
 * The load and match steps without an effect per capture (verify/Load.ts `readAllNow` through the
 * filesystem store's synchronous read, internal/readNow.ts; verify/Match.ts `matchEach`) against
 * the general path: seeded reports over a run directory of small and large, v1 and v2, ASCII and
 * non-ASCII captures, and records that fail every way a read fails (missing, not JSON, not UTF-8,
 * an extra key, another source, a wrong length, pre-v1, a symlink, a directory, a v2 body missing),
 * checked through three Gates: the filesystem store as it is; the same store behind a wrapper of
 * `read` (no synchronous read: an effect per capture); and that wrapper under an exporting tracer
 * (a span per capture read and searched: the loop of `matchCapture` effects). Every outcome, errors
 * included word for word, must be the same, and every failure tag must occur.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Either, Layer } from "effect"
import { VerificationTimeout } from "../src/Errors.js"
import * as fs from "node:fs"
import * as path from "node:path"
import type { PipelineConfig } from "../src/Config.js"
import { type CaptureRecord, makeCaptureRecord, sha256Of, type SourceUrl } from "../src/Domain.js"
import { readNowOf } from "../src/internal/readNow.js"
import { syncReadLimit } from "../src/internal/safeRead.js"
import * as CaptureStore from "../src/store/CaptureStore.js"
import * as Gate from "../src/verify/Gate.js"
import { flat, random } from "./searchSupport.js"
import { accessedAt, fixtureText, recordPath, tempDirectory } from "./support.js"
import { countOpens } from "./support/countOpens.js"
import { exportingTracer } from "./support/spans.js"

const source = (name: string) => `https://small.example.com/${name}` as SourceUrl
const prose = "Net sales rose 4% to 1,180 units in Q3 2026. Revenue was 4,210,000 euros. "
const plain = (name: string, text: string) => makeCaptureRecord({ source: source(name), text: flat(text), accessedAt, contentType: "text/plain" })

const small = Array.from({ length: 24 }, (_, i) => plain(`small-${i}.txt`, `Capture ${i}: ${prose.slice(i % 20)}units ${i * 7} in the north region.\n`))
const readable: ReadonlyArray<CaptureRecord> = [
  ...small,
  plain("nfc.txt", fixtureText("unicode-nfc.txt")),
  plain("nfd.txt", fixtureText("unicode-nfd.txt")),
  plain("repeated.txt", prose.repeat(40) + "A unique closing line, once."),
  // Past syncReadLimit: read asynchronously (the synchronous read hands an effect back).
  plain("large.txt", prose.repeat(Math.ceil((syncReadLimit + 10_000) / prose.length)))
]
const v2Body = Buffer.from("<!doctype html><p>Net sales rose 4% to 1,180 units.</p>")
const v2Text = "Net sales rose 4% to 1,180 units."
const v2Of = (name: string): CaptureRecord => ({
  format: "citegate.capture/2",
  source: source(name),
  sha256: sha256Of(v2Text),
  accessedAt,
  extraction: "html/1",
  body: { sha256: sha256Of(v2Body), byteLength: v2Body.byteLength, contentType: "text/html" },
  headings: [],
  text: v2Text
} as unknown as CaptureRecord)
const v2 = v2Of("v2.html")

/** Records whose files are broken by hand after they are written, each its own way. */
const broken = ["truncated", "not-utf8", "extra-key", "other-source", "wrong-length", "pre-v1", "symlink", "directory"].map((name) =>
  plain(`${name}.txt`, `The ${name} capture: net sales rose 4% to 1,180 units.`)
)
const missing = plain("missing.txt", "Never written.")
const v2Missing = { ...v2Of("v2-missing.html"), body: { sha256: sha256Of("another body"), byteLength: 12, contentType: "text/html" } } as unknown as CaptureRecord
const unapproved = source("not-approved.txt")
const all: ReadonlyArray<CaptureRecord> = [...readable, v2, ...broken, missing, v2Missing]
const labels = Array.from({ length: 60 }, (_, i) => `fact_${i}`)

const breakRecords = (directory: string) => {
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

const runDirectory = Effect.gen(function*() {
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

/** One seeded report: 1 to 30 facts of every kind, drawn by `next`. */
const seededReport = (next: () => number) => {
  const facts: Array<Record<string, unknown>> = []
  const count = 1 + (next() % 30)
  for (let k = 0; k < count; k++) {
    const label = next() % 40 === 0 ? "not_a_label" : labels[k]!
    const r = all[next() % all.length]!
    const slice = (length: number) => {
      const from = next() % Math.max(1, r.text.length - length)
      return { from, text: r.text.slice(from, from + length) || "a" }
    }
    const base = { state: "cited", label, source: r.source, captureSha256: r.sha256 }
    switch (next() % 10) {
      case 0:
        facts.push({ ...base, snippet: next() % 2 === 0 ? slice(30).text.replace(/.$/su, "#") : "nowhere in any capture at all" })
        break
      case 1:
        facts.push({ ...base, captureSha256: next() % 2 === 0 ? all[next() % all.length]!.sha256 : sha256Of(String(next())), snippet: slice(20).text })
        break
      case 2:
        facts.push({ ...base, source: unapproved, snippet: "anything" })
        break
      case 3: { // context: the right prefix and suffix, or a wrong one
        const { from, text } = slice(12)
        const prefix = r.text.slice(Math.max(0, from - 6), from)
        const suffix = r.text.slice(from + text.length, from + text.length + 5)
        facts.push({ ...base, snippet: text, ...(prefix === "" ? {} : { prefix: next() % 3 === 0 ? prefix + "~" : prefix }), ...(suffix === "" ? {} : { suffix }) })
        break
      }
      case 4: { // ambiguous phrases, numbers cut
        const pool = ["Net sales rose 4%", "4,210", "rose", "units", "1,18", "Capture 1", "north region."]
        facts.push({ ...base, snippet: pool[next() % pool.length]! })
        break
      }
      case 5: // found only after normalisation
        facts.push({ ...base, snippet: slice(30).text.toUpperCase().replace(/ /g, "  ") })
        break
      default:
        facts.push({ ...base, snippet: slice(1 + (next() % 70)).text })
    }
  }
  return JSON.stringify({ facts })
}

const policies: ReadonlyArray<Record<string, unknown>> = [
  { mode: "drop" },
  {},
  { mode: "drop", matching: "normalized/2" },
  { mode: "drop", ambiguous: "reject", boundaries: "tokens" }
]

const configOf = (verify: Record<string, unknown>) =>
  ({ sources: all.map((r) => r.source), labels, verify: { maxFacts: 100, ...verify } }) as unknown as PipelineConfig

/** The filesystem store, or the same behind a wrapper of `read` (so with no synchronous read). */
const storeLayer = (directory: string, wrapped: boolean) =>
  Layer.effect(
    CaptureStore.CaptureStore,
    Effect.map(CaptureStore.makeFileSystem({ directory }), (store): CaptureStore.CaptureStoreShape =>
      wrapped ? { ...store, read: (s) => store.read(s) } : store)
  )

const gateOf = (directory: string, verify: Record<string, unknown>, wrapped: boolean) =>
  Effect.provide(Gate.Gate, Gate.layerWithStore(configOf(verify)).pipe(Layer.provide(storeLayer(directory, wrapped)), Layer.orDie))

const outcomeOf = <E>(checked: Effect.Effect<Gate.Checked, E>) =>
  Effect.map(Effect.either(checked), (outcome) => Either.map(outcome, (c) => ({ ...c, captures: [...c.captures.entries()] })))

/** An outcome as JSON, with every error's message. */
const comparable = (outcome: unknown): string =>
  JSON.stringify(outcome, (_, value) => value instanceof Error ? { json: { ...value }, message: value.message } : value)

describe("verifying without an effect per capture: the general path's outcome, errors included", () => {
  it.scopedLive("the filesystem store has a synchronous read; a wrapper of its read has none", () =>
    Effect.gen(function*() {
      const directory = yield* tempDirectory
      const store = yield* CaptureStore.makeFileSystem({ directory })
      assert.isDefined(readNowOf(store.read))
      assert.isUndefined(readNowOf({ ...store, read: (s: SourceUrl) => store.read(s) }.read))
    }))

  it.scopedLive("seeded reports of every kind, under four policies: the same outcome through all three Gates", () =>
    Effect.gen(function*() {
      const directory = yield* runDirectory
      const tags = new Set<string>()
      const reasons = new Set<string>()
      for (const verify of policies) {
        const fast = yield* gateOf(directory, verify, false)
        const general = yield* gateOf(directory, verify, true)
        const { tracer } = exportingTracer()
        const next = random(31 + policies.indexOf(verify))
        let verified = 0
        for (let n = 0; n < 60; n++) {
          const text = seededReport(next)
          const fromFast = yield* outcomeOf(fast.checkJsonWithCaptures(text))
          assert.deepStrictEqual(fromFast, yield* outcomeOf(general.checkJsonWithCaptures(text)), `${JSON.stringify(verify)}: ${text}`)
          // Under spans, an error raised in a span carries it (a hidden property): compared as JSON, messages included.
          const fromSpans = yield* outcomeOf(Effect.withTracer(general.checkJsonWithCaptures(text), tracer))
          assert.strictEqual(comparable(fromSpans), comparable(fromFast), `${JSON.stringify(verify)} (spans): ${text}`)
          if (Either.isRight(fromFast)) {
            verified += fromFast.right.report.facts.length
            // The captures given are those of the verified cited facts, in the report's order, each its source's record.
            const cited = fromFast.right.report.facts.flatMap((entry) => entry.fact.state === "cited" ? [entry.fact.source as string] : [])
            assert.deepStrictEqual(fromFast.right.captures.map(([source]) => source), [...new Set(cited)], text)
            for (const [source, record] of fromFast.right.captures) assert.strictEqual(record.source, source)
            for (const r of fromFast.right.report.retractions) {
              tags.add(r.error._tag)
              if (r.error._tag === "CorruptCapture") reasons.add((r.error as { reason: string }).reason)
            }
          }
        }
        // Reject mode: every seeded report has a failing fact, so each is refused whole.
        if (verify["mode"] === "drop") assert.isAbove(verified, 0, JSON.stringify(verify))
      }
      for (const tag of ["NotApproved", "MissingCapture", "CorruptCapture", "LegacyCapture", "DigestMismatch", "SnippetAbsent", "AmbiguousSnippet", "UnknownLabel"]) {
        assert.isTrue(tags.has(tag), `${tag} in ${[...tags].join(", ")}`)
      }
      for (const reason of ["invalid-json", "invalid-utf8", "not-a-v1-record", "symlink", "not-a-regular-file", "body-missing"]) {
        assert.isTrue(reasons.has(reason), `${reason} in ${[...reasons].join(", ")}`)
      }
    }), 180_000)

  for (const refusedLate of [false, true]) {
    const what = refusedLate ? "of records refused after a whole read (an extra key)" : "of synchronous reads"
    it.scopedLive(`a long run ${what} yields to the timers: an overrun deadline stops it before the last capture`, () =>
      Effect.gen(function*() {
        // 80 records of 250,000 code units each, every one read synchronously (under syncReadLimit):
        // 20 Mi units in all, past the 8 Mi after which the load yields to the timers.
        const text = flat("net sales rose 4% to 1,180 units. ".repeat(7_143).slice(0, 250_000))
        const many = Array.from({ length: 80 }, (_, i) => plain(`many-${i}.txt`, `${i} ${text}`))
        const directory = yield* tempDirectory
        const store = yield* CaptureStore.makeFileSystem({ directory })
        for (const record of many) yield* store.write(record)
        if (refusedLate) {
          // Each record is read and parsed whole, then refused (not-a-v1-record): no text is counted.
          for (const record of many) {
            const file = recordPath(directory, record.source)
            fs.writeFileSync(file, JSON.stringify({ ...JSON.parse(fs.readFileSync(file, "utf8")), extra: 1 }))
          }
        }
        const facts = many.map((r, i) => ({ state: "cited", label: `fact_${i}`, source: r.source, captureSha256: r.sha256, snippet: r.text.slice(0, 20) }))
        const config = { sources: many.map((r) => r.source), labels: facts.map((f) => f.label), verify: { maxFacts: 100, mode: "drop", timeoutMs: 1 } }
        const gate = yield* Effect.provide(
          Gate.Gate,
          Gate.layerWithStore(config).pipe(Layer.provide(Layer.succeed(CaptureStore.CaptureStore, store)), Layer.orDie)
        )
        const { opened } = yield* countOpens
        const error = yield* Effect.flip(gate.checkJson(JSON.stringify({ facts })))
        assert.instanceOf(error, VerificationTimeout)
        // Stopped at a yield: not every record was opened (without the yields, all 80 are read first).
        assert.isAbove(opened.length, 0)
        assert.isBelow(opened.length, 80)
      }), 60_000)
  }
})
