/**
 * A service on a free loopback port with one admin token and the sales source approved, with the
 * verify lane on or off: for tests that compare the lane with the general path.
 */
import * as HttpServer from "@effect/platform/HttpServer"
import { Effect, Exit, Layer, Scope } from "effect"
import * as fsp from "node:fs/promises"
import * as path from "node:path"
import * as Config from "../../src/Config.js"
import { tokenDigest } from "../../src/server/Auth.js"
import * as Server from "../../src/server/Server.js"
import { SALES } from "../support.js"

/** Its port; the service stops when the scope closes. `work` holds its config file. */
export const startSalesService = (options: { readonly work: string; readonly runRoot: string; readonly verifyLane: boolean; readonly token: string }) =>
  Effect.gen(function*() {
    const configJson = {
      sources: [SALES],
      labels: ["q3_net_sales"],
      server: { tokens: [{ sha256: tokenDigest(options.token), runs: "*", capture: true, name: "admin" }] }
    }
    const configFile = path.join(options.work, "pipeline.json")
    yield* Effect.promise(() => fsp.writeFile(configFile, JSON.stringify(configJson)))
    const config = yield* Config.decode(configJson)
    const scope = yield* Scope.make()
    yield* Effect.addFinalizer(() => Scope.close(scope, Exit.void))
    const { runRoot, verifyLane } = options
    const context = yield* Layer.buildWithScope(Server.layer({ config, configFile, runRoot, host: "127.0.0.1", port: 0, verifyLane }), scope)
    const address = (yield* Effect.provide(HttpServer.HttpServer, context)).address
    return address._tag === "TcpAddress" ? address.port : 0
  })
