/**
 * Run with `node --expose-gc`: how much heap a kept verified report, a kept rejection and kept
 * excerpts hold, each made from a capture of 1 MiB read afresh. Prints one JSON line of MiB per
 * measurement (see test/keptExcerpts.test.ts).
 */
import { Context, Effect, Layer } from "effect"
import * as fsp from "node:fs/promises"
import * as os from "node:os"
import * as path from "node:path"
import { makeCaptureRecord, type Rfc3339Utc, type SourceUrl } from "../../src/Domain.js"
import { ownedSlice } from "../../src/internal/ownedSlice.js"
import * as CaptureStore from "../../src/store/CaptureStore.js"
import { compile } from "../../src/review/Catalogue.js"
import { reviewFact } from "../../src/review/Numbers.js"
import * as Gate from "../../src/verify/Gate.js"

const kept = 16
const MiB = 1024 * 1024
const gc = (globalThis as { gc?: () => void }).gc!

/** Heap growth (MiB) while `make` is called `kept` times and every result is kept. */
const heldBy = async (make: (i: number) => Promise<unknown>): Promise<number> => {
  const held: Array<unknown> = []
  await make(-1)
  gc()
  const before = process.memoryUsage().heapUsed
  for (let i = 0; i < kept; i++) held.push(await make(i))
  gc()
  const after = process.memoryUsage().heapUsed
  if (held.length !== kept) throw new Error("lost a result")
  return (after - before) / MiB
}

const words = ["output", "rose", "fell", "by", "per", "cent", "in", "the", "quarter", "region", "net", "sales"]
const prose = (seed: number, units: number) => {
  let state = seed
  const parts: Array<string> = []
  let length = 0
  while (length < units) {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0
    const word = words[state >>> 28]! ?? "and"
    parts.push(word)
    length += word.length + 1
  }
  return parts.join(" ").slice(0, units)
}

const directory = await fsp.mkdtemp(path.join(os.tmpdir(), "citegate-kept-"))
try {
  const source = "https://kept.example.com/large.txt" as SourceUrl
  const text = prose(7, MiB)
  const record = makeCaptureRecord({ source, text, accessedAt: "2026-01-01T00:00:00.000Z" as Rfc3339Utc, contentType: "text/plain" })
  await Effect.runPromise(Effect.gen(function*() {
    const store = yield* CaptureStore.makeFileSystem({ directory })
    yield* store.write(record)
  }))
  const quote = text.slice(500_000, 500_080)
  // The same quote with one word changed: absent, with a nearest passage.
  const near = quote.replace(/ (\w+) /, " changed ")
  const report = (snippet: string) =>
    JSON.stringify({ facts: [{ state: "cited", label: "fact", source, captureSha256: record.sha256, snippet }] })
  const gateOf = async (verify: object) => {
    const config = { sources: [source], labels: ["fact"], verify }
    const context = await Effect.runPromise(Effect.scoped(Layer.build(Gate.layer({ runDirectory: directory, config }))))
    return Context.get(context, Gate.Gate)
  }
  const gate = await gateOf({})
  const tokens = await gateOf({ boundaries: "tokens" })
  // What each kept result is, so that a measurement of something else fails the test.
  const shapes: Record<string, unknown> = {}
  const verified = await heldBy(async () => {
    const out = await Effect.runPromise(gate.checkJson(report(quote)))
    const first = out.facts[0]
    shapes.verified = first !== undefined && "evidence" in first && first.evidence.selector?.[0].exact === quote
    return out
  })
  const failureOf = async (g: typeof gate, snippet: string, key: string) => {
    const error = await Effect.runPromise(Effect.flip(g.checkJson(report(snippet))))
    const failure = error._tag === "ReportRejected" ? error.failures[0]?.error : undefined
    shapes[key] = failure === undefined
      ? error._tag
      : `${failure._tag}${failure._tag === "SnippetAbsent" && failure.nearest !== undefined ? "+nearest" : ""}`
    return error
  }
  const rejected = await heldBy(() => failureOf(gate, near, "rejected"))
  // From the second unit of a word: present as a substring, refused for cutting the word.
  const cut = text.indexOf(" ", 500_000) + 2
  const cutToken = await heldBy(() => failureOf(tokens, text.slice(cut, cut + 80), "cutToken"))
  // A number review keeps the terms and values it found in the excerpt's sentence.
  const catalogue = compile([{ label: "rev", metric: { terms: ["operating revenue"] }, valueKind: "integer", units: ["euros"], period: "Q3 2026" }] as any)
  const numberReview = await heldBy(async (i) => {
    const sentence = "Operating revenue was 4,210,000 euros in Q3 2026.\n"
    const filler = prose(200 + i, MiB / 2)
    const reviewed = filler + "\n" + sentence + filler
    const at = reviewed.indexOf("Operating revenue")
    const out = reviewFact(catalogue, { index: 0, label: "rev" }, reviewed, { start: at, end: at + sentence.length - 2 })
    shapes.numberReview = JSON.stringify(out).includes("4,210,000")
    return out
  })
  // Each text made afresh, as a read from disk makes it: kept as plain slices (the control) and as owned ones.
  const fresh = (i: number) => prose(100 + i, MiB)
  const plainSlices = await heldBy(async (i) => fresh(i).slice(1000, 1080))
  const ownedSlices = await heldBy(async (i) => ownedSlice(fresh(i), 1000, 1080))
  process.stdout.write(JSON.stringify({ kept, verified, rejected, cutToken, numberReview, plainSlices, ownedSlices, shapes }) + "\n")
} finally {
  await fsp.rm(directory, { recursive: true, force: true })
}
