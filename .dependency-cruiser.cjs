/**
 * The import rules between citegate's parts (docs/design.md, "Layout and the
 * rules between the parts"). Checked by test/architecture.test.ts in
 * `npm test`; `npx depcruise src --config .dependency-cruiser.cjs` prints the
 * same check.
 *
 * The rules see imports, type-only imports included (`tsPreCompilationDeps`).
 * They cannot see what a module does with a service it is handed: the
 * `CaptureStore` contract has `write`, and which code calls it is kept by
 * review and by the tests (docs/design.md says so).
 */

// The parts, as path patterns (relative to the repository root).
const records = "^src/(Domain|Errors)\\.ts$|^src/errors/|^src/[^/]+/Records\\.ts$|^src/[^/]+/[^/]+/Records\\.ts$|^src/verify/VerifiedReport\\.ts$"
const internal = "^src/internal/"
const verify = "^src/(verify|anchor)/"
const capture = "^src/(capture|extract)/"
const render = "^src/render/|^src/[^/]+/Render[^/]*\\.ts$"
// The store implementations: they write (Filesystem, Memory, Postgres) or remove leftovers (Inspect's sweep).
const storeWriters = "^src/store/(Filesystem|Memory|Postgres|PostgresMigrations|PostgresPeers|Inspect|ReviewFilesystem|ReviewPostgres)\\.ts$"
// The edge (CLI, service, public index) assembles layers, so it may name an implementation.
const edge = "^src/(cli|server)/|^src/index\\.ts$"

/** @type {import("dependency-cruiser").IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: "no-circular",
      severity: "error",
      comment: "No import circle anywhere in src (type-only imports included).",
      from: { path: "^src/" },
      to: { circular: true }
    },
    {
      name: "verify-not-capture",
      severity: "error",
      comment: "Verify is read-only: it never imports Capture (fetching, extraction).",
      from: { path: verify },
      to: { path: capture }
    },
    {
      name: "read-side-not-capture",
      severity: "error",
      comment:
        "What is built on Verify (answers, audits) and what Verify reads (Manifest.ts, Config.ts and config/) never imports Capture either: an audit recaptures through the edge, never by itself.",
      from: { path: "^src/(answer|audit)/|^src/(Manifest|Config)\\.ts$|^src/config/" },
      to: { path: capture }
    },
    {
      name: "verify-store-contract-only",
      severity: "error",
      comment:
        "Verify reads captures only through the CaptureStore contract (store/CaptureStore.ts), never a store implementation, Migrate or the stored form.",
      from: { path: verify },
      to: { path: "^src/store/", pathNot: "^src/store/CaptureStore\\.ts$" }
    },
    {
      name: "render-pure",
      severity: "error",
      comment: "Renderers are pure functions of results: no store, no Capture, no verification step (only its records).",
      from: { path: render },
      to: { path: `^src/store/|${capture}|^src/verify/(?!VerifiedReport\\.ts$|Records\\.ts$)` }
    },
    {
      name: "render-not-up",
      severity: "error",
      comment:
        "The shared rendering layer (src/render/) sits below the concepts that use it: it reads their records, never their modules (answer/Render.ts builds on render/, not the reverse).",
      from: { path: "^src/render/" },
      to: { path: "^src/(answer|audit|review|evidence|server|cli)/", pathNot: "/Records\\.ts$" }
    },
    {
      name: "only-capture-and-store-write",
      severity: "error",
      comment:
        "Only Capture (capture/), the store itself (store/: the contract binds the filesystem store, Migrate copies records) and the edge that assembles layers may import a store implementation.",
      from: { pathNot: `^src/(capture|store)/|${edge}` },
      to: { path: storeWriters }
    },
    {
      name: "only-recording-appends-reviews",
      severity: "error",
      comment:
        "The review log (store/ReviewLog.ts, which has `append`) is reached only by review recording (review/Decisions.ts), the store itself and the edge: never by Verify, answers, audits or Render.",
      from: { pathNot: `^src/review/Decisions\\.ts$|^src/store/|${edge}` },
      to: { path: "^src/store/Review" }
    },
    {
      name: "only-edge-runs-capture",
      severity: "error",
      comment: "Capturing (writing records) starts from capture/ itself or the edge, never from Verify, answers, audits, Render or records.",
      from: { path: "^src/", pathNot: `^src/capture/|${edge}` },
      to: { path: "^src/capture/Capture\\.ts$" }
    },
    {
      name: "only-migrate-imports-migrate",
      severity: "error",
      comment: "Migration writes records: only the edge starts it.",
      from: { path: "^src/", pathNot: edge },
      to: { path: "^src/store/Migrate\\.ts$" }
    },
    {
      name: "records-import-records-only",
      severity: "error",
      comment:
        "Records (strict Schemas, tagged errors) import no logic, no service and no storage: only other records (and internal/passedMemo.ts, a leaf importing nothing, that bounds a check's memory).",
      from: { path: records },
      to: { path: "^src/", pathNot: `${records}|^src/internal/passedMemo\\.ts$` }
    },
    {
      name: "config-records-and-decoding-only",
      severity: "error",
      comment:
        "The configuration (Config.ts and its sections in config/) is records and their decoding: it imports records, internal leaves, its own sections and the grammars it checks while decoding (review/JudgeConfig.ts, review/Period.ts), never a service, a store or a part's logic.",
      from: { path: "^src/config/|^src/Config\\.ts$" },
      to: { path: "^src/", pathNot: `${records}|${internal}|^src/config/|^src/review/(JudgeConfig|Period)\\.ts$` }
    },
    {
      name: "ui-browser-only",
      comment:
        "The review page (src/ui/) is browser code bundled on its own: it speaks to the service over its HTTP API only, and nothing in the service imports it.",
      severity: "error",
      from: { path: "^src/ui/" },
      to: { path: "^src/", pathNot: "^src/ui/" }
    },
    {
      name: "nothing-imports-ui",
      severity: "error",
      comment: "The service serves the built page as files (server/Ui.ts); it never imports the browser code.",
      from: { path: "^src/", pathNot: "^src/ui/" },
      to: { path: "^src/ui/" }
    },
    {
      name: "internal-imports-no-logic",
      severity: "error",
      comment: "Internal modules are leaves: they import only records and each other, never a service or a part.",
      from: { path: internal },
      to: { path: "^src/", pathNot: `${records}|${internal}` }
    }
  ],
  options: {
    includeOnly: "^src/",
    tsPreCompilationDeps: true,
    tsConfig: { fileName: "tsconfig.json" },
    enhancedResolveOptions: {
      // dependency-cruiser maps `./X.js` in the sources to `./X.ts` itself (NodeNext); "source" is the package's own condition.
      conditionNames: ["source", "import", "node", "default"],
      extensions: [".ts", ".js", ".mjs", ".cjs", ".json"]
    },
    exclude: { path: "\\.d\\.ts$" }
  }
}
