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
  const config = { sources: [source], labels: ["fact"] }
  const context = await Effect.runPromise(Effect.scoped(Layer.build(Gate.layer({ runDirectory: directory, config }))))
  const gate = Context.get(context, Gate.Gate)
  const verified = await heldBy(() => Effect.runPromise(gate.checkJson(report(quote))))
  const rejected = await heldBy(() => Effect.runPromise(Effect.flip(gate.checkJson(report(near)))))
  // Each text made afresh, as a read from disk makes it: kept as plain slices (the control) and as owned ones.
  const fresh = (i: number) => prose(100 + i, MiB)
  const plainSlices = await heldBy(async (i) => fresh(i).slice(1000, 1080))
  const ownedSlices = await heldBy(async (i) => ownedSlice(fresh(i), 1000, 1080))
  process.stdout.write(JSON.stringify({ kept, verified, rejected, plainSlices, ownedSlices }) + "\n")
} finally {
  await fsp.rm(directory, { recursive: true, force: true })
}
