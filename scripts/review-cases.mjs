/**
 * Writes fixtures/review/cases.json: the labelled evaluation set of the number
 * adapter (docs/review.md). Deterministic (a fixed seed): running it again
 * writes the same file.
 *
 * Each case is a capture text (the fixtures' own sentences, or a report
 * paragraph built from realistic sentences around one target sentence), an
 * excerpt of it, a label of the evaluation catalogue, and the class a careful
 * reviewer gives it: correct, wrong-metric, wrong-unit, wrong-period,
 * wrong-value-kind or missing (the source states no value).
 *
 *   node scripts/review-cases.mjs
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"

const root = path.join(path.dirname(fileURLToPath(import.meta.url)), "..")

let seed = 20261201
const random = () => {
  seed = (seed * 1103515245 + 12345) % 2147483648
  return seed / 2147483648
}
const pick = (list) => list[Math.floor(random() * list.length)]

/** Metric families: terms, value kind, unit or currency, and sentence templates (period phrase, value phrase). */
const families = [
  {
    id: "net_sales", terms: ["net sales"], aliases: ["sales"], kind: "integer", units: ["units"],
    say: [(p, v) => `Net sales for ${p} were ${v}`, (p, v) => `In ${p}, net sales reached ${v}`, (p, v) => `Net sales in ${p} came to ${v}`],
    value: () => `${group(pick([1840, 4210, 12650, 980, 23400]))} units`,
    percentSay: (p) => `Net sales grew ${pick(["12", "4.5", "9"])}% in ${p}`
  },
  {
    id: "inventory", terms: ["inventory", "inventory on hand", "stock on hand"], kind: "integer", units: ["units"],
    say: [(p, v) => `Inventory on hand at the end of ${p} was ${v}`, (p, v) => `Stock on hand for ${p} stood at ${v}`],
    value: () => `${group(pick([1180, 640, 3020, 15400]))} units`,
    percentSay: (p) => `Inventory fell ${pick(["6", "3.2"])}% in ${p}`
  },
  {
    id: "shipments", terms: ["shipments", "parcels shipped"], kind: "integer", units: ["parcels"],
    say: [(p, v) => `Shipments in ${p} totalled ${v}`, (p, v) => `Parcels shipped during ${p}: ${v}`],
    value: () => `${group(pick([12400, 8800, 40150]))} parcels`,
    otherUnit: () => `${group(pick([310, 95]))} pallets`,
    percentSay: (p) => `Shipments rose ${pick(["7", "11.5"])}% in ${p}`
  },
  {
    id: "warehouse_capacity", terms: ["warehouse capacity"], kind: "integer", units: ["pallets"],
    say: [(p, v) => `Warehouse capacity in ${p} was ${v}`],
    value: () => `${group(pick([2400, 5100]))} pallets`,
    otherUnit: () => `${group(pick([2400, 5100]))} parcels`,
    percentSay: (p) => `Warehouse capacity was ${pick(["81", "93"])}% used in ${p}`
  },
  {
    id: "headcount", terms: ["headcount"], kind: "integer", units: ["employees"],
    say: [(p, v) => `Headcount at the end of ${p} stood at ${v}`, (p, v) => `In ${p}, headcount was ${v}`],
    value: () => `${group(pick([412, 1204, 87]))} employees`,
    percentSay: (p) => `Headcount grew ${pick(["3", "5.5"])}% in ${p}`
  },
  {
    id: "energy_use", terms: ["energy use", "electricity consumption"], kind: "decimal", units: ["MWh"],
    say: [(p, v) => `Energy use in ${p} was ${v}`, (p, v) => `Electricity consumption for ${p} reached ${v}`],
    value: () => `${pick(["412.5", "1,204.8", "98.25"])} MWh`,
    otherUnit: () => `${pick(["1.2", "0.4"])} GWh`,
    percentSay: (p) => `Energy use fell ${pick(["8", "2.5"])}% in ${p}`
  },
  {
    id: "gas_use", terms: ["gas use"], kind: "decimal", units: ["GWh"],
    say: [(p, v) => `Gas use in ${p} was ${v}`],
    value: () => `${pick(["1.2", "0.85"])} GWh`,
    otherUnit: () => `${pick(["412.5", "98.25"])} MWh`,
    percentSay: (p) => `Gas use fell ${pick(["4", "1.5"])}% in ${p}`
  },
  {
    id: "online_share", terms: ["online orders", "online share"], kind: "percent",
    say: [(p, v) => `Online orders made up ${v} of ${p} unit sales`, (p, v) => `The online share in ${p} was ${v}`],
    value: () => `${pick(["61", "47.5", "58"])}%`,
    countSay: (p) => `Online orders numbered ${group(pick([2560, 7420]))} in ${p}`
  },
  {
    id: "return_rate", terms: ["returns", "return rate"], kind: "percent",
    say: [(p, v) => `Returns were ${v} of units sold in ${p}`, (p, v) => `The return rate for ${p} was ${v}`],
    value: () => `${pick(["3.4", "2.9", "5"])}%`,
    countSay: (p) => `Returns in ${p} came to ${group(pick([143, 388]))} units`
  },
  {
    id: "operating_margin", terms: ["operating margin"], kind: "percent",
    say: [(p, v) => `Operating margin in ${p} was ${v}`, (p, v) => `The operating margin for ${p} reached ${v}`],
    value: () => `${pick(["14.2", "9.8", "11"])} per cent`,
    countSay: (p) => `Operating margin in ${p} was ${pick(["€2.1 million", "EUR 840,000"])}`
  },
  {
    id: "revenue", terms: ["revenue", "turnover"], kind: "currency-amount", currency: "EUR",
    say: [(p, v) => `Revenue for ${p} was ${v}`, (p, v) => `Turnover in ${p} reached ${v}`, (p, v) => `In ${p}, revenue came to ${v}`],
    value: () => pick(["EUR 182,400", "€4.2 million", "€1.35bn", "12.6 million euros"]),
    otherUnit: () => pick(["$4.2 million", "USD 182,400", "£3.1m", "4.2 million dollars"]),
    percentSay: (p) => `Revenue rose ${pick(["8", "2.5"])}% in ${p}`
  },
  {
    id: "capex", terms: ["capital expenditure", "capex"], kind: "currency-amount", currency: "USD",
    say: [(p, v) => `Capital expenditure in ${p} was ${v}`, (p, v) => `Capex for ${p} totalled ${v}`],
    value: () => pick(["$3.8 million", "USD 910,000", "US$1.2bn"]),
    otherUnit: () => pick(["€3.8 million", "EUR 910,000", "£1.2bn"]),
    percentSay: (p) => `Capital expenditure fell ${pick(["15", "6.5"])}% in ${p}`
  },
  {
    id: "order_value", terms: ["average order value"], kind: "currency-amount", currency: "GBP",
    say: [(p, v) => `Average order value in ${p} was ${v}`],
    value: () => pick(["£42.10", "GBP 38.50", "£51"]),
    otherUnit: () => pick(["€42.10", "$38.50"]),
    percentSay: (p) => `Average order value rose ${pick(["4", "1.5"])}% in ${p}`
  }
]

const group = (n) => n.toLocaleString("en-US")

/** Quarters as labels know them, and the ways a report writes them. */
const quarters = [
  { key: "q1_2026", period: "Q1 2026", forms: ["Q1 2026", "the first quarter of 2026", "1Q26"] },
  { key: "q2_2026", period: "Q2 2026", forms: ["Q2 2026", "the second quarter of 2026", "Q2'26"] },
  { key: "q3_2026", period: "Q3 2026", forms: ["Q3 2026", "the third quarter of 2026", "3Q26", "Q3 FY2026"] },
  { key: "q4_2025", period: "Q4 2025", forms: ["Q4 2025", "the fourth quarter of 2025"] }
]
const quarterDates = { q1_2026: "31 March 2026", q2_2026: "30 June 2026", q3_2026: "30 September 2026", q4_2025: "December 31, 2025" }

const label = (family, quarter) => `${family.id}_${quarter.key}`
const catalogue = families.flatMap((family) =>
  quarters.map((quarter) => ({
    label: label(family, quarter),
    metric: { terms: family.terms, ...(family.aliases === undefined ? {} : { aliases: family.aliases }) },
    valueKind: family.kind,
    ...(family.units === undefined ? {} : { units: family.units }),
    ...(family.currency === undefined ? {} : { currency: family.currency }),
    period: quarter.period
  }))
)

const capitalise = (s) => s.charAt(0).toUpperCase() + s.slice(1)

/** A report paragraph: a title, distractor sentences of other families, the target sentence somewhere among them. */
const document = (target, family, quarter) => {
  const others = families.filter((f) => f !== family)
  const distractors = [0, 1].map(() => {
    const f = pick(others)
    return `${capitalise(pick(f.say)(quarter.period, f.value()))}.`
  })
  const at = Math.floor(random() * 3)
  const sentences = [...distractors.slice(0, at), `${capitalise(target)}.`, ...distractors.slice(at)]
  const joiner = pick(["\n", " "])
  return `Northwind Outfitters - ${quarter.period} report (synthetic)\n\n${sentences.join(joiner)}\n`
}

/** The excerpt a drafter quotes: the whole sentence, or from the value on (the sentence gives the rest). */
const excerptOf = (sentence, value) => {
  const at = sentence.indexOf(value)
  return random() < 0.6 || at < 0 ? capitalise(sentence) : sentence.slice(at)
}

const cases = []
const add = (cls, family, labelOf, text, excerpt, note) =>
  cases.push({ id: `${cls}-${cases.length + 1}`, class: cls, label: labelOf, text, excerpt, note })

for (const family of families) {
  for (const quarter of quarters) {
    const form = pick(quarter.forms)
    const value = family.value()
    const sentence = pick(family.say)(form, value)
    const text = document(sentence, family, quarter)
    const excerpt = excerptOf(sentence, value)
    // correct: the label of this metric and quarter.
    add("correct", family, label(family, quarter), text, excerpt, "the label's own metric, period, kind and unit")
    // wrong period: the same metric, another quarter.
    const other = pick(quarters.filter((q) => q !== quarter))
    add("wrong-period", family, label(family, other), text, excerpt, `cited for ${other.period}`)
    // wrong metric: another family of the same value kind, same quarter.
    const sameKind = families.filter((f) => f !== family && f.kind === family.kind)
    const otherFamily = pick(sameKind)
    add("wrong-metric", family, label(otherFamily, quarter), text, excerpt, `cited as ${otherFamily.id}`)
    // wrong unit or currency: the metric written in another unit.
    if (family.otherUnit !== undefined) {
      const written = family.otherUnit()
      const s = pick(family.say)(form, written)
      add("wrong-unit", family, label(family, quarter), document(s, family, quarter), excerptOf(s, written), `written in ${written}`)
    }
    // wrong value kind: a percent where a count or amount is meant, or a count or amount where a percent is.
    const kindSentence = family.kind === "percent" ? family.countSay(form) : family.percentSay(form)
    add("wrong-value-kind", family, label(family, quarter), document(kindSentence, family, quarter), capitalise(kindSentence), "another kind of value")
    // missing: the source states no value, in one of the conventions.
    const marker = pick(["n/a", "not reported", "—", "N/A", "not available"])
    const metricName = capitalise(family.terms[0])
    const missing = pick([`${metricName} for ${form}: ${marker}`, `${metricName} (${form}): ${marker}`, `${metricName} in ${form} was ${marker}`])
    add("missing", family, label(family, quarter), document(missing, family, quarter), missing, `the source writes ${marker}`)
  }
  // Dated sentences: a balance at a date inside (correct) or outside (wrong period) the labelled quarter.
  for (const quarter of quarters.slice(0, 3)) {
    const value = family.value()
    const date = quarterDates[quarter.key]
    const sentence = `${capitalise(family.terms[0])} at ${date} was ${value}`
    const text = document(sentence, family, quarter)
    add("correct", family, label(family, quarter), text, sentence, `a date inside ${quarter.period}`)
    const other = quarters[(quarters.indexOf(quarter) + 1) % quarters.length]
    add("wrong-period", family, label(family, other), text, sentence, `a date outside ${other.period}`)
  }
  // A comparison in the sentence: the value's own period first, the comparison base after it.
  {
    const value = family.value()
    const sentence = `${capitalise(family.terms[0])} for Q3 2026 was ${value}, up from the level in Q2 2026`
    const text = document(sentence, family, quarters[2])
    add("correct", family, label(family, quarters[2]), text, sentence, "a comparison base after the value")
    add("wrong-period", family, label(family, quarters[1]), text, sentence, "the comparison base is not the value's period")
  }
}

// The fixtures' own sentences, as the demo cites them.
const fixture = (name, dir = "sources") => fs.readFileSync(path.join(root, "fixtures", dir, name), "utf8")
const sales = fixture("q3-sales.txt")
const inventory = fixture("q3-inventory.txt")
const revenue = fixture("q3-revenue.txt", "review")
const fixtureCases = [
  ["correct", "net_sales_q3_2026", sales, "Net sales for Q3 2026 were 4,210 units"],
  ["correct", "online_share_q3_2026", sales, "Online orders made up 61% of Q3 2026 unit sales"],
  ["correct", "inventory_q3_2026", inventory, "Inventory on hand at 30 September 2026 was 1,180 units"],
  ["correct", "revenue_q3_2026", revenue, "Revenue for Q3 2026 was EUR 182,400"],
  ["correct", "revenue_q2_2026", revenue, "Revenue for Q2 2026 was EUR 167,300"],
  ["wrong-metric", "net_sales_q3_2026", inventory, "Inventory on hand at 30 September 2026 was 1,180 units"],
  ["wrong-metric", "inventory_q3_2026", sales, "Net sales for Q3 2026 were 4,210 units"],
  ["wrong-period", "net_sales_q2_2026", sales, "Net sales for Q3 2026 were 4,210 units"],
  ["wrong-period", "revenue_q3_2026", revenue, "Revenue for Q2 2026 was EUR 167,300"],
  ["wrong-value-kind", "net_sales_q3_2026", sales, "up 12% on Q2 2026"]
]
for (const [cls, labelOf, text, excerpt] of fixtureCases) add(cls, undefined, labelOf, text, excerpt, "fixture")

// Harder sentences as reports write them: the period only in the title, pronouns, tables, scale words,
// negative figures, fiscal years, a quarter without its year. Labelled as a careful reviewer would.
const title = (period) => `Northwind Outfitters - ${period} report (synthetic)\n\n`
const hard = [
  ["correct", "net_sales_q3_2026", title("Q3 2026") + "Net sales were 4,210 units in the quarter.\n", "Net sales were 4,210 units in the quarter"],
  ["correct", "net_sales_q3_2026", title("Q3 2026") + "Sales of 4.2 million units were recorded in Q3 2026.\n", "Sales of 4.2 million units were recorded in Q3 2026"],
  ["correct", "net_sales_q3_2026", title("Q3 2026") + "Net sales (units): Q3 2026 4,210; Q2 2026 3,760.\n", "Q3 2026 4,210"],
  ["correct", "net_sales_q2_2026", title("Q3 2026") + "Net sales (units): Q3 2026 4,210; Q2 2026 3,760.\n", "Q2 2026 3,760"],
  ["correct", "capex_q3_2026", title("Q3 2026") + "Capex for Q3 2026 was $3.8 million, in line with plan.\n", "Capex for Q3 2026 was $3.8 million"],
  ["correct", "revenue_q3_2026", title("Q3 2026") + "Turnover in Q3 2026 was EUR 1.35bn (Q2 2026: EUR 1.21bn).\n", "Turnover in Q3 2026 was EUR 1.35bn"],
  ["correct", "operating_margin_q3_2026", title("Q3 2026") + "Operating margin for the third quarter of 2026 was -2.5%, after a one-off charge.\n", "Operating margin for the third quarter of 2026 was -2.5%"],
  ["correct", "headcount_q3_2026", title("Q3 2026") + "At 30 September 2026 headcount stood at 1,204 employees.\n", "headcount stood at 1,204 employees"],
  ["correct", "energy_use_q3_2026", title("Q3 2026") + "Electricity consumption in Q3 2026: 412.5 MWh.\n", "Electricity consumption in Q3 2026: 412.5 MWh"],
  ["correct", "return_rate_q3_2026", title("Q3 2026") + "The return rate was 3.4 per cent in Q3 2026.\n", "The return rate was 3.4 per cent in Q3 2026"],
  ["correct", "inventory_q3_2026", title("Q3 2026") + "It reported 1,180 units on hand at 30 September 2026.\n", "It reported 1,180 units on hand at 30 September 2026"],
  ["correct", "shipments_q3_2026", title("Q3 2026") + "In Q3 we shipped 12,400 parcels.\n", "In Q3 we shipped 12,400 parcels"],
  ["correct", "order_value_q3_2026", title("Q3 2026") + "Average order value rose to £42.10 in 3Q26 from £40.80 a year earlier.\n", "Average order value rose to £42.10 in 3Q26"],
  ["wrong-period", "net_sales_q3_2026", title("Q3 2026") + "Net sales (units): Q3 2026 4,210; Q2 2026 3,760.\n", "Q2 2026 3,760"],
  ["wrong-period", "revenue_q3_2026", title("Q3 2026") + "Turnover in Q3 2026 was EUR 1.35bn (Q2 2026: EUR 1.21bn).\n", "EUR 1.21bn"],
  ["wrong-period", "capex_q3_2026", title("FY2026") + "Capex for FY2026 was $14.1 million.\n", "Capex for FY2026 was $14.1 million"],
  ["wrong-period", "shipments_q3_2026", title("Q3 2026") + "In Q2 we shipped 11,900 parcels.\n", "In Q2 we shipped 11,900 parcels"],
  ["wrong-period", "headcount_q3_2026", title("Q3 2026") + "Headcount at June 30, 2026 was 1,150 employees.\n", "Headcount at June 30, 2026 was 1,150 employees"],
  ["wrong-metric", "net_sales_q3_2026", title("Q3 2026") + "Online orders were 2,560 units in Q3 2026.\n", "Online orders were 2,560 units in Q3 2026"],
  ["wrong-metric", "revenue_q3_2026", title("Q3 2026") + "Capex for Q3 2026 was €3.8 million.\n", "Capex for Q3 2026 was €3.8 million"],
  ["wrong-metric", "net_sales_q3_2026", title("Q3 2026") + "It rose to 4,210 units in Q3 2026.\n", "It rose to 4,210 units in Q3 2026"],
  ["wrong-metric", "operating_margin_q3_2026", title("Q3 2026") + "Gross margin was 41.5% in Q3 2026.\n", "Gross margin was 41.5% in Q3 2026"],
  ["wrong-unit", "revenue_q3_2026", title("Q3 2026") + "Revenue for Q3 2026 was US$182,400.\n", "Revenue for Q3 2026 was US$182,400"],
  ["wrong-unit", "capex_q3_2026", title("Q3 2026") + "Capex for Q3 2026 was C$3.8 million.\n", "Capex for Q3 2026 was C$3.8 million"],
  ["wrong-unit", "energy_use_q3_2026", title("Q3 2026") + "Energy use in Q3 2026 was 1.2 GWh.\n", "Energy use in Q3 2026 was 1.2 GWh"],
  ["wrong-unit", "net_sales_q3_2026", title("Q3 2026") + "Net sales for Q3 2026 were 4,210 pallets.\n", "Net sales for Q3 2026 were 4,210 pallets"],
  ["wrong-value-kind", "revenue_q3_2026", title("Q3 2026") + "Revenue for Q3 2026 was up 8 percent.\n", "Revenue for Q3 2026 was up 8 percent"],
  ["wrong-value-kind", "online_share_q3_2026", title("Q3 2026") + "Online orders in Q3 2026: 2,560.\n", "Online orders in Q3 2026: 2,560"],
  ["wrong-value-kind", "headcount_q3_2026", title("Q3 2026") + "Headcount in Q3 2026 grew by 3.5%.\n", "Headcount in Q3 2026 grew by 3.5%"],
  ["missing", "capex_q3_2026", title("Q3 2026") + "| Capex | Q3 2026 | — |\n", "| Capex | Q3 2026 | — |"],
  ["missing", "return_rate_q3_2026", title("Q3 2026") + "Return rate, Q3 2026: n/a (new system).\n", "Return rate, Q3 2026: n/a"],
  ["missing", "headcount_q3_2026", title("Q3 2026") + "Headcount for Q3 2026 was not reported.\n", "Headcount for Q3 2026 was not reported"]
]
for (const [cls, labelOf, text, excerpt] of hard) add(cls, undefined, labelOf, text, excerpt, "report sentence")

const out = { format: "citegate.review-cases/1", catalogue, cases }
fs.writeFileSync(path.join(root, "fixtures", "review", "cases.json"), JSON.stringify(out, null, 1) + "\n")
const counts = {}
for (const c of cases) counts[c.class] = (counts[c.class] ?? 0) + 1
console.log(`${cases.length} cases`, counts)
