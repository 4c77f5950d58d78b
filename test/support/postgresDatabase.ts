/**
 * The set-up every PostgreSQL test file shares: a throwaway cluster (test/support/postgresCluster.ts),
 * one new database in it, migrated by the store's own `migrate`, and the login roles the file needs
 * made members of the migration's group roles, as an operator makes them (docs/deployment.md). Call
 * at the top level of a test file: it registers the `beforeAll` that starts it and the `afterAll`
 * that stops it, and returns a handle filled in before the first test runs. Without the server
 * binaries it does nothing (the file's tests skip, see `skipPostgres`).
 */
import { Effect } from "effect"
import { afterAll, beforeAll } from "vitest"
import * as PostgresStore from "../../src/store/Postgres.js"
import { type Cluster, createDatabase, skipPostgres, startCluster } from "./postgresCluster.js"

export { skipPostgres } from "./postgresCluster.js"

export interface MigratedDatabase {
  readonly cluster: Cluster
  /** The database's name. */
  readonly database: string
  /** A connection URL to the database as `user` (default the superuser `postgres`). */
  readonly url: (user?: string) => string
  /** The migrations `migrate` ran, as `id_name`. */
  readonly migrations: ReadonlyArray<string>
}

/**
 * `prefix` names the database; `logins` maps each login role to make to the group roles it is a
 * member of (none: a role with no rights at all).
 */
export const migratedDatabase = (prefix: string, logins: Readonly<Record<string, ReadonlyArray<string>>> = {}) => {
  let state: MigratedDatabase | undefined
  beforeAll(async () => {
    if (skipPostgres) return
    const cluster = await startCluster()
    try {
      const database = createDatabase(cluster, prefix)
      const url = (user = "postgres") => cluster.url(database, user)
      const ran = await Effect.runPromise(PostgresStore.migrate.pipe(Effect.provide(PostgresStore.layerClient({ url: url() }))))
      const roles = Object.entries(logins).map(([login, groups]) =>
        `CREATE ROLE ${login} LOGIN${groups.length === 0 ? "" : ` IN ROLE ${groups.join(", ")}`};`
      )
      if (roles.length > 0) cluster.psql(database, roles.join("\n"))
      state = { cluster, database, url, migrations: ran.map(([id, name]) => `${id}_${name}`) }
    } catch (error) {
      cluster.stop()
      throw error
    }
  }, 120_000)
  afterAll(() => state?.cluster.stop())
  return {
    get current(): MigratedDatabase {
      if (state === undefined) throw new Error("the PostgreSQL database is not set up (skipped, or used before beforeAll)")
      return state
    }
  }
}
