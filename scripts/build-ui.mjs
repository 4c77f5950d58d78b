/**
 * Builds the review page (src/ui/) into dist/ui/: the browser code bundled by esbuild into one
 * script (app.js, no framework, nothing loaded from elsewhere at run time), beside the static
 * index.html and app.css. `run-pipeline serve` serves these files under /ui/ (src/server/Ui.ts).
 * Runs after `tsc` in `npm run build`.
 *
 *   node scripts/build-ui.mjs
 */
import { build } from "esbuild"
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"

const root = path.join(path.dirname(fileURLToPath(import.meta.url)), "..")
const source = path.join(root, "src", "ui")
const out = path.join(root, "dist", "ui")

fs.rmSync(out, { recursive: true, force: true })
fs.mkdirSync(out, { recursive: true })
const result = await build({
  entryPoints: [path.join(source, "main.ts")],
  outfile: path.join(out, "app.js"),
  bundle: true,
  platform: "browser",
  format: "iife",
  target: "es2022",
  minify: true,
  legalComments: "none",
  logLevel: "silent"
})
if (result.warnings.length > 0 || result.errors.length > 0) {
  for (const message of [...result.errors, ...result.warnings]) {
    process.stderr.write(`${message.location?.file ?? ""}:${message.location?.line ?? ""} ${message.text}\n`)
  }
  process.exit(1)
}
for (const file of ["index.html", "app.css"]) fs.copyFileSync(path.join(source, file), path.join(out, file))
