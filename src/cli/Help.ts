/**
 * How @effect/cli's own output (help, usage errors) reaches the terminal: its
 * help is always ANSI-styled and subcommand usage lines lack the program name.
 * This console strips the styling when the stream is not a terminal or
 * `NO_COLOR` is set, and puts the program name in front of subcommand usage.
 */
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"

// eslint-disable-next-line no-control-regex
const ansi = /\u001b\[[0-9;]*m/g

/** Whether a stream gets colour: a terminal, and no `NO_COLOR` (https://no-color.org) in the environment. */
export const wantsColour = (stream: { readonly isTTY?: boolean | undefined }, env: NodeJS.ProcessEnv): boolean =>
  stream.isTTY === true && (env.NO_COLOR === undefined || env.NO_COLOR === "")

/** A subcommand's usage line `$ verify --config …` becomes `$ run-pipeline verify --config …`. */
export const withProgramName = (program: string, text: string): string =>
  text.replace(
    /^((?:\u001b\[[0-9;]*m)*)\$ ([a-z][a-z-]*)(?=\s|$|\u001b)/gm,
    (line, styling: string, name: string) => name === program ? line : `${styling}$ ${program} ${name}`
  )

const transform = (colour: boolean, program: string) =>
(args: ReadonlyArray<unknown>) =>
  args.map((arg) => {
    if (typeof arg !== "string") return arg
    const named = withProgramName(program, arg)
    return colour ? named : named.replace(ansi, "")
  })

/** Runs `effect` with a console whose `log` (stdout) and `error` (stderr) output is adjusted as above. */
export const withHelpConsole = (program: string) =>
<A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  Console.consoleWith((base) => {
    const out = transform(wantsColour(process.stdout, process.env), program)
    const err = transform(wantsColour(process.stderr, process.env), program)
    const console: Console.Console = {
      ...base,
      log: (...args) => base.log(...out(args)),
      error: (...args) => base.error(...err(args))
    }
    return Effect.withConsole(effect, console)
  })

/**
 * `--help` (or `-h`) wins wherever it appears: the parser would otherwise
 * validate the other options first and answer "Expected to find option" or
 * "unknown argument" instead of the help. The arguments become the command's
 * name (when the first argument is one of `commands`) and `--help`.
 */
export const helpFirst = (argv: ReadonlyArray<string>, commands: ReadonlyArray<string>): ReadonlyArray<string> => {
  const [node = "node", script = "run-pipeline", ...args] = argv
  if (!args.includes("--help") && !args.includes("-h")) return argv
  const first = args[0]
  return first !== undefined && commands.includes(first) ? [node, script, first, "--help"] : [node, script, "--help"]
}
