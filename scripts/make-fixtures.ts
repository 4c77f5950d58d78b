/**
 * Writes the project's PDF fixtures with the small PDF writer in
 * test/pdfWriter.ts: nothing is downloaded. Run after changing the writer or
 * the pages below, then update the golden files (`npx vitest run
 * test/extractGolden.test.ts` says what differs).
 *
 *   npx tsx scripts/make-fixtures.ts
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { makePdf } from "../test/pdfWriter.js"

const root = path.join(path.dirname(fileURLToPath(import.meta.url)), "..")

/** The three pages of the Q3 report, used by the golden fixture and the demo. */
export const reportPages: ReadonlyArray<ReadonlyArray<string>> = [
  ["Northwind Outfitters - Q3 2026 report (synthetic fixture)", "Page one: summary."],
  ["Sales", "Net sales for Q3 2026 were 4,210 units, up 12% on Q2 2026.", "Online orders made up 61% of Q3 2026 unit sales."],
  ["Inventory", "Inventory on hand at 30 September 2026 was 1,180 units.", "Net sales for Q3 2026 were 4,210 units (repeated in the appendix)."]
]

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === path.resolve(process.argv[1])) {
  const pdf = makePdf(reportPages)
  fs.writeFileSync(path.join(root, "fixtures", "extraction", "report.pdf"), pdf)
  fs.writeFileSync(path.join(root, "fixtures", "sources", "q3-report.pdf"), pdf)
  process.stdout.write(`wrote ${pdf.byteLength} bytes\n`)
}
