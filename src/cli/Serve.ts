/**
 * `run-pipeline serve`: the service on one listening address until SIGINT / SIGTERM, which drain
 * open requests and streams (within `server.shutdownGraceMs`) before the process exits.
 */
import * as HttpServer from "@effect/platform/HttpServer"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as fs from "node:fs/promises"
import * as net from "node:net"
import * as path from "node:path"
import * as tls from "node:tls"
import type { PipelineConfig } from "../Config.js"
import * as JsonLog from "../server/JsonLog.js"
import * as Server from "../server/Server.js"
import { FileUnreadable, InsecureListen } from "./CliError.js"

/** `host:port` with an IPv4 literal (or `[v6]`) and a port from 0 to 65535; host names are not resolved. */
export const parseListen = (listen: string): { host: string; port: number } | string => {
  const match = /^(\d{1,3}(?:\.\d{1,3}){3}|\[[0-9a-fA-F:.]+\]):(\d{1,5})$/.exec(listen)
  if (match === null) return `--listen must be HOST:PORT with an IP address (e.g. 127.0.0.1:8787), got ${JSON.stringify(listen)}`
  const port = Number(match[2])
  if (port > 65535) return `--listen port must be from 0 to 65535, got ${port}`
  return { host: match[1]!.replace(/^\[|\]$/g, ""), port }
}

const loopback = new net.BlockList()
loopback.addSubnet("127.0.0.0", 8, "ipv4")
loopback.addAddress("::1", "ipv6")

/** Whether only this machine can reach `host` (127.0.0.0/8, ::1). */
export const isLoopback = (host: string): boolean => {
  const family = net.isIPv4(host) ? "ipv4" : net.isIPv6(host) ? "ipv6" : undefined
  return family !== undefined && loopback.check(host, family)
}

/**
 * Plain HTTP is served on loopback only: elsewhere bearer tokens would cross the network in clear,
 * unless `server.tls` makes it HTTPS or the operator says a TLS proxy is in front.
 */
export const checkListen = (
  listen: { readonly host: string; readonly port: number },
  config: PipelineConfig,
  behindTlsProxy: boolean
): Effect.Effect<void, InsecureListen> =>
  isLoopback(listen.host) || config.server?.tls !== undefined || behindTlsProxy
    ? Effect.void
    : Effect.fail(new InsecureListen(listen))

/**
 * `server.tls`'s certificate and key (paths relative to the configuration's directory), read and
 * checked as a pair before anything listens.
 */
export const loadTls = (config: PipelineConfig, configFile: string) =>
  Effect.gen(function*() {
    const files = config.server?.tls
    if (files === undefined) return undefined
    const read = (file: string, what: string) => {
      const resolved = path.resolve(path.dirname(configFile), file)
      return Effect.tryPromise({
        try: () => fs.readFile(resolved),
        catch: (error) => new FileUnreadable({ path: resolved, what, detail: error instanceof Error ? error.message : String(error) })
      })
    }
    const cert = yield* read(files.certFile, "TLS certificate (server.tls.certFile)")
    const key = yield* read(files.keyFile, "TLS key (server.tls.keyFile)")
    yield* Effect.try({
      try: () => tls.createSecureContext({ cert, key }),
      catch: (error) =>
        new FileUnreadable({
          path: path.resolve(path.dirname(configFile), files.certFile),
          what: "TLS certificate and key (server.tls)",
          detail: `not a usable PEM certificate chain and matching key: ${error instanceof Error ? error.message : String(error)}`
        })
    })
    return { cert, key }
  })

/** JSON log lines on stderr: one per request, with its request id (Effect's JSON format, made cheaply: JsonLog.ts). */
const jsonLogs = Logger.replace(Logger.defaultLogger, JsonLog.stderr)

export const serve = (options: {
  readonly config: PipelineConfig
  readonly configFile: string
  readonly host: string
  readonly port: number
  readonly runRoot: string | undefined
  readonly allowLoopbackHttp: boolean
  readonly tls?: { readonly cert: Buffer; readonly key: Buffer } | undefined
  readonly store?: Server.ServeOptions["store"]
  /** Mark the review page's session cookie Secure (TLS here, or a TLS proxy in front). */
  readonly secureCookies?: boolean | undefined
}) =>
  Layer.launch(
    Server.layer({
      config: options.config,
      configFile: options.configFile,
      // Default: `runs/` beside the configuration.
      runRoot: path.resolve(options.runRoot ?? path.join(path.dirname(options.configFile), "runs")),
      allowLoopbackHttp: options.allowLoopbackHttp,
      host: options.host,
      port: options.port,
      tls: options.tls,
      store: options.store,
      secureCookies: options.secureCookies
    }).pipe(
      Layer.tap((context) => {
        const address = HttpServer.formatAddress(Context.get(context, HttpServer.HttpServer).address)
        return Effect.logInfo("listening").pipe(Effect.annotateLogs({ address, protocol: options.tls === undefined ? "http" : "https" }))
      })
    )
  ).pipe(Effect.provide(jsonLogs))
