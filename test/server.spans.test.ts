/**
 * What a request costs the service in spans when nothing exports them (telemetry off, Effect's
 * in-process tracer): none. Not the platform's `http.server POST`, not `Auth.authenticate`,
 * `Runs.get`, `Gate.checkJsonWithCaptures`, `Verifier.checkJson` or `Render.json`: nothing reads
 * them, and each cost tens of microseconds per request. With telemetry on they are all exported
 * (test/telemetry.test.ts). Counted, not timed.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { countingInProcess } from "./support/spans.js"
import { countedVerifyRequests } from "./support/verifyRequests.js"
import { sources, startService } from "./serverSupport.js"

describe("service spans without telemetry", () => {
  it.scopedLive("verification and status requests make no span at all once the run's Gates are kept; they still verify", () =>
    Effect.gen(function*() {
      const { server } = yield* sources
      const sales = server.url("/q3-sales.txt")
      const service = yield* startService({ sources: [sales] })
      const probe = yield* countingInProcess(Effect.withSpan(Effect.void, "probe"))
      assert.deepStrictEqual(probe.names, ["probe"], "the in-process tracer is counted")
      assert.deepStrictEqual(yield* countedVerifyRequests(service, sales), [])
    }))
})
