/**
 * Capability gating of the judge, at start: `review.judge.mode` `off` (or absent) needs nothing;
 * `report` or `require` needs a provider, endpoint and model (else `CapabilityError`) and a readable
 * API key (else `JudgeKeyUnavailable`). Nothing is ever skipped silently: a run that asks for judging
 * either has a judge or does not start.
 *
 * The key comes from the environment variable `apiKeyEnv` or the file `apiKeyFile` (a path relative to
 * pipeline.json's directory), never from the configuration itself, and is held as `Redacted`.
 *
 * @since 0.3.0
 */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as fs from "node:fs/promises"
import * as path from "node:path"
import type { PipelineConfig } from "../Config.js"
import { CapabilityError, JudgeKeyUnavailable, type JudgeStartError } from "../errors/Judge.js"
import * as Judge from "./Judge.js"
import { type JudgeSettings, resolvedLimits } from "./JudgeConfig.js"

/** Largest key file read (a key is a line; anything bigger is not a key file). */
export const maxKeyFileBytes = 16 * 1024

/** A configured judge: its settings and its key. */
export interface JudgeSetup {
  readonly settings: JudgeSettings
  readonly apiKey: Redacted.Redacted<string>
}

const readKeyFile = (file: string): Effect.Effect<string, JudgeKeyUnavailable> =>
  Effect.tryPromise({
    try: async () => {
      const handle = await fs.open(file, "r")
      try {
        const stat = await handle.stat()
        if (!stat.isFile()) throw new Error("not a regular file")
        if (stat.size > maxKeyFileBytes) throw new Error(`larger than ${maxKeyFileBytes} bytes`)
        return await handle.readFile("utf8")
      } finally {
        await handle.close()
      }
    },
    catch: (e) =>
      new JudgeKeyUnavailable({
        from: "file",
        name: file,
        detail: e instanceof Error ? ("code" in e && typeof e.code === "string" ? e.code : e.message) : "unreadable"
      })
  })

/**
 * The judge a configuration asks for: `None` when `review.judge.mode` is off (or absent), the settings
 * and key when it is `report` or `require`, a typed start error otherwise.
 */
export const resolve = (
  config: PipelineConfig,
  options: { readonly configDirectory: string; readonly env?: NodeJS.ProcessEnv | undefined }
): Effect.Effect<Option.Option<JudgeSetup>, JudgeStartError> =>
  Effect.gen(function*() {
    const judge = config.review?.judge
    const mode = judge?.mode ?? "off"
    if (judge === undefined || mode === "off") return Option.none()
    const missing = (["provider", "endpoint", "model"] as const).filter((k) => judge[k] === undefined)
    if (judge.provider === undefined || judge.endpoint === undefined || judge.model === undefined) {
      return yield* new CapabilityError({ capability: "judge", required: mode, missing })
    }
    const env = options.env ?? process.env
    let raw: string
    if (judge.apiKeyEnv !== undefined) {
      const value = env[judge.apiKeyEnv]
      if (value === undefined || value.trim() === "") {
        return yield* new JudgeKeyUnavailable({ from: "env", name: judge.apiKeyEnv, detail: "not set, or empty" })
      }
      raw = value
    } else if (judge.apiKeyFile !== undefined) {
      const file = path.resolve(options.configDirectory, judge.apiKeyFile)
      raw = yield* readKeyFile(file)
      if (raw.trim() === "") return yield* new JudgeKeyUnavailable({ from: "file", name: file, detail: "the file is empty" })
    } else {
      return yield* new JudgeKeyUnavailable({ from: "none", name: "", detail: "no key source is configured" })
    }
    const key = raw.trim()
    if (/[\u0000-\u001f\u007f]/.test(key)) {
      const name = judge.apiKeyEnv ?? path.resolve(options.configDirectory, judge.apiKeyFile!)
      return yield* new JudgeKeyUnavailable({ from: judge.apiKeyEnv !== undefined ? "env" : "file", name, detail: "the key holds control characters (more than one line?)" })
    }
    return Option.some({
      settings: { mode, provider: judge.provider, endpoint: judge.endpoint, model: judge.model, limits: resolvedLimits(judge) },
      apiKey: Redacted.make(key)
    })
  })

/** The judge layer of a resolved setup (`None`: no judge). */
export const layerOf = (setup: Option.Option<JudgeSetup>): Layer.Layer<never> | Layer.Layer<Judge.Judge> =>
  Option.match(setup, { onNone: () => Layer.empty, onSome: (s) => Judge.layer(s) })
