/**
 * The service's typed endpoints (an @effect/platform HttpApi). The OpenAPI document at
 * `/openapi.json` is generated from these definitions. Streaming routes that write their own
 * bodies (NDJSON / SSE) are mounted beside this API on the same router (see Server.ts).
 *
 * @since 0.2.0
 */
import * as HttpApi from "@effect/platform/HttpApi"
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as HttpApiSchema from "@effect/platform/HttpApiSchema"
import * as Schema from "effect/Schema"

/** `GET /healthz`: the process is up. */
export const Health = Schema.Struct({ status: Schema.Literal("ok") })

/** `GET /readyz`: the server accepts work (configuration loaded, run root usable, not draining). */
export class NotReady extends Schema.TaggedError<NotReady>()("NotReady", {
  reason: Schema.Literal("draining", "run-root-unusable")
}, HttpApiSchema.annotations({ status: 503 })) {
  override get message() {
    return this.reason === "draining" ? "The server is shutting down" : "The run root cannot be used"
  }
}

export const HealthGroup = HttpApiGroup.make("health")
  .add(HttpApiEndpoint.get("healthz", "/healthz").addSuccess(Health))
  .add(HttpApiEndpoint.get("readyz", "/readyz").addSuccess(Health).addError(NotReady))

export class CitegateApi extends HttpApi.make("citegate")
  .add(HealthGroup)
{}
