/**
 * `run-pipeline demo`: the whole pipeline, offline. A synthetic source server
 * on 127.0.0.1 serves the fixture texts; the capture stage (in loopback test
 * mode) captures them into a new run; six sample drafts are verified (semantic review on,
 * in `report`: shown beside provenance, failing nothing) and
 * rendered in every format.
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as fsp from "node:fs/promises"
import * as http from "node:http"
import type { AddressInfo } from "node:net"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import * as Capture from "../capture/Capture.js"
import * as CaptureStore from "../store/CaptureStore.js"
import * as Config from "../Config.js"
import type { CaptureRef } from "../Domain.js"
import * as Gate from "../verify/Gate.js"
import * as Render from "../render/Render.js"
import * as Review from "../render/Review.js"
import { fromOutcome, plural } from "../render/Rendering.js"
import { WriteFailed } from "./CliError.js"
import * as Io from "./Io.js"
import * as Report from "./Report.js"

const fixtures = fileURLToPath(new URL("../../fixtures/sources/", import.meta.url))
/** The semantic-review fixture (a revenue note in EUR) is kept apart from the provenance fixtures. */
const reviewFixtures = fileURLToPath(new URL("../../fixtures/review/", import.meta.url))

/** Content types of the fixtures the demo serves: texts, an HTML page and a PDF (all made by the project). */
const servedTypes: Record<string, string> = {
  txt: "text/plain; charset=utf-8",
  html: "text/html; charset=utf-8",
  pdf: "application/pdf"
}

/** Serves the fixtures by extension; `/q4-outlook.txt` is approved but answers 404. */
const sourceServer = Effect.acquireRelease(
  Effect.async<http.Server>((resume) => {
    const server = http.createServer((request, response) => {
      const name = (request.url ?? "").replace(/^\//, "")
      const extension = /^[a-z0-9-]+\.(txt|html|pdf)$/.exec(name)?.[1]
      if (extension === undefined) {
        response.writeHead(404, { "content-type": "text/plain" }).end("not found")
        return
      }
      fsp.readFile(path.join(name === "q3-revenue.txt" ? reviewFixtures : fixtures, name)).then(
        (body) => response.writeHead(200, { "content-type": servedTypes[extension]! }).end(body),
        () => response.writeHead(404, { "content-type": "text/plain" }).end("not published")
      )
    })
    server.listen(0, "127.0.0.1", () => resume(Effect.succeed(server)))
  }),
  (server) => Effect.async<void>((resume) => {
    server.closeAllConnections()
    server.close(() => resume(Effect.void))
  })
)

const labels = [
  "q3_net_sales",
  "q3_online_share",
  "q3_inventory",
  "q3_returns",
  "q4_forecast",
  "q3_report_inventory",
  "q3_page_sales",
  "q2_net_sales",
  "q3_revenue"
]

const units = (label: string, terms: ReadonlyArray<string>, period: string) => ({
  label,
  metric: { terms },
  valueKind: "integer",
  units: ["units"],
  period
})

/** What each demo label means, for semantic review (`review.numbers: "report"`: shown, never failing a fact). */
const catalogue = [
  { ...units("q3_net_sales", ["net sales"], "Q3 2026"), metric: { terms: ["net sales"], aliases: ["sales"] } },
  { label: "q3_online_share", metric: { terms: ["online orders", "online share"] }, valueKind: "percent", period: "Q3 2026" },
  units("q3_inventory", ["inventory", "inventory on hand"], "Q3 2026"),
  { label: "q3_returns", metric: { terms: ["returns"] }, valueKind: "percent", period: "Q3 2026" },
  units("q4_forecast", ["net sales forecast"], "Q4 2026"),
  units("q3_report_inventory", ["inventory", "inventory on hand"], "Q3 2026"),
  units("q3_page_sales", ["net sales"], "Q3 2026"),
  units("q2_net_sales", ["net sales"], "Q2 2026"),
  // The group reports revenue in US dollars; the revenue note states euros.
  { label: "q3_revenue", metric: { terms: ["revenue"] }, valueKind: "currency-amount", currency: "USD", period: "Q3 2026" }
]

interface Sample {
  readonly name: string
  readonly mode: "reject" | "drop"
  readonly purpose: string
  readonly report: unknown
}

const samples = (
  refs: {
    readonly sales: CaptureRef
    readonly inventory: CaptureRef
    readonly page: CaptureRef
    readonly pdf: CaptureRef
    readonly revenue: CaptureRef
  },
  q4Outlook: string
): ReadonlyArray<Sample> => {
  const { inventory, page, pdf, revenue, sales } = refs
  const cite = (label: string, ref: CaptureRef, snippet: string) => ({
    state: "cited",
    label,
    source: ref.source,
    captureSha256: ref.sha256,
    snippet
  })
  return [
    {
      name: "grounded",
      mode: "reject",
      purpose: "every excerpt occurs verbatim in the capture it names",
      report: {
        facts: [
          cite("q3_net_sales", sales, "Net sales for Q3 2026 were 4,210 units"),
          cite("q3_online_share", sales, "Online orders made up 61% of Q3 2026 unit sales"),
          cite("q3_inventory", inventory, "Inventory on hand at 30 September 2026 was 1,180 units"),
          // Anchored citations: a PDF page (the sentence is on page 3 only) and an HTML heading section.
          { ...cite("q3_report_inventory", pdf, "Inventory on hand at 30 September 2026 was 1,180 units."), page: 3 },
          {
            ...cite("q3_page_sales", page, "Net sales for Q3 2026 were 4,210 units"),
            heading: ["Northwind Outfitters Q3 2026", "Sales"]
          },
          { state: "unavailable", label: "q4_forecast", reason: "No Q4 2026 figure appears in the approved sources." }
        ]
      }
    },
    {
      name: "no-evidence",
      mode: "drop",
      purpose: "drop mode retracts every failing citation; none survives",
      report: {
        facts: [
          cite("q3_net_sales", sales, "Net sales grew strongly in Q3 2026"),
          { ...cite("q3_returns", sales, "Returns were 3.4% of units sold in the quarter."), captureSha256: inventory.sha256 },
          { state: "unavailable", label: "q4_forecast", reason: "Not published yet." }
        ]
      }
    },
    {
      name: "rejected",
      mode: "reject",
      purpose: "several different typed failures, all reported at once",
      report: {
        facts: [
          cite("q3_net_sales", sales, "Net sales for Q3 2026 were 4,210 units"),
          cite("q3_profit", sales, "up 12% on Q2 2026"),
          cite("q3_returns", sales, "Returns were 3.4 % of units sold"),
          { ...cite("q3_online_share", sales, "61%"), source: "https://reports.northwind.test/q3-sales.txt" },
          { ...cite("q3_inventory", inventory, "1,180 units"), captureSha256: sales.sha256 },
          { ...cite("q4_forecast", sales, "Q4 2026 net sales are forecast at 5,000 units"), source: q4Outlook, captureSha256: "0".repeat(64) },
          { state: "unavailable", label: "q3_net_sales", reason: "A second answer for the same label." }
        ]
      }
    },
    {
      name: "wrong-label",
      mode: "reject",
      purpose: "an inventory count cited as sales: provenance PASSES; semantic review, shown apart, finds the metric wrong",
      report: { facts: [cite("q3_net_sales", inventory, "Inventory on hand at 30 September 2026 was 1,180 units")] }
    },
    {
      name: "wrong-unit",
      mode: "reject",
      purpose: "a euro figure cited for a US-dollar label: provenance PASSES; semantic review finds the currency wrong",
      report: { facts: [cite("q3_revenue", revenue, "Revenue for Q3 2026 was EUR 182,400")] }
    },
    {
      name: "wrong-period",
      mode: "reject",
      purpose: "a Q3 figure cited for Q2: provenance PASSES; semantic review finds the period wrong",
      report: { facts: [cite("q2_net_sales", sales, "Net sales for Q3 2026 were 4,210 units")] }
    }
  ]
}

const stamp = (millis: number) => new Date(millis).toISOString().replace(/[-:]/g, "").replace(/\.\d+Z$/, "Z")

export const run = (outputRoot: string) =>
  Effect.scoped(Effect.gen(function*() {
    const server = yield* sourceServer
    const port = (server.address() as AddressInfo).port
    const url = (name: string) => `http://127.0.0.1:${port}/${name}`
    const salesUrl = url("q3-sales.txt")
    const inventoryUrl = url("q3-inventory.txt")
    const q4Url = url("q4-outlook.txt")
    const pageUrl = url("q3-report.html")
    const pdfUrl = url("q3-report.pdf")
    const revenueUrl = url("q3-revenue.txt")

    yield* Effect.tryPromise({
      try: () => fsp.mkdir(outputRoot, { recursive: true }),
      catch: (error) => new WriteFailed({ path: outputRoot, detail: String(error) })
    })
    const directory = path.join(outputRoot, stamp(Date.now()))
    yield* Io.createRunDirectory(directory)
    const runDirectory = path.join(directory, "captures")
    yield* Io.createRunDirectory(runDirectory)
    for (const sub of ["drafts", "renderings"]) yield* Io.createRunDirectory(path.join(directory, sub))

    const configValue = {
      sources: [salesUrl, inventoryUrl, q4Url, pageUrl, pdfUrl, revenueUrl],
      labels,
      review: { numbers: "report", catalogue },
      // The PDF is extracted in a bounded child process: a loaded machine needs more than a few seconds.
      capture: { timeoutMs: 30_000, contentTypes: ["text/plain", "text/html", "application/pdf"] }
    }
    const config = yield* Config.decode(configValue)
    yield* Io.writeOutput(path.join(directory, "pipeline.json"), JSON.stringify(configValue, null, 2) + "\n")

    yield* Io.stderr(`demo: synthetic sources on http://127.0.0.1:${port} (loopback test mode)\n`)
    const context = yield* Layer.build(
      Capture.layer({ approved: config.sources, allowLoopbackHttp: true, ...config.capture }).pipe(
        Layer.provide(CaptureStore.layerFileSystem({ directory: runDirectory }))
      )
    )
    const results = yield* Context.get(context, Capture.Capture).captureAll(config.sources, {
      onEvent: (event) => Io.stderr(Report.progress(event))
    })
    const refOf = (source: string) => {
      const found = results.find((r) => r.source === source)
      return found !== undefined && Either.isRight(found.result) ? found.result.right : undefined
    }
    const sales = refOf(salesUrl)
    const inventory = refOf(inventoryUrl)
    const page = refOf(pageUrl)
    const pdf = refOf(pdfUrl)
    const revenue = refOf(revenueUrl)
    if (sales === undefined || inventory === undefined || page === undefined || pdf === undefined || revenue === undefined) {
      return yield* new WriteFailed({ path: runDirectory, detail: "the demo sources could not be captured" })
    }

    const lines: Array<string> = [
      `citegate demo: ${directory}`,
      "",
      "Capture (q4-outlook.txt is approved but the server has not published it):",
      ...Report.captureTable(results).trimEnd().split("\n").map((l) => `  ${l}`),
      "",
      "Verification of the sample drafts:"
    ]
    for (const sample of samples({ sales, inventory, page, pdf, revenue }, q4Url)) {
      const draftPath = path.join(directory, "drafts", `${sample.name}.json`)
      const draft = JSON.stringify(sample.report, null, 2) + "\n"
      yield* Io.writeOutput(draftPath, draft)
      const gateLayer = Gate.layer({ runDirectory, config: { ...configValue, verify: { mode: sample.mode } } })
      const outcome = yield* Effect.flatMap(Gate.Gate, (gate) => Effect.either(gate.checkJsonWithCaptures(draft))).pipe(
        Effect.provide(gateLayer)
      )
      // The demo's config sets no matching policy: exact.
      const rendering = fromOutcome(outcome, "exact")
      for (const format of Render.formats) {
        const file = path.join(directory, "renderings", `${sample.name}.${Render.extension[format]}`)
        yield* Io.writeOutput(file, Render.render(format, rendering))
      }
      const verdict = Either.match(outcome, {
        onLeft: (error) =>
          error._tag === "ReportRejected"
            ? `REJECTED: ${[...new Set(error.failures.map((f) => f.error._tag))].join(", ")}`
            : `REJECTED: ${error._tag}`,
        onRight: ({ report }) =>
          (report.outcome === "grounded"
            ? `GROUNDED (${plural(report.facts.length, "fact")} kept, ${report.retractions.length} retracted)`
            : `NO EVIDENCE (${report.retractions.length} retracted)`) + Review.summary(report)
      })
      lines.push(
        `  ${sample.name.padEnd(12)} ${sample.mode.padEnd(7)} ${verdict}`,
        `  ${"".padEnd(12)} ${"".padEnd(7)} ${sample.purpose}`,
        `  ${"".padEnd(12)} ${"".padEnd(7)} ${path.join(directory, "renderings", `${sample.name}.{txt,md,html,json,jsonld}`)}`
      )
    }
    lines.push(
      "",
      `Open ${path.join(directory, "renderings", "grounded.html")} in a browser: each citation opens the captured text at its excerpt.`,
      "Provenance and semantic review are separate outcomes: GROUNDED is provenance only; the number adapter's review " +
        "(right metric, unit, period, value kind) is shown beside it and, under review.numbers \"report\", fails nothing."
    )
    yield* Io.stdout(lines.join("\n") + "\n")
  }))
