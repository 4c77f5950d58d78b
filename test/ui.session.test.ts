/**
 * The review page's session and CSRF rules, over a real service on 127.0.0.1: a bearer token buys an
 * HttpOnly, SameSite=Strict cookie; the cookie reads (GET routes, the SSE streams) but changes nothing
 * without the session's CSRF token from this origin; sign-out ends it; bearer clients are unchanged.
 * Also the `/ui/` responses' Content-Security-Policy, the PDF body route's headers and refusals, and
 * the drift audit route.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Schema } from "effect"
import { spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import * as E from "../src/Errors.js"
import { tokenDigest } from "../src/server/Auth.js"
import { SessionStore } from "../src/server/Session.js"
import { contentSecurityPolicy, defaultDirectory } from "../src/server/Ui.js"
import { bodyHeaders } from "../src/server/UiData.js"
import { makePdf } from "./pdfWriter.js"
import { testServer } from "./httpServer.js"
import { call, sources, startService, tokens, waitForRun } from "./serverSupport.js"

const cookieOf = (setCookie: string | null) => setCookie!.split(";")[0]!

const principal = { name: "admin", digest: tokenDigest(tokens.admin), runs: "*" as const, capture: true, metrics: false }

describe("review page sessions", () => {
  it.scopedLive("a token buys a cookie session; the cookie reads, changes only with the CSRF token, and ends on sign-out", () =>
    Effect.gen(function*() {
      const { server } = yield* sources
      const service = yield* startService({ sources: [server.url("/q3-sales.txt")] })
      const started = yield* call(service, "/v1/runs", { method: "POST", token: tokens.admin })
      const runId = started.json.id as string
      yield* waitForRun(service, runId)

      // No token, a wrong one, or a cookie alone: no session.
      assert.deepStrictEqual((yield* call(service, "/v1/session", { method: "POST" })).json, { _tag: "Unauthorized", reason: "missing" })
      assert.strictEqual((yield* call(service, "/v1/session", { method: "POST", token: "not-a-token" })).status, 401)

      const opened = yield* call(service, "/v1/session", { method: "POST", token: tokens.admin })
      assert.strictEqual(opened.status, 201, opened.text)
      const setCookie = opened.headers.get("set-cookie")!
      assert.match(setCookie, /^citegate_session=[A-Za-z0-9_-]{43}; Path=\/; Max-Age=1800; HttpOnly; SameSite=Strict$/)
      assert.strictEqual(opened.headers.get("cache-control"), "no-store")
      // The token is nowhere in the answer; the CSRF token is, and the cookie is not.
      assert.notInclude(opened.text, tokens.admin)
      assert.match(opened.json.csrfToken, /^[A-Za-z0-9_-]{43}$/)
      const cookie = cookieOf(setCookie)
      assert.notInclude(opened.text, cookie.split("=")[1]!)
      const csrf = opened.json.csrfToken as string

      // Reading with the cookie: the run, the session, the list, the run's event stream.
      assert.strictEqual((yield* call(service, `/v1/runs/${runId}`, { headers: { cookie } })).status, 200)
      assert.deepStrictEqual((yield* call(service, "/v1/session", { headers: { cookie } })).json, { name: "admin", csrfToken: csrf, expiresAt: opened.json.expiresAt })
      assert.deepStrictEqual((yield* call(service, "/v1/runs", { headers: { cookie } })).json, { runs: [{ id: runId, status: "completed" }], truncated: false })
      const events = yield* call(service, `/v1/runs/${runId}/events`, { headers: { cookie } })
      assert.include(events.text, "event: done")

      // Changing state with the cookie: the CSRF token is required, must match, and must come from this origin.
      const missing = yield* call(service, "/v1/runs", { method: "POST", headers: { cookie } })
      assert.deepStrictEqual([missing.status, missing.json], [403, { _tag: "CsrfRejected", reason: "missing" }])
      const wrong = yield* call(service, "/v1/runs", { method: "POST", headers: { cookie, "x-citegate-csrf": `${csrf.slice(1)}x` } })
      assert.deepStrictEqual([wrong.status, wrong.json], [403, { _tag: "CsrfRejected", reason: "mismatch" }])
      const crossSite = yield* call(service, "/v1/runs", { method: "POST", headers: { cookie, "x-citegate-csrf": csrf, origin: "https://evil.test" } })
      assert.deepStrictEqual([crossSite.status, crossSite.json], [403, { _tag: "CsrfRejected", reason: "cross-origin" }])
      const streamed = yield* call(service, `/v1/stream/answer?run=${runId}`, { headers: { cookie }, body: "{\"type\":\"delta\",\"text\":\"x\"}\n" })
      assert.deepStrictEqual([streamed.status, streamed.json], [403, { _tag: "CsrfRejected", reason: "missing" }])
      const sameOrigin = yield* call(service, "/v1/runs", { method: "POST", headers: { cookie, "x-citegate-csrf": csrf, origin: service.base } })
      assert.strictEqual(sameOrigin.status, 202, sameOrigin.text)

      // Bearer clients need no CSRF token (no cookie is involved).
      assert.strictEqual((yield* call(service, "/v1/runs", { method: "POST", token: tokens.admin })).status, 202)

      // The former placeholder route for decisions is gone: decisions are recorded with /reviews.
      assert.strictEqual((yield* call(service, `/v1/runs/${runId}/review-decisions`, { headers: { cookie, "x-citegate-csrf": csrf }, body: "{}" })).status, 404)
      // The page's new writes (a review decision, an audit) need the CSRF token from this origin too.
      for (const route of [`/v1/runs/${runId}/reviews`, `/v1/runs/${runId}/audits?against=${runId}`]) {
        const noToken = yield* call(service, route, { headers: { cookie, "content-type": "application/json" }, body: "{}" })
        assert.deepStrictEqual([noToken.status, noToken.json], [403, { _tag: "CsrfRejected", reason: "missing" }], route)
        const foreign = yield* call(service, route, { headers: { cookie, "x-citegate-csrf": csrf, origin: "https://evil.test" }, body: "{}" })
        assert.deepStrictEqual([foreign.status, foreign.json], [403, { _tag: "CsrfRejected", reason: "cross-origin" }], route)
      }
      assert.strictEqual((yield* call(service, `/v1/runs/${runId}/reviews`, { headers: { cookie } })).json.decisions.length, 0, "nothing was recorded")

      // Sign-out needs the CSRF token too, clears the cookie, and the old cookie no longer reads.
      assert.strictEqual((yield* call(service, "/v1/session", { method: "DELETE", headers: { cookie } })).status, 403)
      const out = yield* call(service, "/v1/session", { method: "DELETE", headers: { cookie, "x-citegate-csrf": csrf } })
      assert.strictEqual(out.status, 204)
      assert.match(out.headers.get("set-cookie")!, /^citegate_session=; Path=\/; Max-Age=0; HttpOnly; SameSite=Strict$/)
      const after = yield* call(service, `/v1/runs/${runId}`, { headers: { cookie } })
      assert.deepStrictEqual([after.status, after.json], [401, { _tag: "Unauthorized", reason: "unknown-session" }])
    }))

  it.scopedLive("a session reads only what its token may: the reader's cookie lists no run and is refused the run", () =>
    Effect.gen(function*() {
      const { server } = yield* sources
      const service = yield* startService({ sources: [server.url("/q3-sales.txt")] })
      const runId = (yield* call(service, "/v1/runs", { method: "POST", token: tokens.admin })).json.id as string
      yield* waitForRun(service, runId)
      const opened = yield* call(service, "/v1/session", { method: "POST", token: tokens.reader })
      const cookie = cookieOf(opened.headers.get("set-cookie"))
      assert.deepStrictEqual((yield* call(service, "/v1/runs", { headers: { cookie } })).json, { runs: [], truncated: false })
      assert.deepStrictEqual((yield* call(service, `/v1/runs/${runId}`, { headers: { cookie } })).json, { _tag: "Forbidden", action: "read-run", runId })
      // A bearer token beside a cookie is judged alone: a bad token is not rescued by a good cookie.
      assert.strictEqual((yield* call(service, `/v1/runs/${runId}`, { token: "wrong-token", headers: { cookie } })).status, 401)
    }))

  it.scopedLive("a PDF capture's body: fixed type, nosniff, attachment, sandboxed; other captures, unknown digests and other tokens refused", () =>
    Effect.gen(function*() {
      const pdf = makePdf([["First page."], ["Second page <script>alert(1)</script>."]], { javascript: "app.alert(1)" })
      let stock = "Inventory at the end of Q3 was 1,120 units.\n"
      const server = yield* testServer((req, res) => {
        if (req.url === "/report.pdf") return void res.writeHead(200, { "content-type": "application/pdf" }).end(pdf)
        if (req.url === "/stock.txt") return void res.writeHead(200, { "content-type": "text/plain" }).end(stock)
        res.writeHead(404).end()
      })
      const service = yield* startService({
        sources: [server.url("/report.pdf"), server.url("/stock.txt")],
        config: { capture: { timeoutMs: 10_000, contentTypes: ["text/plain", "application/pdf"] } }
      })
      const start = () => Effect.flatMap(call(service, "/v1/runs", { method: "POST", token: tokens.admin }), (r) => Effect.as(waitForRun(service, r.json.id), r.json.id as string))
      const runId = yield* start()
      const manifest = (yield* call(service, `/v1/runs/${runId}`, { token: tokens.admin })).json.manifest
      const [pdfSource, textSource] = manifest.sources as Array<{ status: string; captureSha256: string; contentType: string }>
      assert.deepStrictEqual([pdfSource!.status, textSource!.status], ["captured", "captured"], JSON.stringify(manifest.sources))
      const body = yield* Effect.promise(() => fetch(`${service.base}/v1/runs/${runId}/captures/${pdfSource!.captureSha256}/body`, { headers: { authorization: `Bearer ${tokens.admin}` } }))
      assert.strictEqual(body.status, 200)
      for (const [name, value] of Object.entries(bodyHeaders)) assert.strictEqual(body.headers.get(name), value, name)
      assert.deepStrictEqual(Buffer.from(yield* Effect.promise(() => body.arrayBuffer())), pdf, "the stored bytes, as sent")
      const refused = (path: string, token: string) => Effect.map(call(service, path, { token }), (r) => [r.status, r.json] as const)
      assert.deepStrictEqual(yield* refused(`/v1/runs/${runId}/captures/${textSource!.captureSha256}/body`, tokens.admin), [404, { _tag: "CaptureBodyUnavailable", runId, captureSha256: textSource!.captureSha256, reason: "not-pdf" }])
      assert.deepStrictEqual(yield* refused(`/v1/runs/${runId}/captures/${"0".repeat(64)}/body`, tokens.admin), [404, { _tag: "CaptureBodyUnavailable", runId, captureSha256: "0".repeat(64), reason: "not-in-run" }])
      assert.deepStrictEqual((yield* refused(`/v1/runs/${runId}/captures/..%2F..%2Fpipeline.json/body`, tokens.admin))[0], 404)
      assert.deepStrictEqual(yield* refused(`/v1/runs/${runId}/captures/${pdfSource!.captureSha256}/body`, tokens.reader), [403, { _tag: "Forbidden", action: "read-run", runId }])
      assert.strictEqual((yield* call(service, `/v1/runs/${runId}/captures/${pdfSource!.captureSha256}/body`, {})).status, 401)

      // The drift audit: a report verified against the first run, audited against a second.
      stock = "Inventory at the end of Q3 was 1,320 units.\n"
      const newRunId = yield* start()
      const report = JSON.stringify({ facts: [{ state: "cited", label: "q3_inventory", source: server.url("/stock.txt"), captureSha256: textSource!.captureSha256, snippet: "Inventory at the end of Q3 was 1,120 units" }] })
      const audited = yield* call(service, `/v1/runs/${runId}/audits?against=${newRunId}`, { token: tokens.admin, body: report })
      assert.strictEqual(audited.status, 200, audited.text)
      assert.deepStrictEqual([audited.json.format, audited.json.audit.format, audited.json.audit.outcome], ["citegate.audit-view/1", "citegate.audit/1", "drifted"])
      const finding = audited.json.audit.findings[0]
      assert.deepStrictEqual([finding.status, finding.material], ["changed", [{ kind: "numbers", oldTokens: ["1,120"], newTokens: ["1,320"] }]])
      assert.deepStrictEqual(audited.json.diffs[0].old.filter((p: { changed: boolean }) => p.changed).map((p: { text: string }) => p.text), ["1,120"])
      assert.deepStrictEqual(audited.json.diffs[0].new.filter((p: { changed: boolean }) => p.changed).map((p: { text: string }) => p.text), ["1,320"])
      // A report that does not verify against the old run has nothing to audit: its rejection, 422.
      const wrong = yield* call(service, `/v1/runs/${newRunId}/audits?against=${runId}`, { token: tokens.admin, body: report })
      assert.deepStrictEqual([wrong.status, wrong.json.status], [422, "rejected"])
      // As compact JSON, like every JSON body of the service.
      assert.strictEqual(wrong.text, JSON.stringify(wrong.json))
      assert.strictEqual((yield* call(service, `/v1/runs/${runId}/audits?against=${newRunId}`, { token: tokens.reader, body: report })).status, 403)
      assert.strictEqual((yield* call(service, `/v1/runs/${runId}/audits?against=no-such-run`, { token: tokens.admin, body: report })).status, 404)
    }))

  it("sessions expire, are bounded (oldest dropped), and are Secure with the __Host- prefix over TLS", () => {
    let now = 1_000_000
    const store = new SessionStore({ secure: false, ttlMs: 60_000, maxSessions: 2, now: () => now })
    const a = store.create(principal)
    const headersOf = (setCookie: string) => ({ cookie: `other=1; ${setCookie.split(";")[0]}` })
    assert.strictEqual(store.lookup(headersOf(a.setCookie))?.principal.name, "admin")
    now += 60_000
    assert.isUndefined(store.lookup(headersOf(a.setCookie)), "expired at its ttl")
    const b = store.create(principal)
    const c = store.create(principal)
    const d = store.create(principal)
    assert.strictEqual(store.size, 2)
    assert.isUndefined(store.lookup(headersOf(b.setCookie)), "the oldest is dropped past the bound")
    assert.isDefined(store.lookup(headersOf(c.setCookie)))
    assert.isDefined(store.lookup(headersOf(d.setCookie)))
    const secure = new SessionStore({ secure: true })
    assert.match(secure.create(principal).setCookie, /^__Host-citegate_session=[A-Za-z0-9_-]{43}; Path=\/; Max-Age=1800; HttpOnly; SameSite=Strict; Secure$/)
    // A cookie of the plain name does not count over TLS.
    assert.isFalse(secure.hasCookie({ cookie: "citegate_session=abc" }))
  })

  it.scopedLive("every /ui/ response carries the strict Content-Security-Policy; the built page has no inline script", () =>
    Effect.gen(function*() {
      const { server } = yield* sources
      const service = yield* startService({ sources: [server.url("/q3-sales.txt")] })
      for (const asset of ["/ui/", "/ui/app.js", "/ui/app.css", "/ui/pdf.worker.js", "/ui/no-such-file.js"]) {
        const response = yield* call(service, asset)
        assert.strictEqual(response.headers.get("content-security-policy"), contentSecurityPolicy, asset)
        assert.strictEqual(response.headers.get("x-content-type-options"), "nosniff", asset)
        assert.strictEqual(response.headers.get("x-frame-options"), "DENY", asset)
      }
      assert.strictEqual((yield* call(service, "/ui/no-such-file.js")).status, 404)
      for (const directive of ["script-src 'self'", "connect-src 'self'", "object-src 'none'", "frame-ancestors 'none'", "require-trusted-types-for 'script'"]) {
        assert.include(contentSecurityPolicy, directive)
      }
      assert.notMatch(contentSecurityPolicy, /unsafe-inline|unsafe-eval|https?:/)
      const html = fs.readFileSync(path.join(defaultDirectory(), "index.html"), "utf8")
      // Every script element names a file of this origin; no inline handler attribute.
      assert.deepStrictEqual([...html.matchAll(/<script([^>]*)>/g)].map((m) => m[1]!.trim()), ["type=\"module\" src=\"/ui/app.js\""])
      assert.notMatch(html, /\son[a-z]+=/i)
      const script = fs.readFileSync(path.join(defaultDirectory(), "app.js"), "utf8")
      assert.notMatch(script, /\beval\(|new Function\(|innerHTML|outerHTML|insertAdjacentHTML|document\.write/)
      assert.notMatch(script, /https?:\/\//, "the page loads nothing from another origin")
    }))
})

describe("review page errors and browser code", () => {
  it("CsrfRejected, CaptureBodyUnavailable and ReviewRecordingUnavailable (no longer returned): tags, messages, the UiError family", () => {
    const decode = Schema.decodeUnknownSync(E.UiError)
    assert.strictEqual(decode({ _tag: "CsrfRejected", reason: "missing" }).message, "A request authenticated by the session cookie must carry the session's CSRF token in x-citegate-csrf")
    assert.strictEqual(decode({ _tag: "CsrfRejected", reason: "mismatch" }).message, "The x-citegate-csrf header is not this session's CSRF token")
    assert.strictEqual(decode({ _tag: "CsrfRejected", reason: "cross-origin" }).message, "The request's Origin is not this service: cross-site requests are refused")
    assert.strictEqual(decode({ _tag: "ReviewRecordingUnavailable", runId: "r1" }).message,
      "Review decisions on an answer's citations cannot be recorded yet (run r1): nothing was stored; " +
        "decisions on a verified report's facts are recorded with POST /v1/runs/{id}/reviews or run-pipeline review record"
    )
    assert.strictEqual(decode({ _tag: "CaptureBodyUnavailable", runId: "r1", captureSha256: "ab", reason: "not-in-run" }).message, "Run r1 holds no capture with digest ab")
    assert.match(decode({ _tag: "CaptureBodyUnavailable", runId: "r1", captureSha256: "ab", reason: "not-pdf" }).message, /^The capture ab of run r1 is not a PDF/)
    assert.throws(() => decode({ _tag: "CsrfRejected", reason: "other" }))
  })

  it("the browser code type-checks on its own (DOM types; the service's tsconfig leaves src/ui out)", () => {
    const tsc = path.join(import.meta.dirname, "..", "node_modules", "typescript", "bin", "tsc")
    const ran = spawnSync(process.execPath, [tsc, "-p", path.join(import.meta.dirname, "..", "src", "ui", "tsconfig.json")], { encoding: "utf8" })
    assert.strictEqual(ran.status, 0, `${ran.stdout}${ran.stderr}`)
  }, 60_000)
})
