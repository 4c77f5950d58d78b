import { defineConfig } from "vitest/config"
import base from "./vitest.config.js"

/**
 * The suite as StrykerJS runs it (`npm run mutation`). Mutants are switched on
 * inside the test process, so tests that spawn the compiled CLI or a browser
 * cannot see them: those are left out (every `*.cli.test.ts`) (they also need the `dist/` build, which
 * this configuration does not make, as does the check that `dist/` is fresh),
 * and so are the benchmark smoke test, the TLS, packaging and verification-deadline tests (they spawn or read the build) and
 * the documentation example (it imports the package by name, which the mutation
 * sandbox does not resolve).
 */
// Spread rather than mergeConfig: mergeConfig would concatenate globalSetup and keep the build step.
export default defineConfig({
  ...base,
  test: {
    ...base.test,
    globalSetup: [],
    isolate: true,
    exclude: ["test/build.test.ts", "test/cli.test.ts", "test/mutants.cli.test.ts", "test/example.test.ts", "test/html.browser.test.ts", "test/bench.smoke.test.ts", "test/tls.test.ts", "test/*.cli.test.ts", "test/packaging.test.ts", "test/verifyDeadline.test.ts", "node_modules/**"]
  }
})
