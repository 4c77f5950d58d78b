/**
 * `run-pipeline validate-graph FILE`: checks a JSON-LD rendering (`--format jsonld` of verify,
 * verify-answer, audit or run) against citegate's SHACL shapes and prints the violations as data
 * (src/evidence/Graph.ts, docs/evidence.md). Offline and read-only.
 *
 * Exit codes: 0 the graph conforms; 1 it does not (the violations are the output); 2 the file cannot be
 * validated: unreadable, not UTF-8 JSON or JSON-LD, over a limit, or naming a context other than
 * citegate's.
 */
import * as Args from "@effect/cli/Args"
import * as Command from "@effect/cli/Command"
import * as Effect from "effect/Effect"
import * as RenderGraph from "../../evidence/RenderGraph.js"
import { terminal } from "../../render/Escape.js"
import { CliExit } from "../CliError.js"
import { describe } from "../CommandHelp.js"
import { choiceOption } from "../CommonOptions.js"
import * as Io from "../Io.js"

// Loaded when the command runs: the JSON-LD processor and the SHACL engine cost every other command nothing.
const Graph = Effect.promise(() => import("../../evidence/Graph.js"))

export const validateGraph = Command.make(
  "validate-graph",
  {
    file: Args.file({ name: "file" }).pipe(Args.withDescription("The JSON-LD document (a --format jsonld rendering)")),
    format: choiceOption("format", RenderGraph.graphFormats, "text", "Output format: text | json")
  },
  (args) =>
    Effect.gen(function*() {
      const graph = yield* Graph
      const validation = yield* graph.validateFile(args.file).pipe(
        Effect.catchAll((error) =>
          Effect.zipRight(Io.stderr(`${error._tag}: ${terminal(error.message)}\n`), Effect.fail(new CliExit({ code: 2 })))
        )
      )
      yield* Io.stdout(RenderGraph.render(args.format, validation))
      if (!validation.conforms) {
        yield* Io.stderr(`validate-graph: ${validation.violations.length} violation(s)\n`)
        return yield* Effect.fail(new CliExit({ code: 1 }))
      }
    })
).pipe(Command.withDescription(describe(
  "validate-graph",
  "Check a JSON-LD rendering against citegate's SHACL shapes; print the violations as data (offline, read-only).",
  {
    success: "the graph conforms to the shapes",
    failure: "the graph violates a shape (each violation: focus node, path, shape, message)",
    usage: "bad options; a file that is unreadable, not JSON-LD, over a limit, or names a context other than citegate's"
  }
)))
