/**
 * `store-init`: citegate's tables, trigger and roles in a PostgreSQL database.
 */
import * as Command from "@effect/cli/Command"
import * as Effect from "effect/Effect"
import { StoreChoiceInvalid } from "../CliError.js"
import { describe, usageCodes } from "../CommandHelp.js"
import { orUsageError } from "../Common.js"
import * as Io from "../Io.js"
import * as Store from "../Store.js"

export const storeInit = Command.make(
  "store-init",
  { store: Store.storeOption },
  (args) =>
    Effect.gen(function*() {
      const store = yield* orUsageError(Store.choose("", args.store))
      if (store._tag !== "Postgres") {
        return yield* orUsageError(Effect.fail(new StoreChoiceInvalid({ detail: "store-init needs a database" })))
      }
      const ran = yield* orUsageError(Store.initialise(store.url))
      const lines = ran.length === 0
        ? ["the schema is current; no migration ran"]
        : ran.map(([id, name]) => `migrated  ${id}_${name}`)
      yield* Io.stdout(lines.join("\n") + "\n")
    })
).pipe(Command.withDescription(describe(
  "store-init",
  "Create or upgrade citegate's tables, append-only trigger and roles in PostgreSQL (--store or CITEGATE_DATABASE_URL); run as the database owner.",
  { success: "the schema is current (migrations ran, or none was needed)", usage: `${usageCodes}, or the database refused (unreachable, no right)` }
)))
