/**
 * A markdown/2 record's body map is read back as written, and a record whose
 * map is out of order or reaches past the text is refused as corrupt.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Either } from "effect"
import { type CaptureRecordV2, sha256Of, type SourceUrl } from "../src/Domain.js"
import { checkRecord } from "../src/internal/recordDecode.js"
import { accessedAt } from "./support.js"

const source = "https://example.test/fares.md" as SourceUrl
const body = "Pay **half fare**."
const record = (bodyMap: CaptureRecordV2["bodyMap"]): CaptureRecordV2 => ({
  format: "citegate.capture/2",
  source,
  sha256: sha256Of("Pay half fare."),
  accessedAt,
  extraction: "markdown/2",
  body: { sha256: sha256Of(body), byteLength: body.length, contentType: "text/markdown" },
  ...(bodyMap === undefined ? {} : { bodyMap }),
  text: "Pay half fare."
})

describe("a record's body map", () => {
  it.effect("in order and inside the text: accepted", () =>
    Effect.sync(() => {
      assert.isTrue(Either.isRight(checkRecord(source, source, record([[0, 0, 4], [4, 6, 9], [13, 17, 1]]))))
    }))

  it.effect("overlapping, out of order or past the text: CorruptCapture invalid-anchor", () =>
    Effect.sync(() => {
      for (const map of [[[0, 0, 4], [3, 6, 9]], [[4, 6, 9], [0, 0, 4]], [[0, 6, 4], [4, 0, 4]], [[13, 17, 2]]] as const) {
        const checked = checkRecord(source, source, record(map))
        assert.isTrue(Either.isLeft(checked), JSON.stringify(map))
        if (Either.isLeft(checked)) assert.strictEqual(checked.left.reason, "invalid-anchor")
      }
    }))
})
