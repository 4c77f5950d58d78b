/**
 * The options several `run-pipeline` commands share (config, run directory, report, mode, format, --out).
 * @effect/cli's choice options say "Expected one of …" without the flag; `choiceOption` names it.
 */
import * as HelpDoc from "@effect/cli/HelpDoc"
import * as Options from "@effect/cli/Options"
import * as ValidationError from "@effect/cli/ValidationError"
import * as Effect from "effect/Effect"
import * as Render from "../render/Render.js"

export const configOption = Options.file("config").pipe(
  Options.withDescription("The operator's pipeline.json (approved sources, labels, budgets)")
)
export const runDirOption = Options.directory("run-dir").pipe(Options.withDescription("The run directory of captures"))
export const reportOption = Options.file("report").pipe(Options.withDescription("The drafted report (JSON)"))
export const modeOption = Options.choice("mode", ["reject", "drop"]).pipe(
  Options.optional,
  Options.withDescription(
    "reject: any failure rejects the report; drop: failed facts are retracted. Default: the config's verify.mode, else reject"
  )
)

/** A choice with a default whose error names the flag (the parser's own message does not). */
export const choiceOption = <const C extends ReadonlyArray<string>>(
  name: string,
  choices: C,
  fallback: C[number],
  description: string
) =>
  Options.text(name).pipe(
    Options.withPseudoName(choices.join(" | ")),
    Options.withDefault(fallback),
    Options.mapEffect((value) =>
      choices.includes(value)
        ? Effect.succeed(value as C[number])
        : Effect.fail(ValidationError.invalidValue(HelpDoc.p(
          `--${name} must be one of ${choices.join(", ")}; got ${JSON.stringify(value)}`
        )))
    ),
    Options.withDescription(`${description} (default ${fallback})`)
  )

export const formatOption = choiceOption("format", Render.formats, "text", `Output format: ${Render.formats.join(" | ")}`)
/** `verify` and `verify-answer` also render a rejection as repair instructions for the drafting model. */
const repairFormats = [...Render.formats, "repair"] as const
export const repairFormatOption = choiceOption(
  "format",
  repairFormats,
  "text",
  `Output format: ${repairFormats.join(" | ")} (repair: instructions for the drafting model)`
)
export const outOption = Options.file("out").pipe(
  Options.optional,
  Options.withDescription("Write the rendering to this file (atomically) instead of stdout; never inside the run directory or over an input")
)
export const forceOption = Options.boolean("force").pipe(
  Options.withDescription("Let --out replace an existing writable file (never a read-only one such as a capture record of any run, the config or the report)")
)


export const loopbackOption = Options.boolean("allow-loopback-http").pipe(
  Options.withDescription("Test mode: http (or https) to the literal host 127.0.0.1 only, and no other address. Off unless given")
)
