/**
 * The typed handlers without a port (`webApi` in serverInProcess.ts). This reaches what a listening
 * server cannot: a request handled while the service drains (a draining server accepts no
 * connection, so over loopback no request reaches the handler then).
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { webApi } from "./serverInProcess.js"

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
