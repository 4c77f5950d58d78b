/**
 * Bundles the compiled CLI (dist/cli/main.js) into one tree-shaken script,
 * dist/bundle/run-pipeline.cjs (and the extraction process's entry point,
 * dist/extract/Child.js, into dist/bundle/extract-child.cjs), and makes its V8 code cache,
 * dist/bundle/run-pipeline.cache; bin/run-pipeline.js runs them
 * (bin/load-bundle.js).
 *
 * Why: importing the `effect`, `@effect/platform` and `@effect/cli` barrels
 * costs about a second before the first line of the CLI runs; one bundle keeps
 * only what the CLI uses, and the code cache saves compiling it. The bundle
 * embeds @effect/cli (a development dependency), so library users never
 * install it. Runs after `tsc` in `npm run build` (and so in `prepare`, before
 * `npm pack` and on `npm ci`).
 *
 *   node scripts/build-cli.mjs
 */
import { build } from "esbuild"
import { spawnSync } from "node:child_process"
import { createHash } from "node:crypto"
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"

const root = path.join(path.dirname(fileURLToPath(import.meta.url)), "..")
const loader = path.join(root, "bin", "load-bundle.js")

if (process.argv[2] === "--make-code-cache" || process.argv[2] === "--check-code-cache") {
  // Child modes: run the CLI once (`--version`) through the real loader, either writing the cache at
  // exit (so the functions start-up runs are in it already compiled) or saying whether V8 took it.
  const { bundleFile, runBundle } = await import(loader)
  const make = process.argv[2] === "--make-code-cache"
  process.argv = [process.argv[0], bundleFile, "--version"]
  const { cacheUsed } = runBundle({ produceCache: make })
  if (!make) process.once("exit", () => process.stderr.write(`code cache used: ${cacheUsed}\n`))
} else {
  /**
   * One script of `entry` with what it imports, tree-shaken. A classic script, not a module: V8 can
   * cache its compiled code (vm.Script), which Node 20 offers for no ES module. Whitespace and syntax
   * only are minified: identifiers keep their names, so error reports read the same. The bundles sit
   * two levels below the package root, like dist/cli/*.js, so URLs relative to a module (the demo's
   * fixtures) resolve the same. Any warning (another use of import.meta, say) could be a broken
   * bundle: the build fails instead.
   */
  const bundle = async (entry, outfile, options = {}) => {
    const result = await build({
      ...options,
      entryPoints: [path.join(root, "dist", ...entry)],
      outfile,
      bundle: true,
      platform: "node",
      format: "cjs",
      target: "node20",
      minifyWhitespace: true,
      minifySyntax: true,
      legalComments: "none",
      logLevel: "silent",
      define: { "import.meta.url": "__citegateModuleUrl" },
      banner: { js: "const __citegateModuleUrl = require(\"node:url\").pathToFileURL(__filename).href;" }
    })
    if (result.warnings.length > 0 || result.errors.length > 0) {
      for (const message of [...result.errors, ...result.warnings]) {
        process.stderr.write(`${message.location?.file ?? ""}:${message.location?.line ?? ""} ${message.text}\n`)
      }
      process.exit(1)
    }
  }
  // The extraction process's entry point: it starts in a fraction of the time the compiled modules
  // take (extract/Runner.ts starts one per concurrent capture).
  await bundle(["extract", "Child.js"], path.join(root, "dist", "bundle", "extract-child.cjs"))
  // A verification thread's entry point (server/VerifyThreads.ts, `server.verifyThreads`).
  await bundle(["server", "VerifyWorker.js"], path.join(root, "dist", "bundle", "verify-worker.cjs"))
  const outfile = path.join(root, "dist", "bundle", "run-pipeline.cjs")
  // import() of Node's own modules (the OpenTelemetry exporters load `http`/`https` so) becomes a
  // require: a script compiled from a V8 code cache loses its dynamic-import callback
  // (ERR_VM_DYNAMIC_IMPORT_CALLBACK_MISSING), and every other import() is bundled already.
  await bundle(["cli", "main.js"], outfile, { supported: { "dynamic-import": false } })
  // The first line names the bundle's digest: the loader matches it against the cache's header.
  const code = fs.readFileSync(outfile, "utf8")
  fs.writeFileSync(outfile, `// citegate bundle ${createHash("sha256").update(code).digest("hex")}\n${code}`)
  fs.rmSync(path.join(root, "dist", "bundle", "run-pipeline.cache"), { force: true })
  for (const mode of ["--make-code-cache", "--check-code-cache"]) {
    const ran = spawnSync(process.execPath, [fileURLToPath(import.meta.url), mode], { encoding: "utf8" })
    if (ran.status !== 0) {
      process.stderr.write(`the bundled CLI failed to start:\n${ran.stdout}${ran.stderr}`)
      process.exit(1)
    }
    // Made and refused on the same machine at once means the loader and the cache disagree.
    if (mode === "--check-code-cache" && !ran.stderr.includes("code cache used: true")) {
      process.stderr.write(`V8 refused the bundle's code cache:\n${ran.stderr}`)
      process.exit(1)
    }
  }
}
