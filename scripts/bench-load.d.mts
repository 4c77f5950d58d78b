// Types of scripts/bench-load.mjs (the load generator in a process of its own).
export interface LoadOptions {
  readonly url: string
  readonly connections: number
  readonly duration: number
  readonly method: string
  readonly headers: Record<string, string>
  readonly body: string
  readonly timeout: number
  /** Seconds of unmeasured load on the same connections before the window (default none; the window also waits for every connection's first answer). */
  readonly warmupSeconds?: number
}
export interface LoadResult {
  readonly requests: { readonly total: number; readonly average: number }
  readonly latency: { readonly p50: number; readonly p97_5: number; readonly p99: number; readonly max: number; readonly average: number }
  readonly non2xx: number
  readonly errors: number
  readonly timeouts: number
  readonly duration: number
  /** CPU time (user + system) of the load generator's process over the measured window, in ms. */
  readonly cpuMs: number
  /** From the release of the first requests until every connection had its first answer, in ms. */
  readonly rampMs: number
  /** The slowest first answer of a connection, in ms. */
  readonly firstResponseMaxMs: number
  /** Answers after each connection's first and before the window: how many, and their latency percentiles in ms (undefined: none). */
  readonly warmup: { readonly requests: number; readonly p50: number | undefined; readonly p99: number | undefined }
}
/** Runs autocannon in a child process; `onStart` and `onEnd` are called as the measured window opens and closes. */
export declare const load: (
  options: LoadOptions,
  hooks?: { readonly onStart?: () => void; readonly onEnd?: () => void }
) => Promise<LoadResult>
