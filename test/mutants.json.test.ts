import { assert, describe, it } from "@effect/vitest"
import { Schema } from "effect"
import { decodeOptions } from "../src/Domain.js"
import { InvalidReport, VerificationTimeout } from "../src/Errors.js"
import * as Json from "../src/render/Json.js"
import { RenderedResult, Rendering } from "../src/render/Rendering.js"

const decode = Schema.decodeUnknownSync(RenderedResult, decodeOptions)

describe("JSON rendering of rejections other than ReportRejected", () => {
  it("an invalid report: tag, issues and omitted count, one document ending in one newline", () => {
    const long = "m".repeat(3_000)
    const error = new InvalidReport({ issues: [{ path: ["facts", 0], message: long }], omitted: 4 })
    const out = Json.render(Rendering.Rejected({ error }))
    assert.isTrue(out.endsWith("}\n"))
    assert.isFalse(out.endsWith("\n\n"))
    const result = decode(JSON.parse(out))
    assert.strictEqual(result.status, "rejected")
    if (result.status !== "rejected" || result.error._tag !== "InvalidReport") return assert.fail("not an InvalidReport")
    // Only a per-fact error's fields are cut; an issue message is bounded where it is made.
    assert.deepStrictEqual(result.error.issues, [{ path: ["facts", 0], message: long }])
    assert.strictEqual(result.error.omitted, 4)
  })

  it("a verification timeout: tag and deadline", () => {
    const out = Json.render(Rendering.Rejected({ error: new VerificationTimeout({ timeoutMs: 1500 }) }))
    assert.deepStrictEqual(JSON.parse(out), {
      format: "citegate.result/1",
      status: "rejected",
      error: { _tag: "VerificationTimeout", timeoutMs: 1500 }
    })
    assert.isTrue(out.endsWith("}\n"))
  })
})
