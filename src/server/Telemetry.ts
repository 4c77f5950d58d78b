/**
 * The service's telemetry switch: `telemetry` absent, the `Telemetry` service says off and nothing
 * else happens (no SDK loaded, no metric recorded, spans stay Effect's in-process ones); present,
 * the OpenTelemetry SDK (TelemetrySdk.ts) is loaded and installed for the whole service.
 *
 * @since 0.4.0
 */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { type PipelineConfig, resolvedTelemetry } from "../Config.js"
import { Telemetry } from "./Context.js"

export { Telemetry } from "./Context.js"

/** The telemetry the configuration asks for. Provide it below everything that records spans or metrics. */
export const layer = (config: PipelineConfig): Layer.Layer<Telemetry> => {
  const telemetry = resolvedTelemetry(config)
  if (telemetry === undefined) return Layer.succeed(Telemetry, Telemetry.off)
  return Layer.unwrapEffect(Effect.map(Effect.promise(() => import("./TelemetrySdk.js")), (sdk) => sdk.layer(telemetry)))
}
