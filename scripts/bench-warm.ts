/**
 * One warm verification in process: the service's report of the bench (20 facts against 20
 * captures of 1 MiB, as scripts/bench-server.ts builds it) through `Gate.checkJsonWithCaptures`
 * (what `POST /v1/verify/report` calls), over a run directory, with the service's verified-capture
 * cache already holding every capture and its built index. No HTTP, no JSON encoding of the
 * result: the verification alone, in microseconds per verification.
 *
 *   node --import tsx scripts/bench-warm.ts [--root DIR] [--rounds N] [--per-round N] [--dist] [--profile FILE] [--general]
 *
 * `--root` is the checkout whose `src/` is measured (default: this one), so that another checkout
 * can be measured with the same harness, interleaved.
 */
import { Effect, Layer } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import * as inspector from "node:inspector/promises"
import { performance } from "node:perf_hooks"
import { makeText } from "./benchText.js"

const args = process.argv.slice(2)
const option = (name: string, fallback: string) => (args.includes(name) ? args[args.indexOf(name) + 1]! : fallback)
const root = path.resolve(option("--root", path.join(path.dirname(new URL(import.meta.url).pathname), "..")))
const rounds = Number(option("--rounds", "9"))
const perRound = Number(option("--per-round", "400"))
// `--profile FILE`: a CPU profile of the measured rounds only (not the warm-up's index builds).
const profileFile = args.includes("--profile") ? path.resolve(option("--profile", "")) : undefined

// `--dist`: the built modules (dist/) instead of the sources, for readable CPU profiles.
const fromDist = args.includes("--dist")
const src = (file: string) =>
  import(fromDist ? path.join(root, "dist", file.replace(/\.ts$/, ".js")) : path.join(root, "src", file))
const Domain = await src("Domain.ts")
const CaptureStore = await src("store/CaptureStore.ts")
const CaptureCache = await src("verify/CaptureCache.ts")
const Gate = await src("verify/Gate.ts")

const work = fs.mkdtempSync(path.join(os.tmpdir(), "citegate-bench-warm-"))
try {
  const sources = Array.from({ length: 20 }, (_, i) => `https://bench.example.com/source-${i}.txt`)
  const records = sources.map((source, i) =>
    Domain.makeCaptureRecord({ source, text: makeText(i + 1, 1024 * 1024), accessedAt: "2026-11-30T00:00:00.000Z", contentType: "text/plain" })
  )
  // The report of scripts/bench-server.ts: 20 facts, one 60-unit excerpt each, captures in turn.
  const labels = Array.from({ length: 20 }, (_, i) => `fact_${i}`)
  let state = 54321
  const next = () => (state = (state * 1664525 + 1013904223) >>> 0)
  const facts = labels.map((label, i) => {
    const record = records[i % records.length]
    const start = next() % (record.text.length - 60)
    return { state: "cited", label, source: record.source, captureSha256: record.sha256, snippet: record.text.slice(start, start + 60) }
  })
  const body = JSON.stringify({ facts })
  const config = JSON.stringify({ sources, labels })

  // `--general`: also the same verification with the warm path off (verify/Warm.ts), rounds alternating.
  const Warm = args.includes("--general") ? await src("verify/Warm.ts") : undefined
  const variants: Array<{ readonly name: string; readonly layer: Layer.Layer<any, any, any> }> = [{ name: "as built", layer: Layer.empty as unknown as Layer.Layer<any, any, any> }]
  if (Warm !== undefined) variants.push({ name: "general path", layer: Layer.succeed(Warm.WarmPath, { enabled: false }) })

  const program = Effect.gen(function*() {
    const store = yield* CaptureStore.CaptureStore
    for (const record of records) yield* store.write(record)
    // One Gate per variant, over the same store and the same cache (as the service builds them).
    const gates: Array<any> = []
    for (const variant of variants) {
      gates.push(yield* Effect.provide(Gate.Gate, Gate.layerWithStore(config).pipe(Layer.provide(variant.layer))))
    }
    // The service's warm-up: the first verifications read the captures and build their indexes
    // (each within its deadline's allowance), so the rounds below measure the warm state only.
    for (const gate of gates) {
      for (let i = 0; i < 4; i++) yield* gate.checkJsonWithCaptures(body)
      const checked = yield* gate.checkJsonWithCaptures(body)
      if (checked.report.facts.length !== 20 || checked.report.outcome !== "grounded") throw new Error("the bench report does not verify")
    }
    // Wall time and this process's CPU time (user + system) per verification: on a loaded machine
    // the CPU time is the steadier of the two.
    const wall = variants.map((): Array<number> => [])
    const cpu = variants.map((): Array<number> => [])
    const session = profileFile === undefined ? undefined : new inspector.Session()
    if (session !== undefined) {
      session.connect()
      yield* Effect.promise(() => session.post("Profiler.enable").then(() => session.post("Profiler.start")))
    }
    for (let round = 0; round < rounds; round++) {
      for (let v = 0; v < gates.length; v++) {
        const gate = gates[v]
        const started = performance.now()
        const cpuStarted = process.cpuUsage()
        for (let i = 0; i < perRound; i++) yield* gate.checkJsonWithCaptures(body)
        const used = process.cpuUsage(cpuStarted)
        wall[v]!.push(((performance.now() - started) * 1000) / perRound)
        cpu[v]!.push((used.user + used.system) / perRound)
      }
    }
    if (session !== undefined) {
      const { profile } = yield* Effect.promise(() => session.post("Profiler.stop"))
      fs.writeFileSync(profileFile!, JSON.stringify(profile))
      session.disconnect()
    }
    return { wall, cpu }
  })
  const layer = Layer.merge(CaptureStore.layerFileSystem({ directory: work }), CaptureCache.layer({ maxBytes: 256 * 1024 * 1024 }))
  type Times = { wall: Array<Array<number>>; cpu: Array<Array<number>> }
  const { cpu, wall } = await Effect.runPromise(Effect.provide(program, layer) as Effect.Effect<Times>)
  const summary = (times: ReadonlyArray<number>, digits = 1) => {
    const sorted = [...times].sort((a, b) => a - b)
    const at = (i: number) => sorted[i]!.toFixed(digits)
    return `median ${at(sorted.length >> 1)} (${at(0)}-${at(sorted.length - 1)})`
  }
  variants.forEach((variant, v) => {
    process.stdout.write(
      `${root} (${variant.name}): µs per warm verification, ${rounds} rounds of ${perRound}: CPU ${summary(cpu[v]!)}, wall ${summary(wall[v]!)}\n`
    )
  })
  if (variants.length === 2) {
    // Round by round (each pair measured back to back): the ratio is steadier than either figure.
    const ratios = cpu[0]!.map((t, round) => t / cpu[1]![round]!)
    process.stdout.write(`CPU ratio as built / general path, round by round: ${summary(ratios, 2)}\n`)
  }
} finally {
  fs.rmSync(work, { recursive: true, force: true })
}
