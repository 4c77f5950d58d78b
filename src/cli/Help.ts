/**
 * How @effect/cli's own output (help, usage errors) reaches the terminal: its
 * help is always ANSI-styled and subcommand usage lines lack the program name.
 * This console strips the styling when the stream is not a terminal or
 * `NO_COLOR` is set, and puts the program name in front of subcommand usage.
 */
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"

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

/** What a free-text option's value is, in place of the parser's "A user-defined piece of text." */
const valueDescriptions: Record<string, string> = {
  store: "A postgres:// or postgresql:// URL.",
  listen: "HOST:PORT: an IP address and a port.",
  "manifest-digest": "A manifest digest: 64 lowercase hex digits, as `sources --format json` prints it."
}

/**
 * Each text option's value described: a choice made with a text option (its pseudo name lists the
 * choices, `text | json`) says "One of: …", the others say what they take (`valueDescriptions`).
 */
export const describeValues = (text: string): string =>
  text.replace(
    /^((?:\u001b\[[0-9;]*m)*--([a-z-]+) ?([^\n]*)\n\n\s+(?:\u001b\[[0-9;]*m)*)A user-defined piece of text\./gm,
    (whole, head: string, name: string, pseudo: string) => {
      const plain = pseudo.replace(ansi, "")
      const described = plain.includes(" | ") ? `One of: ${plain.split(" | ").join(", ")}.` : valueDescriptions[name]
      return described === undefined ? whole : `${head}${described}`
    }
  )

/**
 * The top-level help's COMMANDS section, one line per command: its name and the first sentence of
 * its description (`summaries`), instead of every command's full usage padded to the longest.
 */
export const oneLinePerCommand = (text: string, summaries: ReadonlyMap<string, string>): string => {
  const at = text.search(/^(?:\u001b\[[0-9;]*m)*COMMANDS/m)
  if (at < 0) return text
  const width = Math.max(...[...summaries.keys()].map((name) => name.length))
  const section = text.slice(at).replace(
    /^(\s*- )((?:\u001b\[[0-9;]*m)*)([a-z][a-z-]*)\b.*$/gm,
    (line, bullet: string, _styling: string, name: string) => {
      const summary = summaries.get(name)
      return summary === undefined ? line : `${bullet}${name.padEnd(width)}  ${summary}`
    }
  )
  return text.slice(0, at) + section
}

const transform = (colour: boolean, program: string, summaries: ReadonlyMap<string, string>) =>
(args: ReadonlyArray<unknown>) =>
  args.map((arg) => {
    if (typeof arg !== "string") return arg
    const named = oneLinePerCommand(describeValues(withProgramName(program, arg)), summaries)
    return colour ? named : named.replace(ansi, "")
  })

/** Runs `effect` with a console whose `log` (stdout) and `error` (stderr) output is adjusted as above. */
export const withHelpConsole = (program: string, summaries: ReadonlyMap<string, string> = new Map()) =>
<A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  Console.consoleWith((base) => {
    const out = transform(wantsColour(process.stdout, process.env), program, summaries)
    const err = transform(wantsColour(process.stderr, process.env), program, summaries)
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
