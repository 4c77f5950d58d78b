/**
 * `serve`: the HTTP service (src/server/) until SIGINT/SIGTERM.
 */
import * as Command from "@effect/cli/Command"
import * as HelpDoc from "@effect/cli/HelpDoc"
import * as Options from "@effect/cli/Options"
import * as ValidationError from "@effect/cli/ValidationError"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { CliExit, TestModeRequired } from "../CliError.js"
import { describe, usageCodes } from "../CommandHelp.js"
import * as path from "node:path"
import * as Signatures from "../../evidence/Signatures.js"
import * as TrustedKeys from "../../evidence/TrustedKeys.js"
import { loadConfig, needsLoopbackFlag, orUsageError } from "../Common.js"
import { configOption, loopbackOption } from "../CommonOptions.js"
import * as Io from "../Io.js"
import * as Serve from "../Serve.js"
import * as JudgeCli from "../JudgeCli.js"
import * as Store from "../Store.js"

export const serve = Command.make(
  "serve",
  {
    config: configOption,
    listen: Options.text("listen").pipe(
      Options.withDefault("127.0.0.1:8787"),
      Options.mapEffect((value) => {
        const parsed = Serve.parseListen(value)
        return typeof parsed === "string" ? Effect.fail(ValidationError.invalidValue(HelpDoc.p(parsed))) : Effect.succeed(parsed)
      }),
      Options.withDescription("HOST:PORT to listen on, an IP address (default 127.0.0.1:8787)")
    ),
    runRoot: Options.directory("run-root", { exists: "either" }).pipe(
      Options.optional,
      Options.withDescription("Where runs live, one directory each (default: runs/ beside the config)")
    ),
    allowLoopbackHttp: loopbackOption,
    behindTlsProxy: Options.boolean("behind-tls-proxy").pipe(
      Options.withDescription("A TLS-terminating proxy is the only way in: allow plain HTTP on a non-loopback --listen address")
    ),
    store: Store.storeOption.pipe(
      Options.withDescription(
        `postgres://user@host/db: run as one of several replicas sharing runs, events, capture jobs and streams in PostgreSQL (default $${Store.databaseUrlVariable}; without either, runs under --run-root)`
      )
    )
  },
  (args) =>
    Effect.gen(function*() {
      const config = yield* orUsageError(loadConfig(args.config))
      const plainHttp = needsLoopbackFlag(config, args.allowLoopbackHttp)
      if (plainHttp.length > 0) yield* orUsageError(Effect.fail(new TestModeRequired({ sources: plainHttp })))
      yield* orUsageError(Serve.checkListen(args.listen, config, args.behindTlsProxy))
      // Capability gating before anything listens: a configuration asking for a judge it lacks is exit 2.
      yield* orUsageError(JudgeCli.judgeLayer(config, args.config))
      const tls = yield* orUsageError(Serve.loadTls(config, args.config))
      // The capture signing key, checked before listening: a service that would capture unsigned never starts.
      yield* orUsageError(TrustedKeys.signingKeyOf(config, path.dirname(args.config)))
      // The result signing key (`verify.resultSigning`), checked the same way: `?sign=1` never finds it broken.
      const resultKey = config.verify?.resultSigning?.keyFile
      if (resultKey !== undefined) yield* orUsageError(Signatures.loadSigningKey(path.resolve(path.dirname(args.config), resultKey)))
      // The run name is not used: a replica serves every run in the database.
      const store = yield* orUsageError(Store.choose("", args.store))
      yield* Serve.serve({
        config,
        configFile: args.config,
        ...args.listen,
        runRoot: Option.getOrUndefined(args.runRoot),
        allowLoopbackHttp: args.allowLoopbackHttp,
        tls,
        store: store._tag === "Postgres" ? { url: store.url } : undefined,
        // Behind a TLS proxy the browser speaks HTTPS: the review page's session cookie is Secure.
        secureCookies: tls !== undefined || args.behindTlsProxy
      }).pipe(
        Effect.catchTag("ServeError", (error) =>
          Effect.zipRight(Io.stderr(`serve: cannot listen on ${args.listen.host}:${args.listen.port}: ${String(error.cause)}\n`), Effect.fail(new CliExit({ code: 2 })))),
        // Checked above; a key file removed since then is refused the same way.
        Effect.catchTags({
          CapabilityError: (e) => orUsageError(Effect.fail(e)),
          JudgeKeyUnavailable: (e) => orUsageError(Effect.fail(e)),
          // The database is unreachable, lacks the tables (store-init), or the driver is not installed.
          StoreUnavailable: (e) => orUsageError(Effect.fail(e)),
          StorePackageMissing: (e) => orUsageError(Effect.fail(e))
        })
      )
    })
).pipe(Command.withDescription(describe(
  "serve",
  "Serve the verification API over HTTP (runs, verify report/answer, SSE run events; OpenAPI at /openapi.json) until SIGINT/SIGTERM.",
  { success: "never: the service runs until SIGINT (130) or SIGTERM (143), then drains", usage: `${usageCodes}, or the address cannot be listened on` }
)))
