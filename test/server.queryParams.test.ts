/**
 * Query parameters a route does not take are refused with the API's 400 `HttpApiDecodeError`, on
 * every route with query parameters, with the verify lane on and off: an unknown name, and the names
 * the platform's record would take for its own (`__proto__`, which sets a prototype when assigned,
 * `constructor`, `prototype`), given once or repeated. A `__proto__` answers exactly as any other
 * unknown parameter (the same body, its name aside).
 * The routes that read their query themselves (`POST /v1/stream/answer`, `GET /v1/stream/answer/{id}`,
 * the review page's `POST /v1/runs/{id}/audits`) refuse one too, each with its own 400 for a bad query.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import * as fsp from "node:fs/promises"
import * as path from "node:path"
import { salesRecord, tempDirectory, writeRecords } from "./support.js"
import { startSalesService } from "./support/salesService.js"

const token = "query-params-admin-token-0123456789"
const report = JSON.stringify({ facts: [] })

const call = (port: number, method: string, url: string, body?: string) =>
  Effect.promise(async () => {
    const response = await fetch(`http://127.0.0.1:${port}${url}`, {
      method,
      headers: { authorization: `Bearer ${token}` },
      ...(body === undefined ? {} : { body })
    })
    return { status: response.status, body: await response.text() }
  })

/** A service (the verify lane on or off) over a run root holding run `r1` with the sales capture. */
const serviceOverOneRun = (verifyLane: boolean) =>
  Effect.gen(function*() {
    const work = yield* tempDirectory
    const runRoot = path.join(work, "runs")
    yield* Effect.promise(() => fsp.mkdir(path.join(runRoot, "r1"), { recursive: true }))
    yield* writeRecords(path.join(runRoot, "r1"), [salesRecord])
    return yield* startSalesService({ work, runRoot, verifyLane, token })
  })

const routes = [
  { name: "report", method: "POST", base: "/v1/verify/report?run=r1", body: report },
  { name: "answer", method: "POST", base: "/v1/verify/answer?run=r1", body: "EVI1\n" },
  { name: "documents", method: "GET", base: "/v1/runs/r1/documents?format=documents", body: undefined }
] as const

const hostile = ["__proto__", "constructor", "prototype", "toString", "hasOwnProperty"]

describe("query parameters a route does not take", () => {
  for (const verifyLane of [true, false]) {
    it.live(`are refused with the API's 400 on every route (lane ${verifyLane ? "on" : "off"})`, () =>
      Effect.gen(function*() {
        const port = yield* serviceOverOneRun(verifyLane)
        for (const route of routes) {
          // The route answers its plain request (the refusals below are the parameters').
          const plain = yield* call(port, route.method, route.base, route.body)
          assert.strictEqual(plain.status, 200, `${route.name}: ${plain.body}`)
          const unknown = yield* call(port, route.method, `${route.base}&extra=x`, route.body)
          assert.strictEqual(unknown.status, 400, `${route.name} extra: ${unknown.body}`)
          const decoded = JSON.parse(unknown.body)
          assert.strictEqual(decoded._tag, "HttpApiDecodeError")
          assert.match(decoded.message, /^extra: is unexpected/, unknown.body)
          for (const name of hostile) {
            for (const query of [`${name}=x`, `${name}=x&${name}=y`, `${name}=x&${name}=y&${name}=z`]) {
              const answer = yield* call(port, route.method, `${route.base}&${query}`, route.body)
              const label = `${route.name} ${query}`
              assert.strictEqual(answer.status, 400, `${label}: ${answer.body}`)
              // The same body as an unknown parameter's, the name aside.
              const asUnknown = yield* call(port, route.method, `${route.base}&${query.replaceAll(name, "extra")}`, route.body)
              assert.strictEqual(answer.body, asUnknown.body.replaceAll("extra", name), label)
            }
          }
          // Paths the router takes as the route's (a trailing slash, repeated slashes, another case, `;`
          // before the query) and HEAD: `__proto__` answers as an unknown parameter does.
          const [pathPart, queryPart] = route.base.split("?") as [string, string]
          const variants = [
            [route.method, `${pathPart}/?${queryPart}`],
            [route.method, `/${pathPart}?${queryPart}`],
            [route.method, `${pathPart.toUpperCase().replace("R1", "r1")}?${queryPart}`],
            [route.method, `${pathPart};${queryPart}`],
            ["HEAD", route.base]
          ] as const
          for (const [method, base] of variants) {
            const proto = yield* call(port, method, `${base}&__proto__=x`, method === "HEAD" ? undefined : route.body)
            const extra = yield* call(port, method, `${base}&extra=x`, method === "HEAD" ? undefined : route.body)
            assert.strictEqual(proto.status, extra.status, `${method} ${base}`)
            assert.strictEqual(proto.status, method === "HEAD" && route.method !== "GET" ? 404 : 400, `${method} ${base}`)
            assert.strictEqual(proto.body, extra.body.replaceAll("extra", "__proto__"), `${method} ${base}`)
          }
          // Spelled with percent escapes, first or alone.
          for (const query of ["%5F%5Fproto%5F%5F=x", "__proto__=x&run=r1"]) {
            const url = route.base.replace(/\?.*/, "?") + query + (query.startsWith("%") ? "&" + route.base.split("?")[1] : "")
            const answer = yield* call(port, route.method, url, route.body)
            assert.strictEqual(answer.status, 400, `${route.name} ${url}: ${answer.body}`)
            assert.strictEqual(JSON.parse(answer.body)._tag, "HttpApiDecodeError", url)
          }
        }
      }).pipe(Effect.scoped), 60_000)
  }
})

/** The routes that read their query themselves: the streaming routes and the review page's audit route. */
describe("query parameters the streaming and audit routes do not take", () => {
  it.live("are refused with the route's own 400 for a bad query, `__proto__` as any other name", () =>
    Effect.gen(function*() {
      const port = yield* serviceOverOneRun(true)
      const delta = JSON.stringify({ type: "delta", text: "Net sales were 4,210 units.\n" }) + "\n"
      const posted = yield* Effect.promise(() =>
        fetch(`http://127.0.0.1:${port}/v1/stream/answer?run=r1`, { method: "POST", headers: { authorization: `Bearer ${token}` }, body: delta })
          .then(async (response) => ({ status: response.status, id: response.headers.get("citegate-stream-id"), body: await response.text() }))
      )
      assert.strictEqual(posted.status, 200, posted.body)
      const rows = [
        { name: "stream", method: "POST", base: "/v1/stream/answer?run=r1&mode=drop", body: delta, tag: "StreamRequestInvalid" },
        { name: "resume", method: "GET", base: `/v1/stream/answer/${posted.id}?lastEventId=0`, body: undefined, tag: "StreamRequestInvalid" },
        { name: "audit", method: "POST", base: "/v1/runs/r1/audits?against=r1", body: report, tag: "HttpApiDecodeError" }
      ] as const
      for (const route of rows) {
        const plain = yield* call(port, route.method, route.base, route.body)
        assert.notStrictEqual(plain.status, 400, `${route.name}: ${plain.body}`)
        assert.include([200, 422], plain.status, `${route.name}: ${plain.body}`)
        const unknown = yield* call(port, route.method, `${route.base}&extra=x`, route.body)
        assert.strictEqual(unknown.status, 400, `${route.name} extra: ${unknown.body}`)
        const decoded = JSON.parse(unknown.body)
        assert.strictEqual(decoded._tag, route.tag, unknown.body)
        if (route.tag === "StreamRequestInvalid") {
          assert.strictEqual(decoded.parameter, "extra", unknown.body)
          assert.match(decoded.detail, /^is not a parameter of this route, which takes /, unknown.body)
        } else {
          assert.match(decoded.message, /^extra: is unexpected/, unknown.body)
        }
        for (const name of hostile) {
          for (const query of [`${name}=x`, `${name}=x&${name}=y`]) {
            const answer = yield* call(port, route.method, `${route.base}&${query}`, route.body)
            const asUnknown = yield* call(port, route.method, `${route.base}&${query.replaceAll(name, "extra")}`, route.body)
            assert.strictEqual(answer.status, 400, `${route.name} ${query}: ${answer.body}`)
            assert.strictEqual(answer.body, asUnknown.body.replaceAll("extra", name), `${route.name} ${query}`)
          }
        }
        // Spelled with percent escapes, and first in the query.
        const [pathPart, queryPart] = route.base.split("?") as [string, string]
        for (const url of [`${pathPart}?%5F%5Fproto%5F%5F=x&${queryPart}`, `${pathPart}?__proto__=x&${queryPart}`]) {
          const answer = yield* call(port, route.method, url, route.body)
          assert.strictEqual(answer.status, 400, `${route.name} ${url}: ${answer.body}`)
          assert.strictEqual(JSON.parse(answer.body)._tag, route.tag, url)
        }
      }
      // A long unknown name is cut in the refusal.
      const long = yield* call(port, "POST", `/v1/stream/answer?run=r1&${"x".repeat(5_000)}=1`, delta)
      assert.strictEqual(long.status, 400, long.body)
      assert.isBelow(long.body.length, 500)
    }).pipe(Effect.scoped), 60_000)
})

/** The run routes that take no query parameter, and the audit route's required `against`. */
describe("run routes that take no query parameter", () => {
  for (const verifyLane of [true, false]) {
    it.live(`refuse any parameter with the API's 400, and the audit route a missing against (lane ${verifyLane ? "on" : "off"})`, () =>
      Effect.gen(function*() {
        const port = yield* serviceOverOneRun(verifyLane)
        const rows = [
          { method: "GET", path: "/v1/runs/r1", plain: true },
          { method: "GET", path: "/v1/runs/r1/events", plain: true },
          { method: "GET", path: "/v1/runs/r1/reviews", plain: true },
          // Not sent plain: the first would start a capture, the second records a decision.
          { method: "POST", path: "/v1/runs", plain: false },
          { method: "POST", path: "/v1/runs/r1/reviews", plain: false }
        ] as const
        for (const route of rows) {
          if (route.plain) {
            const plain = yield* call(port, route.method, route.path)
            assert.notStrictEqual(plain.status, 400, `${route.path}: ${plain.body}`)
          }
          const body = route.method === "POST" ? "{}" : undefined
          const unknown = yield* call(port, route.method, `${route.path}?extra=x`, body)
          assert.strictEqual(unknown.status, 400, `${route.path} extra: ${unknown.body}`)
          const decoded = JSON.parse(unknown.body)
          assert.strictEqual(decoded._tag, "HttpApiDecodeError", unknown.body)
          assert.match(decoded.message, /^extra: is unexpected/, unknown.body)
          for (const query of ["__proto__=x", "constructor=x&constructor=y"]) {
            const name = query.slice(0, query.indexOf("="))
            const answer = yield* call(port, route.method, `${route.path}?${query}`, body)
            const asUnknown = yield* call(port, route.method, `${route.path}?${query.replaceAll(name, "extra")}`, body)
            assert.strictEqual(answer.status, 400, `${route.path} ${query}: ${answer.body}`)
            assert.strictEqual(answer.body, asUnknown.body.replaceAll("extra", name), `${route.path} ${query}`)
          }
        }
        // The audit route's `against` is required, a run id (a 400 naming it, not the 404 of a run named
        // "" or of a path), and given once.
        for (const query of ["", "?against=", "?against=..%2Fr1", `?against=${"r".repeat(65)}`, "?against=r1&against=r1"]) {
          const answer = yield* call(port, "POST", `/v1/runs/r1/audits${query}`, report)
          assert.strictEqual(answer.status, 400, `audit ${query}: ${answer.body}`)
          const decoded = JSON.parse(answer.body)
          assert.strictEqual(decoded._tag, "HttpApiDecodeError", answer.body)
          assert.match(decoded.message, /^against: /, answer.body)
        }
        const missing = yield* call(port, "POST", "/v1/runs/r1/audits", report)
        assert.match(JSON.parse(missing.body).message, /^against: is missing/, missing.body)
        const empty = yield* call(port, "POST", "/v1/runs/r1/audits?against=", report)
        assert.match(JSON.parse(empty.body).message, /^against: must be 1 to 64 letters/, empty.body)
      }).pipe(Effect.scoped), 60_000)
  }
})
