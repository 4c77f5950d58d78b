/**
 * The warm path's cache hits are counted once per verification, also when the run's review log has
 * just changed (not kept for `settleMs`): the warm step then gives the request to the general path
 * before verifying, never after (its hits would be counted twice).
 */
import { assert, describe, it } from "@effect/vitest"
import { Context, Effect, Layer } from "effect"
import * as fsp from "node:fs/promises"
import * as path from "node:path"
import * as Config from "../src/Config.js"
import { Lifecycle, ServerContext } from "../src/server/Context.js"
import { ReportResponder, ReportResponderLive } from "../src/server/Handlers.js"
import { layer as runsLayer, Runs } from "../src/server/Runs.js"
import * as CaptureCache from "../src/verify/CaptureCache.js"
import { SALES, salesRecord, tempDirectory, writeRecords } from "./support.js"
import { good } from "./support/laneCases.js"

describe("the warm path's cache hits", () => {
  it.scopedLive("are counted once per verification, also while a changed review log settles", () =>
    Effect.gen(function*() {
      const work = yield* tempDirectory
      const runRoot = path.join(work, "runs")
      yield* Effect.promise(() => fsp.mkdir(path.join(runRoot, "r1"), { recursive: true }))
      yield* writeRecords(path.join(runRoot, "r1"), [salesRecord])
      const config = yield* Config.decode({ sources: [SALES], labels: ["q3_net_sales", "q3_online_share"], verify: { mode: "reject" }, server: { tokens: [] } })
      const context = Layer.succeed(ServerContext, { config, configFile: path.join(work, "p.json"), runRoot, limits: Config.resolvedServer(config), allowLoopbackHttp: false })
      const lifecycle = Layer.succeed(Lifecycle, { draining: Effect.never, isDraining: Effect.succeed(false), openRequests: Effect.succeed(0), shutdown: Effect.void })
      const built = yield* Layer.build(ReportResponderLive.pipe(Layer.provideMerge(runsLayer), Layer.provideMerge(Layer.mergeAll(context, lifecycle, CaptureCache.layer({ maxBytes: 1e8 })))))
      const responder = Context.get(built, ReportResponder)
      const cache = Context.get(built, CaptureCache.CaptureCache)
      const run = yield* Context.get(built, Runs).get("r1")
      const hits = Effect.map(cache.stats, (s) => s.hits)
      /** One request as the lane answers it: warm at once, else the general path. */
      const request = Effect.suspend(() => {
        const warm = responder.respondWarm(run, "reject", good)
        return warm !== undefined ? Effect.succeed("warm") : Effect.as(responder.respond(run, "reject", good), "general")
      }).pipe(Effect.provide(built))
      yield* request
      yield* request
      let h = yield* hits
      assert.strictEqual(yield* request, "warm")
      assert.strictEqual((yield* hits) - h, 1)
      // The review log changes (here: an empty reviews/ directory appears): for settleMs it is not kept.
      yield* Effect.promise(() => fsp.mkdir(path.join(runRoot, "r1", "reviews")))
      for (let i = 0; i < 3; i++) {
        h = yield* hits
        // One capture cited: one hit, by the general path (before: two, the warm step's and the general path's).
        assert.strictEqual(yield* request, "general")
        assert.strictEqual((yield* hits) - h, 1)
      }
    }))
})
