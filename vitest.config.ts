import type { RunnerTask, RunnerTestFile } from "vitest"
import { defineConfig } from "vitest/config"
import type { Reporter } from "vitest/reporters"

/** Ends the run with one plain line, `Tests: N passed, N failed[, N skipped]`, that any CI can read. */
class PlainSummary implements Reporter {
  onFinished(files: ReadonlyArray<RunnerTestFile> = []) {
    const counts = { passed: 0, failed: 0, skipped: 0 }
    const visit = (task: RunnerTask) => {
      if (task.type === "suite") return task.tasks.forEach(visit)
      const state = task.result?.state
      if (state === "pass") counts.passed++
      else if (state === "fail") counts.failed++
      else counts.skipped++
    }
    files.forEach(visit)
    const skipped = counts.skipped > 0 ? `, ${counts.skipped} skipped` : ""
    process.stdout.write(`\nTests: ${counts.passed} passed, ${counts.failed} failed${skipped}\n`)
  }
}

export default defineConfig({
  // `import … from "citegate"` (the documentation example) resolves to the TypeScript sources.
  resolve: { conditions: ["source"] },
  test: {
    include: ["test/**/*.test.ts"],
    // Builds dist/ from the current sources first: the CLI tests spawn the compiled CLI.
    globalSetup: ["test/globalSetup.ts"],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    reporters: ["default", new PlainSummary()]
  }
})
