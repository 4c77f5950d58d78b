/**
 * `run-pipeline serve`: the service on one listening address until SIGINT / SIGTERM, which drain
 * open requests and streams (within `server.shutdownGraceMs`) before the process exits.
 */
import * as HttpServer from "@effect/platform/HttpServer"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as path from "node:path"
import type { PipelineConfig } from "../Config.js"
import * as Server from "../server/Server.js"

/** `host:port` with an IPv4 literal (or `[v6]`) and a port from 0 to 65535; host names are not resolved. */
export const parseListen = (listen: string): { host: string; port: number } | string => {
  const match = /^(\d{1,3}(?:\.\d{1,3}){3}|\[[0-9a-fA-F:.]+\]):(\d{1,5})$/.exec(listen)
  if (match === null) return `--listen must be HOST:PORT with an IP address (e.g. 127.0.0.1:8787), got ${JSON.stringify(listen)}`
  const port = Number(match[2])
  if (port > 65535) return `--listen port must be from 0 to 65535, got ${port}`
  return { host: match[1]!.replace(/^\[|\]$/g, ""), port }
}

/** JSON log lines on stderr: one per request, with its request id. */
const jsonLogs = Logger.replace(Logger.defaultLogger, Logger.withConsoleError(Logger.jsonLogger))

export const serve = (options: {
  readonly config: PipelineConfig
  readonly configFile: string
  readonly host: string
  readonly port: number
  readonly runRoot: string | undefined
  readonly allowLoopbackHttp: boolean
}) =>
  Layer.launch(
    Server.layer({
      config: options.config,
      configFile: options.configFile,
      // Default: `runs/` beside the configuration.
      runRoot: path.resolve(options.runRoot ?? path.join(path.dirname(options.configFile), "runs")),
      allowLoopbackHttp: options.allowLoopbackHttp,
      host: options.host,
      port: options.port
    }).pipe(
      Layer.tap((context) => {
        const address = HttpServer.formatAddress(Context.get(context, HttpServer.HttpServer).address)
        return Effect.logInfo("listening").pipe(Effect.annotateLogs({ address }))
      })
    )
  ).pipe(Effect.provide(jsonLogs))
