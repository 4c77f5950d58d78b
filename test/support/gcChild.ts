/**
 * A measurement script run in a process of its own with `--expose-gc` (loaded through tsx), and the
 * one JSON line it prints: heap figures are only meaningful in a process that nothing else shares.
 */
import { Effect } from "effect"
import { spawn } from "node:child_process"

export const gcChildJson = <A>(script: string, args: ReadonlyArray<string> = []) =>
  Effect.async<A, Error>((resume) => {
    const child = spawn(process.execPath, ["--expose-gc", "--import", "tsx", script, ...args], { stdio: ["ignore", "pipe", "pipe"] })
    let stdout = ""
    let stderr = ""
    child.stdout.on("data", (d) => (stdout += d))
    child.stderr.on("data", (d) => (stderr += d))
    child.on("close", (code) => resume(code === 0 ? Effect.succeed(JSON.parse(stdout) as A) : Effect.fail(new Error(`exit ${code}: ${stderr}`))))
  })
