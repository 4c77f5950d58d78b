/**
 * The published package, end to end: pack it the way `npm publish` would (with `prepare`), install
 * the tarball into a fresh project with the README's one-line install command, compile the README's
 * embedding example against it with strict TypeScript, run it against a capture run it makes, and
 * run the installed `run-pipeline` bin.
 *
 * Slow (a build, an npm install, a compile), so it has its own long timeout. The install uses the
 * local npm cache first (`--prefer-offline`) and the npm registry for anything not in it.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { spawn } from "node:child_process"
import * as fs from "node:fs"
import * as fsp from "node:fs/promises"
import * as path from "node:path"
import { sha256Of } from "../src/Domain.js"
import { plainText, testServer } from "./httpServer.js"
import { fixturePath, fixtureText, tempDirectory } from "./support.js"

const root = fixturePath("..")
const pkg = JSON.parse(fs.readFileSync(path.join(root, "package.json"), "utf8")) as {
  readonly version: string
  readonly files: ReadonlyArray<string>
  readonly devDependencies: Record<string, string>
}

interface Ran {
  readonly code: number | null
  readonly stdout: string
  readonly stderr: string
}

// The child npm must not inherit the settings of an `npm test` that started this run (npm_config_*),
// except where the cache and registry are.
const childEnv = () => {
  const env: Record<string, string> = {}
  for (const [key, value] of Object.entries(process.env)) {
    if (value === undefined) continue
    if (key.startsWith("npm_") && !["npm_config_cache", "npm_config_registry", "npm_config_userconfig"].includes(key)) continue
    env[key] = value
  }
  return env
}

/** Runs a command (asynchronously, so this process's test server keeps answering). */
const run = (command: string, args: ReadonlyArray<string>, cwd: string) =>
  Effect.async<Ran>((resume) => {
    const child = spawn(command, args, { cwd, env: childEnv(), stdio: ["ignore", "pipe", "pipe"] })
    let stdout = ""
    let stderr = ""
    child.stdout.on("data", (d) => (stdout += d))
    child.stderr.on("data", (d) => (stderr += d))
    child.on("error", (error) => resume(Effect.succeed({ code: -1, stdout, stderr: `${stderr}${error.message}` })))
    child.on("close", (code) => resume(Effect.succeed({ code, stdout, stderr })))
  })

const succeeds = (what: string, ran: Ran) => {
  assert.strictEqual(ran.code, 0, `${what} failed (exit ${ran.code}):\n${ran.stdout}\n${ran.stderr}`)
  return ran
}

/** The README's install command for applications, as its words. */
const readmeInstall = () => {
  const line = fs.readFileSync(path.join(root, "README.md"), "utf8").split("\n").find((l) => l.startsWith("npm install citegate "))
  assert.isDefined(line, "README.md has no `npm install citegate …` line")
  return line!.trim().split(/\s+/)
}

// Compiles and runs the README example with the application's own entry point.
const consumerMain = `import { Effect, Either, Layer } from "effect"
import { Capture, CaptureStore, Gate, Render } from "citegate"
import * as GateOnly from "citegate/Gate"
import * as RenderOnly from "citegate/Render"
import { DraftNotPublishable, makeAppLayer, Publisher } from "./embed-gate.js"

const [runDirectory, source] = process.argv.slice(2) as [string, string]
const config = { sources: [source], labels: ["q3_net_sales"] }

const capture = Effect.gen(function*() {
  const capturer = yield* Capture.Capture
  const [result] = yield* capturer.captureAll([source])
  if (result === undefined || Either.isLeft(result.result)) return yield* Effect.die(new Error("capture failed"))
  return result.result.right.sha256
}).pipe(
  Effect.provide(Capture.layer({ approved: [source], allowLoopbackHttp: true }).pipe(
    Layer.provide(CaptureStore.layerFileSystem({ directory: runDirectory }))
  ))
)

const program = Effect.gen(function*() {
  const sha256 = yield* capture
  const publisher = yield* Effect.provide(Publisher, makeAppLayer(runDirectory, JSON.stringify(config)))
  const fact = (snippet: string) => ({ state: "cited", label: "q3_net_sales", source, captureSha256: sha256, snippet })
  const markdown = yield* publisher.publish(JSON.stringify({ facts: [fact("Net sales for Q3 2026 were 4,210 units")] }))
  const refused = yield* Effect.flip(publisher.publish(JSON.stringify({ facts: [fact("Net sales rose")] })))
  const report = JSON.stringify({ facts: [fact("Net sales for Q3 2026 were 4,210 units")] })
  return {
    // The subpath entries (which load no HTTP client) are the same modules as the root's.
    sameModules: GateOnly.Gate === Gate.Gate && RenderOnly.render === Render.render,
    sha256,
    grounded: markdown.includes("**Outcome: grounded**"),
    refusedIsAppError: refused instanceof DraftNotPublishable,
    refusedReason: refused.reason,
    refusedDetails: refused.details,
    report
  }
})

Effect.runPromise(program).then(
  (result) => process.stdout.write(JSON.stringify(result)),
  (error) => {
    process.stderr.write(String(error) + "\\n")
    process.exitCode = 1
  }
)
`

const consumerTsconfig = {
  compilerOptions: {
    target: "ES2022",
    module: "NodeNext",
    moduleResolution: "NodeNext",
    strict: true,
    exactOptionalPropertyTypes: true,
    noUncheckedIndexedAccess: true,
    verbatimModuleSyntax: true,
    // The platform packages' declarations reference DOM and ws types.
    skipLibCheck: true,
    types: ["node"],
    outDir: "out"
  },
  include: ["src"]
}

describe("the packed package", () => {
  it.scopedLive("installs with its peers, compiles strictly, runs the embedding example and its bin", () =>
    Effect.gen(function*() {
      const work = yield* tempDirectory
      const salesText = fixtureText("q3-sales.txt")
      const server = yield* testServer((req, res, state) => plainText(salesText)(req, res, state))
      const source = server.url("/q3-sales.txt")

      // 1. Pack a copy of the package with its scripts, as `npm publish` would: `prepare` builds
      //    dist/ and the CLI bundle from the sources (node_modules is shared, not reinstalled).
      const copy = path.join(work, "package")
      yield* Effect.promise(async () => {
        await fsp.mkdir(path.join(copy, "scripts"), { recursive: true })
        const entries = [...pkg.files.filter((f) => !f.startsWith("!") && f !== "dist"), "package.json", "tsconfig.json", "tsconfig.build.json"]
        for (const entry of entries) await fsp.cp(path.join(root, entry), path.join(copy, entry), { recursive: true })
        await fsp.cp(path.join(root, "scripts", "build-cli.mjs"), path.join(copy, "scripts", "build-cli.mjs"))
        await fsp.cp(path.join(root, "scripts", "build-ui.mjs"), path.join(copy, "scripts", "build-ui.mjs"))
        await fsp.symlink(path.join(root, "node_modules"), path.join(copy, "node_modules"), "dir")
      })
      const tarballs = path.join(work, "tarballs")
      yield* Effect.promise(() => fsp.mkdir(tarballs))
      const packed = succeeds("npm pack", yield* run("npm", ["pack", "--json", "--pack-destination", tarballs], copy))
      const manifest = JSON.parse(packed.stdout.slice(packed.stdout.indexOf("["))) as Array<{
        filename: string
        files: Array<{ path: string }>
      }>
      const files = manifest[0]!.files.map((f) => f.path)
      assert.include(files, "dist/bundle/run-pipeline.cjs")
      assert.include(files, "dist/bundle/run-pipeline.cache")
      assert.include(files, "dist/bundle/extract-child.cjs")
      assert.include(files, "bin/run-pipeline.js")
      // The review page, built at pack time: served by `serve` under /ui/.
      assert.include(files, "dist/ui/app.js")
      assert.include(files, "dist/ui/index.html")
      assert.include(files, "bin/load-bundle.js")
      assert.include(files, "dist/index.js")
      assert.include(files, "dist/index.d.ts")
      // The compiled CLI modules import @effect/cli, which library users do not install.
      assert.deepStrictEqual(files.filter((f) => f.startsWith("dist/cli/") || f.startsWith("src/cli/")), [])
      const tarball = path.join(tarballs, manifest[0]!.filename)

      // 2. A fresh application installs the tarball with the README's command (plus its compiler).
      const app = path.join(work, "app")
      yield* Effect.promise(async () => {
        await fsp.mkdir(path.join(app, "src"), { recursive: true })
        await fsp.writeFile(path.join(app, "package.json"), JSON.stringify({ name: "app", private: true, type: "module" }))
        await fsp.writeFile(path.join(app, "tsconfig.json"), JSON.stringify(consumerTsconfig))
        await fsp.copyFile(path.join(root, "docs", "examples", "embed-gate.ts"), path.join(app, "src", "embed-gate.ts"))
        await fsp.writeFile(path.join(app, "src", "main.ts"), consumerMain)
      })
      const [npm, install, name, ...peers] = readmeInstall()
      assert.deepStrictEqual([npm, install, name], ["npm", "install", "citegate"])
      succeeds("npm install", yield* run("npm", [
        "install",
        "--prefer-offline",
        "--no-audit",
        "--no-fund",
        tarball,
        ...peers,
        `typescript@${pkg.devDependencies["typescript"]}`,
        `@types/node@${pkg.devDependencies["@types/node"]}`
      ], app))

      // One copy of Effect, the application's; and no CLI framework for a library user.
      const effects = succeeds("npm ls", yield* run("npm", ["ls", "effect", "--all", "--parseable"], app))
      assert.deepStrictEqual(effects.stdout.trim().split("\n"), [path.join(app, "node_modules", "effect")])
      assert.isFalse(fs.existsSync(path.join(app, "node_modules", "@effect", "cli")), "@effect/cli was installed")
      assert.isFalse(fs.existsSync(path.join(app, "node_modules", "citegate", "node_modules")), "citegate has its own dependency copies")

      // 3. Strict TypeScript against the installed declarations, then run it.
      succeeds("tsc", yield* run(process.execPath, [path.join(app, "node_modules", "typescript", "bin", "tsc"), "-p", "."], app))
      const runDirectory = path.join(work, "run")
      yield* Effect.promise(() => fsp.mkdir(runDirectory))
      const ran = succeeds("the application", yield* run(process.execPath, [path.join(app, "out", "main.js"), runDirectory, source], app))
      const result = JSON.parse(ran.stdout) as {
        sameModules: boolean
        sha256: string
        grounded: boolean
        refusedIsAppError: boolean
        refusedReason: string
        refusedDetails: string
        report: string
      }
      assert.isTrue(result.sameModules)
      assert.strictEqual(result.sha256, sha256Of(salesText))
      assert.isTrue(result.grounded)
      assert.isTrue(result.refusedIsAppError)
      assert.strictEqual(result.refusedReason, "ReportRejected")
      assert.include(result.refusedDetails, "SnippetAbsent")

      // 4. The installed bin, run the way npm links it.
      const bin = path.join(app, "node_modules", ".bin", "run-pipeline")
      const version = succeeds("run-pipeline --version", yield* run(bin, ["--version"], app))
      assert.strictEqual(version.stdout.trim(), pkg.version)
      yield* Effect.promise(async () => {
        await fsp.writeFile(path.join(work, "pipeline.json"), JSON.stringify({ sources: [source], labels: ["q3_net_sales"] }))
        await fsp.writeFile(path.join(work, "report.json"), result.report)
      })
      const verified = succeeds(
        "run-pipeline verify",
        yield* run(bin, [
          "verify",
          "--config",
          path.join(work, "pipeline.json"),
          "--run-dir",
          runDirectory,
          "--report",
          path.join(work, "report.json"),
          "--format",
          "json"
        ], app)
      )
      const rendered = JSON.parse(verified.stdout) as { status: string; report: { outcome: string } }
      assert.strictEqual(rendered.status, "verified")
      assert.strictEqual(rendered.report.outcome, "grounded")
    }), { timeout: 300_000 })
})

describe("the CLI bundle's code cache", () => {
  // Runs `--version` through a copy of the loader and says whether V8 was given the cache.
  const versionWith = (directory: string) =>
    run(process.execPath, [
      "--input-type=module",
      "-e",
      `const { bundleFile, runBundle } = await import(process.argv[1])
       process.argv = [process.argv[0], bundleFile, "--version"]
       const { cacheUsed } = runBundle()
       process.once("exit", () => process.stderr.write("cache used: " + cacheUsed))`,
      path.join(directory, "bin", "load-bundle.js")
    ], directory)

  it.scopedLive("is used when intact, and a damaged, foreign or missing cache is ignored, never run", () =>
    Effect.gen(function*() {
      const copy = yield* tempDirectory
      const cache = path.join(copy, "dist", "bundle", "run-pipeline.cache")
      yield* Effect.promise(async () => {
        await fsp.cp(path.join(root, "bin"), path.join(copy, "bin"), { recursive: true })
        await fsp.cp(path.join(root, "dist", "bundle"), path.join(copy, "dist", "bundle"), { recursive: true })
        await fsp.writeFile(path.join(copy, "package.json"), JSON.stringify({ type: "module" }))
      })
      const intact = yield* Effect.promise(() => fsp.readFile(cache))
      const expect = (ran: Ran, used: boolean) => {
        succeeds("run-pipeline --version", ran)
        assert.strictEqual(ran.stdout.trim(), pkg.version)
        assert.strictEqual(ran.stderr, `cache used: ${used}`)
      }
      expect(yield* versionWith(copy), true)

      // One changed byte in the compiled code (V8 would run it, or crash, without the payload digest).
      const damaged = Buffer.from(intact)
      damaged[damaged.length >> 1] = damaged[damaged.length >> 1]! ^ 0xff
      yield* Effect.promise(() => fsp.writeFile(cache, damaged))
      expect(yield* versionWith(copy), false)

      // A cache made for another bundle.
      const foreign = Buffer.from(intact)
      foreign[0] = foreign[0]! ^ 0xff
      yield* Effect.promise(() => fsp.writeFile(cache, foreign))
      expect(yield* versionWith(copy), false)

      yield* Effect.promise(() => fsp.writeFile(cache, intact.subarray(0, 100)))
      expect(yield* versionWith(copy), false)
      yield* Effect.promise(() => fsp.rm(cache))
      expect(yield* versionWith(copy), false)
    }), { timeout: 60_000 })
})
