/**
 * The bundled CLI extracts too: its PDF worker and parsers resolve from the
 * bundle (`bin/run-pipeline.js` runs dist/bundle/run-pipeline.cjs). The demo
 * serves an HTML page and a PDF made by the project, captures them as v2
 * records and verifies citations with a page and a heading anchor.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { spawn } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { fixturePath, tempDirectory } from "./support.js"

const bin = fixturePath("..", "bin", "run-pipeline.js")

const cli = (args: ReadonlyArray<string>, cwd: string) =>
  Effect.async<{ code: number | null; stdout: string; stderr: string }>((resume) => {
    const child = spawn(process.execPath, [bin, ...args], { cwd, stdio: ["ignore", "pipe", "pipe"] })
    let stdout = ""
    let stderr = ""
    child.stdout.on("data", (d) => (stdout += d))
    child.stderr.on("data", (d) => (stderr += d))
    child.on("close", (code) => resume(Effect.succeed({ code, stdout, stderr })))
  })

describe("run-pipeline demo: HTML and PDF", () => {
  it.scopedLive("captures an HTML page and a PDF as v2 records and verifies page and heading anchors", () =>
    Effect.gen(function*() {
      const work = yield* tempDirectory
      const ran = yield* cli(["demo"], work)
      assert.strictEqual(ran.code, 0, ran.stderr)
      const [stamp] = fs.readdirSync(path.join(work, "demo-output"))
      const root = path.join(work, "demo-output", stamp!)
      const grounded = JSON.parse(fs.readFileSync(path.join(root, "renderings", "grounded.json"), "utf8"))
      const byLabel = new Map(grounded.report.facts.map((f: any) => [f.fact.label, f]))
      const pdfFact: any = byLabel.get("q3_report_inventory")
      assert.strictEqual(pdfFact.fact.page, 3)
      assert.strictEqual(pdfFact.evidence.page, 3)
      const htmlFact: any = byLabel.get("q3_page_sales")
      assert.deepStrictEqual(htmlFact.evidence.heading, ["Northwind Outfitters Q3 2026", "Sales"])
      // Both bodies are stored beside their records, named by their digests.
      const bodies = fs.readdirSync(path.join(root, "captures")).filter((n) => n.endsWith(".body"))
      assert.strictEqual(bodies.length, 2)
      const html = fs.readFileSync(path.join(root, "renderings", "grounded.html"), "utf8")
      assert.include(html, `class="page-marker"`)
      assert.include(html, "page 3")
      const doctor = yield* cli(["doctor", "--run-dir", path.join(root, "captures")], work)
      assert.strictEqual(doctor.code, 0, doctor.stdout)
      assert.match(doctor.stdout, /5 records verify, 0 leftovers, 0 corrupt records, 2 stored bodies \(0 corrupt\)\n$/)
    }))
})
