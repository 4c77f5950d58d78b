// `npm run run-pipeline -- <command> …`: the same CLI as the `run-pipeline` bin, from the TypeScript sources.
// npm runs scripts in the package directory; relative paths are meant from where the command was typed.
if (process.env.INIT_CWD !== undefined && process.env.INIT_CWD !== "") process.chdir(process.env.INIT_CWD)
await import("../src/cli/main.js")
