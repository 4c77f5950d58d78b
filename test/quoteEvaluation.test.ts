/**
 * A scripted drafter that copies whole sentences from the capture text (the
 * text the hand-off delivers) gets every quote verified under `exact`, for
 * every extraction: the text that is handed over is the text that is checked.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { captureText, type Generation, type Kind, sentences, verifiedCount } from "./quoteEvaluationSupport.js"

describe("a drafter copying sentences from the capture text", () => {
  for (const kind of ["html", "markdown"] as const satisfies ReadonlyArray<Kind>) {
    for (const generation of ["v1", "v2"] as const satisfies ReadonlyArray<Generation>) {
      it.scopedLive(`${kind} ${generation}: every sentence verifies exactly`, () =>
        Effect.gen(function*() {
          const text = yield* captureText(kind, generation)
          const quotes = sentences(text)
          assert.isAtLeast(quotes.length, 15)
          assert.strictEqual(yield* verifiedCount(text, quotes, "exact"), quotes.length)
        }))
    }
  }
})
