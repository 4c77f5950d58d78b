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
/**
 * `CITEGATE_MUTATION_TESTS`: a comma-separated list of test files or globs. When set, only those
 * run for every mutant (the table "Which tests for which module" in docs/testing.md), instead of the
 * whole suite: a mutant then costs the seconds of the tests that concern its module.
 */
const chosen = (process.env.CITEGATE_MUTATION_TESTS ?? "")
  .split(",")
  .map((glob) => glob.trim())
  .filter((glob) => glob.length > 0)

// Spread rather than mergeConfig: mergeConfig would concatenate globalSetup and keep the build step.
export default defineConfig({
  ...base,
  test: {
    ...base.test,
    // `CITEGATE_MUTATION_POSTGRES=1`: one PostgreSQL cluster for the whole run instead of one per file run
    // and mutant (test/support/postgresMutationSetup.ts; the PostgreSQL store's modules).
    globalSetup: process.env["CITEGATE_MUTATION_POSTGRES"] === "1" ? ["test/support/postgresMutationSetup.ts"] : [],
    isolate: true,
    // Instrumented code runs many times slower: the linear-work tests of multiSearch need minutes
    // in the dry run (Stryker's own timeout still bounds each mutant).
    testTimeout: 300_000,
    ...(chosen.length > 0 ? { include: chosen } : {}),
    exclude: ["test/build.test.ts", "test/cli.test.ts", "test/mutants.cli.test.ts", "test/example.test.ts", "test/html.browser.test.ts", "test/bench.smoke.test.ts", "test/tls.test.ts", "test/*.cli.test.ts", "test/packaging.test.ts", "test/verifyDeadline.test.ts", "node_modules/**"]
  }
})
