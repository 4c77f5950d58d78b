/**
 * The judge's evaluation against the endpoint a pipeline.json configures (`review.judge`):
 *
 *   tsx scripts/judge-eval.ts --config pipeline.json [--cases fixtures/review/judge-cases.json]
 *
 * The key is read as for every command (apiKeyEnv or apiKeyFile). Prints agreement and every miss;
 * exits 1 when any case missed.
 */
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as fs from "node:fs"
import * as path from "node:path"
import * as Config from "../src/Config.js"
import * as Judge from "../src/review/Judge.js"
import { decodeCases, evaluate, report } from "../src/review/JudgeEvaluation.js"
import * as JudgeSetup from "../src/review/JudgeSetup.js"

const argument = (name: string) => {
  const at = process.argv.indexOf(name)
  return at < 0 ? undefined : process.argv[at + 1]
}

const configFile = argument("--config")
if (configFile === undefined) {
  process.stderr.write("usage: tsx scripts/judge-eval.ts --config pipeline.json [--cases cases.json]\n")
  process.exit(2)
}
const casesFile = argument("--cases") ?? path.join(import.meta.dirname, "..", "fixtures", "review", "judge-cases.json")

const program = Effect.gen(function*() {
  const config = yield* Config.decodeText(fs.readFileSync(configFile, "utf8"))
  const setup = yield* JudgeSetup.resolve(config, { configDirectory: path.dirname(path.resolve(configFile)) })
  if (Option.isNone(setup)) return yield* Effect.dieMessage("review.judge.mode is off: nothing to evaluate")
  const cases = decodeCases(fs.readFileSync(casesFile, "utf8")).cases
  const evaluation = yield* Effect.flatMap(Judge.Judge, (judge) => evaluate(judge, cases)).pipe(Effect.provide(Judge.layer(setup.value)))
  process.stdout.write(report(evaluation))
  process.exitCode = evaluation.misses.length === 0 ? 0 : 1
})

NodeRuntime.runMain(program)
