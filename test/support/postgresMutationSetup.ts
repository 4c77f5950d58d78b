/**
 * Global setup for mutation runs of the PostgreSQL store (vitest.mutation.config.ts, with
 * `CITEGATE_MUTATION_POSTGRES=1`): one throwaway cluster for the whole run, its port handed to the
 * test files through `provide`. A mutation run reruns the chosen test files once per mutant; a
 * cluster per file run would cost an initdb and a server start each time. The server is real
 * (test/support/postgresCluster.ts); each file run still makes its own databases and runs the
 * migration itself (test/mutants.postgres.test.ts). Without the binaries nothing is provided and the
 * files fall back to their own cluster or skip.
 */
import type { TestProject } from "vitest/node"
import { skipPostgres, startCluster } from "./postgresCluster.js"

declare module "vitest" {
  export interface ProvidedContext {
    /** The port of the shared cluster (trust authentication, superuser `postgres`); 0 when none. */
    citegatePostgresPort: number
  }
}

export default async function setup(project: TestProject) {
  if (skipPostgres) {
    project.provide("citegatePostgresPort", 0)
    return
  }
  const cluster = await startCluster()
  project.provide("citegatePostgresPort", cluster.port)
  // A worker that ends without its teardown (a mutant that hangs) still stops the server.
  process.once("exit", cluster.stop)
  return () => cluster.stop()
}
