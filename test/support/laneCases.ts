/**
 * The request matrix of the verify lane's equivalence tests (test/server.verifyLane.test.ts,
 * test/server.verifyThreads.test.ts): services over one run root that differ in one setting,
 * a request sent on a connection of its own, and what of two answers must be equal.
 */
import { assert } from "@effect/vitest"
import * as HttpServer from "@effect/platform/HttpServer"
import { Effect, Exit, Layer, Logger, Scope } from "effect"
import * as fsp from "node:fs/promises"
import * as http from "node:http"
import * as path from "node:path"
import * as Config from "../../src/Config.js"
import { tokenDigest } from "../../src/server/Auth.js"
import * as JsonLog from "../../src/server/JsonLog.js"
import * as Server from "../../src/server/Server.js"
import { SALES, salesRecord } from "../support.js"

export const tokens = { admin: "lane-admin-token-0123456789", reader: "lane-reader-token-abcdef", other: "lane-other-token-zyx" }

export interface Answer {
  readonly status: number
  readonly headers: ReadonlyArray<readonly [string, string]>
  readonly body: Buffer
  readonly logs: ReadonlyArray<unknown>
}

export interface Case {
  readonly name: string
  readonly method?: string
  readonly path: string
  /** Raw header pairs (a name may repeat). */
  readonly headers?: ReadonlyArray<readonly [string, string]>
  readonly body?: Buffer | string
  /** Body chunks written `gapMs` apart (a slow client); the request is not ended before the answer. */
  readonly slow?: { readonly chunks: ReadonlyArray<string>; readonly gapMs: number }
  readonly chunked?: boolean
}

export const startService = (work: string, runRoot: string, server: Record<string, unknown>, verifyLane: boolean) =>
  Effect.gen(function*() {
    const configJson = {
      sources: [SALES],
      labels: ["q3_net_sales", "q3_online_share"],
      verify: { mode: "reject" },
      server: {
        tokens: [
          { sha256: tokenDigest(tokens.admin), runs: "*", capture: true, name: "admin" },
          { sha256: tokenDigest(tokens.reader), runs: ["r1"], capture: false, name: "reader" },
          { sha256: tokenDigest(tokens.other), runs: ["r2"], capture: false, name: "other" }
        ],
        ...server
      }
    }
    const configFile = path.join(work, "pipeline.json")
    yield* Effect.promise(() => fsp.writeFile(configFile, JSON.stringify(configJson)))
    const config = yield* Config.decode(configJson)
    const lines: Array<string> = []
    const recorder = Logger.map(JsonLog.format, (line) => void lines.push(line))
    const scope = yield* Scope.make()
    yield* Effect.addFinalizer(() => Scope.close(scope, Exit.void))
    const context = yield* Layer.buildWithScope(
      Server.layer({ config, configFile, runRoot, host: "127.0.0.1", port: 0, verifyLane }),
      scope
    ).pipe(Effect.provide(Logger.replace(Logger.defaultLogger, recorder)))
    const address = (yield* Effect.provide(HttpServer.HttpServer, context)).address
    return { port: address._tag === "TcpAddress" ? address.port : 0, lines }
  })

/** One request on a connection of its own; the answer and the log lines written for it. */
export const send = (service: { port: number; lines: Array<string> }, c: Case) =>
  Effect.async<Answer>((resume) => {
    const before = service.lines.length
    const body = c.body === undefined ? undefined : Buffer.from(c.body)
    // Raw header pairs: Node adds no Host of its own then.
    const headers: Array<readonly [string, string]> = [["host", `127.0.0.1:${service.port}`], ...(c.headers ?? [])]
    if (body !== undefined && c.chunked !== true) headers.push(["content-length", String(body.length)])
    if (c.slow !== undefined) headers.push(["content-length", "1000"])
    const request = http.request({ host: "127.0.0.1", port: service.port, method: c.method ?? "POST", path: c.path, headers: headers.flat(), agent: false })
    request.on("response", (response) => {
      const chunks: Array<Buffer> = []
      response.on("data", (chunk: Buffer) => chunks.push(chunk))
      response.on("end", () => {
        const pairs: Array<[string, string]> = []
        for (let i = 0; i < response.rawHeaders.length; i += 2) pairs.push([response.rawHeaders[i]!.toLowerCase(), response.rawHeaders[i + 1]!])
        request.destroy()
        // Log lines are written before the response (and flushed by the recorder at once).
        setTimeout(() => resume(Effect.succeed({ status: response.statusCode ?? 0, headers: pairs, body: Buffer.concat(chunks), logs: service.lines.slice(before).map((l) => JSON.parse(l)) })), 20)
      })
    })
    request.on("error", (error) => resume(Effect.die(error)))
    if (c.slow !== undefined) {
      let i = 0
      const next = () => {
        if (i < c.slow!.chunks.length) {
          request.write(c.slow!.chunks[i++])
          setTimeout(next, c.slow!.gapMs)
        }
      }
      next()
    } else if (body !== undefined) request.end(body)
    else request.end()
  })

const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/

/** What must be equal: status, headers but `date` (the request id checked apart), body, log lines but time, fiber and id. */
export const comparable = (answer: Answer) => {
  const requestId = answer.headers.find(([name]) => name === "x-request-id")?.[1]
  if (requestId !== undefined) assert.match(requestId, uuid)
  return {
    status: answer.status,
    headers: answer.headers.filter(([name]) => name !== "date").map(([name, value]) => name === "x-request-id" ? [name, "<id>"] : [name, value]),
    body: answer.body.toString("base64"),
    logs: answer.logs.map((line: any) => {
      if (requestId !== undefined) assert.strictEqual(line.annotations.requestId, requestId)
      const { fiberId: _f, timestamp: _t, ...rest } = line
      const { ms: _m, requestId: _r, ...annotations } = line.annotations
      return { ...rest, annotations, spans: Object.keys(line.spans) }
    })
  }
}

const bearer = (token: string) => [["authorization", `Bearer ${token}`] as const]
const json = [["content-type", "application/json"] as const]
const fact = (snippet: string, digest: string = salesRecord.sha256) => ({ state: "cited", label: "q3_net_sales", source: SALES, captureSha256: digest, snippet })
export const good = JSON.stringify({ facts: [fact("Net sales for Q3 2026 were 4,210 units")] })
const goodTwo = JSON.stringify({ facts: [fact("Net sales for Q3 2026 were 4,210 units"), fact("up 12% on Q2 2026")] })
const absent = JSON.stringify({ facts: [fact("Net sales for Q3 2026 were 4,210 units"), fact("Net sales were 9,999 units")] })
const wrongDigest = JSON.stringify({ facts: [fact("Net sales for Q3 2026 were 4,210 units", "0".repeat(64))] })

export const matrix: ReadonlyArray<Case> = [
  { name: "good", path: "/v1/verify/report?run=r1", headers: [...bearer(tokens.admin), ...json], body: good },
  { name: "good, two facts", path: "/v1/verify/report?run=r1", headers: bearer(tokens.admin), body: goodTwo },
  { name: "good, reader listing the run", path: "/v1/verify/report?run=r1", headers: bearer(tokens.reader), body: good },
  { name: "good, mode=drop", path: "/v1/verify/report?run=r1&mode=drop", headers: bearer(tokens.admin), body: good },
  { name: "absent, mode=reject", path: "/v1/verify/report?run=r1&mode=reject", headers: bearer(tokens.admin), body: absent },
  { name: "absent, mode=drop", path: "/v1/verify/report?mode=drop&run=r1", headers: bearer(tokens.admin), body: absent },
  { name: "absent, default mode", path: "/v1/verify/report?run=r1", headers: bearer(tokens.admin), body: absent },
  { name: "wrong capture digest", path: "/v1/verify/report?run=r1", headers: bearer(tokens.admin), body: wrongDigest },
  { name: "malformed JSON", path: "/v1/verify/report?run=r1", headers: bearer(tokens.admin), body: "{\"facts\": [" },
  { name: "not an object", path: "/v1/verify/report?run=r1", headers: bearer(tokens.admin), body: "[]" },
  { name: "excess key", path: "/v1/verify/report?run=r1", headers: bearer(tokens.admin), body: JSON.stringify({ facts: [], x: 1 }) },
  { name: "invalid UTF-8", path: "/v1/verify/report?run=r1", headers: bearer(tokens.admin), body: Buffer.concat([Buffer.from("{\"facts\":[\""), Buffer.from([0xff, 0xfe, 0xc3]), Buffer.from("\"]}")]) },
  { name: "BOM", path: "/v1/verify/report?run=r1", headers: bearer(tokens.admin), body: "\ufeff" + good },
  { name: "sign=0", path: "/v1/verify/report?run=r1&sign=0", headers: bearer(tokens.admin), body: good },
  { name: "sign=1 without a key", path: "/v1/verify/report?run=r1&sign=1", headers: bearer(tokens.admin), body: good },
  { name: "unknown run", path: "/v1/verify/report?run=nope", headers: bearer(tokens.admin), body: good },
  { name: "invalid run id", path: "/v1/verify/report?run=..%2Fx", headers: bearer(tokens.admin), body: good },
  { name: "no run", path: "/v1/verify/report?mode=drop", headers: bearer(tokens.admin), body: good },
  { name: "no query", path: "/v1/verify/report", headers: bearer(tokens.admin), body: good },
  { name: "bad mode", path: "/v1/verify/report?run=r1&mode=maybe", headers: bearer(tokens.admin), body: good },
  { name: "unknown parameter", path: "/v1/verify/report?run=r1&extra=1", headers: bearer(tokens.admin), body: good },
  { name: "repeated parameter", path: "/v1/verify/report?run=r1&run=r1", headers: bearer(tokens.admin), body: good },
  { name: "bad token", path: "/v1/verify/report?run=r1", headers: bearer("not-a-configured-token"), body: good },
  { name: "missing token", path: "/v1/verify/report?run=r1", headers: json, body: good },
  { name: "malformed authorization", path: "/v1/verify/report?run=r1", headers: [["authorization", "Basic abc"]], body: good },
  { name: "two authorization headers", path: "/v1/verify/report?run=r1", headers: [...bearer(tokens.admin), ...bearer(tokens.admin)], body: good },
  { name: "token not listing the run", path: "/v1/verify/report?run=r1", headers: bearer(tokens.other), body: good },
  { name: "too large", path: "/v1/verify/report?run=r1", headers: bearer(tokens.admin), body: "x".repeat(5000) },
  { name: "chunked", path: "/v1/verify/report?run=r1", headers: [...bearer(tokens.admin), ["transfer-encoding", "chunked"]], body: good, chunked: true },
  { name: "empty body", path: "/v1/verify/report?run=r1", headers: bearer(tokens.admin), body: "" },
  { name: "GET", method: "GET", path: "/v1/verify/report?run=r1", headers: bearer(tokens.admin) },
  { name: "trailing slash", path: "/v1/verify/report/?run=r1", headers: bearer(tokens.admin), body: good },
  { name: "a slow body past the deadline", path: "/v1/verify/report?run=r1", headers: bearer(tokens.admin), slow: { chunks: ["{\"facts\": [", " "], gapMs: 50 } }
]
