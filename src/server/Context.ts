/**
 * The services every route shares: configuration and limits, and the shutdown lifecycle.
 *
 * @since 0.2.0
 */
import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"
import type { PipelineConfig, ResolvedServer } from "../Config.js"
import type { StreamLog } from "./stream/Log.js"

/** What every route may read: the configuration, where runs live, and the resolved limits. */
export class ServerContext extends Context.Tag("citegate/server/ServerContext")<ServerContext, {
  readonly config: PipelineConfig
  /** The configuration file (relative `capture.caFile` resolves against its directory). */
  readonly configFile: string
  /** The directory holding one directory per run. */
  readonly runRoot: string
  readonly limits: ResolvedServer
  /** Test mode: capture http (and https) from the literal host 127.0.0.1 only (`--allow-loopback-http`). */
  readonly allowLoopbackHttp: boolean
  /** Where streamed answers' events are retained (replicas: PostgreSQL); absent, in this process's memory. */
  readonly streamLog?: StreamLog | undefined
}>() {}

/** Shutdown state: streams race `draining` and end cleanly once it completes. */
export class Lifecycle extends Context.Tag("citegate/server/Lifecycle")<Lifecycle, {
  /** Completes when shutdown starts; open streams should finish what they hold and end. */
  readonly draining: Effect.Effect<void>
  readonly isDraining: Effect.Effect<boolean>
  /** Requests (and streams) whose response has not closed yet. */
  readonly openRequests: Effect.Effect<number>
  /** Start shutting down (idempotent): signal `draining`, stop accepting connections. */
  readonly shutdown: Effect.Effect<void>
}>() {}


/**
 * Telemetry (docs/observability.md): whether it is on, and the Prometheus scrape when
 * `telemetry.prometheus` is. Off, nothing is recorded and no OpenTelemetry module is loaded.
 */
export class Telemetry extends Context.Tag("citegate/server/Telemetry")<Telemetry, {
  readonly enabled: boolean
  /** Every metric as Prometheus text (version 0.0.4); `undefined` unless `telemetry.prometheus` is on. */
  readonly scrape: Effect.Effect<string> | undefined
  /** How often state read rather than counted (cache size, queue depth) is sampled into the metrics, in ms. */
  readonly sampleMs: number
}>() {
  static readonly off: Context.Tag.Service<Telemetry> = { enabled: false, scrape: undefined, sampleMs: 0 }
}
