/**
 * Builds `dist/` before any test runs, so that tests spawning the compiled CLI
 * (`bin/run-pipeline.js` runs the bundle `dist/bundle/`, made from `dist/` by
 * `scripts/build-cli.mjs`; the review page, `scripts/build-ui.mjs`) never run a stale build: the setup runs
 * every step of `npm run build`. The build is
 * skipped only when `dist/` was produced by this setup from exactly the current
 * sources: a digest of every file under `src/` and of the build configuration,
 * with the modification time of the output it produced (any later build, by
 * `npm run build` say, changes that), is kept and compared.
 */
import { execFileSync } from "node:child_process"
import { createHash } from "node:crypto"
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs"
import * as path from "node:path"

const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), "..")
const stampFile = path.join(root, "node_modules", ".cache", "citegate-build-digest")
// The last file the build writes: the bundle, made from the compiled modules.
const output = path.join(root, "dist", "bundle", "run-pipeline.cjs")

const filesUnder = (directory: string): Array<string> =>
  readdirSync(directory, { withFileTypes: true })
    .flatMap((entry) => {
      const full = path.join(directory, entry.name)
      return entry.isDirectory() ? filesUnder(full) : entry.isFile() ? [full] : []
    })

/** A digest of everything the build reads: the sources and the build configuration. */
export const sourceDigest = (): string => {
  const hash = createHash("sha256")
  const inputs = [
    ...filesUnder(path.join(root, "src")),
    ...["tsconfig.json", "tsconfig.build.json", "package.json", "scripts/build-cli.mjs", "scripts/build-ui.mjs", "bin/load-bundle.js"].map((f) => path.join(root, f))
  ]
  for (const file of inputs.sort()) {
    hash.update(path.relative(root, file)).update("\0").update(readFileSync(file)).update("\0")
  }
  return hash.digest("hex")
}

const stamp = (digest: string) => `${digest} ${statSync(output).mtimeMs}`

export default function setup() {
  const digest = sourceDigest()
  const fresh = existsSync(stampFile) && existsSync(output) && readFileSync(stampFile, "utf8") === stamp(digest)
  if (fresh) return
  execFileSync(process.execPath, [path.join(root, "node_modules", "typescript", "bin", "tsc"), "-p", "tsconfig.build.json"], {
    cwd: root,
    stdio: "inherit"
  })
  execFileSync(process.execPath, [path.join(root, "scripts", "build-cli.mjs")], { cwd: root, stdio: "inherit" })
  execFileSync(process.execPath, [path.join(root, "scripts", "build-ui.mjs")], { cwd: root, stdio: "inherit" })
  mkdirSync(path.dirname(stampFile), { recursive: true })
  writeFileSync(stampFile, stamp(digest))
}
