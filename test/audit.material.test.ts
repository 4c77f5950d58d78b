/**
 * Material-change flags: one focused test per kind, the tokens each names,
 * what is deliberately not a change, and the scan's linear cost.
 */
import { assert, describe, it } from "@effect/vitest"
import { materialChanges, tokens } from "../src/audit/Material.js"

describe("material-change flags", () => {
  it("numbers: a limit from 30 to 20 names both tokens", () => {
    assert.deepStrictEqual(
      materialChanges("at most 30 requests per second", "at most 20 requests per second"),
      [{ kind: "numbers", oldTokens: ["30"], newTokens: ["20"] }]
    )
  })

  it("numbers: thousands separators and decimals are read, not compared as written", () => {
    // 1,000 and 1000 (and 1 000 with a no-break space) are one number: no flag.
    assert.deepStrictEqual(materialChanges("costs $1,000 a year", "costs $1000 a year"), [])
    assert.deepStrictEqual(materialChanges("costs 12,500.50", "costs 12\u00a0500.50"), [])
    assert.deepStrictEqual(
      materialChanges("rose 2.5 points", "rose 2.25 points"),
      [{ kind: "numbers", oldTokens: ["2.5"], newTokens: ["2.25"] }]
    )
  })

  it("numbers: a percent sign or a currency makes a different number", () => {
    assert.deepStrictEqual(
      materialChanges("a fee of 30", "a fee of 30%"),
      [{ kind: "numbers", oldTokens: ["30"], newTokens: ["30%"] }]
    )
    assert.deepStrictEqual(
      materialChanges("a fee of $30", "a fee of €30"),
      [{ kind: "numbers", oldTokens: ["$30"], newTokens: ["€30"] }]
    )
  })

  it("numbers: counted as a multiset (one of two equal numbers removed is one change)", () => {
    assert.deepStrictEqual(
      materialChanges("30 days, then 30 more days", "30 days, then more days"),
      [{ kind: "numbers", oldTokens: ["30"], newTokens: [] }]
    )
  })

  it("negation appearing: `not` is named on the new side", () => {
    assert.deepStrictEqual(
      materialChanges("Refunds are available for annual plans.", "Refunds are not available for annual plans."),
      [{ kind: "negation", oldTokens: [], newTokens: ["not"] }]
    )
  })

  it("negation disappearing: contractions (straight or curly apostrophe), cannot, except, without", () => {
    assert.deepStrictEqual(
      materialChanges("We can’t refund it", "We can refund it"),
      [{ kind: "negation", oldTokens: ["can’t"], newTokens: [] }]
    )
    assert.deepStrictEqual(
      materialChanges("Every plan except Basic, without a fee; it cannot lapse.", "Every plan, with a fee; it can lapse."),
      [{ kind: "negation", oldTokens: ["except", "without", "cannot"], newTokens: [] }]
    )
    assert.deepStrictEqual(
      materialChanges("There is no limit.", "There is never a limit."),
      [{ kind: "negation", oldTokens: ["no"], newTokens: ["never"] }]
    )
  })

  it("dates: ISO, numeric and written forms, each as one token", () => {
    assert.deepStrictEqual(
      materialChanges("effective 2026-01-31", "effective 2026-02-28"),
      [{ kind: "dates", oldTokens: ["2026-01-31"], newTokens: ["2026-02-28"] }]
    )
    assert.deepStrictEqual(
      materialChanges("effective January 31, 2026", "effective 1 March 2026"),
      [{ kind: "dates", oldTokens: ["January 31, 2026"], newTokens: ["1 March 2026"] }]
    )
    assert.deepStrictEqual(
      materialChanges("due 31/01/2026", "due 28/02/2026"),
      [{ kind: "dates", oldTokens: ["31/01/2026"], newTokens: ["28/02/2026"] }]
    )
    // A date's digits are not also counted as numbers.
    assert.deepStrictEqual(tokens("on 2026-01-31").map((t) => t.kind), ["dates"])
  })

  it("units: the unit after a number, with its qualifier", () => {
    assert.deepStrictEqual(
      materialChanges("within 30 days", "within 30 weeks"),
      [{ kind: "units", oldTokens: ["days"], newTokens: ["weeks"] }]
    )
    assert.deepStrictEqual(
      materialChanges("within 30 calendar days", "within 30 business days"),
      [{ kind: "units", oldTokens: ["calendar days"], newTokens: ["business days"] }]
    )
    assert.deepStrictEqual(
      materialChanges("at most 5kg", "at most 5 lb"),
      [{ kind: "units", oldTokens: ["kg"], newTokens: ["lb"] }]
    )
    // A unit word not after a number is not a unit.
    assert.deepStrictEqual(materialChanges("many days", "many weeks"), [])
  })

  it("several kinds at once come in a fixed order: numbers, negation, dates, units", () => {
    const flags = materialChanges(
      "From 1 March 2026 refunds take 14 days.",
      "From 1 April 2026 refunds do not take 10 weeks."
    )
    assert.deepStrictEqual(flags, [
      { kind: "numbers", oldTokens: ["14"], newTokens: ["10"] },
      { kind: "negation", oldTokens: [], newTokens: ["not"] },
      { kind: "dates", oldTokens: ["1 March 2026"], newTokens: ["1 April 2026"] },
      { kind: "units", oldTokens: ["days"], newTokens: ["weeks"] }
    ])
  })

  it("identical text, reworded text without numbers, negations, dates or units: no flag", () => {
    assert.deepStrictEqual(materialChanges("go to the compliance team", "go to the compliance team"), [])
    assert.deepStrictEqual(materialChanges("go to the compliance team by email", "go to the trust team through the portal"), [])
  })

  it("is linear: a megabyte of digits, separators or month names scans in seconds (quadratic would take hours)", () => {
    const hostile = [
      "1".repeat(1 << 20),
      "1,".repeat(1 << 19),
      "Jan ".repeat(1 << 18),
      "12/".repeat(1 << 18),
      "1 March ".repeat(1 << 17),
      "no ".repeat(1 << 18)
    ]
    for (const text of hostile) {
      const started = performance.now()
      materialChanges(text, text.slice(1))
      // About 1 s for the half-million numbers of "1,1,…" on a loaded machine; n² of them is ~10¹¹ steps.
      assert.isBelow(performance.now() - started, 5_000, text.slice(0, 10))
    }
  })
})
