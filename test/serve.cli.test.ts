/**
 * `run-pipeline serve` as a separate process, under the loads of the round-two review (scaled down to
 * what runs in seconds on a loaded two-core machine, same mechanism): unauthenticated bodies are not
 * read (memory measured from /proc), streamed answers and run events outlive the request deadline
 * and end with their terminal event (time measured, log status checked), plain HTTP stays on loopback
 * unless TLS is configured or a proxy is declared.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import * as fsp from "node:fs/promises"
import { spawn } from "node:child_process"
import * as http from "node:http"
import * as https from "node:https"
import * as path from "node:path"
import * as Config from "../src/Config.js"
import * as Serve from "../src/cli/Serve.js"
import { tokenDigest } from "../src/server/Auth.js"
import * as AnswerStream from "../src/server/AnswerStream.js"
import { testServer } from "./httpServer.js"
import { bin } from "./cliProcess.js"
import { requestLogs, startServe } from "./serveProcess.js"
import { salesText } from "./serverSupport.js"
import { tempDirectory } from "./support.js"
import { makePki } from "./support/tlsPki.js"

const TOKEN = "citegate-serve-process-token"
const auth = { authorization: `Bearer ${TOKEN}` }
const MiB = 1024 * 1024

/** A configuration file in a fresh directory; `server` is merged into the service's options. */
const configFile = (sources: ReadonlyArray<string>, server: Record<string, unknown> = {}) =>
  Effect.gen(function*() {
    const work = yield* tempDirectory
    const file = path.join(work, "pipeline.json")
    const config = {
      sources,
      labels: ["q3_net_sales"],
      capture: { timeoutMs: 20_000 },
      server: { tokens: [{ sha256: tokenDigest(TOKEN), runs: "*", capture: true }], ...server }
    }
    yield* Effect.promise(() => fsp.writeFile(file, JSON.stringify(config)))
    return { work, file }
  })

/** One POST of `body` (a shared buffer) with no Authorization header; the status, or -1 when no answer came. */
const unauthenticatedPost = (base: string, body: Buffer) =>
  new Promise<number>((resolve) => {
    const url = new URL(`${base}/v1/verify/report?run=any-run`)
    const request = http.request({
      host: "127.0.0.1",
      port: url.port,
      method: "POST",
      path: `${url.pathname}${url.search}`,
      headers: { "content-type": "application/json", "content-length": String(body.length) },
      agent: false
    })
    let status = -1
    request.on("response", (response) => {
      status = response.statusCode ?? -1
      response.resume()
      response.on("end", () => resolve(status))
      response.on("error", () => resolve(status))
    })
    // The server answers and closes before the body is sent: a broken pipe here is expected.
    request.on("error", () => resolve(status))
    request.end(body)
  })

describe("serve: bodies are not read before authentication", () => {
  it.scopedLive("24 concurrent 8 MiB POSTs without a token: all 401, server peak memory grows by far less than the bodies", () =>
    Effect.gen(function*() {
      const { file, work } = yield* configFile(["https://reports.northwind.test/q3.txt"])
      const served = yield* startServe(["--config", file, "--listen", "127.0.0.1:0", "--run-root", path.join(work, "runs")])
      const body = Buffer.alloc(8 * MiB, "x")
      const before = served.memory()
      const started = performance.now()
      const statuses = yield* Effect.promise(() => Promise.all(Array.from({ length: 24 }, () => unauthenticatedPost(served.base, body))))
      const ms = Math.round(performance.now() - started)
      const after = served.memory()
      const grown = after.peak - before.peak
      console.log(`24 x 8 MiB unauthenticated POSTs: ${ms} ms; server peak RSS ${Math.round(before.peak / MiB)} -> ${Math.round(after.peak / MiB)} MiB`)
      assert.deepStrictEqual(statuses, statuses.map(() => 401), JSON.stringify(statuses))
      // The bodies total 192 MiB (read and kept before: +211 MiB). Discarded as they arrive, only chunks
      // waiting for the collector: about +30 MiB.
      assert.isBelow(grown, 64 * MiB, `peak RSS grew by ${Math.round(grown / MiB)} MiB`)
      // The server still answers.
      const health = yield* Effect.promise(() => fetch(`${served.base}/healthz`).then((r) => r.status))
      assert.strictEqual(health, 200)
    }), 120_000)
})

/** The text of a response read to its end, or what came before `ms` passed (then `ended` is false). */
const readWithin = (url: string, init: RequestInit, ms: number) =>
  Effect.promise(async () => {
    const controller = new AbortController()
    const timer = setTimeout(() => controller.abort(), ms)
    const started = performance.now()
    let text = ""
    let status = 0
    let headers = new Headers()
    try {
      const response = await fetch(url, { ...init, signal: controller.signal })
      status = response.status
      headers = response.headers
      const decoder = new TextDecoder()
      for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) text += decoder.decode(chunk, { stream: true })
      return { status, headers, text, ended: true, ms: performance.now() - started }
    } catch {
      return { status, headers, text, ended: false, ms: performance.now() - started }
    } finally {
      clearTimeout(timer)
    }
  })

/** NDJSON input lines sent `gapMs` apart (a model producing its answer slowly); `hold` keeps the body open afterwards. */
const drippedBody = (lines: ReadonlyArray<string>, gapMs: number, hold = false) =>
  new ReadableStream<Uint8Array>({
    async start(controller) {
      for (const line of lines) {
        controller.enqueue(new TextEncoder().encode(`${JSON.stringify({ type: "delta", text: line })}\n`))
        await new Promise((resolve) => setTimeout(resolve, gapMs))
      }
      if (!hold) controller.close()
    }
  })

describe("serve: streams outlive the request deadline and end with their terminal event", () => {
  it.scopedLive("run events of a slow source, a streamed answer, its follower and a stalled stream (requestTimeoutMs 800)", () =>
    Effect.gen(function*() {
      // One quick source and one that drips its body over 2.5 s (the review's 45 s, scaled down).
      const source = yield* testServer((request, response) => {
        response.writeHead(200, { "content-type": "text/plain; charset=utf-8" })
        if (request.url !== "/drip.txt") return void response.end(salesText)
        let sent = 0
        const timer = setInterval(() => {
          response.write(`Line ${++sent} of the slow source.\n`)
          if (sent === 10) {
            clearInterval(timer)
            response.end()
          }
        }, 250)
        response.on("close", () => clearInterval(timer))
      })
      const { file, work } = yield* configFile([source.url("/q3-sales.txt"), source.url("/drip.txt")], {
        requestTimeoutMs: 800,
        streamDeadlineMs: 3_000
      })
      const served = yield* startServe([
        "--config", file, "--listen", "127.0.0.1:0", "--run-root", path.join(work, "runs"), "--allow-loopback-http"
      ])
      const started = yield* Effect.promise(() => fetch(`${served.base}/v1/runs`, { method: "POST", headers: auth }).then((r) => r.json() as any))
      const runId = started.id as string

      // Run events: every event, then the end of the response when the run ends.
      const events = yield* readWithin(`${served.base}/v1/runs/${runId}/events`, { headers: auth }, 15_000)
      assert.isTrue(events.ended, `the events stream did not end; got: ${events.text}`)
      assert.deepStrictEqual([...events.text.matchAll(/^event: (\w+)$/gm)].map((m) => m[1]), ["started", "captured", "captured", "done"])
      assert.isAbove(events.ms, 1_500, "the run took the drip's time")
      const info = yield* Effect.promise(() => fetch(`${served.base}/v1/runs/${runId}`, { headers: auth }).then((r) => r.json() as any))
      assert.strictEqual(info.status, "completed")
      const digest = info.manifest.digest as string

      // A streamed answer whose input takes ~2 s, with a follower reading it live.
      const answer = [
        "Net sales for Q3 2026 ",
        "were 4,210 units.[1]{c1}",
        "\nEVI1\n",
        `MANIFEST ${digest}\n`,
        "c1|1|\"Net sales for Q3 2026 were 4,210 units\"\n",
        "END_EVI1\n"
      ]
      const [streamed, followed] = yield* Effect.promise(async () => {
        const t0 = performance.now()
        const response = await fetch(`${served.base}/v1/stream/answer?run=${runId}`, {
          method: "POST",
          headers: auth,
          body: drippedBody(answer, 400),
          duplex: "half"
        } as RequestInit)
        // The headers come first: a follower joins the live stream by its id and reads it to its end.
        const streamId = response.headers.get("citegate-stream-id")!
        const follower = Effect.runPromise(readWithin(`${served.base}/v1/stream/answer/${streamId}`, { headers: auth }, 15_000))
        const text = await response.text()
        return [{ status: response.status, text, ms: performance.now() - t0, streamId }, await follower] as const
      })
      assert.strictEqual(streamed.status, 200)
      assert.isAbove(streamed.ms, 1_500, "the input took its time")
      const types = streamed.text.trim().split("\n").map((l) => AnswerStream.decodeEvent(l).type)
      assert.deepStrictEqual(types.filter((t) => t === "done" || t === "error"), ["done"])
      assert.strictEqual(types.at(-1), "done")
      assert.isTrue(followed.ended, `the follower did not end; got: ${followed.text}`)
      assert.deepStrictEqual(followed.text, streamed.text)
      const streamId = streamed.streamId

      // A client that stops sending but keeps its body open: at the stream deadline (3 s) an error, then
      // done, and the response ends.
      const stalled = yield* readWithin(`${served.base}/v1/stream/answer?run=${runId}`, {
        method: "POST",
        headers: auth,
        body: drippedBody(["Net sales were "], 10, true),
        duplex: "half"
      } as RequestInit, 10_000)
      assert.isTrue(stalled.ended, `no end; got: ${stalled.text}`)
      const last = stalled.text.trim().split("\n").map((l) => AnswerStream.decodeEvent(l))
      assert.deepStrictEqual(last.slice(-2).map((e) => e.type), ["error", "done"])
      const error = last.at(-2)!
      assert.deepStrictEqual(error.type === "error" && [error.error._tag, (error.error as any).timeoutMs], ["StreamDeadline", 3_000])
      assert.isAbove(stalled.ms, 2_900)
      assert.isBelow(stalled.ms, 6_000)

      // The log says what the clients saw: 200, never 503 (a line is written once its response has ended).
      yield* Effect.sleep(300)
      const logged = [
        ...requestLogs(served, `/v1/runs/${runId}/events`),
        ...requestLogs(served, "/v1/stream/answer"),
        ...requestLogs(served, `/v1/stream/answer/${streamId}`)
      ].map((l) => l.status)
      assert.deepStrictEqual(logged, [200, 200, 200, 200])
    }), 60_000)
})

/** `serve` run to its exit, killed (and reported as such) if it is still running after `ms`. */
const serveExit = (args: ReadonlyArray<string>, ms: number) =>
  Effect.async<{ code: number | null; stderr: string; killed: boolean }>((resume) => {
    const child = spawn(process.execPath, [bin, "serve", ...args], { stdio: ["ignore", "pipe", "pipe"] })
    let stderr = ""
    let killed = false
    child.stderr.on("data", (d) => (stderr += d))
    const timer = setTimeout(() => {
      killed = true
      child.kill("SIGKILL")
    }, ms)
    child.on("close", (code) => {
      clearTimeout(timer)
      resume(Effect.succeed({ code, stderr, killed }))
    })
  })

describe("serve: plain HTTP only on loopback", () => {
  it.effect("checkListen: a non-loopback address needs server.tls or --behind-tls-proxy", () =>
    Effect.gen(function*() {
      const plain = yield* Config.decode({ sources: ["https://reports.northwind.test/q3.txt"], labels: ["x"], server: { tokens: [] } })
      const tls = yield* Config.decode({
        sources: ["https://reports.northwind.test/q3.txt"],
        labels: ["x"],
        server: { tokens: [], tls: { certFile: "cert.pem", keyFile: "key.pem" } }
      })
      for (const host of ["127.0.0.1", "127.8.9.10", "::1"]) {
        assert.isTrue(Serve.isLoopback(host), host)
        yield* Serve.checkListen({ host, port: 8799 }, plain, false)
      }
      for (const host of ["0.0.0.0", "::", "192.0.2.1", "10.1.2.3", "::ffff:192.0.2.1", "fe80::1", "128.0.0.1"]) {
        assert.isFalse(Serve.isLoopback(host), host)
        const refused = yield* Effect.flip(Serve.checkListen({ host, port: 8799 }, plain, false))
        assert.deepStrictEqual([refused._tag, refused.host, refused.port], ["InsecureListen", host, 8799])
        // HTTPS, or a declared TLS proxy in front, lifts the refusal.
        yield* Serve.checkListen({ host, port: 8799 }, tls, false)
        yield* Serve.checkListen({ host, port: 8799 }, plain, true)
      }
    }))

  it.scopedLive("serve --listen 0.0.0.0:8799 without TLS: InsecureListen, exit 2, nothing listened on", () =>
    Effect.gen(function*() {
      const { file, work } = yield* configFile(["https://reports.northwind.test/q3.txt"])
      const ran = yield* serveExit(["--config", file, "--listen", "0.0.0.0:8799", "--run-root", path.join(work, "runs")], 20_000)
      assert.isFalse(ran.killed, "serve started instead of refusing")
      assert.strictEqual(ran.code, 2)
      assert.strictEqual(
        ran.stderr,
        "InsecureListen: Refusing to serve plain HTTP on 0.0.0.0:8799, a non-loopback address: bearer tokens would cross the network in clear. " +
          "Configure server.tls (certFile and keyFile) to serve HTTPS, pass --behind-tls-proxy when a TLS-terminating proxy is the only way in, or listen on 127.0.0.1\n"
      )
    }), 30_000)

  it.scopedLive("server.tls: serve speaks HTTPS with the configured certificate; an unreadable key is FileUnreadable, exit 2", () =>
    Effect.gen(function*() {
      const pki = yield* makePki
      const { file, work } = yield* configFile(["https://reports.northwind.test/q3.txt"], {
        tls: { certFile: path.join(pki.directory, "ip.pem"), keyFile: path.join(pki.directory, "ip.key") }
      })
      const served = yield* startServe(["--config", file, "--listen", "127.0.0.1:0", "--run-root", path.join(work, "runs")], "https")
      assert.strictEqual(served.logs().find((l) => l.message === "listening")?.annotations.protocol, "https")
      const get = (pathname: string, headers: Record<string, string> = {}) =>
        Effect.promise(() =>
          new Promise<{ status: number; body: string }>((resolve, reject) => {
            const request = https.get(`${served.base}${pathname}`, { ca: pki.ca, headers, agent: false }, (response) => {
              let body = ""
              response.on("data", (d) => (body += d))
              response.on("end", () => resolve({ status: response.statusCode ?? 0, body }))
            })
            request.on("error", reject)
          })
        )
      assert.deepStrictEqual(yield* get("/healthz"), { status: 200, body: "{\"status\":\"ok\"}" })
      assert.strictEqual((yield* get("/v1/runs/x", auth)).status, 404)
      // Plain HTTP to the same port gets no answer from the API.
      const plain = yield* Effect.promise(() => fetch(`http://127.0.0.1:${new URL(served.base).port}/healthz`).then((r) => r.status, () => "refused"))
      assert.notStrictEqual(plain, 200)

      const missing = yield* configFile(["https://reports.northwind.test/q3.txt"], {
        tls: { certFile: path.join(pki.directory, "ip.pem"), keyFile: "no-such-key.pem" }
      })
      const ran = yield* serveExit(["--config", missing.file, "--listen", "127.0.0.1:0"], 20_000)
      assert.strictEqual(ran.code, 2)
      assert.isTrue(
        ran.stderr.startsWith(`FileUnreadable: Cannot read the TLS key (server.tls.keyFile) ${path.join(missing.work, "no-such-key.pem")}: `),
        ran.stderr
      )
      // A certificate with another certificate's key is refused before anything listens.
      const mismatched = yield* configFile(["https://reports.northwind.test/q3.txt"], {
        tls: { certFile: path.join(pki.directory, "ip.pem"), keyFile: path.join(pki.directory, "name.key") }
      })
      const wrong = yield* serveExit(["--config", mismatched.file, "--listen", "127.0.0.1:0"], 20_000)
      assert.strictEqual(wrong.code, 2)
      assert.match(wrong.stderr, /^FileUnreadable: Cannot read the TLS certificate and key \(server\.tls\) .*: not a usable PEM certificate chain and matching key: /)
    }), 60_000)
})
