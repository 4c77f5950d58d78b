/**
 * Browser sessions for the review page. A browser's EventSource cannot send `Authorization`, and a
 * token must never sit in a URL, so `POST /v1/session` exchanges a bearer token for a short-lived
 * session: a random id in an HttpOnly, SameSite=Strict cookie (Secure, and named with the `__Host-`
 * prefix, when the service is reached over TLS) and a CSRF token the page keeps in memory and sends
 * in `x-citegate-csrf` on every state-changing request (double submit, checked by the middleware).
 *
 * Sessions live in memory only (a restart signs everyone out); they are keyed by the SHA-256 of their
 * id, so the map holds no usable cookie. Bounded: at most `maxSessions`; the oldest is dropped first.
 *
 * @since 0.3.0
 */
import { createHash, randomBytes, timingSafeEqual } from "node:crypto"
import { CsrfRejected } from "../Errors.js"
import type { Principal, RequestHeaders } from "./Auth.js"

/** The header that carries the session's CSRF token on state-changing requests. */
export const csrfHeader = "x-citegate-csrf"

/** How long a session lives from its creation (not extended by use): 30 minutes. */
export const defaultTtlMs = 30 * 60_000

/** Sessions held at once; creating one more drops the oldest. */
export const defaultMaxSessions = 10_000

/** Methods that change state: a cookie-authenticated request with one of them needs the CSRF token. */
export const unsafeMethods: ReadonlySet<string> = new Set(["POST", "PUT", "PATCH", "DELETE"])

export interface SessionOptions {
  /** Mark the cookie `Secure` and name it `__Host-citegate_session` (the service is reached over TLS). */
  readonly secure: boolean
  readonly ttlMs?: number | undefined
  readonly maxSessions?: number | undefined
  /** The clock (milliseconds since the epoch); tests move it. */
  readonly now?: (() => number) | undefined
}

interface Entry {
  readonly principal: Principal
  readonly csrf: string
  readonly expiresAt: number
}

/** A new session as `POST /v1/session` hands it out: the cookie to set and the CSRF token to keep. */
export interface Created {
  readonly setCookie: string
  readonly csrfToken: string
  readonly expiresAt: string
}

const digest = (id: string) => createHash("sha256").update(id, "utf8").digest("hex")

const equal = (a: string, b: string) => {
  const left = Buffer.from(a, "utf8")
  const right = Buffer.from(b, "utf8")
  return left.length === right.length && timingSafeEqual(left, right)
}

/** The value of cookie `name` in a Cookie header (one header; the first such cookie). */
const cookieValue = (headers: RequestHeaders, name: string): string | undefined => {
  const header = headers["cookie"]
  if (typeof header !== "string" || header.length > 8_192) return undefined
  for (const part of header.split(";")) {
    const at = part.indexOf("=")
    if (at > 0 && part.slice(0, at).trim() === name) return part.slice(at + 1).trim()
  }
  return undefined
}

/** The sessions of one service. */
export class SessionStore {
  readonly cookieName: string
  private readonly entries = new Map<string, Entry>()
  private readonly ttlMs: number
  private readonly maxSessions: number
  private readonly now: () => number

  constructor(private readonly options: SessionOptions) {
    this.cookieName = options.secure ? "__Host-citegate_session" : "citegate_session"
    this.ttlMs = options.ttlMs ?? defaultTtlMs
    this.maxSessions = options.maxSessions ?? defaultMaxSessions
    this.now = options.now ?? Date.now
  }

  get size(): number {
    return this.entries.size
  }

  private cookie(value: string, maxAgeSeconds: number): string {
    const secure = this.options.secure ? "; Secure" : ""
    return `${this.cookieName}=${value}; Path=/; Max-Age=${maxAgeSeconds}; HttpOnly; SameSite=Strict${secure}`
  }

  /** A new session for `principal` (an id and a CSRF token of 256 random bits each). */
  create(principal: Principal): Created {
    this.sweep()
    while (this.entries.size >= this.maxSessions) {
      // Maps iterate in insertion order: the first key is the oldest session.
      this.entries.delete(this.entries.keys().next().value!)
    }
    const id = randomBytes(32).toString("base64url")
    const csrf = randomBytes(32).toString("base64url")
    const expiresAt = this.now() + this.ttlMs
    this.entries.set(digest(id), { principal, csrf, expiresAt })
    return { setCookie: this.cookie(id, Math.floor(this.ttlMs / 1000)), csrfToken: csrf, expiresAt: new Date(expiresAt).toISOString() }
  }

  /** The cookie that ends the session in the browser. */
  get clearCookie(): string {
    return this.cookie("", 0)
  }

  /** Whether the request names a session in its cookie (live or not). */
  hasCookie(headers: RequestHeaders): boolean {
    return cookieValue(headers, this.cookieName) !== undefined
  }

  /** The live session the request's cookie names. */
  lookup(headers: RequestHeaders): { readonly principal: Principal; readonly csrfToken: string; readonly expiresAt: string } | undefined {
    const id = cookieValue(headers, this.cookieName)
    if (id === undefined || id.length > 128) return undefined
    const key = digest(id)
    const entry = this.entries.get(key)
    if (entry === undefined) return undefined
    if (entry.expiresAt <= this.now()) {
      this.entries.delete(key)
      return undefined
    }
    return { principal: entry.principal, csrfToken: entry.csrf, expiresAt: new Date(entry.expiresAt).toISOString() }
  }

  /** Ends the session the request's cookie names (nothing when there is none). */
  revoke(headers: RequestHeaders): void {
    const id = cookieValue(headers, this.cookieName)
    if (id !== undefined) this.entries.delete(digest(id))
  }

  /**
   * The CSRF rule for a state-changing request authenticated by the cookie: same origin (when the
   * browser says which), and the session's token in `x-citegate-csrf`. Undefined when it passes, or
   * when the cookie names no live session (authentication answers 401 then).
   */
  csrfRefusal(headers: RequestHeaders): CsrfRejected | undefined {
    const origin = headers["origin"]
    const host = headers["host"]
    if (typeof origin === "string" && origin !== "null") {
      let originHost: string | undefined
      try {
        originHost = new URL(origin).host
      } catch {
        originHost = undefined
      }
      if (originHost === undefined || originHost !== host) return new CsrfRejected({ reason: "cross-origin" })
    } else if (origin === "null") {
      return new CsrfRejected({ reason: "cross-origin" })
    }
    const session = this.lookup(headers)
    if (session === undefined) return undefined
    const presented = headers[csrfHeader]
    if (presented === undefined) return new CsrfRejected({ reason: "missing" })
    if (typeof presented !== "string" || !equal(presented, session.csrfToken)) return new CsrfRejected({ reason: "mismatch" })
    return undefined
  }

  private sweep(): void {
    const now = this.now()
    for (const [key, entry] of this.entries) {
      if (entry.expiresAt <= now) this.entries.delete(key)
    }
  }
}
