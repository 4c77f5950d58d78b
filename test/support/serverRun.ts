/**
 * The set-up the service's parts are tested over: a real run root with one stored run, the test
 * configuration, and the services every route shares, as the service provides them.
 */
import { Deferred, Effect, Layer } from "effect"
import * as fsp from "node:fs/promises"
import * as path from "node:path"
import * as Config from "../../src/Config.js"
import { Lifecycle, ServerContext } from "../../src/server/Context.js"
import { pipelineConfig, salesRecord, tempDirectory, writeRecords } from "../support.js"

/**
 * The services every route shares, as the service provides them: the ServerContext (`config` and
 * its resolved limits, over `runRoot`) and a Lifecycle, already draining when `draining` is true.
 */
export const serverBase = (options: {
  readonly config: Config.PipelineConfig
  readonly configFile: string
  readonly runRoot: string
  readonly allowLoopbackHttp: boolean
  readonly draining?: boolean
}) =>
  Effect.gen(function*() {
    const signal = yield* Deferred.make<void>()
    if (options.draining === true) yield* Deferred.succeed(signal, undefined)
    const lifecycle = Lifecycle.of({
      draining: Deferred.await(signal),
      isDraining: Deferred.isDone(signal),
      openRequests: Effect.succeed(0),
      shutdown: Effect.asVoid(Deferred.succeed(signal, undefined))
    })
    return Layer.mergeAll(
      Layer.succeed(ServerContext, {
        config: options.config,
        configFile: options.configFile,
        runRoot: options.runRoot,
        limits: Config.resolvedServer(options.config),
        allowLoopbackHttp: options.allowLoopbackHttp
      }),
      Layer.succeed(Lifecycle, lifecycle)
    )
  })

/**
 * A run root (`runs/` in a fresh temporary directory) holding run `r1` (one capture: the sales
 * record) in `directory`, the decoded test configuration, and `base`: the ServerContext over that
 * root and a Lifecycle that is not draining.
 */
export const oneRunRoot = Effect.gen(function*() {
  const work = yield* tempDirectory
  const runRoot = path.join(work, "runs")
  const directory = path.join(runRoot, "r1")
  yield* Effect.promise(() => fsp.mkdir(directory, { recursive: true }))
  yield* writeRecords(directory, [salesRecord])
  const config = yield* Config.decode(pipelineConfig)
  const base = yield* serverBase({ config, configFile: path.join(work, "pipeline.json"), runRoot, allowLoopbackHttp: false })
  return { work, runRoot, directory, config, base }
})
