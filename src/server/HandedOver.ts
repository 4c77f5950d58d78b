/**
 * A run look-up the verify lane made for a request it hands to the general path (an unknown run):
 * kept with the request, so that the route uses it instead of looking the run up a second time
 * (over PostgreSQL, a statement per look-up). Taken once, for the same run id only; a request that
 * never reaches the route leaves nothing behind (kept by the request object, weakly).
 *
 * @since 0.4.0
 */
import type * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as NodeHttpServerRequest from "@effect/platform-node/NodeHttpServerRequest"
import type * as Effect from "effect/Effect"
import type * as Http from "node:http"
import type { RunNotFound } from "../Errors.js"
import type { RunView } from "./Runs.js"

type LookUp = Effect.Effect<RunView, RunNotFound>

const handed = new WeakMap<object, { readonly runId: string; readonly lookUp: LookUp }>()

/** Keeps `lookUp` (an Exit: its result, replayed) of `runId` with `request`, before the lane hands it over. */
export const keep = (request: Http.IncomingMessage, runId: string, lookUp: LookUp): void => {
  handed.set(request, { runId, lookUp })
}

/** The look-up of `runId` kept with this request, once; `undefined` when there is none. */
export const take = (request: HttpServerRequest.HttpServerRequest, runId: string): LookUp | undefined => {
  const incoming = NodeHttpServerRequest.toIncomingMessage(request) as object
  const kept = handed.get(incoming)
  if (kept === undefined) return undefined
  handed.delete(incoming)
  return kept.runId === runId ? kept.lookUp : undefined
}
