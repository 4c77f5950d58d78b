/**
 * The command line, spawned as a separate process: loopback test mode is off
 * unless `--allow-loopback-http` is passed; `run` fails when a capture failed
 * even if the report verifies; `--out` never rewrites an existing file in
 * place (through the library function and through the command).
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Either } from "effect"
import * as fsp from "node:fs/promises"
import * as path from "node:path"
import { sha256Of } from "../src/Domain.js"
import * as Io from "../src/cli/Io.js"
import { plainText, testServer } from "./httpServer.js"
import { expectedRecordName } from "./mutants.support.js"
import { fixtureText, tempDirectory } from "./support.js"
import { cli } from "./cliProcess.js"


const write = (file: string, content: unknown) =>
  Effect.promise(() => fsp.writeFile(file, typeof content === "string" ? content : JSON.stringify(content)))

const salesText = fixtureText("q3-sales.txt")

const setup = Effect.gen(function*() {
  const server = yield* testServer((req, res) => {
    if (req.url === "/q3-sales.txt") return plainText(salesText)(req, res, server)
    res.writeHead(404, { "content-type": "text/plain" })
    res.end("not published")
  })
  const work = yield* tempDirectory
  const sales = server.url("/q3-sales.txt")
  const missing = server.url("/q4-outlook.txt")
  const configFile = path.join(work, "pipeline.json")
  const reportFile = path.join(work, "report.json")
  yield* write(reportFile, {
    facts: [{
      state: "cited",
      label: "q3_net_sales",
      source: sales,
      captureSha256: sha256Of(salesText),
      snippet: "Net sales for Q3 2026 were 4,210 units"
    }]
  })
  return { server, work, sales, missing, configFile, reportFile }
})

const listing = (directory: string) => Effect.promise(() => fsp.readdir(directory).then((names) => names.sort()))

describe("run-pipeline: loopback test mode is opt-in", () => {
  it.scopedLive("capture refuses http://127.0.0.1 sources without --allow-loopback-http: nothing is fetched or written", () =>
    Effect.gen(function*() {
      const s = yield* setup
      yield* write(s.configFile, { sources: [s.sales], labels: ["q3_net_sales"] })
      const runDir = path.join(s.work, "run")
      const ran = yield* cli(["capture", "--config", s.configFile, "--run-dir", runDir])
      // A configuration error, named and refused before anything is created or fetched.
      assert.strictEqual(ran.code, 2, ran.stderr)
      assert.match(ran.stderr, /^TestModeRequired: .*http:\/\/127\.0\.0\.1:\d+\/q3-sales\.txt.*--allow-loopback-http/m)
      assert.strictEqual(ran.stdout, "")
      assert.strictEqual(s.server.connections, 0)
      const created = yield* Effect.promise(() => fsp.stat(runDir).then(() => true, () => false))
      assert.isFalse(created, "no run directory is left behind")

      // The same configuration with the flag captures, so the refusal above was the flag's doing.
      const allowed = yield* cli(["capture", "--config", s.configFile, "--run-dir", path.join(s.work, "run2"), "--allow-loopback-http"])
      assert.strictEqual(allowed.code, 0, allowed.stderr)
      assert.deepStrictEqual(yield* listing(path.join(s.work, "run2")), [expectedRecordName(s.sales)])
    }))

  it.scopedLive("run refuses them too, with exit code 2, before capturing or verifying anything", () =>
    Effect.gen(function*() {
      const s = yield* setup
      yield* write(s.configFile, { sources: [s.sales], labels: ["q3_net_sales"] })
      const ran = yield* cli(["run", "--config", s.configFile, "--run-dir", path.join(s.work, "run"), "--report", s.reportFile])
      assert.strictEqual(ran.code, 2)
      assert.match(ran.stderr, /^TestModeRequired: /m)
      assert.notMatch(ran.stderr, /verify:/)
      assert.strictEqual(ran.stdout, "")
      assert.strictEqual(s.server.connections, 0)
    }))
})

describe("run-pipeline run: a failed capture fails the run", () => {
  it.scopedLive("exit 1 when one source failed to capture, although the report verifies (GROUNDED)", () =>
    Effect.gen(function*() {
      const s = yield* setup
      yield* write(s.configFile, { sources: [s.sales, s.missing], labels: ["q3_net_sales"] })
      const runDir = path.join(s.work, "run")
      const ran = yield* cli(["run", "--config", s.configFile, "--run-dir", runDir, "--report", s.reportFile, "--allow-loopback-http"])
      assert.strictEqual(ran.code, 1, ran.stderr)
      assert.match(ran.stderr, /capture: FAILED .*q4-outlook\.txt: UnexpectedStatus/)
      assert.match(ran.stderr, /1 of 2 sources captured/)
      assert.match(ran.stderr, /verify: GROUNDED/)
      assert.match(ran.stdout, /citegate: GROUNDED/)
      assert.deepStrictEqual(yield* listing(runDir), [expectedRecordName(s.sales)])
    }))

  it.scopedLive("exit 0 when every source was captured and the report verifies", () =>
    Effect.gen(function*() {
      const s = yield* setup
      yield* write(s.configFile, { sources: [s.sales], labels: ["q3_net_sales"] })
      const ran = yield* cli([
        "run", "--config", s.configFile, "--run-dir", path.join(s.work, "run"), "--report", s.reportFile, "--allow-loopback-http"
      ])
      assert.strictEqual(ran.code, 0, ran.stderr)
    }))
})

/**
 * After an output is written over `file`: a hard link made to the old file
 * beforehand still holds the old bytes (the old inode was never written), and
 * `file` is either untouched (the write was refused) or a new inode holding
 * exactly the new text. An in-place rewrite fails both ways.
 */
const assertNotInPlace = (
  file: string,
  link: string,
  before: { readonly ino: number; readonly text: string },
  newText: string,
  refused: boolean
) =>
  Effect.promise(async () => {
    assert.strictEqual(await fsp.readFile(link, "utf8"), before.text, "the old inode was rewritten")
    const st = await fsp.stat(file)
    const now = await fsp.readFile(file, "utf8")
    if (refused) {
      assert.strictEqual(st.ino, before.ino)
      assert.strictEqual(now, before.text)
    } else {
      assert.notStrictEqual(st.ino, before.ino, "written in place")
      assert.strictEqual(now, newText)
    }
    const leftovers = (await fsp.readdir(path.dirname(file))).filter((n) => n.includes("partial"))
    assert.deepStrictEqual(leftovers, [])
  })

const existingTarget = (directory: string) =>
  Effect.promise(async () => {
    const file = path.join(directory, "out.txt")
    const link = path.join(directory, "old-out.txt")
    const text = "the previous rendering\n"
    await fsp.writeFile(file, text)
    await fsp.link(file, link)
    return { file, link, before: { ino: (await fsp.stat(file)).ino, text } }
  })

describe("--out is never written in place", () => {
  it.scoped("Io.writeOutput over an existing file replaces it atomically or refuses it, never rewrites it", () =>
    Effect.gen(function*() {
      const work = yield* tempDirectory
      const { before, file, link } = yield* existingTarget(work)
      const newText = "the new rendering, longer than the old one\n"
      const result = yield* Effect.either(Io.writeOutput(file, newText))
      yield* assertNotInPlace(file, link, before, newText, Either.isLeft(result))
    }))

  it.scoped("Io.writeOutput to a new file writes exactly the text and leaves no temporary file", () =>
    Effect.gen(function*() {
      const work = yield* tempDirectory
      const file = path.join(work, "fresh.html")
      yield* Io.writeOutput(file, "<p>é 😀</p>\n")
      assert.strictEqual(yield* Effect.promise(() => fsp.readFile(file, "utf8")), "<p>é 😀</p>\n")
      assert.deepStrictEqual(yield* listing(work), ["fresh.html"])
    }))

  it.scopedLive("verify --out over an existing file (with --force where the command has it)", () =>
    Effect.gen(function*() {
      const s = yield* setup
      yield* write(s.configFile, { sources: [s.sales], labels: ["q3_net_sales"] })
      const runDir = path.join(s.work, "run")
      const captured = yield* cli(["capture", "--config", s.configFile, "--run-dir", runDir, "--allow-loopback-http"])
      assert.strictEqual(captured.code, 0, captured.stderr)
      const help = yield* cli(["verify", "--help"])
      const force = /--force\b/.test(help.stdout + help.stderr) ? ["--force"] : []
      const { before, file, link } = yield* existingTarget(s.work)
      const ran = yield* cli([
        "verify", "--config", s.configFile, "--run-dir", runDir, "--report", s.reportFile, "--format", "json", "--out", file, ...force
      ])
      assert.strictEqual(ran.code, 0, ran.stderr)
      assert.strictEqual(ran.stdout, "")
      const written = yield* Effect.promise(() => fsp.readFile(file, "utf8"))
      assert.strictEqual(JSON.parse(written).status, "verified")
      yield* assertNotInPlace(file, link, before, written, false)
    }))
})
