/**
 * `GET /metrics`: every metric as Prometheus text, for a bearer token with `metrics: true`
 * (401 without a configured token, 403 for a token without the flag). Mounted only when
 * `telemetry.prometheus` is on.
 *
 * @since 0.4.0
 */
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { ServiceError } from "../Errors.js"
import { Access, Auth } from "./Auth.js"
import { Telemetry } from "./Context.js"

const encodeServiceError = Schema.encodeSync(ServiceError)

/** The content type Prometheus expects of the text exposition format. */
export const contentType = "text/plain; version=0.0.4; charset=utf-8"

export const layer = HttpApiBuilder.Router.use((router) =>
  Effect.gen(function*() {
    const auth = yield* Auth
    const { scrape } = yield* Telemetry
    if (scrape === undefined) return
    yield* router.get(
      "/metrics",
      Effect.gen(function*() {
        const request = yield* HttpServerRequest.HttpServerRequest
        yield* auth.authenticate(request.headers, Access.metrics)
        return HttpServerResponse.text(yield* scrape, { contentType, headers: { "cache-control": "no-store" } })
      }).pipe(
        Effect.catchAll((error) =>
          Effect.succeed(HttpServerResponse.unsafeJson(encodeServiceError(error), { status: error._tag === "Unauthorized" ? 401 : 403 }))
        )
      )
    )
  })
)
