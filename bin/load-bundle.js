// Runs the CLI bundle (dist/bundle/run-pipeline.cjs) with the V8 code cache made for it at build time
// (dist/bundle/run-pipeline.cache): compiling the 2 MB bundle is a large share of start-up. The cache
// starts with the SHA-256 of the bundle it was made from and is used only for exactly that bundle;
// V8 itself refuses it for another Node version or other flags, and the bundle is then compiled
// from source as usual.
import { createHash } from "node:crypto"
import * as fs from "node:fs"
import { createRequire } from "node:module"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import * as vm from "node:vm"

const directory = path.join(path.dirname(fileURLToPath(import.meta.url)), "..", "dist", "bundle")
export const bundleFile = path.join(directory, "run-pipeline.cjs")
export const cacheFile = path.join(directory, "run-pipeline.cache")

/** Compiles and runs the bundle; `produceCache` (the build only) writes the cache when the process exits. */
export const runBundle = ({ produceCache = false } = {}) => {
  const source = fs.readFileSync(bundleFile, "utf8")
  const digest = createHash("sha256").update(source).digest()
  let cachedData
  if (!produceCache) {
    try {
      const cache = fs.readFileSync(cacheFile)
      if (cache.subarray(0, 32).equals(digest)) cachedData = cache.subarray(32)
    } catch {
      // No cache: compile from source.
    }
  }
  const script = new vm.Script(
    `(function (exports, require, module, __filename, __dirname) {${source}\n})`,
    {
      filename: bundleFile,
      ...(cachedData === undefined ? {} : { cachedData }),
      // A dynamic import() in the bundle resolves as it would in any module of this process.
      ...(vm.constants?.USE_MAIN_CONTEXT_DEFAULT_LOADER === undefined
        ? {}
        : { importModuleDynamically: vm.constants.USE_MAIN_CONTEXT_DEFAULT_LOADER })
    }
  )
  if (produceCache) {
    process.once("exit", () => fs.writeFileSync(cacheFile, Buffer.concat([digest, script.createCachedData()])))
  }
  const module = { exports: {} }
  script.runInThisContext()(module.exports, createRequire(bundleFile), module, bundleFile, directory)
}
