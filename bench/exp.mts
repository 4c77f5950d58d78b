import { Context, Effect, Layer } from "effect"
import * as fs from "node:fs"
import * as http from "node:http"
import type { AddressInfo } from "node:net"
import * as Capture from "../src/Capture.js"
import * as CaptureStore from "../src/CaptureStore.js"
const mem = () => { const s = fs.readFileSync("/proc/self/status", "utf8"); const f = (n: string) => Number(new RegExp(`^${n}:\\s+(\\d+) kB`, "m").exec(s)![1]) / 1024; return { rss: f("VmRSS"), hwm: f("VmHWM") } }
const maxBytes = 64 * 1024 * 1024
const body = Buffer.alloc(maxBytes, 0x01)
const server = http.createServer((_q, r) => { r.writeHead(200, { "content-type": "text/plain", ...(process.env.NOLEN ? {} : { "content-length": String(maxBytes) }) }); r.end(body) })
await new Promise<void>((r) => server.listen(0, "127.0.0.1", r))
const source = `http://127.0.0.1:${(server.address() as AddressInfo).port}/c.txt`
const noop = Layer.succeed(CaptureStore.CaptureStore, CaptureStore.CaptureStore.of({ read: () => Effect.die("x"), write: () => Effect.sync(() => console.log("at write", mem())) }))
const prog = Effect.scoped(Effect.gen(function*() {
  const ctx = yield* Layer.build(Capture.layer({ approved: [source], allowLoopbackHttp: true, maxBytes, timeoutMs: 60000 }).pipe(Layer.provide(noop)))
  return yield* Context.get(ctx, Capture.Capture).capture(source)
}))
;(globalThis as any).gc(); fs.writeFileSync("/proc/self/clear_refs", "5")
const base = mem().rss
await Effect.runPromise(prog)
console.log("peak above", mem().hwm - base)
server.close()
