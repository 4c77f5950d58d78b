/**
 * `GET /v1/runs/{id}/documents?format=documents|anthropic|bedrock|evi1`: the run's capture texts
 * for the drafting model, in manifest order, as `run-pipeline sources --format …` gives them
 * (`Documents`; `evi1` as `citegate.evi1-prompt/1`, the prompt in a JSON string). The same token
 * rights as `GET /v1/runs/{id}`: a token that may read the run.
 *
 * @since 0.3.0
 */
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as Effect from "effect/Effect"
import * as Documents from "../answer/Documents.js"
import * as CaptureStore from "../store/CaptureStore.js"
import { RunNotFound } from "../Errors.js"
import { CitegateApi } from "./Api.js"
import { Access, Auth } from "./Auth.js"
import { ServerContext } from "./Context.js"
import { readableRun } from "./Handlers.js"

export const DocumentsLive = HttpApiBuilder.group(CitegateApi, "documents", (handlers) =>
  handlers.handle("runDocuments", ({ path, request, urlParams }) =>
    Effect.gen(function*() {
      const principal = yield* Effect.flatMap(Auth, (auth) => auth.authenticate(request.headers, Access.any))
      const run = yield* readableRun(principal, path.id)
      const { config } = yield* ServerContext
      const handOff = yield* Documents.make(config).pipe(
        Effect.provide(CaptureStore.layerFileSystem({ directory: run.directory })),
        Effect.catchTag("InvalidRunDirectory", () => Effect.fail(new RunNotFound({ runId: run.id })))
      )
      return Documents.toOutput(urlParams.format ?? "documents", handOff)
    }))
)
