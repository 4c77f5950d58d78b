/**
 * Descriptions of configuration and store failures (configuration, migration map, run directory, store).
 */
import * as Match from "effect/Match"
import type { InvalidConfig, InvalidMigrationMap, InvalidRunDirectory, RunExists, StorePackageMissing, StoreUnavailable } from "../../Errors.js"
import { formatPath } from "../../Errors.js"
import { type Description, omittedIssues } from "./Shared.js"

export const configError = (
  error: InvalidConfig | InvalidMigrationMap | InvalidRunDirectory | StoreUnavailable | RunExists | StorePackageMissing
): Description =>
  Match.valueTags(error, {
    InvalidMigrationMap: (e): Description => ({
      title: "Invalid migration map",
      fields: [
        ...e.issues.map((issue) => [formatPath(issue.path), issue.message] as const),
        ...omittedIssues(e.omitted).map((line) => ["…", line] as const)
      ],
      fix: "Correct the migration map at the paths shown: { \"entries\": [{ \"file\": …, \"source\": … }] }."
    }),
    InvalidConfig: (e): Description => ({
      title: "Invalid configuration",
      fields: [
        ...e.issues.map((issue) => [formatPath(issue.path), issue.message] as const),
        ...omittedIssues(e.omitted).map((line) => ["…", line] as const)
      ],
      fix: "Correct the configuration at the paths shown."
    }),
    InvalidRunDirectory: (e): Description => ({
      title: "Unusable run directory",
      fields: [["path", e.path], ["detail", e.detail]],
      fix: "Point --run-dir at the run directory written by `run-pipeline capture`."
    }),
    StoreUnavailable: (e): Description => ({
      title: "Capture store unavailable",
      fields: [["run", e.run], ["detail", e.detail]],
      fix: "Check the database URL and credentials, run the store's migration, and name with --run-dir a run written by `run-pipeline capture --store …`."
    }),
    RunExists: (e): Description => ({
      title: "Run already exists",
      fields: [["run", e.run]],
      fix: "Captures go into a new run: name one that does not exist yet with --run-dir. The existing run was left untouched."
    }),
    StorePackageMissing: (e): Description => ({
      title: "PostgreSQL store packages not installed",
      fields: [["missing", e.missing], ["install", e.install.join(" ")]],
      fix: `Install the store's optional peer dependencies: npm install ${e.install.join(" ")}`
    })
  })
