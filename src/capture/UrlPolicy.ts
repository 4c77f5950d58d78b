/**
 * Which URL strings the capture stage may fetch, decided before any DNS lookup
 * or socket: an exact member of the operator's approved set, exactly its own
 * canonical form, https (plain http only in test mode), without userinfo or
 * fragment in any form. Test mode reaches only the literal host 127.0.0.1,
 * whatever the scheme.
 */
import { type SourceUrl, urlProblem } from "../Domain.js"
import { NotApproved } from "../Errors.js"

export interface UrlPolicyOptions {
  readonly approved: ReadonlySet<string>
  /** Test mode: http or https, only to the literal host 127.0.0.1. Off unless passed. */
  readonly allowLoopbackHttp: boolean
}

export const check = (source: string, options: UrlPolicyOptions): SourceUrl | NotApproved => {
  const problem = urlProblem(source)
  if (problem !== undefined) return new NotApproved({ source, reason: problem.reason, detail: `URL ${problem.detail}` })
  if (!options.approved.has(source)) {
    return new NotApproved({ source, reason: "not-in-approved-set", detail: "not in the approved source set" })
  }
  const url = new URL(source)
  if (url.protocol === "http:") {
    if (!options.allowLoopbackHttp) {
      return new NotApproved({
        source,
        reason: "scheme-not-allowed",
        detail: "plain http is allowed only in test mode (allowLoopbackHttp)"
      })
    }
    if (url.hostname !== "127.0.0.1") {
      return new NotApproved({
        source,
        reason: "scheme-not-allowed",
        detail: "in test mode plain http may only reach the literal host 127.0.0.1"
      })
    }
  }
  // Test mode reaches the literal host 127.0.0.1 only, over https too: a name is never resolved there,
  // so no DNS answer (or injected resolver) can steer a test-mode capture anywhere.
  if (options.allowLoopbackHttp && url.hostname !== "127.0.0.1") {
    return new NotApproved({
      source,
      reason: "host-not-allowed",
      detail: "in test mode only the literal host 127.0.0.1 may be reached"
    })
  }
  return source as SourceUrl
}

/** An approved source that passed the policy, with the request target it is fetched at. */
export interface Target {
  readonly source: SourceUrl
  /** `scheme://host[:port]`, the connection the request goes to. */
  readonly origin: string
  /** Path and query, as sent on the request line. */
  readonly path: string
}

/**
 * `check` for one stage, remembered per approved source: the approved set and the mode are fixed for
 * the stage's life, so an approved URL is parsed and checked once, not on every capture. Only members
 * of the approved set are remembered (the memory is bounded by the operator's list); any other input
 * is checked afresh and refused.
 */
export const checker = (options: UrlPolicyOptions): (source: string) => Target | NotApproved => {
  const known = new Map<string, Target | NotApproved>()
  return (source) => {
    const remembered = known.get(source)
    if (remembered !== undefined) return remembered
    const checked = check(source, options)
    const result = typeof checked === "string" ? target(checked) : checked
    if (options.approved.has(source)) known.set(source, result)
    return result
  }
}

const target = (source: SourceUrl): Target => {
  const url = new URL(source)
  return { source, origin: url.origin, path: url.pathname + url.search }
}
