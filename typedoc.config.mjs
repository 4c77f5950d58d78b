// @ts-check
/**
 * The API reference (`npm run docs`, written to apidocs/): one page per public entry point, the
 * package root and every subpath export of package.json (its `source` path), so the reference shows
 * exactly what an application can import. Warnings are errors: a public signature that names a type
 * no entry point exports fails the build, except those listed below.
 */
import { readFileSync } from "node:fs"

const pkg = JSON.parse(readFileSync(new URL("./package.json", import.meta.url), "utf8"))

/** @type {Partial<import("typedoc").TypeDocOptions>} */
export default {
  name: "citegate",
  entryPoints: Object.values(pkg.exports).flatMap((target) =>
    typeof target === "object" && target !== null && "source" in target ? [target.source] : []
  ),
  out: "apidocs",
  tsconfig: "./tsconfig.json",
  readme: "none",
  excludePrivate: true,
  excludeInternal: true,
  treatWarningsAsErrors: true,
  // Type-checking is `npm test`'s job (tsc --noEmit); the reference only reads the sources.
  skipErrorChecking: true,
  // Types a public signature names but no entry point exports (yet): shown by name, not linked.
  intentionallyNotExported: [
    "src/capture/Dispatcher.ts:Resolver",
    "src/internal/decode.ts:Invalid",
    "src/internal/materialTokens.ts:Token",
    "src/anchor/MeaningGuard.ts:Token"
  ]
}
