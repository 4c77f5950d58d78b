/**
 * What a run's capture needs, the same for runs in this process (Runs.ts) and for replicas over
 * PostgreSQL (PostgresRuns.ts): the capture stage configured from pipeline.json, and a source's number.
 */
import type * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as path from "node:path"
import * as Capture from "../capture/Capture.js"
import * as Trust from "../capture/Trust.js"
import type { PipelineConfig } from "../Config.js"
import * as TrustedKeys from "../evidence/TrustedKeys.js"
import type { ServerContext } from "./Context.js"

/**
 * The capture stage of one run (its store still to be provided): the budgets, the extra CA file and
 * the signing key, both read now. Checked when `serve` started (a bad key refuses to start); read
 * again per run, so a CA or key file removed or replaced since aborts this run (nothing fetched)
 * rather than capturing unsigned.
 */
export const captureLayer = (context: Context.Tag.Service<ServerContext>) =>
  Effect.gen(function*() {
    const { config } = context
    const { caFile, signing: _signing, ...budgets } = config.capture ?? {}
    const ca = yield* Trust.loadExtraCa({
      caFile: caFile === undefined ? undefined : path.resolve(path.dirname(context.configFile), caFile)
    })
    const signingKey = yield* TrustedKeys.signingKeyOf(config, path.dirname(context.configFile))
    return Capture.layer({
      approved: config.sources,
      allowLoopbackHttp: context.allowLoopbackHttp,
      ...budgets,
      ca,
      signingKey
    })
  })

/** A source's number in the run (1-based, in configuration order). */
export const sourceNumber = (config: PipelineConfig, source: string): number =>
  config.sources.indexOf(source as typeof config.sources[number]) + 1
