/** Shared by the semantic-review tests: a revenue capture in EUR, and a catalogue of the fixtures' labels. */
import { readFileSync } from "node:fs"
import { makeCaptureRecord, type SourceUrl } from "../src/Domain.js"
import { accessedAt, fixturePath, INVENTORY, SALES } from "./support.js"

export const REVENUE = "https://reports.northwind.test/q3-revenue.txt" as SourceUrl
export const revenueText = readFileSync(fixturePath("review", "q3-revenue.txt"), "utf8")
export const revenueRecord = makeCaptureRecord({ source: REVENUE, text: revenueText, accessedAt, contentType: "text/plain" })

const units = (label: string, terms: Array<string>, period: string) =>
  ({ label, metric: { terms }, valueKind: "integer", units: ["units"], period }) as const

export const catalogue = [
  { ...units("q3_net_sales", ["net sales"], "Q3 2026"), metric: { terms: ["net sales"], aliases: ["sales"] } },
  units("q2_net_sales", ["net sales"], "Q2 2026"),
  units("q3_inventory", ["inventory", "inventory on hand"], "Q3 2026"),
  { label: "q3_online_share", metric: { terms: ["online orders"] }, valueKind: "percent", period: "Q3 2026" },
  { label: "q3_revenue", metric: { terms: ["revenue"] }, valueKind: "currency-amount", currency: "USD", period: "Q3 2026" }
]

export const labels = ["q3_net_sales", "q2_net_sales", "q3_inventory", "q3_online_share", "q3_revenue"]

export const reviewConfig = (numbers: "off" | "report" | "require", mode: "reject" | "drop" = "reject") => ({
  sources: [SALES, INVENTORY, REVENUE],
  labels,
  verify: { mode },
  review: { numbers, catalogue }
})
