/**
 * `demo`: the whole pipeline offline against a synthetic source server on 127.0.0.1 (see ../Demo.ts).
 */
import * as Command from "@effect/cli/Command"
import * as Options from "@effect/cli/Options"
import { describe } from "../CommandHelp.js"
import { orUsageError } from "../Common.js"
import * as Demo from "../Demo.js"

export const demo = Command.make(
  "demo",
  {
    output: Options.directory("output").pipe(
      Options.withDefault("demo-output"),
      Options.withDescription("Where the demo writes its run and renderings, in a new timestamped folder (default ./demo-output)")
    )
  },
  (args) => Demo.run(args.output).pipe(orUsageError)
).pipe(Command.withDescription(describe("demo", "Run the whole pipeline offline against a synthetic source server on 127.0.0.1.", {
  success: "the demo ran and wrote its renderings"
})))
