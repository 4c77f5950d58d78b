/** The `run-pipeline` CLI as a separate process, for tests that check it as a user runs it. */
import { Effect } from "effect"
import { spawn } from "node:child_process"
import { fixturePath } from "./support.js"

/** The bin users run (the bundled, compiled CLI; the test setup builds it from the current sources). */
export const bin = fixturePath("..", "bin", "run-pipeline.js")

export interface Ran {
  readonly code: number | null
  readonly stdout: string
  readonly stderr: string
}

/** Runs the CLI asynchronously, so this process's test servers keep answering while it runs. */
export const cli = (args: ReadonlyArray<string>, cwd?: string) =>
  Effect.async<Ran>((resume) => {
    const child = spawn(process.execPath, [bin, ...args], { cwd: cwd ?? process.cwd(), stdio: ["ignore", "pipe", "pipe"] })
    let stdout = ""
    let stderr = ""
    child.stdout.on("data", (d) => (stdout += d))
    child.stderr.on("data", (d) => (stderr += d))
    child.on("close", (code) => resume(Effect.succeed({ code, stdout, stderr })))
  })
