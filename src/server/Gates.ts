/**
 * The Gate the service verifies reports with, one per (run, mode), built once and kept. Building
 * one per request cost about 2.6 ms of CPU (the run's store opened, the policy made again, the
 * Verifier and its report schema made again: docs/performance.md); a kept Gate costs a map lookup.
 *
 * What a kept Gate holds cannot go stale: the policy comes from the service's configuration, which
 * is read once at start, and the mode, which is part of the key; the store names the run's
 * directory (or its rows) and reads every capture through it on each verification, where the
 * verified-capture cache stamps each one (a record added, replaced or rewritten since is read
 * again). A run still capturing gets new captures verified as they land: the Gate holds no list of
 * them and no manifest. A store with no cache identity (a PostgreSQL role that may not name its
 * database, say) is never kept: it is opened again per request, as before, so that a later
 * request can get an identity.
 *
 * Bounded: at most `maxGates` (least recently used first out); a Gate that failed to build (its
 * run directory gone) is never kept.
 *
 * The answer route (`POST /v1/verify/answer`) keeps its Answers service the same way, per (run,
 * mode), under the same rules: its policy and answer options come from the configuration and the
 * mode, and it reads every capture through the run's store on each verification.
 *
 * @since 0.4.0
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as ExecutionStrategy from "effect/ExecutionStrategy"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import type * as Option from "effect/Option"
import * as Scope from "effect/Scope"
import * as Answer from "../answer/Answer.js"
import * as Config from "../Config.js"
import type { PipelineConfig } from "../Config.js"
import type { Mode } from "../Domain.js"
import type { RunNotFound } from "../Errors.js"
import * as CaptureStore from "../store/CaptureStore.js"
import * as CaptureCache from "../verify/CaptureCache.js"
import * as Gate from "../verify/Gate.js"
import * as Policy from "../verify/Policy.js"
import * as Verifier from "../verify/Verifier.js"
import { ServerContext } from "./Context.js"
import { type RunView, Runs } from "./Runs.js"

/**
 * @since 0.4.0
 * @category models
 */
export interface GatesStats {
  /** Gates built (each a store opened, a policy and a Verifier made). */
  readonly builds: number
  /** Requests served by a kept Gate. */
  readonly hits: number
  readonly entries: number
  readonly evictions: number
}

/**
 * What the answer route verifies with: the run's Answers service (its Verifier, the configuration's
 * policy, the answer options of `mode`) and the run's store identity (a signed result's `run.store`).
 *
 * @since 0.4.0
 * @category models
 */
export interface KeptAnswers {
  readonly answers: Answer.AnswersShape
  readonly storeIdentity: CaptureStore.CaptureStoreShape["identity"]
}

/**
 * @since 0.4.0
 * @category models
 */
export interface GatesShape {
  /**
   * The Gate of `run` under `mode`: the kept one, else built (and kept when it can be). A Gate not
   * kept lives as long as the caller's scope.
   */
  readonly gate: (run: RunView, mode: Mode) => Effect.Effect<Gate.GateShape, RunNotFound, Scope.Scope>
  /** The kept Gate of `run` under `mode` (counted as `gate` counts a hit), or `undefined`: then `gate` builds one. */
  readonly keptGate: (run: RunView, mode: Mode) => Gate.GateShape | undefined
  /** The Answers of `run` under `mode` (POST /v1/verify/answer), kept like Gates. */
  readonly answers: (run: RunView, mode: Mode) => Effect.Effect<KeptAnswers, RunNotFound, Scope.Scope>
  readonly stats: Effect.Effect<GatesStats>
  /** The same counts for the answer route's kept Answers. */
  readonly answerStats: Effect.Effect<GatesStats>
}

/** Gates kept at most: each holds a policy and a Verifier (kilobytes), not captures. */
export const maxGates = 128

interface Kept<A> {
  readonly value: A
  readonly scope: Scope.CloseableScope
}

/**
 * The answer options of `mode` under the service's configuration (what `POST /v1/verify/answer`
 * verifies with and what a signed answer result names).
 *
 * @since 0.4.0
 * @category constructors
 */
export const answerOptions = (config: PipelineConfig, mode: Mode): Answer.AnswersOptions => ({
  mode,
  uncited: Config.resolvedUncited(config),
  needsCitation: Config.resolvedCitationRule(config),
  citations: Config.resolvedCitations(config)
})

/**
 * One bounded map of things built per (run, mode) from a layer over the run's store: built on first
 * use, kept when the store has a cache identity, least recently used first out past `maxEntries`.
 */
const keeper = <A, I>(
  parent: Scope.Scope,
  maxEntries: number,
  layerOf: (run: RunView, mode: Mode) => Layer.Layer<I | CaptureStore.CaptureStore, RunNotFound, CaptureCache.CaptureCache>,
  cache: Option.Option<CaptureCache.CaptureCacheShape>,
  get: (context: Context.Context<I | CaptureStore.CaptureStore>) => A
) => {
  // A Map iterates in insertion order: re-inserting on use keeps the least recently used first.
  const entries = new Map<string, Kept<A>>()
  const counts = { builds: 0, hits: 0, evictions: 0 }

  const build = (run: RunView, mode: Mode) =>
    Effect.flatMap(Scope.fork(parent, ExecutionStrategy.sequential), (scope) =>
      Layer.buildWithScope(layerOf(run, mode), scope).pipe(
        CaptureCache.provideOption(cache),
        Effect.map((context) => ({
          value: get(context),
          keep: Context.get(context, CaptureStore.CaptureStore).identity !== undefined,
          scope
        })),
        Effect.onError(() => Scope.close(scope, Exit.void))
      ))

  /** Least recently used first out past the bound; their scopes closed. */
  const evict = Effect.suspend(() => {
    const out: Array<Kept<A>> = []
    for (const [key, kept] of entries) {
      if (entries.size <= maxEntries) break
      entries.delete(key)
      out.push(kept)
      counts.evictions++
    }
    return Effect.forEach(out, (kept) => Scope.close(kept.scope, Exit.void), { discard: true })
  })

  const keyOf = (run: RunView, mode: Mode) => `${run.id}\u0000${run.directory}\u0000${mode}`

  /** The kept value, moved to the most recently used end; `undefined` when none is kept. */
  const kept = (run: RunView, mode: Mode): A | undefined => {
    const key = keyOf(run, mode)
    const found = entries.get(key)
    if (found === undefined) return undefined
    counts.hits++
    entries.delete(key)
    entries.set(key, found)
    return found.value
  }

  const obtain = (run: RunView, mode: Mode): Effect.Effect<A, RunNotFound, Scope.Scope> =>
    Effect.suspend(() => {
      const found = kept(run, mode)
      if (found !== undefined) return Effect.succeed(found)
      const key = keyOf(run, mode)
      return Effect.flatMap(build(run, mode), (built) => {
        counts.builds++
        // Concurrent first requests each build one; the first to finish is kept, the others serve their request only.
        if (built.keep && maxEntries > 0 && !entries.has(key)) {
          entries.set(key, { value: built.value, scope: built.scope })
          return Effect.as(evict, built.value)
        }
        return Effect.as(Effect.addFinalizer(() => Scope.close(built.scope, Exit.void)), built.value)
      })
    })

  return { obtain, kept, stats: Effect.sync((): GatesStats => ({ ...counts, entries: entries.size })) }
}

/**
 * Gates (and the answer route's Answers) over the service's configuration, runs and verified-capture
 * cache (when there is one), released with the scope they are made in (the verify handlers make
 * theirs when the service starts).
 *
 * @since 0.4.0
 * @category constructors
 */
export const make = (options: { readonly maxEntries?: number } = {}) =>
  Effect.gen(function*() {
    const { config } = yield* ServerContext
    const runs = yield* Runs
    const cache = yield* Effect.serviceOption(CaptureCache.CaptureCache)
    const parent = yield* Effect.scope
    const maxEntries = Math.max(0, options.maxEntries ?? maxGates)
    // The policy of each mode, made once (the configuration does not change while the service runs).
    const policies = new Map<Mode, Policy.PolicyShape>()
    const policyOf = (mode: Mode) => {
      let policy = policies.get(mode)
      if (policy === undefined) {
        policy = Policy.fromConfig({ ...config, verify: { ...config.verify, mode } })
        policies.set(mode, policy)
      }
      return policy
    }
    // The answer route's policy is the configuration's own (its mode is an answer option, as before).
    const answerPolicy = Policy.fromConfig(config)

    const gates = keeper(parent, maxEntries, (run, mode) =>
      Layer.effect(Gate.Gate, Gate.make).pipe(
        Layer.provide(Verifier.layer),
        Layer.provide(Layer.succeed(Policy.Policy, policyOf(mode))),
        Layer.provideMerge(runs.store(run))
      ), cache, (context) => Context.get(context, Gate.Gate))

    const answers = keeper(parent, maxEntries, (run, mode) =>
      Answer.layer(answerOptions(config, mode)).pipe(
        Layer.provide(Verifier.layer),
        Layer.provide(Layer.succeed(Policy.Policy, answerPolicy)),
        Layer.provideMerge(runs.store(run))
      ), cache, (context): KeptAnswers => ({
        answers: Context.get(context, Answer.Answers),
        storeIdentity: Context.get(context, CaptureStore.CaptureStore).identity
      }))

    return {
      gate: gates.obtain,
      keptGate: gates.kept,
      answers: answers.obtain,
      stats: gates.stats,
      answerStats: answers.stats
    } satisfies GatesShape
  })
