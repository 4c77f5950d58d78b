/**
 * The review page's routes: the built page under `/ui/` (bundled at build time into `dist/ui/`,
 * nothing fetched from elsewhere, every response under a strict Content-Security-Policy), browser
 * sessions (`POST`, `GET`, `DELETE /v1/session`, see Session.ts), the list of runs a principal may
 * read (`GET /v1/runs`). The page records review decisions with `POST /v1/runs/{id}/reviews`
 * (Reviews.ts) and reads PDF bodies and audits through UiData.ts.
 *
 * The page uses the service's own API only, with the session cookie instead of a bearer token.
 *
 * @since 0.3.0
 */
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as HttpRouter from "@effect/platform/HttpRouter"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Schema from "effect/Schema"
import * as fs from "node:fs/promises"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import {
  type Forbidden,
  type RunNotFound,
  ServiceError,
  UiError,
  Unauthorized
} from "../Errors.js"
import { Auth } from "./Auth.js"
import { ServerContext } from "./Context.js"
import { readableRun } from "./Handlers.js"
import { Runs } from "./Runs.js"
import type { SessionStore } from "./Session.js"

/**
 * The policy of every `/ui/` response: scripts and styles from this origin only (no inline script, no
 * eval), requests to this origin only, no plugins, no framing, and Trusted Types required with one
 * policy, `citegate-pdf-worker`, which only turns the fixed URL `/ui/pdf.worker.js` into a worker
 * script URL (src/ui/Pdf.ts); it creates no HTML, so no string ever reaches an HTML sink
 * (`innerHTML` and the like throw) and the policy cannot be created twice.
 */
export const contentSecurityPolicy = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data: blob:",
  "font-src 'self'",
  "connect-src 'self'",
  "worker-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
  "require-trusted-types-for 'script'",
  "trusted-types citegate-pdf-worker"
].join("; ")

const pageHeaders = {
  "content-security-policy": contentSecurityPolicy,
  "x-content-type-options": "nosniff",
  "x-frame-options": "DENY",
  "referrer-policy": "no-referrer",
  "cross-origin-opener-policy": "same-origin",
  "cross-origin-resource-policy": "same-origin",
  "cache-control": "no-cache"
}

const contentTypes: Record<string, string> = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".mjs": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".png": "image/png",
  ".svg": "image/svg+xml"
}

/** The package's built page: `dist/ui/` two levels above this module (dist/server, dist/bundle or src/server). */
export const defaultDirectory = (): string =>
  path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "..", "dist", "ui")

/** Most files served from the page's directory, and bytes in all (the built page is far smaller). */
const maxAssets = 64
const maxAssetBytes = 32 * 1024 * 1024

/** The built files, read once when the service starts (names of one path segment only). */
const loadAssets = (directory: string): Promise<ReadonlyMap<string, { readonly body: Uint8Array; readonly type: string }>> =>
  fs.readdir(directory, { withFileTypes: true }).then(async (entries) => {
    const assets = new Map<string, { body: Uint8Array; type: string }>()
    let bytes = 0
    for (const entry of entries.slice(0, maxAssets)) {
      const type = contentTypes[path.extname(entry.name)]
      if (!entry.isFile() || type === undefined) continue
      const body = await fs.readFile(path.join(directory, entry.name))
      bytes += body.byteLength
      if (bytes > maxAssetBytes) break
      assets.set(entry.name, { body, type })
    }
    return assets
  }, () => new Map())

const encodeError = Schema.encodeSync(Schema.Union(ServiceError, UiError))

type Refusal = Unauthorized | Forbidden | RunNotFound

const refusal = (error: Refusal) => {
  const status = error._tag === "Unauthorized" ? 401 : error._tag === "Forbidden" ? 403 : 404
  return HttpServerResponse.unsafeJson(encodeError(error), { status, headers: { "cache-control": "no-store" } })
}

const refusals = <R>(effect: Effect.Effect<HttpServerResponse.HttpServerResponse, Refusal, R>) => Effect.catchAll(effect, (e) => Effect.succeed(refusal(e)))

const runIdPattern = /^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/

/** Runs listed at most by `GET /v1/runs` (newest names first); `truncated` says when there were more. */
export const maxListedRuns = 500

const noStore = { "cache-control": "no-store" }

/** The review page's routes as a raw-route layer of the service (Server.ts). */
export const layer = (options: { readonly sessions: SessionStore; readonly directory?: string | undefined }) =>
  HttpApiBuilder.Router.use((router) =>
    Effect.gen(function*() {
      const auth = yield* Auth
      const runs = yield* Runs
      const { runRoot } = yield* ServerContext
      const { sessions } = options
      const assets = yield* Effect.promise(() => loadAssets(options.directory ?? defaultDirectory()))

      const asset = (name: string) => {
        const found = assets.get(name)
        return found === undefined
          ? HttpServerResponse.text("Not found", { status: 404, headers: pageHeaders })
          : HttpServerResponse.uint8Array(found.body, { contentType: found.type, headers: pageHeaders })
      }

      const request = HttpServerRequest.HttpServerRequest

      const createSession = Effect.gen(function*() {
        const { headers } = yield* request
        // Only a bearer token opens a session: a cookie cannot renew itself.
        if (headers["authorization"] === undefined) return yield* new Unauthorized({ reason: "missing" })
        const principal = yield* auth.authenticate(headers)
        const created = sessions.create(principal)
        yield* Effect.logInfo("session opened").pipe(Effect.annotateLogs({ token: principal.name }))
        return HttpServerResponse.unsafeJson(
          { name: principal.name, csrfToken: created.csrfToken, expiresAt: created.expiresAt },
          { status: 201, headers: { ...noStore, "set-cookie": created.setCookie } }
        )
      })

      const readSession = Effect.gen(function*() {
        const { headers } = yield* request
        const session = sessions.lookup(headers)
        if (session === undefined) return yield* new Unauthorized({ reason: sessions.hasCookie(headers) ? "unknown-session" : "missing" })
        return HttpServerResponse.unsafeJson(
          { name: session.principal.name, csrfToken: session.csrfToken, expiresAt: session.expiresAt },
          { headers: noStore }
        )
      })

      // The CSRF rule has run in the middleware already (DELETE is state-changing).
      const endSession = Effect.gen(function*() {
        const { headers } = yield* request
        sessions.revoke(headers)
        return HttpServerResponse.empty({ status: 204, headers: { ...noStore, "set-cookie": sessions.clearCookie } })
      })

      const listRuns = Effect.gen(function*() {
        const { headers } = yield* request
        const principal = yield* auth.authenticate(headers)
        const names = yield* Effect.promise(() => fs.readdir(runRoot).catch(() => [] as Array<string>))
        const candidates = names.filter((name) => runIdPattern.test(name)).sort().reverse()
        const listed: Array<{ id: string; status: string }> = []
        for (const id of candidates) {
          if (listed.length >= maxListedRuns) break
          const run = yield* Effect.either(readableRun(principal, id).pipe(Effect.provideService(Runs, runs)))
          if (Either.isRight(run)) listed.push({ id: run.right.id, status: run.right.status })
        }
        return HttpServerResponse.unsafeJson({ runs: listed, truncated: listed.length >= maxListedRuns && candidates.length > listed.length }, { headers: noStore })
      })

      yield* router.concat(HttpRouter.empty.pipe(
        HttpRouter.get("/ui/", Effect.sync(() => asset("index.html"))),
        HttpRouter.get("/ui/:file", Effect.map(HttpRouter.params, (params) => asset(params["file"] ?? ""))),
        HttpRouter.post("/v1/session", refusals(createSession)),
        HttpRouter.get("/v1/session", refusals(readSession)),
        HttpRouter.del("/v1/session", refusals(endSession)),
        HttpRouter.get("/v1/runs", refusals(listRuns)),
      ))
    })
  )
