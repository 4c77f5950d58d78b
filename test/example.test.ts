import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { DraftNotPublishable, makeAppLayer, Publisher } from "../docs/examples/embed-gate.js"
import { cited, pipelineConfig, runDirectoryWith, salesRecord } from "./support.js"

describe("docs/examples/embed-gate.ts", () => {
  it.scoped("publishes a grounded draft and refuses a rejected one with its failures", () =>
    Effect.gen(function*() {
      const directory = yield* runDirectoryWith([salesRecord])
      const publisher = yield* Effect.provide(Publisher, makeAppLayer(directory, pipelineConfig))
      const markdown = yield* publisher.publish(JSON.stringify({
        facts: [cited("q3_net_sales", salesRecord, "Net sales for Q3 2026 were 4,210 units")]
      }))
      assert.include(markdown, "**Outcome: grounded**")
      const refused = yield* Effect.flip(publisher.publish(JSON.stringify({
        facts: [cited("q3_net_sales", salesRecord, "Net sales rose")]
      })))
      assert.instanceOf(refused, DraftNotPublishable)
      assert.strictEqual(refused.reason, "ReportRejected")
      assert.include(refused.details, "SnippetAbsent")
    }))
})
