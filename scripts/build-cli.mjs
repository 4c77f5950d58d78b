/**
 * Bundles the compiled CLI (dist/cli/main.js) into one tree-shaken ES module,
 * dist/bundle/run-pipeline.js, which bin/run-pipeline.js runs.
 *
 * Why: importing the `effect`, `@effect/platform` and `@effect/cli` barrels
 * costs about a second before the first line of the CLI runs; one bundle
 * keeps only what the CLI uses. The bundle embeds @effect/cli (a development
 * dependency), so library users never install it. Runs after `tsc` in
 * `npm run build` (and so in `prepare`, before `npm pack` and on `npm ci`).
 */
import { build } from "esbuild"
import * as path from "node:path"
import { fileURLToPath } from "node:url"

const root = path.join(path.dirname(fileURLToPath(import.meta.url)), "..")

await build({
  entryPoints: [path.join(root, "dist", "cli", "main.js")],
  outfile: path.join(root, "dist", "bundle", "run-pipeline.js"),
  bundle: true,
  platform: "node",
  format: "esm",
  target: "node20",
  // Whitespace and syntax only: identifiers keep their names, so error reports read the same.
  minifyWhitespace: true,
  minifySyntax: true,
  legalComments: "none",
  logLevel: "warning",
  // CommonJS dependencies (undici, ipaddr.js) call `require` for Node built-ins, which an ES module lacks.
  banner: { js: "import { createRequire as __citegateCreateRequire } from \"node:module\";const require = __citegateCreateRequire(import.meta.url);" }
})
