/**
 * In-process cost of the service's JSON rendering of one result (docs/performance.md, 2026-12-02):
 * `Json.render` (compiled encoder) against the same rendering through `Schema.encodeSync` alone
 * (`Json.toJsonGeneral`, the code before), interleaved, for the bench's report (20 cited facts,
 * verified) and for the same report with every snippet altered (rejected: 20 SnippetAbsent).
 *
 *   npx tsx scripts/bench-render.ts [rounds]
 */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { makeCaptureRecord, type Rfc3339Utc, type SourceUrl } from "../src/Domain.js"
import * as Json from "../src/render/Json.js"
import { fromOutcome } from "../src/render/Rendering.js"
import * as MemoryStore from "../src/store/Memory.js"
import * as Gate from "../src/verify/Gate.js"

const words = ["alpha", "beta", "revenue", "Q3", "1,204", "growth", "margin", "EUR", "the", "of"]
const text = (seed: number, length: number) => {
  let state = seed
  let out = ""
  while (out.length < length) {
    state = (state * 1664525 + 1013904223) >>> 0
    out += words[state % words.length] + (state % 7 === 0 ? ".\n" : " ")
  }
  return out
}
const accessedAt = "2026-12-01T00:00:00.000Z" as Rfc3339Utc
const records = Array.from({ length: 20 }, (_, i) =>
  makeCaptureRecord({ source: `https://bench.example.com/source-${i}.txt` as SourceUrl, text: text(i + 1, 16 * 1024), accessedAt, contentType: "text/plain" }))
let state = 54321
const next = () => (state = (state * 1664525 + 1013904223) >>> 0)
const facts = records.map((record, i) => {
  const start = next() % (record.text.length - 60)
  return { state: "cited", label: `fact_${i}`, source: record.source, captureSha256: record.sha256, snippet: record.text.slice(start, start + 60) }
})
const config = { sources: records.map((r) => r.source), labels: facts.map((f) => f.label) }
const check = (report: unknown) =>
  Effect.runPromise(
    Effect.flatMap(Gate.Gate, (gate) => Effect.either(gate.checkJsonWithCaptures(JSON.stringify(report)))).pipe(
      Effect.provide(Gate.layerWithStore(config).pipe(Layer.provide(MemoryStore.layer({ records }))))
    )
  )
const verified = fromOutcome(await check({ facts }))
const rejected = fromOutcome(await check({ facts: facts.map((f) => ({ ...f, snippet: `${f.snippet} (altered)` })) }))

const general = (rendering: typeof verified) => JSON.stringify(Json.toJsonGeneral(rendering), null, 2) + "\n"
if (Json.render(verified) !== general(verified) || Json.render(rejected) !== general(rejected)) throw new Error("the renderings differ")

/** Microseconds per call over `n` calls. */
const time = (f: () => unknown, n: number) => {
  const start = process.hrtime.bigint()
  for (let i = 0; i < n; i++) f()
  return Number(process.hrtime.bigint() - start) / n / 1000
}
const rounds = Number(process.argv[2] ?? 7)
for (const [name, rendering] of [["verified", verified], ["rejected", rejected]] as const) {
  time(() => general(rendering), 300)
  time(() => Json.render(rendering), 300)
  const before: Array<number> = []
  const after: Array<number> = []
  for (let round = 0; round < rounds; round++) {
    before.push(time(() => general(rendering), 1_000))
    after.push(time(() => Json.render(rendering), 1_000))
  }
  const range = (xs: Array<number>) => `${Math.min(...xs).toFixed(0)}-${Math.max(...xs).toFixed(0)} µs`
  const ratios = before.map((b, i) => b / after[i]!)
  console.log(
    `${name}: ${Json.render(rendering).length} chars; Schema.encodeSync ${range(before)}, compiled ${range(after)}, ` +
      `ratio ${Math.min(...ratios).toFixed(1)}-${Math.max(...ratios).toFixed(1)}x`
  )
}
