/** Shared setup for the service tests: a loopback source server, a configuration, the service on 127.0.0.1. */
import { Effect, Exit, Layer, Redacted, Scope } from "effect"
import * as HttpServer from "@effect/platform/HttpServer"
import * as fsp from "node:fs/promises"
import * as http from "node:http"
import * as path from "node:path"
import * as Config from "../src/Config.js"
import { sha256Of } from "../src/Domain.js"
import { tokenDigest } from "../src/server/Auth.js"
import * as Server from "../src/server/Server.js"
import { testServer } from "./httpServer.js"
import { fixtureText, tempDirectory } from "./support.js"

export const salesText = fixtureText("q3-sales.txt")
export const salesDigest = sha256Of(salesText)
export const inventoryText = "Inventory at the end of Q3 2026 was 1,120 units across two warehouses.\n"

/** Tokens by role; the configuration holds only their digests. */
export const tokens = {
  admin: "citegate-test-admin-token-0123456789",
  capture: "citegate-test-capture-token-abcdef",
  reader: "citegate-test-reader-token-zyxwvu"
} as const

/** The source server: `/q3-sales.txt`, `/q3-inventory.txt`, `/held.txt` (answers once released), anything else 404. */
export const sources = Effect.gen(function*() {
  let release: () => void = () => undefined
  const released = new Promise<void>((resolve) => (release = resolve))
  const server = yield* testServer((req, res) => {
    const send = (text: string) => {
      res.writeHead(200, { "content-type": "text/plain; charset=utf-8" })
      res.end(text)
    }
    if (req.url === "/q3-sales.txt") return send(salesText)
    if (req.url === "/q3-inventory.txt") return send(inventoryText)
    if (req.url === "/held.txt") return void released.then(() => send("Held text, released on request.\n"))
    res.writeHead(404, { "content-type": "text/plain" })
    res.end("not published")
  })
  return { server, release }
})

export interface Service {
  readonly base: string
  readonly runRoot: string
  readonly work: string
  readonly configFile: string
  readonly config: Config.PipelineConfig
  /** Close the service's scope (shutdown with draining); resolves when it is closed. */
  readonly close: Effect.Effect<void>
}

/** The service on 127.0.0.1 (free port) with `sources` approved; closed with the test's scope unless closed first. */
export const startService = (options: {
  readonly sources: ReadonlyArray<string>
  readonly server?: Partial<Config.ServerOptions>
  readonly readerRuns?: ReadonlyArray<string> | "*"
  /** More configuration (labels, review), merged over the defaults. */
  readonly config?: Record<string, unknown>
  /** `review` in pipeline.json (semantic review: the judge). */
  readonly review?: unknown
  /** The working directory (run root `runs/` inside): another service's, to restart it; default a new one. */
  readonly work?: string
  /** `serve --store`: keep runs, captures and review decisions in this PostgreSQL database. */
  readonly store?: string
}) =>
  Effect.gen(function*() {
    const work = options.work ?? (yield* tempDirectory)
    const runRoot = path.join(work, "runs")
    const configJson = {
      sources: options.sources,
      labels: ["q3_net_sales", "q3_inventory", "q4_forecast"],
      capture: { timeoutMs: 10_000 },
      server: {
        tokens: [
          { sha256: tokenDigest(tokens.admin), runs: "*", capture: true, name: "admin" },
          { sha256: tokenDigest(tokens.capture), runs: [], capture: true, name: "capture" },
          { sha256: tokenDigest(tokens.reader), runs: options.readerRuns ?? [], capture: false, name: "reader" }
        ],
        ...options.server
      },
      ...options.config,
      ...(options.review === undefined ? {} : { review: options.review })
    }
    const configFile = path.join(work, "pipeline.json")
    yield* Effect.promise(() => fsp.writeFile(configFile, JSON.stringify(configJson, null, 2)))
    const config = yield* Config.decode(configJson)
    const scope = yield* Scope.make()
    yield* Effect.addFinalizer(() => Scope.close(scope, Exit.void))
    const context = yield* Layer.buildWithScope(
      Server.layer({
        config,
        configFile,
        runRoot,
        allowLoopbackHttp: true,
        host: "127.0.0.1",
        port: 0,
        store: options.store === undefined ? undefined : { url: Redacted.make(options.store) }
      }),
      scope
    )
    const address = (yield* Effect.provide(HttpServer.HttpServer, context)).address
    const port = address._tag === "TcpAddress" ? address.port : 0
    return {
      base: `http://127.0.0.1:${port}`,
      runRoot,
      work,
      configFile,
      config,
      close: Scope.close(scope, Exit.void)
    } satisfies Service
  })

export interface Call {
  readonly status: number
  readonly headers: Headers
  readonly text: string
  readonly json: any
}

/** A request with fetch (undici) to the service. */
export const call = (
  service: Pick<Service, "base">,
  pathAndQuery: string,
  init: { method?: string; token?: string; body?: string; headers?: Record<string, string> } = {}
) =>
  Effect.promise(async (): Promise<Call> => {
    const headers: Record<string, string> = { ...init.headers }
    if (init.token !== undefined) headers["authorization"] = `Bearer ${init.token}`
    const response = await fetch(service.base + pathAndQuery, {
      method: init.method ?? (init.body === undefined ? "GET" : "POST"),
      headers,
      ...(init.body === undefined ? {} : { body: init.body })
    })
    const text = await response.text()
    let json: unknown = undefined
    try {
      json = JSON.parse(text)
    } catch {
      json = undefined
    }
    return { status: response.status, headers: response.headers, text, json }
  })

/** A raw node:http request (for what fetch will not send: slow bodies, chunked bodies). */
export const rawRequest = (
  service: Pick<Service, "base">,
  options: { method: string; path: string; headers: Record<string, string>; chunks: ReadonlyArray<string>; gapMs: number }
) =>
  Effect.async<{ status: number; body: string }>((resume) => {
    const url = new URL(service.base + options.path)
    const request = http.request({ host: "127.0.0.1", port: url.port, method: options.method, path: options.path, headers: options.headers }, (response) => {
      let body = ""
      response.on("data", (d) => (body += d))
      response.on("end", () => resume(Effect.succeed({ status: response.statusCode ?? 0, body })))
    })
    request.on("error", (error) => resume(Effect.succeed({ status: -1, body: String(error) })))
    let i = 0
    const next = () => {
      if (i >= options.chunks.length) return request.end()
      request.write(options.chunks[i++])
      setTimeout(next, options.gapMs)
    }
    next()
  })

/** Server-sent events of a run, read with fetch until `done` (a check independent of the EventSource tests). */
export const waitForRun = (service: Pick<Service, "base">, runId: string, token: string = tokens.admin) =>
  Effect.promise(async () => {
    const response = await fetch(`${service.base}/v1/runs/${runId}/events`, { headers: { authorization: `Bearer ${token}` } })
    return await response.text()
  })

/** A report citing the sales capture: one fact per snippet. */
export const report = (source: string, snippets: ReadonlyArray<string>, digest = salesDigest) =>
  JSON.stringify({
    facts: snippets.map((snippet) => ({ state: "cited", label: "q3_net_sales", source, captureSha256: digest, snippet }))
  })

/**
 * The service answers a rendering as compact JSON (no indentation, no trailing newline) where the
 * CLI's `--format json` prints it indented with a trailing newline: the same value, in the same key
 * order. The served bytes are exactly the compact text of what the CLI printed, and the CLI's output
 * exactly the indented text of what was served.
 */
export const assertSameJson = (served: string, printed: string, message?: string) => {
  if (served !== JSON.stringify(JSON.parse(printed))) throw new Error(`${message ?? "served"}: not the compact text of the CLI's JSON\n${served}\n${printed}`)
  if (printed !== JSON.stringify(JSON.parse(served), null, 2) + "\n") throw new Error(`${message ?? "printed"}: not the indented text of the served JSON`)
}

/**
 * A source on 127.0.0.1 that holds every response until `release`: a capture run of it keeps its
 * slot (or its job) as long as a test needs. Released when the scope closes, before the server is.
 */
export const heldSource = Effect.gen(function*() {
  let release = () => {}
  const released = new Promise<void>((resolve) => (release = resolve))
  const server = yield* testServer((_request, response) => {
    void released.then(() =>
      response.writeHead(200, { "content-type": "text/plain; charset=utf-8" }).end("Net sales for Q3 2026 were 4,210 units.\n")
    )
  })
  yield* Effect.addFinalizer(() => Effect.sync(release))
  return { url: server.url("/q3-sales.txt"), release: Effect.sync(release) }
})

/**
 * A source on 127.0.0.1 that holds each response until its own release: `releaseNext` answers the
 * oldest request held (or the next to arrive). Two capture runs of it can each be kept in turn;
 * `requests` counts the requests it received.
 * Every response is released when the scope closes, before the server is.
 */
export const heldEachSource = Effect.gen(function*() {
  const waiting: Array<() => void> = []
  let released = 0
  let closed = false
  const counts = { requests: 0 }
  const server = yield* testServer((_request, response) => {
    counts.requests++
    const answer = () => void response.writeHead(200, { "content-type": "text/plain; charset=utf-8" }).end("Net sales for Q3 2026 were 4,210 units.\n")
    if (closed || released > 0) {
      if (!closed) released--
      answer()
    } else waiting.push(answer)
  })
  yield* Effect.addFinalizer(() => Effect.sync(() => {
    closed = true
    for (const answer of waiting.splice(0)) answer()
  }))
  const releaseNext = Effect.sync(() => {
    const answer = waiting.shift()
    if (answer === undefined) released++
    else answer()
  })
  return { url: server.url("/q3-sales.txt"), releaseNext, requests: () => counts.requests }
})

/**
 * `GET /metrics` with `token` until one scrape matches every one of `patterns` (sampled metrics lag
 * by up to `Telemetry.sampleMs`, and one sample shows related figures together); that scrape.
 */
export const scrapeUntil = (service: Pick<Service, "base">, token: string, patterns: ReadonlyArray<RegExp>, timeoutMs = 10_000) =>
  Effect.gen(function*() {
    const deadline = Date.now() + timeoutMs
    for (;;) {
      const text = (yield* call(service, "/metrics", { token })).text
      if (patterns.every((pattern) => pattern.test(text))) return text
      if (Date.now() > deadline) return yield* Effect.dieMessage(`no ${patterns.join(" and ")} in:\n${text}`)
      yield* Effect.sleep("20 millis")
    }
  })

/** `count` capture runs started with `token` (each a 202), their ids in order. */
export const startRuns = (service: Pick<Service, "base">, count: number, token: string = tokens.capture) =>
  Effect.forEach(Array.from({ length: count }), () =>
    Effect.flatMap(call(service, "/v1/runs", { method: "POST", token }), (started) =>
      started.status === 202 ? Effect.succeed(started.json.id as string) : Effect.dieMessage(`run not started: ${started.status} ${started.text}`)))
