/**
 * The HTTP transport of the capture stage: an undici Agent whose connector
 * resolves the host itself, checks EVERY resolved address against the address
 * policy, and then opens the socket to exactly the address it checked. There is
 * no second lookup, so a DNS answer cannot change between check and connect
 * (rebinding), and literal IP hosts go through the same check.
 */
import * as Undici from "@effect/platform-node/Undici"
import * as Effect from "effect/Effect"
import * as dns from "node:dns/promises"
import { isIP } from "node:net"
import { addressProblem } from "./AddressPolicy.js"
import { certificateErrorCodes, secureContext } from "./Trust.js"

export interface ResolvedAddress {
  readonly address: string
  readonly family: number
}

/** Resolves a host name to every address it has. Injectable so tests can answer with any address. */
export type Resolver = (hostname: string) => Promise<ReadonlyArray<ResolvedAddress>>

export const systemResolver: Resolver = (hostname) => dns.lookup(hostname, { all: true, verbatim: true })

/** Raised inside the connector when an address is refused; mapped to `AddressRejected` by the capture stage. */
export class AddressRefusedError extends Error {
  constructor(readonly host: string, readonly address: string, readonly reason: string) {
    super(`refused to connect to ${host} at ${address}: ${reason}`)
    this.name = "AddressRefusedError"
  }
}

/** Raised inside the connector when the server's certificate fails verification; mapped to `CertificateRejected`. */
export class CertificateRefusedError extends Error {
  constructor(readonly host: string, readonly code: string, detail: string, options?: { readonly cause?: unknown }) {
    super(detail, options)
    this.name = "CertificateRefusedError"
  }
}

export type Connector = Undici.buildConnector.connector

/**
 * undici's connector with certificate verification forced on and the trust
 * anchors given explicitly (see Trust.ts): nothing in the environment turns
 * either off or widens them.
 */
export const verifyingConnector = (extraCa: ReadonlyArray<string>): Connector => {
  // Built on first use: the secure context parses every bundled root (tens of milliseconds).
  let tlsConnector: Connector | undefined
  let plainConnector: Connector | undefined
  return (options, callback) => {
    if (options.protocol === "https:") {
      tlsConnector ??= Undici.buildConnector({ rejectUnauthorized: true, secureContext: secureContext(extraCa) })
      return tlsConnector(options, callback)
    }
    plainConnector ??= Undici.buildConnector({})
    return plainConnector(options, callback)
  }
}

export interface DispatcherOptions {
  /** Test mode: only the address 127.0.0.1 may be reached (the URL policy also requires it as the literal host). */
  readonly allowLoopbackHttp: boolean
  readonly resolver?: Resolver | undefined
  /**
   * Opens the socket once the address is checked; defaults to undici's own
   * connector with verification forced on. Replaceable only to inject network faults in tests.
   */
  readonly socketConnector?: Connector | undefined
  /** Extra CA certificates (PEM) trusted besides Node's bundled roots. */
  readonly ca?: ReadonlyArray<string> | undefined
}

const unbracket = (hostname: string) =>
  hostname.startsWith("[") && hostname.endsWith("]") ? hostname.slice(1, -1) : hostname

/** A connector that refuses any disallowed address before a socket exists. */
export const guardedConnector = (options: DispatcherOptions): Connector => {
  const resolver = options.resolver ?? systemResolver
  const connectSocket = options.socketConnector ?? verifyingConnector(options.ca ?? [])
  return (connectOptions, callback) => {
    const host = unbracket(connectOptions.hostname)
    const family = isIP(host)
    const lookup = family !== 0 ? Promise.resolve([{ address: host, family }]) : resolver(host)
    lookup
      .then((addresses) => {
        if (addresses.length === 0) throw new Error(`${host} resolved to no address`)
        // Reject when ANY address is disallowed: which one a client would pick is not ours to guess.
        for (const { address } of addresses) {
          const problem = addressProblem(address, options)
          if (problem !== undefined) throw new AddressRefusedError(host, address, problem)
        }
        return addresses[0]!.address
      })
      .then(
        (address) =>
          connectSocket({
            ...connectOptions,
            // `host` keeps the name for TLS SNI and certificate checks; the socket goes to the checked address.
            host: connectOptions.host ?? connectOptions.hostname,
            hostname: address
          }, (...args) => {
            const error = args[0]
            if (error === null) return callback(...args)
            const code = "code" in error ? String(error.code) : ""
            return callback(
              certificateErrorCodes.has(code) ? new CertificateRefusedError(host, code, error.message, { cause: error }) : error,
              null
            )
          }),
        (error: unknown) => callback(error instanceof Error ? error : new Error(String(error)), null)
      )
  }
}

/** A scoped undici Agent over the guarded connector, destroyed (sockets closed) with its scope. */
export const make = (options: DispatcherOptions) =>
  Effect.acquireRelease(
    Effect.sync(() =>
      new Undici.Agent({
        connect: guardedConnector(options),
        // Deadlines are the capture stage's single Effect timeout; these only bound idle sockets.
        keepAliveTimeout: 4_000
      })
    ),
    (agent) => Effect.promise(() => agent.destroy())
  )
