/**
 * Builds the review page (src/ui/) into dist/ui/: the browser code bundled by esbuild into one
 * ES module (app.js, no framework, nothing loaded from elsewhere at run time; pdf.js in a chunk loaded
 * only for a PDF capture, and its worker as pdf.worker.js), beside the static index.html and app.css. `run-pipeline serve` serves these files under /ui/ (src/server/Ui.ts).
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
const common = { bundle: true, platform: "browser", format: "esm", target: "es2022", minify: true, legalComments: "none", logLevel: "silent" }
// The page: app.js, with pdf.js split into a chunk loaded only when a PDF capture is opened.
const page = await build({
  ...common,
  entryPoints: { app: path.join(source, "main.ts") },
  outdir: out,
  splitting: true,
  chunkNames: "chunk-[hash]"
})
// pdf.js's worker, from the pinned pdfjs-dist (the version the extractor uses), served from this origin.
const worker = await build({
  ...common,
  entryPoints: { "pdf.worker": path.join(root, "node_modules", "pdfjs-dist", "build", "pdf.worker.mjs") },
  outdir: out
})
const result = { errors: [...page.errors, ...worker.errors], warnings: [...page.warnings, ...worker.warnings] }
for (const file of ["index.html", "app.css"]) fs.copyFileSync(path.join(source, file), path.join(out, file))
