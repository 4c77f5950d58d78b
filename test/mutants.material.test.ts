/**
 * Follow-up tests for the mutation run of `src/audit/Material.ts` (docs/testing.md): every word
 * of the negation, unit and qualifier lists is recognised (the lists are the specification, so
 * each entry is pinned), and the edges of unit attachment, keys and the multiset difference.
 */
import { assert, describe, it } from "@effect/vitest"
import { materialChanges, tokens } from "../src/audit/Material.js"

const negationWords = [
  "no", "not", "never", "none", "nor", "neither", "nothing", "nobody", "nowhere", "cannot", "without", "except",
  "excepting", "excluding", "unless", "prohibited", "forbidden"
]

const unitWords = [
  "ms", "s", "sec", "secs", "second", "seconds", "min", "mins", "minute", "minutes", "h", "hr", "hrs", "hour", "hours",
  "day", "days", "week", "weeks", "month", "months", "year", "years",
  "mm", "cm", "m", "km", "in", "inch", "inches", "ft", "foot", "feet", "mi", "mile", "miles", "yd", "yard", "yards",
  "ml", "l", "litre", "litres", "liter", "liters", "gallon", "gallons",
  "mg", "g", "kg", "t", "tonne", "tonnes", "ton", "tons", "lb", "lbs", "oz", "pound", "pounds",
  "b", "kb", "mb", "gb", "tb", "kib", "mib", "gib", "tib", "byte", "bytes",
  "usd", "eur", "gbp", "jpy", "chf", "dollar", "dollars", "euro", "euros", "cent", "cents",
  "percent", "per", "times", "items", "requests", "users", "employees", "people", "pages", "characters"
]

const qualifierWords = ["business", "calendar", "working", "consecutive", "full"]

describe("material-change lists and edges", () => {
  it("every negation word is a negation token, in any case; an ordinary word is not", () => {
    for (const w of negationWords) {
      assert.deepStrictEqual(tokens(`it is ${w} so`), [{ kind: "negation", text: w, key: w }], w)
      const upper = w.toUpperCase()
      assert.deepStrictEqual(tokens(upper), [{ kind: "negation", text: upper, key: w }], upper)
    }
    assert.deepStrictEqual(tokens("now known notably"), [])
    // Any word ending in n't, with a curly apostrophe read as straight.
    assert.deepStrictEqual(tokens("won’t"), [{ kind: "negation", text: "won’t", key: "won't" }])
    assert.deepStrictEqual(tokens("Isn't"), [{ kind: "negation", text: "Isn't", key: "isn't" }])
    assert.deepStrictEqual(tokens("n'tx"), [])
  })

  it("every unit word right after a number is a unit token; the same word elsewhere is not", () => {
    for (const u of unitWords) {
      assert.deepStrictEqual(
        tokens(`5 ${u}`),
        [{ kind: "numbers", text: "5", key: "5" }, { kind: "units", text: u, key: u }],
        u
      )
      assert.deepStrictEqual(tokens(`the ${u}`).filter((t) => t.kind === "units"), [], u)
    }
    assert.deepStrictEqual(tokens("5 widgets"), [{ kind: "numbers", text: "5", key: "5" }])
    assert.deepStrictEqual(tokens("5KG"), [{ kind: "numbers", text: "5", key: "5" }, {
      kind: "units",
      text: "KG",
      key: "kg"
    }])
  })

  it("every qualifier joins the unit after it; once only", () => {
    for (const q of qualifierWords) {
      assert.deepStrictEqual(
        tokens(`30 ${q} days`),
        [{ kind: "numbers", text: "30", key: "30" }, { kind: "units", text: `${q} days`, key: `${q} days` }],
        q
      )
    }
    // Written case kept in the text, lower case in the key.
    assert.deepStrictEqual(tokens("30 Business Days")[1], { kind: "units", text: "business Days", key: "business days" })
    // A second qualifier ends the attachment: no unit.
    assert.deepStrictEqual(tokens("30 business working days"), [{ kind: "numbers", text: "30", key: "30" }])
    // A qualifier without a unit after it leaves nothing behind for a later number.
    assert.deepStrictEqual(tokens("30 business then 5 days"), [
      { kind: "numbers", text: "30", key: "30" },
      { kind: "numbers", text: "5", key: "5" },
      { kind: "units", text: "days", key: "days" }
    ])
    // A new number forgets the qualifier seen before it.
    assert.deepStrictEqual(tokens("30 business 5 days"), [
      { kind: "numbers", text: "30", key: "30" },
      { kind: "numbers", text: "5", key: "5" },
      { kind: "units", text: "days", key: "days" }
    ])
  })

  it("a unit attaches across at most three spaces or hyphens, nothing else, and not after a date", () => {
    const unitOf = (s: string) => tokens(s).filter((t) => t.kind === "units").map((t) => t.key)
    assert.deepStrictEqual(unitOf("30   days"), ["days"])
    assert.deepStrictEqual(unitOf("30    days"), [])
    assert.deepStrictEqual(unitOf("30-day"), ["day"])
    assert.deepStrictEqual(unitOf("30 - days"), ["days"])
    assert.deepStrictEqual(unitOf("30 -- days"), [])
    assert.deepStrictEqual(unitOf("30, days"), [])
    assert.deepStrictEqual(unitOf("30 x days"), [])
    assert.deepStrictEqual(unitOf("2026-01-31 days"), [])
    assert.deepStrictEqual(unitOf("30 days days"), ["days"])
    // No number before: a unit word at the very start, or right after a leading word, is no unit.
    assert.deepStrictEqual(unitOf("kg"), [])
    assert.deepStrictEqual(unitOf(" days"), [])
    assert.deepStrictEqual(unitOf("a days"), [])
  })

  it("keys: numbers without separators, dates lower-cased with spaces collapsed", () => {
    assert.deepStrictEqual(tokens("1\u202f000 2\u00a0000 3,000 $ 4"), [
      { kind: "numbers", text: "1\u202f000", key: "1000" },
      { kind: "numbers", text: "2\u00a0000", key: "2000" },
      { kind: "numbers", text: "3,000", key: "3000" },
      { kind: "numbers", text: "$ 4", key: "$4" }
    ])
    assert.deepStrictEqual(tokens("30 %"), [{ kind: "numbers", text: "30 %", key: "30%" }])
    assert.deepStrictEqual(tokens("January   31"), [{ kind: "dates", text: "January   31", key: "january 31" }])
    assert.deepStrictEqual(tokens("31 Jan. 2026"), [{ kind: "dates", text: "31 Jan. 2026", key: "31 jan. 2026" }])
  })

  it("the difference counts repeats on both sides and keeps the written form and order", () => {
    assert.deepStrictEqual(materialChanges("5 5 5 7", "5 7 7"), [
      { kind: "numbers", oldTokens: ["5", "5"], newTokens: ["7"] }
    ])
    assert.deepStrictEqual(materialChanges("1,000 and 9", "9 and 1000 and 1000"), [
      { kind: "numbers", oldTokens: [], newTokens: ["1000"] }
    ])
    // All four kinds, each compared only with its own kind, in the fixed order.
    assert.deepStrictEqual(materialChanges("never 2026-01-31 3 kg", "2026-02-01 4 mg"), [
      { kind: "numbers", oldTokens: ["3"], newTokens: ["4"] },
      { kind: "negation", oldTokens: ["never"], newTokens: [] },
      { kind: "dates", oldTokens: ["2026-01-31"], newTokens: ["2026-02-01"] },
      { kind: "units", oldTokens: ["kg"], newTokens: ["mg"] }
    ])
    // A token of one kind does not cancel an equal key of another.
    assert.deepStrictEqual(materialChanges("no", "no"), [])
  })
})
