import { assert, describe, it } from "@effect/vitest"
import type { ICruiseOptions, ICruiseResult, IViolation } from "dependency-cruiser"
import { cruise } from "dependency-cruiser"
import extractDepcruiseOptions from "dependency-cruiser/config-utl/extract-depcruise-options"
import extractTSConfig from "dependency-cruiser/config-utl/extract-ts-config"
import * as Effect from "effect/Effect"
import * as fs from "node:fs/promises"
import * as os from "node:os"
import * as path from "node:path"
import { fixturePath } from "./support.js"

// The import rules between the parts (.dependency-cruiser.cjs, docs/design.md), checked with
// dependency-cruiser's own API on the real sources, and shown to fail on a graph that breaks each rule.

const root = fixturePath("..")
const configFile = path.join(root, ".dependency-cruiser.cjs")

const check = (baseDir: string, options: ICruiseOptions) =>
  Effect.promise(async () => {
    const fileName = path.join(baseDir, "tsconfig.json")
    const result = await cruise(["src"], { ...options, baseDir, tsConfig: { fileName } }, {}, { tsConfig: extractTSConfig(fileName) })
    return result.output as ICruiseResult
  })

const describeViolation = (v: IViolation) => `${v.rule.name}: ${v.from} → ${v.to}${v.cycle === undefined ? "" : ` (${v.cycle.map((c) => c.name).join(" → ")})`}`

/** Writes `files` (path → source) under a new temporary directory with a NodeNext tsconfig. */
const graph = (files: Record<string, string>) =>
  Effect.acquireRelease(
    Effect.promise(async () => {
      const dir = await fs.mkdtemp(path.join(os.tmpdir(), "citegate-arch-"))
      await fs.writeFile(
        path.join(dir, "tsconfig.json"),
        JSON.stringify({ compilerOptions: { module: "NodeNext", moduleResolution: "NodeNext", strict: true }, include: ["src"] })
      )
      for (const [name, text] of Object.entries(files)) {
        await fs.mkdir(path.dirname(path.join(dir, name)), { recursive: true })
        await fs.writeFile(path.join(dir, name), text)
      }
      return dir
    }),
    (dir) => Effect.promise(() => fs.rm(dir, { recursive: true, force: true }))
  )

const leaf = "export const x = 1\n"
const imports = (...targets: Array<string>) => targets.map((t, i) => `import { x as x${i} } from "${t}"\nvoid x${i}\n`).join("") + leaf

/** One graph per rule: a few modules that break it (an import may break another rule as well). */
const broken: ReadonlyArray<{ readonly rule: string; readonly files: Record<string, string> }> = [
  {
    rule: "verify-not-capture",
    files: { "src/verify/Probe.ts": imports("../capture/Capture.js"), "src/capture/Capture.ts": leaf }
  },
  {
    rule: "verify-not-capture",
    files: { "src/anchor/Probe.ts": imports("../extract/Html2.js"), "src/extract/Html2.ts": leaf }
  },
  {
    rule: "read-side-not-capture",
    files: { "src/Manifest.ts": imports("./extract/Runner.js"), "src/extract/Runner.ts": leaf }
  },
  {
    rule: "verify-store-contract-only",
    files: { "src/verify/Probe.ts": imports("../store/Format.js"), "src/store/Format.ts": leaf }
  },
  {
    rule: "render-pure",
    files: { "src/answer/Render.ts": imports("../store/CaptureStore.js"), "src/store/CaptureStore.ts": leaf }
  },
  {
    rule: "render-pure",
    files: { "src/render/Probe.ts": imports("../verify/Verifier.js"), "src/verify/Verifier.ts": leaf }
  },
  {
    rule: "render-not-up",
    files: { "src/render/Repair.ts": imports("../answer/Answer.js"), "src/answer/Answer.ts": leaf }
  },
  {
    rule: "only-capture-and-store-write",
    files: { "src/audit/Probe.ts": imports("../store/Filesystem.js"), "src/store/Filesystem.ts": leaf }
  },
  {
    rule: "only-edge-runs-capture",
    files: { "src/answer/Probe.ts": imports("../capture/Capture.js"), "src/capture/Capture.ts": leaf }
  },
  {
    rule: "only-recording-appends-reviews",
    files: { "src/audit/Probe.ts": imports("../store/ReviewLog.js"), "src/store/ReviewLog.ts": leaf }
  },
  {
    rule: "only-migrate-imports-migrate",
    files: { "src/audit/Probe.ts": imports("../store/Migrate.js"), "src/store/Migrate.ts": leaf }
  },
  {
    rule: "records-import-records-only",
    files: { "src/extract/Records.ts": imports("./Extraction.js"), "src/extract/Extraction.ts": leaf }
  },
  {
    rule: "config-records-and-decoding-only",
    files: { "src/config/Probe.ts": imports("../evidence/Signatures.js"), "src/evidence/Signatures.ts": leaf }
  },
  {
    rule: "config-records-and-decoding-only",
    files: { "src/Config.ts": imports("./verify/Policy.js"), "src/verify/Policy.ts": leaf }
  },
  {
    rule: "read-side-not-capture",
    files: { "src/config/Probe.ts": imports("../extract/Records.js"), "src/extract/Records.ts": leaf }
  },
  {
    rule: "internal-imports-no-logic",
    files: { "src/internal/probe.ts": imports("../verify/Policy.js"), "src/verify/Policy.ts": leaf }
  },
  {
    rule: "no-circular",
    files: { "src/extract/A.ts": imports("./B.js"), "src/extract/B.ts": imports("./A.js") }
  },
  {
    // A circle through a type-only import is a circle too.
    rule: "no-circular",
    files: { "src/store/A.ts": `import type { T } from "./B.js"\nexport type U = T\n`, "src/store/B.ts": `import type { U } from "./A.js"\nexport type T = U | 1\n` }
  }
]

describe("architecture (dependency-cruiser, .dependency-cruiser.cjs)", () => {
  it.live("the sources keep every import rule", () =>
    Effect.gen(function*() {
      const options = yield* Effect.promise(() => extractDepcruiseOptions(configFile))
      const result = yield* check(root, options)
      assert.deepStrictEqual(result.summary.violations.map(describeViolation), [])
      // Not vacuous: the sources were found and their `.js` specifiers resolved to the `.ts` modules.
      assert.isAbove(result.summary.totalCruised, 100)
      const verifier = result.modules.find((m) => m.source === "src/verify/Verifier.ts")
      assert.isTrue(verifier?.dependencies.some((d) => d.resolved === "src/store/CaptureStore.ts"))
    }), 60_000)

  it.live("a rule broken on purpose fails the check, naming that rule", () =>
    Effect.gen(function*() {
      const options = yield* Effect.promise(() => extractDepcruiseOptions(configFile))
      for (const { files, rule } of broken) {
        const found = yield* Effect.scoped(Effect.flatMap(graph(files), (dir) => check(dir, options)))
        const rules = [...new Set(found.summary.violations.map((v) => v.rule.name))]
        assert.include(rules, rule, `${Object.keys(files).join(", ")}: ${found.summary.violations.map(describeViolation).join("; ")}`)
        assert.isAbove(found.summary.error, 0)
      }
    }), 60_000)

  it.live("the allowed shapes pass: Verify reads through the contract, Render and the configuration read records", () =>
    Effect.gen(function*() {
      const options = yield* Effect.promise(() => extractDepcruiseOptions(configFile))
      const found = yield* Effect.scoped(Effect.flatMap(
        graph({
          "src/verify/Probe.ts": imports("../store/CaptureStore.js", "../Domain.js", "./VerifiedReport.js"),
          "src/store/CaptureStore.ts": imports("./Filesystem.js"),
          "src/store/Filesystem.ts": imports("./Format.js"),
          "src/store/Format.ts": leaf,
          "src/Domain.ts": leaf,
          "src/verify/VerifiedReport.ts": imports("../Domain.js"),
          "src/render/Repair.ts": imports("../answer/Records.js", "../verify/VerifiedReport.js"),
          "src/answer/Records.ts": imports("../Domain.js"),
          "src/cli/Probe.ts": imports("../capture/Capture.js", "../store/Migrate.js", "../store/Filesystem.js"),
          "src/capture/Capture.ts": imports("../store/CaptureStore.js"),
          "src/store/Migrate.ts": imports("./CaptureStore.js"),
          "src/Config.ts": imports("./config/Probe.js"),
          "src/config/Probe.ts": imports("../Domain.js", "../answer/Records.js", "../internal/keyId.js", "../review/Period.js"),
          "src/internal/keyId.ts": leaf,
          "src/review/Period.ts": leaf
        }),
        (dir) => check(dir, options)
      ))
      assert.deepStrictEqual(found.summary.violations.map(describeViolation), [])
      assert.strictEqual(found.summary.totalCruised, 15)
    }), 60_000)
})
