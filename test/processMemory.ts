/**
 * Resident memory of a process and all its descendants (an extraction process
 * counts with the CLI or server that started it), read from /proc (Linux):
 * sampled every few milliseconds while it runs, the peak of the sum kept.
 */
import * as fs from "node:fs"

export const hasProc = fs.existsSync("/proc/self/task")

const read = (file: string) => {
  try {
    return fs.readFileSync(file, "latin1")
  } catch {
    return ""
  }
}

/** The process and its descendants, by /proc/<pid>/task/<tid>/children. */
export const processTree = (pid: number): Array<number> => {
  const all = [pid]
  for (let i = 0; i < all.length; i++) {
    const tasks = (() => {
      try {
        return fs.readdirSync(`/proc/${all[i]}/task`)
      } catch {
        return []
      }
    })()
    for (const task of tasks) {
      for (const child of read(`/proc/${all[i]}/task/${task}/children`).trim().split(/\s+/)) {
        if (child !== "") all.push(Number(child))
      }
    }
  }
  return all
}

const residentKb = (pid: number) => Number(/^VmRSS:\s+(\d+) kB$/m.exec(read(`/proc/${pid}/status`))?.[1] ?? 0)

/** Starts sampling; `stop()` returns the peak resident bytes of the whole tree and of the root alone. */
export const watchPeak = (pid: number, intervalMs = 10) => {
  let tree = 0
  let root = 0
  let processes = 1
  const sample = () => {
    const pids = processTree(pid)
    processes = Math.max(processes, pids.length)
    const sizes = pids.map(residentKb)
    tree = Math.max(tree, sizes.reduce((a, b) => a + b, 0) * 1024)
    root = Math.max(root, sizes[0]! * 1024)
  }
  const timer = setInterval(sample, intervalMs)
  return {
    stop: () => {
      clearInterval(timer)
      return { tree, root, processes }
    }
  }
}
