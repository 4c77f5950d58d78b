import { assert, it } from "@effect/vitest"
import { Effect } from "effect"
import * as http from "node:http"
import type { AddressInfo } from "node:net"
import { load } from "../scripts/bench-load.mjs"

/**
 * A server whose every request blocks its event loop for `busyMs`, as a loaded service does: a
 * turn of its loop lasts as long as the requests read in it, and Node accepts one connection per
 * turn. It records the order of its `connection` and `request` events and when each response ended.
 */
const busyServer = (busyMs: number) =>
  Effect.acquireRelease(
    Effect.async<{ url: string; events: Array<"connection" | "request">; finished: Array<number>; close: () => void }>((resume) => {
      const events: Array<"connection" | "request"> = []
      const finished: Array<number> = []
      const server = http.createServer((request, response) => {
        events.push("request")
        request.resume()
        request.on("end", () => {
          const until = performance.now() + busyMs
          while (performance.now() < until);
          response.once("finish", () => finished.push(performance.now()))
          response.writeHead(200, { "content-type": "application/json" }).end("{}")
        })
      })
      server.on("connection", () => events.push("connection"))
      server.listen(0, "127.0.0.1", () =>
        resume(Effect.succeed({
          url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`,
          events,
          finished,
          close: () => (server.closeAllConnections(), server.close())
        }))
      )
    }),
    (served) => Effect.sync(served.close)
  )

// The bench's load generator opens every connection before it sends a request: with requests
// sent as each connection opened, the server accepted the later connections one per busy turn and
// their first requests waited seconds, which made the service bench's p99 (docs/performance.md).
it.scopedLive("the load generator opens all its connections before the first request, and measures after every connection's first answer", () =>
  Effect.gen(function*() {
    const connections = 16
    const server = yield* busyServer(10)
    let started: number | undefined
    let ended: number | undefined
    const result = yield* Effect.promise(() =>
      load(
        { url: server.url, connections, duration: 1, method: "POST", headers: { "content-type": "application/json" }, body: "{}", timeout: 10 },
        { onStart: () => (started = performance.now()), onEnd: () => (ended = performance.now()) }
      )
    )
    // Every connection was accepted before the server read a request.
    const firstRequest = server.events.indexOf("request")
    assert.strictEqual(server.events.slice(0, firstRequest).filter((e) => e === "connection").length, connections, server.events.slice(0, 3 * connections).join(" "))
    assert.strictEqual(server.events.filter((e) => e === "connection").length, connections)
    // The window opened and closed, after every connection had its first answer.
    assert.isDefined(started)
    assert.isDefined(ended)
    assert.isAbove(ended!, started!)
    assert.isAtLeast(result.rampMs, 0)
    assert.isAtLeast(result.firstResponseMaxMs, 10)
    // The window's responses are those the server ended within it (give or take the ones in flight at its edges).
    const inWindow = server.finished.filter((t) => t >= started! && t <= ended!).length
    assert.isAbove(result.requests.total, 0)
    assert.isAtMost(Math.abs(result.requests.total - inWindow), connections, `${result.requests.total} against ${inWindow}`)
    assert.isAtMost(result.latency.p50, result.latency.p99)
    assert.isAtMost(result.latency.p99, result.latency.max)
    assert.strictEqual(result.non2xx, 0)
    assert.strictEqual(result.errors, 0)
    assert.isAbove(result.cpuMs, 0)
  }), 60_000)

// The service bench runs a warm-up before its window (scripts/bench-server.ts): the warm-up's answers
// are left out of the window's figures and reported apart, so what the window leaves out is seen.
it.scopedLive("the load generator reports a warm-up's answers apart from the window's", () =>
  Effect.gen(function*() {
    const connections = 4
    const server = yield* busyServer(2)
    let started: number | undefined
    const options = { url: server.url, connections, duration: 1, method: "POST", headers: { "content-type": "application/json" }, body: "{}", timeout: 10 }
    const warmed = yield* Effect.promise(() => load({ ...options, warmupSeconds: 1 }, { onStart: () => (started = performance.now()) }))
    assert.isAbove(warmed.warmup.requests, 0)
    assert.isDefined(warmed.warmup.p99)
    assert.isAtMost(warmed.warmup.p50!, warmed.warmup.p99!)
    // Every answer the server ended before the window is the warm-up's (or a connection's first), give
    // or take those in flight as the window opened and those ended while its start was on its way here
    // from the load generator's process (a tenth of them: that message waits for a busy machine too).
    const before = server.finished.filter((t) => t < started!).length
    assert.isAtMost(Math.abs(before - (warmed.warmup.requests + connections)), Math.max(3 * connections, before / 10), `${before} ended before the window, ${warmed.warmup.requests} counted`)
    // Without a warm-up only the answers during the ramp (a connection's second before another's first) are left out.
    const cold = yield* Effect.promise(() => load(options))
    assert.isBelow(cold.warmup.requests, warmed.warmup.requests)
  }), 60_000)
