import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { spawn } from "node:child_process"
import * as fsp from "node:fs/promises"
import * as path from "node:path"
import { helpFirst, withProgramName } from "../src/cli/Help.js"
import * as Io from "../src/cli/Io.js"
import { fixturePath, tempDirectory } from "./support.js"

const bin = fixturePath("..", "bin", "run-pipeline.js")
const repo = fixturePath("..")

interface Ran {
  readonly code: number | null
  readonly stdout: string
  readonly stderr: string
}

const run = (
  command: string,
  args: ReadonlyArray<string>,
  options: { readonly cwd?: string; readonly env?: NodeJS.ProcessEnv } = {}
) =>
  Effect.async<Ran>((resume) => {
    const child = spawn(command, args, {
      cwd: options.cwd ?? process.cwd(),
      env: options.env ?? process.env,
      stdio: ["ignore", "pipe", "pipe"]
    })
    let stdout = ""
    let stderr = ""
    child.stdout.on("data", (d) => (stdout += d))
    child.stderr.on("data", (d) => (stderr += d))
    child.on("close", (code) => resume(Effect.succeed({ code, stdout, stderr })))
  })

const cli = (args: ReadonlyArray<string>, env?: NodeJS.ProcessEnv) =>
  run(process.execPath, [bin, ...args], env === undefined ? {} : { env })

const escape = "\u001b["

describe("run-pipeline help", () => {
  it.effect("--help works with required options missing, all given, or anywhere on the line", () =>
    Effect.gen(function*() {
      for (
        const args of [
          ["verify", "--help"],
          ["verify", "--config", "x.json", "--help"],
          ["verify", "--config", "a", "--run-dir", "b", "--report", "c", "--format", "json", "--help"],
          ["verify", "-h", "--config", "x.json"]
        ]
      ) {
        const ran = yield* cli(args)
        assert.strictEqual(ran.code, 0, `${args.join(" ")}: ${ran.stderr}`)
        assert.include(ran.stdout, "$ run-pipeline verify --config", args.join(" "))
        assert.notInclude(ran.stdout, "capture every approved", args.join(" "))
        assert.strictEqual(ran.stderr, "", args.join(" "))
      }
    }), 60_000)

  it.effect("help piped or under NO_COLOR carries no colour codes; subcommand usage names the program", () =>
    Effect.gen(function*() {
      const piped = yield* cli(["capture", "--help"])
      assert.strictEqual(piped.code, 0)
      assert.notInclude(piped.stdout, escape)
      assert.include(piped.stdout, "$ run-pipeline capture --config file --run-dir directory")
      const root = yield* cli(["--help"], { ...process.env, NO_COLOR: "1" })
      assert.notInclude(root.stdout, escape)
      assert.include(root.stdout, "$ run-pipeline")
    }), 60_000)

  it.effect("every option has a description and help lists the exit codes", () =>
    Effect.gen(function*() {
      const verify = yield* cli(["verify", "--help"])
      for (const option of ["--config", "--run-dir", "--report", "--mode", "--format", "--out"]) {
        const block = verify.stdout.slice(verify.stdout.indexOf(`\n${option} `))
        const untilNext = block.slice(1, block.indexOf("\n--", 1) === -1 ? undefined : block.indexOf("\n--", 1))
        assert.isAbove(untilNext.split("\n").filter((line) => /^ {2}\S/.test(line)).length, 1, option)
      }
      assert.include(verify.stdout, "default text")
      for (const code of ["Exit codes: 0 report verified and grounded", "1 report rejected", "2 usage", "70 internal", "130", "143"]) {
        assert.include(verify.stdout, code)
      }
      const demo = yield* cli(["demo", "--help"])
      assert.include(demo.stdout, "default ./demo-output")
    }), 60_000)

  it.effect("an unknown --format names the flag and exits 2", () =>
    Effect.gen(function*() {
      const ran = yield* cli(["verify", "--config", "a", "--run-dir", ".", "--report", "c", "--format", "md"])
      assert.strictEqual(ran.code, 2)
      assert.include(ran.stderr, "--format must be one of text, json, markdown, html, jsonld")
      assert.include(ran.stderr, "\"md\"")
    }), 60_000)
})

describe("run-pipeline capture without --allow-loopback-http", () => {
  it.scoped("plain-http sources are a configuration error naming the flag, before the run directory is created", () =>
    Effect.gen(function*() {
      const work = yield* tempDirectory
      const config = path.join(work, "pipeline.json")
      yield* Effect.promise(() =>
        fsp.writeFile(config, JSON.stringify({ sources: ["http://127.0.0.1:9/a.txt"], labels: ["a"] }))
      )
      const runDir = path.join(work, "run")
      const ran = yield* cli(["capture", "--config", config, "--run-dir", runDir])
      assert.strictEqual(ran.code, 2)
      assert.include(ran.stderr, "TestModeRequired")
      assert.include(ran.stderr, "--allow-loopback-http")
      assert.include(ran.stderr, "http://127.0.0.1:9/a.txt")
      const exists = yield* Effect.promise(() => fsp.stat(runDir).then(() => true, () => false))
      assert.isFalse(exists, "no run directory is left behind, so the retry can use the same name")
    }), 60_000)
})

describe("npm run run-pipeline", () => {
  it.scoped("resolves relative paths against the directory the command was typed in", () =>
    Effect.gen(function*() {
      const work = yield* tempDirectory
      yield* Effect.promise(() =>
        fsp.writeFile(path.join(work, "pipeline.json"), JSON.stringify({ sources: ["https://example.com/a"], labels: [] }))
      )
      // INIT_CWD is what npm sets to the caller's directory; the script runs in the package directory.
      const ran = yield* run(process.execPath, ["--import", "tsx", "scripts/run-pipeline.ts", "verify", "--config", "pipeline.json", "--run-dir", ".", "--report", "pipeline.json"], {
        cwd: repo,
        env: { ...process.env, INIT_CWD: work }
      })
      // The config was found and decoded (its empty label list is the error), not "no such file".
      assert.strictEqual(ran.code, 2, ran.stderr)
      assert.include(ran.stderr, "InvalidConfig")
      assert.include(ran.stderr, "labels")
    }), 60_000)
})

describe("help helpers", () => {
  it("helpFirst keeps the command and drops everything else", () => {
    assert.deepStrictEqual(helpFirst(["node", "cli", "verify", "--config", "x", "--help"], ["verify"]), [
      "node",
      "cli",
      "verify",
      "--help"
    ])
    assert.deepStrictEqual(helpFirst(["node", "cli", "--config", "x", "-h"], ["verify"]), ["node", "cli", "--help"])
    const untouched = ["node", "cli", "verify", "--config", "x"]
    assert.strictEqual(helpFirst(untouched, ["verify"]), untouched)
  })

  it("withProgramName prefixes subcommand usage lines only", () => {
    assert.strictEqual(withProgramName("run-pipeline", "$ verify --x\n$ run-pipeline\n a $ b"), "$ run-pipeline verify --x\n$ run-pipeline\n a $ b")
  })
})

describe("--out write failures", () => {
  it.scoped("WriteFailed names the file asked for, never the temporary file", () =>
    Effect.gen(function*() {
      const work = yield* tempDirectory
      const target = path.join(work, "no-such-directory", "report.html")
      const error = yield* Effect.flip(Io.writeOutput(target, "<p>x</p>"))
      assert.strictEqual(error._tag, "WriteFailed")
      assert.strictEqual(error.path, target)
      assert.include(error.detail, target)
      assert.notInclude(error.detail, ".partial")
    }))
})
