/**
 * The typed handlers without a port: the API layer (`Server.HealthLive`, `Handlers.RunsLive`,
 * `Handlers.VerifyLive`) served by `HttpApiBuilder.toWebHandler` over the real Auth and Runs
 * services, a real run root and a lifecycle the test controls. This reaches what a listening
 * server cannot: a request handled while the service drains (a draining server accepts no
 * connection, so over loopback no request reaches the handler then).
 */
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as HttpServer from "@effect/platform/HttpServer"
import { assert, describe, it } from "@effect/vitest"
import { Deferred, Effect, HashMap, Layer, Logger } from "effect"
import * as fsp from "node:fs/promises"
import * as path from "node:path"
import * as Config from "../src/Config.js"
import { CitegateApi } from "../src/server/Api.js"
import { Auth, tokenDigest } from "../src/server/Auth.js"
import { Lifecycle, ServerContext } from "../src/server/Context.js"
import * as Handlers from "../src/server/Handlers.js"
import * as Runs from "../src/server/Runs.js"
import { HealthLive } from "../src/server/Server.js"
import { tempDirectory } from "./support.js"

const token = "citegate-in-process-capture-token"

/** The API as a web handler over a run root in a fresh directory; `draining` decides the lifecycle. */
const webApi = (draining: boolean) =>
  Effect.gen(function*() {
    const work = yield* tempDirectory
    const runRoot = path.join(work, "runs")
    // Its one source is a closed loopback port: a run started here fails at once (it is not looked at).
    const config = yield* Config.decode({
      sources: ["http://127.0.0.1:9/unused.txt"],
      labels: ["x"],
      server: { tokens: [{ sha256: tokenDigest(token), runs: [], capture: true, name: "capture" }] }
    })
    const signal = yield* Deferred.make<void>()
    if (draining) yield* Deferred.succeed(signal, undefined)
    const lifecycle = Lifecycle.of({
      draining: Deferred.await(signal),
      isDraining: Deferred.isDone(signal),
      openRequests: Effect.succeed(0),
      shutdown: Effect.asVoid(Deferred.succeed(signal, undefined))
    })
    const base = Layer.mergeAll(
      Layer.succeed(ServerContext, {
        config,
        configFile: path.join(work, "pipeline.json"),
        runRoot,
        limits: Config.resolvedServer(config),
        allowLoopbackHttp: true
      }),
      Layer.succeed(Lifecycle, lifecycle)
    )
    const services = Layer.mergeAll(Auth.layer(Config.resolvedServer(config).tokens), Runs.layer).pipe(Layer.provideMerge(base))
    const api = HttpApiBuilder.api(CitegateApi).pipe(Layer.provide([HealthLive, Handlers.RunsLive, Handlers.VerifyLive]), Layer.provide(services))
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
    const entries = Effect.promise(() => fsp.readdir(runRoot).catch(() => [] as Array<string>))
    return { post, entries, logged }
  })

describe("POST /v1/runs while the service drains", () => {
  it.scoped("503 NotReady (draining), and no run is created; not draining: 202 and the run's directory", () =>
    Effect.gen(function*() {
      const drained = yield* webApi(true)
      const refused = yield* drained.post("/v1/runs")
      assert.deepStrictEqual(refused, { status: 503, json: { _tag: "NotReady", reason: "draining" } })
      assert.deepStrictEqual(yield* drained.entries, [])

      const open = yield* webApi(false)
      const started = yield* open.post("/v1/runs")
      assert.strictEqual(started.status, 202)
      assert.deepStrictEqual(Object.keys(started.json).sort(), ["id", "status"])
      assert.match(started.json.id, /^\d{8}T\d{6}Z-[0-9a-f]{12}$/)
      assert.deepStrictEqual(yield* open.entries, [started.json.id])
      // One log line says which run was started by which token (by its configured name, never the token).
      assert.deepStrictEqual(
        open.logged.filter((line) => line.annotations["runId"] === started.json.id && line.annotations["token"] !== undefined),
        [{ message: ["run started"], annotations: { runId: started.json.id, token: "capture" } }]
      )
      assert.deepStrictEqual(drained.logged.filter((line) => line.annotations["token"] !== undefined), [])
    }))
})
