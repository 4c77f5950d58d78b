/**
 * More follow-up tests for the mutation run of `src/anchor/Diagnostic.ts` (docs/testing.md): the
 * time budget with a clock that advances a fixed step per reading (so a diagnosis "takes" that
 * long, whatever the machine), and a capture of exactly `maxDiagnosedLength` code units.
 */
import { afterEach, assert, describe, it, vi } from "@effect/vitest"
import * as Diagnostic from "../src/anchor/Diagnostic.js"

const capture = (k: number) => ({ text: `Capture ${k}: net sales were 4,210 units in the quarter.` })
const snippet = "NET SALES were 4,210 units"

/** `performance.now` advancing `step` ms per reading: each diagnosis takes exactly `step` ms. */
const steppingClock = (step: number) => {
  let now = 1_000
  vi.spyOn(performance, "now").mockImplementation(() => (now += step))
}

/** Which of `count` diagnoses, one per new capture, were made. */
const made = (diagnose: Diagnostic.Diagnose, count: number) =>
  Array.from({ length: count }, (_, k) => diagnose(capture(k), snippet).nearest !== undefined)

describe("Diagnostic: the time budget, with a stepping clock", () => {
  afterEach(() => {
    vi.restoreAllMocks()
  })

  it("diagnoses run while the time spent is below the budget; the one running when it runs out finishes", () => {
    // Diagnoses of 100 ms against 250 ms: spent 0, 100, 200 before the first three, 300 before the fourth.
    steppingClock(100)
    assert.deepStrictEqual(made(Diagnostic.forVerification(250), 5), [true, true, true, false, false])
    // Exactly used up: 100 + 100 = 200 of 200, the third is not made.
    assert.deepStrictEqual(made(Diagnostic.forVerification(200), 4), [true, true, false, false])
  })

  it("a budget above maxBudgetMs is cut to it", () => {
    // Diagnoses of 200 ms against 60 s, capped at 500 ms: spent 0, 200, 400, then 600.
    steppingClock(200)
    assert.deepStrictEqual(made(Diagnostic.forVerification(60_000), 5), [true, true, true, false, false])
  })

  it("a diagnosis that finds nothing still spends its time", () => {
    steppingClock(100)
    const diagnose = Diagnostic.forVerification(250)
    assert.deepStrictEqual(diagnose(capture(0), "Zebras juggle xylophones at dawn"), {})
    assert.deepStrictEqual(made(diagnose, 4), [true, true, false, false])
  })
})

describe("Diagnostic: the longest capture diagnosed", () => {
  it("a capture of exactly maxDiagnosedLength code units is diagnosed", () => {
    const text = "net sales were 4,210 units " + "x".repeat(Diagnostic.maxDiagnosedLength - 27)
    assert.strictEqual(text.length, Diagnostic.maxDiagnosedLength)
    assert.deepStrictEqual(Diagnostic.forVerification(60_000)({ text }, snippet), {
      nearest: {
        method: "normalized/1",
        score: 1,
        span: { start: 0, end: 26 },
        text: "net sales were 4,210 units",
        differences: "[-NET-]{+net+} [-SALES-]{+sales+} were 4,210 units"
      }
    })
  })
})
