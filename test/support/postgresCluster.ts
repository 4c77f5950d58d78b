/**
 * A throwaway PostgreSQL cluster for tests and the bench: initdb into a new
 * temporary directory, started with pg_ctl on a free 127.0.0.1 port with its
 * unix socket in the same directory, stopped and removed afterwards. As root
 * (CI), initdb and pg_ctl run as the `postgres` OS user, which owns the
 * directory: the server refuses to run as root.
 *
 * Without the binaries the tests skip with the reason printed, unless CI is
 * set: then they fail (the same rule as the browser test).
 */
import { execFileSync, spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as net from "node:net"
import * as os from "node:os"
import * as path from "node:path"

/** Where Debian's postgresql package puts the server binaries (override with CITEGATE_PG_BIN). */
export const pgBin = process.env["CITEGATE_PG_BIN"] ?? "/usr/lib/postgresql/15/bin"

export const inCi = (process.env["CI"] ?? "") !== "" && process.env["CI"] !== "false" && process.env["CI"] !== "0"
export const postgresPresent = fs.existsSync(path.join(pgBin, "initdb")) && fs.existsSync(path.join(pgBin, "pg_ctl"))
/** Skip (outside CI only) when the binaries are absent. */
export const skipPostgres = !postgresPresent && !inCi
export const missingReason =
  `PostgreSQL server binaries not found in ${pgBin} (apt-get install postgresql, or set CITEGATE_PG_BIN)`

if (skipPostgres) {
  process.stderr.write(`SKIPPED PostgreSQL tests: ${missingReason}; with CI set, this is a failure.\n`)
}

export interface Cluster {
  readonly port: number
  readonly directory: string
  /** A connection URL for `user` (trust authentication: no password) to `database`. */
  readonly url: (database: string, user?: string) => string
  /** Runs SQL as the superuser `postgres` in `database` through psql; returns its stdout. */
  readonly psql: (database: string, sql: string) => string
  readonly stop: () => void
}

const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const server = net.createServer()
    server.once("error", reject)
    server.listen(0, "127.0.0.1", () => {
      const address = server.address()
      server.close(() => (typeof address === "object" && address !== null ? resolve(address.port) : reject(new Error("no port"))))
    })
  })

const asRoot = typeof process.getuid === "function" && process.getuid() === 0

/** Runs a server binary, as the postgres OS user when we are root. */
const runServerTool = (tool: string, args: ReadonlyArray<string>, cwd: string) => {
  const file = path.join(pgBin, tool)
  const [command, argv] = asRoot ? ["runuser", ["-u", "postgres", "--", file, ...args]] : [file, [...args]]
  const result = spawnSync(command, argv, { cwd, encoding: "utf8" })
  if (result.status !== 0) {
    throw new Error(`${tool} failed (${result.status}): ${result.stderr}${result.stdout}`)
  }
  return result.stdout
}

/**
 * `durable`: fsync on, as in production (the bench); tests run without it. `settings`: more server
 * settings (`name=value`, each passed as `-c`), e.g. `shared_preload_libraries=pg_stat_statements`.
 */
export const startCluster = async (
  options: { readonly durable?: boolean; readonly settings?: ReadonlyArray<string> } = {}
): Promise<Cluster> => {
  if (!postgresPresent) throw new Error(missingReason)
  const directory = fs.mkdtempSync(path.join(os.tmpdir(), "citegate-pg-"))
  if (asRoot) {
    const uid = Number(execFileSync("id", ["-u", "postgres"], { encoding: "utf8" }).trim())
    const gid = Number(execFileSync("id", ["-g", "postgres"], { encoding: "utf8" }).trim())
    fs.chownSync(directory, uid, gid)
  }
  const data = path.join(directory, "data")
  runServerTool("initdb", ["-D", data, "-U", "postgres", "--auth=trust", "-E", "UTF8", "--no-locale", ...(options.durable === true ? [] : ["--no-sync"])], directory)
  let port = 0
  for (let attempt = 0; ; attempt++) {
    port = await freePort()
    try {
      runServerTool("pg_ctl", [
        "start",
        "-D",
        data,
        "-w",
        "-t",
        "60",
        "-l",
        path.join(directory, "server.log"),
        "-o",
        `-p ${port} -k ${directory} -c listen_addresses=127.0.0.1 -c fsync=${options.durable === true ? "on" : "off"} -c max_connections=200${(options.settings ?? []).map((setting) => ` -c ${setting}`).join("")}`
      ], directory)
      break
    } catch (error) {
      // Another process may have taken the port between the probe and the start.
      if (attempt >= 2) throw error
    }
  }
  let stopped = false
  const psqlFile = path.join(pgBin, "psql")
  return {
    port,
    directory,
    url: (database, user = "postgres") => `postgres://${encodeURIComponent(user)}@127.0.0.1:${port}/${database}`,
    psql: (database, sql) =>
      execFileSync(
        fs.existsSync(psqlFile) ? psqlFile : "psql",
        ["-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-h", "127.0.0.1", "-p", String(port), "-U", "postgres", "-d", database, "-c", sql],
        { encoding: "utf8" }
      ),
    stop: () => {
      if (stopped) return
      stopped = true
      try {
        runServerTool("pg_ctl", ["stop", "-D", data, "-m", "immediate", "-w"], directory)
      } finally {
        fs.rmSync(directory, { recursive: true, force: true })
      }
    }
  }
}

let databases = 0
/** A new, empty database in the cluster, named uniquely. */
export const createDatabase = (cluster: Cluster, prefix = "citegate"): string => {
  const name = `${prefix}_${process.pid}_${++databases}`
  cluster.psql("postgres", `CREATE DATABASE ${name}`)
  return name
}
