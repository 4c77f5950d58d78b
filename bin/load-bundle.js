// Runs the CLI bundle (dist/bundle/run-pipeline.cjs) with the V8 code cache made for it at build time
// (dist/bundle/run-pipeline.cache): compiling the 2 MB bundle is a large share of start-up.
// The cache is used only for exactly the bundle it was made from and only when intact: the bundle's
// first line names its digest, and the cache starts with that digest and the SHA-256 of its own
// payload. (V8 does not checksum the payload in release builds: a damaged cache could crash the
// process.) V8 itself refuses a cache from another Node version or other flags; the bundle is then
// compiled from source as usual.
import { createHash } from "node:crypto"
import * as fs from "node:fs"
import { createRequire } from "node:module"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import * as vm from "node:vm"

const directory = path.join(path.dirname(fileURLToPath(import.meta.url)), "..", "dist", "bundle")
export const bundleFile = path.join(directory, "run-pipeline.cjs")
export const cacheFile = path.join(directory, "run-pipeline.cache")

/**
 * Compiles and runs the bundle; `produceCache` (the build only) writes the cache when the process
 * exits. Returns whether a cache was used (the build checks it).
 */
export const runBundle = ({ produceCache = false } = {}) => {
  const source = fs.readFileSync(bundleFile, "utf8")
  const id = /^\/\/ citegate bundle ([0-9a-f]{64})\n/.exec(source)?.[1]
  const digest = Buffer.from(id ?? "", "hex")
  let cachedData
  if (id !== undefined && !produceCache) {
    try {
      const cache = fs.readFileSync(cacheFile)
      const payload = cache.subarray(64)
      if (cache.subarray(0, 32).equals(digest) && cache.subarray(32, 64).equals(createHash("sha256").update(payload).digest())) {
        cachedData = payload
      }
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
  if (id !== undefined && produceCache) {
    process.once("exit", () => {
      const payload = script.createCachedData()
      fs.writeFileSync(cacheFile, Buffer.concat([digest, createHash("sha256").update(payload).digest(), payload]))
    })
  }
  const module = { exports: {} }
  script.runInThisContext()(module.exports, createRequire(bundleFile), module, bundleFile, directory)
  return { cacheUsed: cachedData !== undefined && !script.cachedDataRejected }
}
