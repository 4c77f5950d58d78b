/**
 * The README's drafting loop runs as written: its `sh` block (capture, the EVI1 hand-off, the digest
 * taken from the prompt's first line, verify-answer bound to it) runs in bash against a loopback
 * source, with `run-pipeline` the package's own bin. Where the block says "the model reads
 * prompt.md", a scripted drafter copies sentences from exactly the texts handed off.
 */
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { execFileSync, spawn } from "node:child_process"
import * as fsp from "node:fs/promises"
import * as http from "node:http"
import * as os from "node:os"
import * as path from "node:path"
import { fixturePath } from "./support.js"

const readme = await fsp.readFile(fixturePath("..", "README.md"), "utf8")
const heading = "### The drafting loop"
const modelStep = "# the model reads prompt.md"

const hasBash = (() => {
  try {
    execFileSync("sh", ["-c", "command -v bash"], { stdio: "ignore" })
    return true
  } catch {
    return false
  }
})()

const text = "Net sales reached 4,210 units in the third quarter.\nReturns fell to two percent of orders.\n"

let work = ""
let sources: http.Server | undefined

beforeAll(async () => {
  work = await fsp.mkdtemp(path.join(os.tmpdir(), "citegate-readme-loop-"))
  sources = http.createServer((_req, res) => {
    res.writeHead(200, { "content-type": "text/plain; charset=utf-8" })
    res.end(text)
  })
  await new Promise<void>((resolve) => sources!.listen(0, "127.0.0.1", resolve))
  const source = `http://127.0.0.1:${(sources.address() as { port: number }).port}/q3-sales.txt`
  await fsp.writeFile(path.join(work, "pipeline.json"), JSON.stringify({ sources: [source], labels: ["q3_net_sales"] }))
})

afterAll(async () => {
  await new Promise<void>((resolve) => (sources === undefined ? resolve() : sources.close(() => resolve())))
  if (work !== "") await fsp.rm(work, { recursive: true, force: true })
})

const bash = (script: string) =>
  new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
    const child = spawn("bash", ["-c", script], { cwd: work, stdio: ["ignore", "pipe", "pipe"] })
    let stdout = ""
    let stderr = ""
    child.stdout.on("data", (d) => (stdout += d))
    child.stderr.on("data", (d) => (stderr += d))
    child.on("close", (code) => resolve({ code, stdout, stderr }))
  })

describe("README: the drafting loop", () => {
  it.skipIf(!hasBash)("runs as written: capture, the EVI1 hand-off, an answer bound to the prompt's manifest digest, verified grounded", async () => {
    const section = readme.slice(readme.indexOf(heading))
    const block = /^```sh\n([\s\S]*?)^```$/m.exec(section)?.[1] ?? assert.fail("no sh block under the drafting loop")
    const split = block.indexOf(modelStep)
    assert.isAbove(split, 0, "the block no longer marks the model's step")
    const [before, after] = [block.slice(0, split), block.slice(split)]
    const node = `"${process.execPath}"`
    const tsx = `"${fixturePath("..", "node_modules", "tsx", "dist", "cli.mjs")}"`
    // The README's command, as a user on the loopback demo runs it: capture may fetch 127.0.0.1.
    const runPipeline = `run-pipeline() {
  if [ "$1" = capture ]; then ${node} "${fixturePath("..", "bin", "run-pipeline.js")}" "$@" --allow-loopback-http
  else ${node} "${fixturePath("..", "bin", "run-pipeline.js")}" "$@"; fi
}`
    // The model: the scripted drafter reads prompt.md (and the documents, for its report) and writes answer.evi1.
    const model = [
      `run-pipeline sources --config pipeline.json --run-dir run --format documents > documents.json`,
      `${node} ${tsx} "${fixturePath("..", "test", "readmeDrafter.ts")}" q3_net_sales`
    ].join("\n")
    const ran = await bash(["set -euo pipefail", runPipeline, before, model, after].join("\n"))
    assert.strictEqual(ran.code, 0, `${ran.stdout}\n${ran.stderr}`)
    const prompt = await fsp.readFile(path.join(work, "prompt.md"), "utf8")
    assert.match(prompt.split("\n")[0]!, /^citegate manifest [0-9a-f]{64}$/)
    assert.match(ran.stdout + ran.stderr, /grounded/i)
    // The answer the drafter wrote cites the captured text verbatim; a changed digit is refused by the same block.
    const answer = await fsp.readFile(path.join(work, "answer.evi1"), "utf8")
    assert.include(answer, "4,210")
    await fsp.writeFile(path.join(work, "answer.evi1"), answer.replaceAll("4,210", "4,211"))
    const tampered = await bash(["set -euo pipefail", runPipeline, `DIGEST=$(head -n 1 prompt.md | cut -d ' ' -f 3)`, after.slice(after.indexOf("run-pipeline verify-answer"))].join("\n"))
    assert.notStrictEqual(tampered.code, 0, tampered.stdout)
  }, 120_000)
})
