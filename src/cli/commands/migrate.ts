/**
 * `migrate`: approved legacy records restored as v1 captures in a new run.
 */
import * as Command from "@effect/cli/Command"
import * as Options from "@effect/cli/Options"
import * as Effect from "effect/Effect"
import { terminal } from "../../render/Escape.js"
import * as CaptureStore from "../../store/CaptureStore.js"
import * as Migrate from "../../store/Migrate.js"
import { describe, usageCodes } from "../CommandHelp.js"
import { exitWith, orUsageError } from "../Common.js"
import { runDirOption } from "../CommonOptions.js"
import * as Io from "../Io.js"

export const migrate = Command.make(
  "migrate",
  {
    legacy: Options.directory("legacy").pipe(Options.withDescription("Directory of legacy records (only read)")),
    map: Options.file("map").pipe(Options.withDescription("The operator's map: legacy file -> exact source")),
    runDir: runDirOption
  },
  (args) =>
    Effect.gen(function*() {
      const map = yield* orUsageError(Effect.flatMap(Io.readText(args.map, "migration map"), Migrate.decodeMap))
      yield* orUsageError(Io.createRunDirectory(args.runDir))
      const result = yield* Migrate.migrate({ legacyDirectory: args.legacy, map }).pipe(
        Effect.provide(CaptureStore.layerFileSystem({ directory: args.runDir })),
        orUsageError
      )
      const lines = [
        ...result.migrated.map((m) => `migrated  ${terminal(m.file)} -> ${terminal(m.source)} (sha256 ${m.sha256.slice(0, 12)}…)`),
        ...result.rejected.map((r) => `REJECTED  ${terminal(r.file)}: ${r.reason}: ${terminal(r.detail)}`),
        ...result.skipped.map((file) => `skipped   ${terminal(file)}: not approved by the map, left alone`),
        `${result.migrated.length} migrated, ${result.rejected.length} rejected, ${result.skipped.length} skipped`
      ]
      yield* Io.stdout(lines.join("\n") + "\n")
      yield* exitWith(result.rejected.length === 0 ? 0 : 1)
    })
).pipe(Command.withDescription(describe("migrate", "Restore approved legacy records as v1 captures in a NEW run directory.", {
  success: "every approved legacy record migrated",
  failure: "a legacy record was rejected",
  usage: `${usageCodes}, existing run directory`
})))
