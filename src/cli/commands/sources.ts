/**
 * `sources`: the run's manifest for the drafting model, or the capture texts themselves (read-only).
 */
import * as Command from "@effect/cli/Command"
import * as Effect from "effect/Effect"
import * as Documents from "../../answer/Documents.js"
import * as Manifest from "../../Manifest.js"
import { terminal } from "../../render/Escape.js"
import { CliExit } from "../CliError.js"
import { describe } from "../CommandHelp.js"
import { exitWith, loadConfig, orUsageError } from "../Common.js"
import { choiceOption, configOption, runDirOption } from "../CommonOptions.js"
import * as Io from "../Io.js"
import * as Store from "../Store.js"

const sourceFormats = ["text", "json", "prompt", ...Documents.formats] as const

export const sources = Command.make(
  "sources",
  {
    config: configOption,
    runDir: runDirOption,
    store: Store.storeOption,
    format: choiceOption(
      "format",
      sourceFormats,
      "text",
      "text, json (citegate.manifest/1), prompt (a block for the drafting model), or the capture texts for the model: " +
        "documents (citegate.documents/1), anthropic (Messages document blocks), bedrock (Converse document blocks), evi1 (the EVI1 prompt with its documents)"
    )
  },
  (args) =>
    Effect.gen(function*() {
      const store = yield* orUsageError(Store.choose(args.runDir, args.store))
      const config = yield* orUsageError(loadConfig(args.config))
      const storeLayer = yield* Store.existingRun(store)
      const format = args.format
      const manifest = format === "text" || format === "json" || format === "prompt"
        ? yield* Effect.map(Manifest.make(config), (manifest) => {
          const render = { text: Manifest.toText, json: Manifest.toJson, prompt: Manifest.toPrompt }[format]
          return { manifest, output: render(manifest) }
        }).pipe(Effect.provide(storeLayer), orUsageError)
        : yield* Effect.map(Documents.make(config), (handOff) => ({ manifest: handOff.manifest, output: Documents.render(format, handOff) })).pipe(
          Effect.catchTag("DocumentsTooLarge", (error) =>
            Effect.zipRight(Io.stderr(`${error._tag}: ${terminal(error.message)}\n`), Effect.fail(new CliExit({ code: 1 })))),
          Effect.provide(storeLayer),
          Effect.catchIf((e): e is Exclude<typeof e, CliExit> => !(e instanceof CliExit), (e) => orUsageError(Effect.fail(e)))
        )
      yield* Io.stdout(manifest.output)
      const missing = manifest.manifest.sources.filter((s) => s.status === "missing").length
      if (missing > 0) {
        yield* Io.stderr(`sources: ${missing} of ${manifest.manifest.sources.length} approved source(s) have no usable capture in this run\n`)
      }
      // Like capture: 1 when an approved source cannot be cited from this run.
      yield* exitWith(Manifest.isComplete(manifest.manifest) ? 0 : 1)
    })
).pipe(Command.withDescription(describe(
  "sources",
  "List the run's sources for the drafting model, or hand it their texts (documents, anthropic, bedrock, evi1); read-only.",
  {
    success: "every approved source has a usable capture in the run",
    failure: "an approved source has no usable capture (listed as missing), or the texts pass the hand-off limit"
  }
)))
