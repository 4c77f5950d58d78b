/**
 * Bearer-token authentication for the service. The configuration holds only SHA-256 digests of
 * tokens (`server.tokens[].sha256`); a presented token is hashed and compared against every
 * configured digest in constant time, so neither the tokens nor the timing of a comparison
 * reveal which digest came close.
 *
 * @since 0.2.0
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Spans from "../internal/Spans.js"
import * as Layer from "effect/Layer"
import * as crypto from "node:crypto"
import type { ServerToken } from "../Config.js"
import { Forbidden, Unauthorized } from "../Errors.js"

/** Who made a request: the token's name (or a digest prefix, never the token) and what it may do. */
export interface Principal {
  readonly name: string
  /** The token's digest (hex): owner of the runs it starts. */
  readonly digest: string
  readonly runs: "*" | ReadonlySet<string>
  readonly capture: boolean
  /** May scrape `GET /metrics`. */
  readonly metrics: boolean
}

/** What a request needs beyond a valid token. */
export type Access =
  | { readonly _tag: "Any" }
  | { readonly _tag: "Capture" }
  | { readonly _tag: "Metrics" }
  | { readonly _tag: "ReadRun"; readonly runId: string; readonly owner?: string | undefined }

export const Access = {
  any: { _tag: "Any" } as Access,
  capture: { _tag: "Capture" } as Access,
  metrics: { _tag: "Metrics" } as Access,
  /** `owner`: the digest of the token that started the run, when the service started it. */
  readRun: (runId: string, owner?: string): Access => ({ _tag: "ReadRun", runId, owner })
}

/** Longest Authorization header looked at; longer ones are malformed without being hashed. */
export const maxAuthorizationLength = 4_096

/** Headers as Node and @effect/platform hand them over (lowercase names). */
export type RequestHeaders = Readonly<Record<string, string | ReadonlyArray<string> | undefined>>

// One call (`crypto.hash`, Node 20.12 and later), not a Hash object per digest: every request's
// token is hashed. Older Node 20 releases (within `engines`) have no `crypto.hash`: a named import
// of it would not even link there, so it is read from the module and `createHash` is the fallback.
const oneShotHash: typeof crypto.hash | undefined = (crypto as { readonly hash?: typeof crypto.hash }).hash
const sha256 = (text: string): Buffer =>
  oneShotHash !== undefined ? oneShotHash("sha256", text, "buffer") : crypto.createHash("sha256").update(text).digest()

/** The hex SHA-256 digest to put in `server.tokens[].sha256` for a token. */
export const tokenDigest = (token: string): string => sha256(token).toString("hex")

const bearer = /^Bearer ([\x21-\x7e]+)$/

/** The token of a single `Authorization: Bearer <token>` header. */
const presentedToken = (headers: RequestHeaders): Effect.Effect<string, Unauthorized> => {
  const header = headers["authorization"]
  if (header === undefined) return Effect.fail(new Unauthorized({ reason: "missing" }))
  // Two Authorization headers are ambiguous: refused rather than picking one.
  if (typeof header !== "string" || header.length > maxAuthorizationLength) {
    return Effect.fail(new Unauthorized({ reason: "malformed" }))
  }
  const match = bearer.exec(header)
  return match === null ? Effect.fail(new Unauthorized({ reason: "malformed" })) : Effect.succeed(match[1]!)
}

/** Decide whether `principal` may do `access`. */
export const authorize = (principal: Principal, access: Access): Effect.Effect<Principal, Forbidden> => {
  switch (access._tag) {
    case "Any":
      return Effect.succeed(principal)
    case "Capture":
      return principal.capture ? Effect.succeed(principal) : Effect.fail(new Forbidden({ action: "capture", runId: null }))
    case "Metrics":
      return principal.metrics ? Effect.succeed(principal) : Effect.fail(new Forbidden({ action: "metrics", runId: null }))
    case "ReadRun":
      return principal.runs === "*" || principal.runs.has(access.runId) || access.owner === principal.digest
        ? Effect.succeed(principal)
        : Effect.fail(new Forbidden({ action: "read-run", runId: access.runId }))
  }
}

/** The principal of each configured token, by a presented token (`undefined`: none). */
const tokenLookup = (tokens: ReadonlyArray<ServerToken>) => {
  const known = tokens.map((token) => ({
    digest: Buffer.from(token.sha256, "hex"),
    principal: {
      name: token.name ?? `token:${token.sha256.slice(0, 12)}`,
      digest: token.sha256,
      runs: token.runs === "*" ? "*" as const : new Set(token.runs),
      capture: token.capture,
      metrics: token.metrics === true
    } satisfies Principal
  }))
  return (token: string): Principal | undefined => {
    const presented = sha256(token)
    let found: Principal | undefined
    // Every digest is compared (no early exit), each in constant time: the time taken does not
    // depend on which configured digest matched or how much of one did.
    for (const entry of known) {
      if (crypto.timingSafeEqual(presented, entry.digest) && found === undefined) found = entry.principal
    }
    return found
  }
}

/**
 * The principal of a request's single well-formed bearer token, without an Effect (the server's
 * lane for plain verify requests, VerifyLane.ts): `undefined` for anything `Auth.authenticate`
 * would refuse or judge otherwise (no header, a malformed one, an unknown token), which the lane
 * hands to the general path. The same rules and the same constant-time comparison as `Auth.make`.
 */
export const bearerPrincipal = (tokens: ReadonlyArray<ServerToken>) => {
  const lookup = tokenLookup(tokens)
  return (authorization: string | undefined): Principal | undefined => {
    if (authorization === undefined || authorization.length > maxAuthorizationLength) return undefined
    const match = bearer.exec(authorization)
    return match === null ? undefined : lookup(match[1]!)
  }
}

/**
 * Where a request without an Authorization header may find its principal: the review page's
 * session cookie (`Session.SessionStore`). A request with a bearer token is judged by the token alone.
 */
export interface SessionLookup {
  readonly hasCookie: (headers: RequestHeaders) => boolean
  readonly lookup: (headers: RequestHeaders) => { readonly principal: Principal } | undefined
}

/**
 * The service's authenticator. Mount it anywhere a request arrives:
 * `yield* (yield* Auth).authenticate(request.headers, Access.capture)`.
 */
export class Auth extends Context.Tag("citegate/server/Auth")<Auth, {
  /** 401 `Unauthorized` without a configured token; 403 `Forbidden` when the token may not do `access`. */
  readonly authenticate: (
    headers: RequestHeaders,
    access?: Access
  ) => Effect.Effect<Principal, Unauthorized | Forbidden>
}>() {
  static readonly make = (tokens: ReadonlyArray<ServerToken>, sessions?: SessionLookup): Context.Tag.Service<Auth> => {
    const lookup = tokenLookup(tokens)
    return {
      authenticate: Spans.fn("Auth.authenticate")(function*(headers: RequestHeaders, access: Access = Access.any) {
        if (sessions !== undefined && headers["authorization"] === undefined && sessions.hasCookie(headers)) {
          const session = sessions.lookup(headers)
          if (session === undefined) return yield* new Unauthorized({ reason: "unknown-session" })
          return yield* authorize(session.principal, access)
        }
        const token = yield* presentedToken(headers)
        const principal = lookup(token)
        if (principal === undefined) return yield* new Unauthorized({ reason: "unknown-token" })
        return yield* authorize(principal, access)
      })
    }
  }

  static readonly layer = (tokens: ReadonlyArray<ServerToken>, sessions?: SessionLookup): Layer.Layer<Auth> =>
    Layer.succeed(Auth, Auth.make(tokens, sessions))
}
