/**
 * The README's service examples run as written: the service is started on 127.0.0.1, and the
 * README's client code blocks (capture, follow, hand-off; verify report and answer; the streamed
 * answer) run literally in bash with curl and jq, with only `TOKEN` and `PORT` set as the README
 * tells a user to. Between the blocks, where the README says "give prompt.md to the model", a
 * scripted drafter writes answer.evi1 and report.json from the saved hand-off.
 */
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import * as HttpServer from "@effect/platform/HttpServer"
import { Effect, Exit, Layer, Logger, LogLevel, Scope } from "effect"
import { execFileSync, spawn } from "node:child_process"
import { randomBytes } from "node:crypto"
import * as fsp from "node:fs/promises"
import * as http from "node:http"
import * as os from "node:os"
import * as path from "node:path"
import * as Config from "../src/Config.js"
import { tokenDigest } from "../src/server/Auth.js"
import * as Server from "../src/server/Server.js"
import { fixturePath } from "./support.js"

const readme = await fsp.readFile(fixturePath("..", "README.md"), "utf8")

/** The README's `sh` code blocks, in order. */
const shellBlocks = (markdown: string): Array<string> =>
  [...markdown.matchAll(/^```sh\n([\s\S]*?)^```$/gm)].map((m) => m[1]!)

const has = (command: string) => {
  try {
    execFileSync("sh", ["-c", `command -v ${command}`], { stdio: "ignore" })
    return true
  } catch {
    return false
  }
}
const tools = has("curl") && has("jq") && has("bash")
// Outside CI a machine without curl or jq skips with this reason; in CI the test runs (and fails without them).
const skipReason = tools || process.env["CI"] ? undefined : "curl, jq or bash is not installed"

const text = "Net sales reached 4,210 units in the third quarter.\nReturns fell to two percent of orders.\n"
const TOKEN = randomBytes(32).toString("hex")

let work = ""
let port = 0
let close: () => Promise<void> = async () => undefined
let sources: http.Server | undefined

beforeAll(async () => {
  if (skipReason !== undefined) return
  work = await fsp.mkdtemp(path.join(os.tmpdir(), "citegate-readme-"))
  sources = http.createServer((_req, res) => {
    res.writeHead(200, { "content-type": "text/plain; charset=utf-8" })
    res.end(text)
  })
  await new Promise<void>((resolve) => sources!.listen(0, "127.0.0.1", resolve))
  const source = `http://127.0.0.1:${(sources.address() as { port: number }).port}/q3-sales.txt`
  const configJson = {
    sources: [source],
    labels: ["q3_net_sales"],
    server: { tokens: [{ sha256: tokenDigest(TOKEN), runs: "*", capture: true }] }
  }
  const configFile = path.join(work, "pipeline.json")
  await fsp.writeFile(configFile, JSON.stringify(configJson))
  const config = await Effect.runPromise(Effect.orDie(Config.decode(configJson)))
  const scope = await Effect.runPromise(Scope.make())
  const context = await Effect.runPromise(Effect.orDie(Layer.buildWithScope(
    Server.layer({ config, configFile, runRoot: path.join(work, "runs"), allowLoopbackHttp: true, host: "127.0.0.1", port: 0 }).pipe(
      Layer.provide(Logger.minimumLogLevel(LogLevel.Warning))
    ),
    scope
  )))
  const address = (await Effect.runPromise(Effect.provide(HttpServer.HttpServer, context))).address
  port = address._tag === "TcpAddress" ? address.port : 0
  close = () => Effect.runPromise(Scope.close(scope, Exit.void))
}, 60_000)

afterAll(async () => {
  await close()
  if (sources !== undefined) await new Promise((resolve) => sources!.close(resolve))
  if (work !== "") await fsp.rm(work, { recursive: true, force: true })
})

const bash = (script: string, env: Record<string, string>) =>
  new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
    const child = spawn("bash", ["-c", script], { cwd: work, env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"] })
    let stdout = ""
    let stderr = ""
    child.stdout.on("data", (d) => (stdout += d))
    child.stderr.on("data", (d) => (stderr += d))
    child.on("close", (code) => resolve({ code, stdout, stderr }))
  })

describe("README: the service's curl examples", () => {
  it.skipIf(skipReason !== undefined)("run as written against a running service: a run, its hand-off, a verified report and answer, a streamed answer", async () => {
    const service = readme.slice(readme.indexOf("## HTTP service: `run-pipeline serve`"))
    const [serve, client, verify] = shellBlocks(service)
    // The first block is how a user starts the service (this test started it the same way, in process).
    assert.include(serve, "run-pipeline serve --config pipeline.json --listen 127.0.0.1:$PORT --run-root runs")
    const stream = shellBlocks(readme).find((b) => b.includes("/v1/stream/answer"))!
    assert.isDefined(client)
    assert.isDefined(verify)
    const drafter = `"${process.execPath}" "${fixturePath("..", "node_modules", "tsx", "dist", "cli.mjs")}" "${fixturePath("..", "test", "readmeDrafter.ts")}" q3_net_sales`
    const script = ["set -euo pipefail", client!, drafter, verify!, stream].join("\n")
    const ran = await bash(script, { TOKEN, PORT: String(port) })
    assert.strictEqual(ran.code, 0, ran.stderr)
    const lines = ran.stdout.split("\n")
    // The run's events ended with done; the report and the answer verified, grounded.
    assert.isTrue(lines.some((l) => l === "event: done"), ran.stdout)
    // The verify endpoints answer compact JSON, indented by the README's `jq .`: each value from a line "{" to a line "}".
    const values: Array<any> = []
    lines.forEach((line, i) => {
      if (line === "{") values.push(JSON.parse(lines.slice(i, lines.indexOf("}", i) + 1).join("\n")))
    })
    const report = values.find((v) => v.format === "citegate.result/1") ?? assert.fail(ran.stdout)
    assert.deepStrictEqual([report.status, report.report.outcome], ["verified", "grounded"])
    const answer = values.find((v) => v.format === "citegate.answer-result/1") ?? assert.fail(ran.stdout)
    assert.deepStrictEqual([answer.status, answer.answer.outcome, answer.answer.summary.claimsGrounded], ["verified", "grounded", 2])
    const done = JSON.parse(lines.filter((l) => l.includes('"type":"done"')).at(-1)!)
    assert.deepStrictEqual([done.state, done.summary.citationsVerified], ["grounded", 2])
  }, 60_000)
})
