/**
 * The service's typed API without a port: the API layer (`Server.HealthLive`, `Handlers.RunsLive`,
 * `Handlers.VerifyLive`) served by `HttpApiBuilder.toWebHandler` over the real Auth and Runs
 * services, a real run root and a lifecycle the test controls.
 */
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as HttpServer from "@effect/platform/HttpServer"
import { Effect, HashMap, Layer, Logger } from "effect"
import * as fsp from "node:fs/promises"
import * as path from "node:path"
import * as Config from "../src/Config.js"
import { CitegateApi } from "../src/server/Api.js"
import { Auth, tokenDigest } from "../src/server/Auth.js"
import { DocumentsLive } from "../src/server/Documents.js"
import * as Handlers from "../src/server/Handlers.js"
import { ReviewsLive } from "../src/server/Reviews.js"
import * as Runs from "../src/server/Runs.js"
import { HealthLive } from "../src/server/Server.js"
import { tempDirectory } from "./support.js"
import { serverBase } from "./support/serverRun.js"

const token = "citegate-in-process-capture-token"

/**
 * The API as a web handler over a run root in a fresh directory (`runs`, or what `runRootOf` makes
 * of the directory); `draining` decides the lifecycle.
 */
export const webApi = (draining: boolean, runRootOf: (work: string) => Effect.Effect<string> = (work) => Effect.succeed(path.join(work, "runs"))) =>
  Effect.gen(function*() {
    const work = yield* tempDirectory
    const runRoot = yield* runRootOf(work)
    // Its one source is a closed loopback port: a run started here fails at once (it is not looked at).
    const config = yield* Config.decode({
      sources: ["http://127.0.0.1:9/unused.txt"],
      labels: ["x"],
      server: { tokens: [{ sha256: tokenDigest(token), runs: [], capture: true, name: "capture" }] }
    })
    const base = yield* serverBase({ config, configFile: path.join(work, "pipeline.json"), runRoot, allowLoopbackHttp: true, draining })
    const services = Layer.mergeAll(Auth.layer(Config.resolvedServer(config).tokens), Runs.layer).pipe(Layer.provideMerge(base))
    const api = HttpApiBuilder.api(CitegateApi).pipe(Layer.provide([HealthLive, Handlers.RunsLive, DocumentsLive, Handlers.VerifyLive, ReviewsLive]), Layer.provide(services))
    // Every log line of the handlers, with its annotations.
    const logged: Array<{ readonly message: unknown; readonly annotations: Record<string, unknown> }> = []
    const recorder = Logger.make(({ annotations, message }) => {
      logged.push({ message, annotations: Object.fromEntries(HashMap.toEntries(annotations)) })
    })
    const web = HttpApiBuilder.toWebHandler(
      Layer.mergeAll(api, HttpServer.layerContext, Logger.replace(Logger.defaultLogger, recorder))
    )
    yield* Effect.addFinalizer(() => Effect.promise(() => web.dispose()))
    const post = (pathname: string) =>
      Effect.promise(async () => {
        const response = await web.handler(new Request(`http://citegate.invalid${pathname}`, {
          method: "POST",
          headers: { authorization: `Bearer ${token}` }
        }))
        return { status: response.status, json: await response.json() as any }
      })
    const get = (pathname: string) =>
      Effect.promise(async () => {
        const response = await web.handler(new Request(`http://citegate.invalid${pathname}`))
        return { status: response.status, json: await response.json() as any }
      })
    const entries = Effect.promise(() => fsp.readdir(runRoot).catch(() => [] as Array<string>))
    return { post, get, entries, logged }
  })
