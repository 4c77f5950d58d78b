/** `run-pipeline serve` as a separate process: its address, its JSON log lines, its memory (from /proc). */
import { Effect } from "effect"
import { spawn } from "node:child_process"
import * as fs from "node:fs"
import { bin } from "./cliProcess.js"

export interface ServeProcess {
  readonly pid: number
  /** `http://127.0.0.1:PORT` (or https). */
  readonly base: string
  /** The JSON log lines so far (one per request, plus start-up lines). */
  readonly logs: () => ReadonlyArray<Record<string, any>>
  /** Resident and peak resident memory of the process now, in bytes (Linux /proc). */
  readonly memory: () => { readonly rss: number; readonly peak: number }
}

const kib = (status: string, field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB$`, "m").exec(status)![1]) * 1024

/** Starts `serve` with `args` and waits for its "listening" line; stopped (SIGTERM, then SIGKILL) with the scope. */
export const startServe = (args: ReadonlyArray<string>, protocol: "http" | "https" = "http") =>
  Effect.acquireRelease(
    Effect.async<ServeProcess, Error>((resume) => {
      const child = spawn(process.execPath, [bin, "serve", ...args], { stdio: ["ignore", "pipe", "pipe"] })
      let stderr = ""
      let resumed = false
      const logs = () =>
        stderr.split("\n").flatMap((line) => {
          try {
            return [JSON.parse(line)]
          } catch {
            return []
          }
        })
      child.stderr.on("data", (d) => {
        stderr += d
        if (resumed) return
        const listening = logs().find((l) => l.message === "listening")
        if (listening === undefined) return
        resumed = true
        const port = /:(\d+)$/.exec(String(listening.annotations.address))![1]
        resume(Effect.succeed({
          pid: child.pid!,
          base: `${protocol}://127.0.0.1:${port}`,
          logs,
          memory: () => {
            const status = fs.readFileSync(`/proc/${child.pid}/status`, "utf8")
            return { rss: kib(status, "VmRSS"), peak: kib(status, "VmHWM") }
          }
        }))
      })
      child.on("close", (code) => {
        if (!resumed) resume(Effect.fail(new Error(`serve exited ${code} before listening: ${stderr}`)))
      })
      // Kept for the release below.
      children.set(child.pid!, child)
    }),
    (served) =>
      Effect.promise(() => {
        const child = children.get(served.pid)!
        children.delete(served.pid)
        if (child.exitCode !== null) return Promise.resolve()
        return new Promise<void>((resolve) => {
          const hard = setTimeout(() => child.kill("SIGKILL"), 5_000)
          child.once("close", () => {
            clearTimeout(hard)
            resolve()
          })
          child.kill("SIGTERM")
        })
      })
  )

const children = new Map<number, ReturnType<typeof spawn>>()

/** The request log line of `path` (method and status as the server logged them). */
export const requestLogs = (served: ServeProcess, path: string) =>
  served.logs().filter((l) => l.message === "request" && l.annotations.path === path).map((l) => l.annotations)
