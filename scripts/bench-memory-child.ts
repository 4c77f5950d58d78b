/**
 * One measurement per process, so that its peak RSS (the kernel's VmHWM) is
 * the measurement's own and nothing else's. Spawned by `scripts/bench.ts` and
 * by the memory tests; prints one JSON line.
 *
 *   capture MAXBYTES DIR [chunked]
 *                          capture a MAXBYTES body of control characters (U+0001)
 *                          from a 127.0.0.1 server, with maxBytes = MAXBYTES, into DIR;
 *                          `chunked`: the server sends no Content-Length
 *   capture-many N MAXBYTES DIR
 *                          the same for N sources at once (`captureAll`, concurrency N)
 *   read DIR SOURCE        read the record of SOURCE in DIR through the store
 *                          (strict read, decode, source and length checks) and rehash it
 */
import { Context, Effect, Layer } from "effect"
import * as fs from "node:fs"
import * as http from "node:http"
import type { AddressInfo } from "node:net"
import * as path from "node:path"
import * as Capture from "../src/capture/Capture.js"
import * as CaptureStore from "../src/store/CaptureStore.js"
import { recordBody, sha256Of, type SourceUrl } from "../src/Domain.js"

const MiB = 1024 * 1024

/** Resident and peak resident set size, in bytes, from the kernel. */
const memory = () => {
  const status = fs.readFileSync("/proc/self/status", "utf8")
  const field = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, "m").exec(status)?.[1] ?? NaN) * 1024
  return { rss: field("VmRSS"), hwm: field("VmHWM") }
}

/** Baseline: the process with everything loaded and the input in place, after a full collection. */
const baseline = () => {
  ;(globalThis as { gc?: () => void }).gc?.()
  // Resets VmHWM to the current RSS (Linux ≥ 4.0), so the peak is measured from here.
  try {
    fs.writeFileSync("/proc/self/clear_refs", "5")
  } catch {
    // Without the reset the peak includes start-up, which only overstates it.
  }
  return memory().rss
}

const report = (fields: Record<string, unknown>, base: number) => {
  const { hwm } = memory()
  process.stdout.write(JSON.stringify({ ...fields, baselineBytes: base, peakBytes: hwm, aboveBaselineBytes: hwm - base }) + "\n")
}

const capture = async (maxBytes: number, directory: string, chunked: boolean) => {
  const body = Buffer.alloc(maxBytes, 0x01)
  const server = http.createServer((_request, response) => {
    response.writeHead(200, { "content-type": "text/plain", ...(chunked ? {} : { "content-length": String(body.byteLength) }) })
    response.end(body)
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const source = `http://127.0.0.1:${(server.address() as AddressInfo).port}/control.txt`
  try {
    const program = Effect.scoped(Effect.gen(function*() {
      const context = yield* Layer.build(
        Capture.layer({ approved: [source], allowLoopbackHttp: true, maxBytes, timeoutMs: 120_000 }).pipe(
          Layer.provide(CaptureStore.layerFileSystem({ directory }))
        )
      )
      return yield* Context.get(context, Capture.Capture).capture(source)
    }))
    const base = baseline()
    const ref = await Effect.runPromise(program)
    const recordBytes = fs.statSync(path.join(directory, CaptureStore.recordFileName(source))).size
    report({ mode: chunked ? "capture-chunked" : "capture", source, bodyBytes: ref.byteLength, recordBytes }, base)
  } finally {
    server.closeAllConnections()
    server.close()
  }
}

const captureMany = async (count: number, maxBytes: number, directory: string) => {
  const body = Buffer.alloc(maxBytes, 0x01)
  const server = http.createServer((_request, response) => {
    response.writeHead(200, { "content-type": "text/plain", "content-length": String(body.byteLength) })
    response.end(body)
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const port = (server.address() as AddressInfo).port
  const sources = Array.from({ length: count }, (_, i) => `http://127.0.0.1:${port}/control-${i}.txt`)
  try {
    const program = Effect.scoped(Effect.gen(function*() {
      const context = yield* Layer.build(
        Capture.layer({ approved: sources, allowLoopbackHttp: true, maxBytes, timeoutMs: 300_000, concurrency: count })
          .pipe(Layer.provide(CaptureStore.layerFileSystem({ directory })))
      )
      return yield* Context.get(context, Capture.Capture).captureAll(sources)
    }))
    const base = baseline()
    const results = capturedCount(await Effect.runPromise(program))
    report({ mode: "capture-many", sources: count, captured: results }, base)
  } finally {
    server.closeAllConnections()
    server.close()
  }
}

const capturedCount = (results: ReadonlyArray<Capture.CaptureResult>) => results.filter((r) => r.result._tag === "Right").length

const read = async (directory: string, source: SourceUrl) => {
  const store = await Effect.runPromise(CaptureStore.makeFileSystem({ directory }))
  const base = baseline()
  const record = await Effect.runPromise(store.read(source))
  if (sha256Of(record.text) !== record.sha256) throw new Error("digest mismatch")
  const recordBytes = fs.statSync(path.join(directory, CaptureStore.recordFileName(source))).size
  report({ mode: "read", source, bodyBytes: recordBody(record).byteLength, recordBytes }, base)
}

const [mode, ...rest] = process.argv.slice(2)
const run = mode === "capture"
  ? capture(Number(rest[0] ?? 64 * MiB), rest[1]!, rest[2] === "chunked")
  : mode === "capture-many"
  ? captureMany(Number(rest[0]), Number(rest[1]), rest[2]!)
  : mode === "read"
  ? read(rest[0]!, rest[1]! as SourceUrl)
  : Promise.reject(new Error("usage: bench-memory-child capture MAXBYTES DIR | read DIR SOURCE"))
run.catch((error) => {
  process.stderr.write(`${error instanceof Error ? error.stack : String(error)}\n`)
  process.exitCode = 1
})
