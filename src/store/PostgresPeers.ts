/**
 * The PostgreSQL store's optional peer dependencies (`@effect/sql`, `@effect/sql-pg` and its `pg`
 * driver), loaded when the store is first used rather than when `citegate/PostgresStore` is
 * imported: an application without them gets `StorePackageMissing`, naming what to install,
 * instead of `ERR_MODULE_NOT_FOUND` from the module loader. Only types are imported statically.
 */
import type * as Migrator from "@effect/sql/Migrator"
import type * as SqlClient from "@effect/sql/SqlClient"
import type * as PgClient from "@effect/sql-pg/PgClient"
import * as Effect from "effect/Effect"
import { StorePackageMissing } from "../Errors.js"

export interface Peers {
  readonly Migrator: typeof Migrator
  readonly SqlClient: typeof SqlClient
  readonly PgClient: typeof PgClient
}

/** What an application installs to use the store. */
export const peerPackages = ["@effect/sql", "@effect/sql-pg"] as const

/** The package a failed import names (Node: "Cannot find package 'x' imported from …"), if it is a missing one. */
const missingPackage = (error: unknown): string | undefined => {
  if (typeof error !== "object" || error === null || !("code" in error) || error.code !== "ERR_MODULE_NOT_FOUND") return undefined
  const message = "message" in error && typeof error.message === "string" ? error.message : ""
  return /Cannot find (?:package|module) '([^']+)'/.exec(message)?.[1] ?? peerPackages[1]
}

let loading: Promise<Peers> | undefined

// One after the other, so a missing package is named the same way every time (`@effect/sql` first).
const load = async (): Promise<Peers> => {
  const Migrator = await import("@effect/sql/Migrator")
  const SqlClient = await import("@effect/sql/SqlClient")
  const PgClient = await import("@effect/sql-pg/PgClient")
  return { Migrator, SqlClient, PgClient }
}

/**
 * The peers, imported once per process. A missing package is `StorePackageMissing`; any other
 * failure to load them (a broken install) is a defect, as a failed static import would have been.
 */
export const peers: Effect.Effect<Peers, StorePackageMissing> = Effect.tryPromise({
  try: () => (loading ??= load().catch((error: unknown) => {
    loading = undefined
    throw error
  })),
  catch: (error) => error
}).pipe(
  Effect.catchAll((error) => {
    const missing = missingPackage(error)
    return missing === undefined
      ? Effect.die(error)
      : Effect.fail(new StorePackageMissing({ missing, install: [...peerPackages] }))
  })
)
