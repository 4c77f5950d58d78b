/** Bearer tokens: digests in the config, 401 / 403 as typed errors, run scoping, config decoding. */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Either } from "effect"
import * as fsp from "node:fs/promises"
import * as http from "node:http"
import * as path from "node:path"
import * as Config from "../src/Config.js"
import { Forbidden, Unauthorized } from "../src/Errors.js"
import { Access, Auth, tokenDigest } from "../src/server/Auth.js"
import { call, sources, startService, tokens, waitForRun } from "./serverSupport.js"

const configured = [
  { sha256: tokenDigest("first-token"), runs: "*" as const, capture: false },
  { sha256: tokenDigest("second-token"), runs: ["run-a"], capture: true, name: "ci" }
]

describe("Auth.authenticate", () => {
  const auth = Auth.make(configured)

  it.effect("401 for a missing, malformed or unknown token, with the reason", () =>
    Effect.gen(function*() {
      const cases: Array<[Record<string, string | Array<string>>, string]> = [
        [{}, "missing"],
        [{ authorization: "Basic Zm9vOmJhcg==" }, "malformed"],
        [{ authorization: "Bearer" }, "malformed"],
        [{ authorization: "Bearer two words" }, "malformed"],
        [{ authorization: `Bearer ${"x".repeat(5_000)}` }, "malformed"],
        [{ authorization: ["Bearer first-token", "Bearer first-token"] }, "malformed"],
        [{ authorization: "Bearer third-token" }, "unknown-token"],
        // The digest itself is not a token.
        [{ authorization: `Bearer ${tokenDigest("first-token")}` }, "unknown-token"]
      ]
      for (const [headers, reason] of cases) {
        const error = yield* Effect.flip(auth.authenticate(headers))
        assert.instanceOf(error, Unauthorized)
        assert.deepStrictEqual({ _tag: error._tag, reason: (error as Unauthorized).reason }, { _tag: "Unauthorized", reason })
      }
    }))

  it.effect("finds every configured token (not only the first), and names it without the token", () =>
    Effect.gen(function*() {
      const first = yield* auth.authenticate({ authorization: "Bearer first-token" })
      assert.strictEqual(first.name, `token:${configured[0]!.sha256.slice(0, 12)}`)
      assert.strictEqual(first.runs, "*")
      const second = yield* auth.authenticate({ authorization: "Bearer second-token" }, Access.capture)
      assert.strictEqual(second.name, "ci")
      assert.isTrue(second.capture)
    }))

  it.effect("403 for what the token may not do: capture, or read a run it neither lists nor started", () =>
    Effect.gen(function*() {
      const noCapture = yield* Effect.flip(auth.authenticate({ authorization: "Bearer first-token" }, Access.capture))
      assert.instanceOf(noCapture, Forbidden)
      assert.deepStrictEqual({ ...noCapture }, { _tag: "Forbidden", action: "capture", runId: null } as any)
      const otherRun = yield* Effect.flip(auth.authenticate({ authorization: "Bearer second-token" }, Access.readRun("run-b")))
      assert.instanceOf(otherRun, Forbidden)
      assert.deepStrictEqual({ ...otherRun }, { _tag: "Forbidden", action: "read-run", runId: "run-b" } as any)
      yield* auth.authenticate({ authorization: "Bearer second-token" }, Access.readRun("run-a"))
      yield* auth.authenticate({ authorization: "Bearer second-token" }, Access.readRun("run-b", configured[1]!.sha256))
      yield* auth.authenticate({ authorization: "Bearer first-token" }, Access.readRun("anything"))
    }))
})

describe("Auth: every byte of the digest counts", () => {
  it.effect("a token whose digest differs from a configured one only in its last (or first) byte is unknown", () =>
    Effect.gen(function*() {
      const token = "near-miss-token"
      const digest = Buffer.from(tokenDigest(token), "hex")
      const flipped = (index: number) => {
        const copy = Buffer.from(digest)
        copy[index] = copy[index]! ^ 0x01
        return copy.toString("hex")
      }
      for (const index of [31, 16, 15, 0]) {
        const near = Auth.make([{ sha256: flipped(index), runs: "*", capture: true }])
        const error = yield* Effect.flip(near.authenticate({ authorization: `Bearer ${token}` }))
        assert.deepStrictEqual([error._tag, (error as Unauthorized).reason], ["Unauthorized", "unknown-token"], `byte ${index}`)
      }
      // The exact digest is accepted.
      const exact = Auth.make([{ sha256: digest.toString("hex"), runs: "*", capture: true }])
      assert.strictEqual((yield* exact.authenticate({ authorization: `Bearer ${token}` })).digest, digest.toString("hex"))
    }))
})

describe("server.tokens in the configuration", () => {
  const base = { sources: ["https://reports.northwind.test/a.txt"], labels: ["x"] }
  it.effect("takes digests only: a token in clear, upper-case hex or a repeated digest is InvalidConfig", () =>
    Effect.gen(function*() {
      const digest = tokenDigest("t")
      const bad = [
        { tokens: [{ sha256: "my-secret-token", runs: "*", capture: true }] },
        { tokens: [{ sha256: digest.toUpperCase(), runs: "*", capture: true }] },
        { tokens: [{ sha256: digest, runs: "*", capture: true }, { sha256: digest, runs: [], capture: false }] },
        { tokens: [{ sha256: digest, runs: ["../etc"], capture: true }] },
        { tokens: [], maxBodyBytes: 0 },
        { tokens: [], requestTimeoutMs: 600_001 },
        { tokens: [], unknown: 1 },
        { tokens: [], streamDeadlineMs: 0 },
        { tokens: [], streamRetainMs: -1 },
        { tokens: [], streamRetainedBytes: 1_024 },
        { tokens: [], tls: { certFile: "cert.pem" } },
        { tokens: [], tls: { certFile: "", keyFile: "key.pem" } },
        { tokens: [], tls: { certFile: "cert.pem", keyFile: "key.pem", passphrase: "x" } }
      ]
      for (const server of bad) {
        const result = yield* Effect.either(Config.decode({ ...base, server }))
        assert.isTrue(Either.isLeft(result), JSON.stringify(server))
        if (Either.isLeft(result)) assert.strictEqual(result.left._tag, "InvalidConfig")
      }
      const good = yield* Config.decode({ ...base, server: { tokens: [{ sha256: digest, runs: ["run-1"], capture: false }] } })
      assert.deepStrictEqual(Config.resolvedServer(good).maxBodyBytes, Config.serverLimits.maxBodyBytes.default)
      const resolved = Config.resolvedServer(good)
      assert.deepStrictEqual([resolved.streamDeadlineMs, resolved.streamRetainMs, resolved.streamRetainedBytes], [120_000, 60_000, 64 * 1024 * 1024])
    }))
})

describe("auth over HTTP", () => {
  it.scopedLive("every endpoint but health and OpenAPI needs a token (401); capture needs capture (403); runs are scoped (403)", () =>
    Effect.gen(function*() {
      const { server } = yield* sources
      const service = yield* startService({ sources: [server.url("/q3-sales.txt")], readerRuns: ["listed-run"] })
      for (const [method, route] of [["POST", "/v1/runs"], ["GET", "/v1/runs/x"], ["GET", "/v1/runs/x/events"], ["POST", "/v1/verify/report?run=x"], ["POST", "/v1/verify/answer?run=x"]] as const) {
        const response = yield* call(service, route, { method, ...(method === "POST" ? { body: "{}" } : {}) })
        assert.strictEqual(response.status, 401, `${method} ${route}`)
        assert.deepStrictEqual(response.json, { _tag: "Unauthorized", reason: "missing" })
        const wrong = yield* call(service, route, { method, token: "not-a-configured-token", ...(method === "POST" ? { body: "{}" } : {}) })
        assert.strictEqual(wrong.status, 401)
        assert.deepStrictEqual(wrong.json, { _tag: "Unauthorized", reason: "unknown-token" })
      }
      const noCapture = yield* call(service, "/v1/runs", { method: "POST", token: tokens.reader })
      assert.strictEqual(noCapture.status, 403)
      assert.deepStrictEqual(noCapture.json, { _tag: "Forbidden", action: "capture", runId: null })

      // The capture token lists no runs but may read the run it started; the reader may not.
      const started = yield* call(service, "/v1/runs", { method: "POST", token: tokens.capture })
      assert.strictEqual(started.status, 202)
      const id: string = started.json.id
      yield* waitForRun(service, id, tokens.capture)
      const own = yield* call(service, `/v1/runs/${id}`, { token: tokens.capture })
      assert.strictEqual(own.status, 200)
      for (const route of [`/v1/runs/${id}`, `/v1/runs/${id}/events`]) {
        const other = yield* call(service, route, { token: tokens.reader })
        assert.strictEqual(other.status, 403, route)
        assert.deepStrictEqual(other.json, { _tag: "Forbidden", action: "read-run", runId: id })
      }
      const verify = yield* call(service, `/v1/verify/report?run=${id}`, { token: tokens.reader, body: "{\"facts\":[]}" })
      assert.strictEqual(verify.status, 403)
      // An unlisted run that does not exist is 403 too: existence is not revealed to tokens without access.
      const unknown = yield* call(service, `/v1/runs/20260101T000000Z-000000000000`, { token: tokens.reader })
      assert.strictEqual(unknown.status, 403)
      // A listed run is readable (a directory under the run root).
      yield* Effect.promise(() => fsp.mkdir(path.join(service.runRoot, "listed-run"), { recursive: true }))
      const listed = yield* call(service, `/v1/runs/listed-run`, { token: tokens.reader })
      assert.strictEqual(listed.status, 200, listed.text)
      assert.strictEqual(listed.json.status, "stored")
      // The admin token ("*") reads any run.
      const admin = yield* call(service, `/v1/runs/${id}`, { token: tokens.admin })
      assert.strictEqual(admin.status, 200)
    }))
})

/** A raw request whose Authorization header is sent once per value (fetch would join them). */
const repeatedAuthorization = (base: string, method: string, pathAndQuery: string, values: ReadonlyArray<string>, body?: string) =>
  Effect.promise(() =>
    new Promise<{ status: number; json: unknown }>((resolve, reject) => {
      const url = new URL(base + pathAndQuery)
      const request = http.request({ host: "127.0.0.1", port: url.port, method, path: pathAndQuery, agent: false })
      request.setHeader("authorization", [...values])
      if (body !== undefined) request.setHeader("content-length", String(Buffer.byteLength(body)))
      request.on("response", (response) => {
        let text = ""
        response.on("data", (d) => (text += d))
        response.on("end", () => resolve({ status: response.statusCode ?? 0, json: JSON.parse(text) }))
      })
      request.on("error", reject)
      request.end(body)
    })
  )

describe("a repeated Authorization header over HTTP", () => {
  it.scopedLive("is refused (401 malformed) even when the first is valid: Node keeps only the first, the service looks at all", () =>
    Effect.gen(function*() {
      const { server } = yield* sources
      const service = yield* startService({ sources: [server.url("/q3-sales.txt")] })
      yield* Effect.promise(() => fsp.mkdir(path.join(service.runRoot, "stored-run"), { recursive: true }))
      const valid = `Bearer ${tokens.admin}`
      for (const values of [[valid, valid], [valid, "Bearer someone-else"], [valid, `Bearer ${tokens.reader}`]]) {
        for (const [method, route, body] of [
          ["GET", "/v1/runs/stored-run", undefined],
          ["POST", "/v1/verify/report?run=stored-run", "{\"facts\":[]}"],
          ["GET", "/v1/stream/answer/00000000-0000-4000-8000-000000000000", undefined]
        ] as const) {
          const answer = yield* repeatedAuthorization(service.base, method, route, values, body)
          assert.deepStrictEqual(answer, { status: 401, json: { _tag: "Unauthorized", reason: "malformed" } }, `${method} ${route}`)
        }
      }
      // One header with the same token is accepted.
      const single = yield* repeatedAuthorization(service.base, "GET", "/v1/runs/stored-run", [valid])
      assert.strictEqual(single.status, 200)
    }))
})
