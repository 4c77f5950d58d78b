/**
 * Query parameters the platform cannot hold: the typed API decodes a route's query parameters from a
 * record it builds by assignment, where a parameter named `__proto__` sets the record's prototype
 * instead of becoming one of its keys, so the strict decoding (Api.ts: an unknown parameter is a
 * 400) never sees it. This API middleware decodes such a request's parameters itself, from a record
 * that holds every parameter as its own key, with the route's schema, and fails as the platform
 * fails: the same 400 `HttpApiDecodeError`, encoded by the API as any other unknown parameter.
 *
 * @since 0.4.0
 */
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import { FindMyWay } from "@effect/platform/HttpLayerRouter"
import { HttpApiDecodeError } from "@effect/platform/HttpApiError"
import type * as HttpApp from "@effect/platform/HttpApp"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import type * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"
import { CitegateApi } from "./Api.js"

interface Route {
  readonly names: ReadonlySet<string>
  readonly decode: (input: unknown) => Either.Either<unknown, ParseResult.ParseError>
}

/**
 * The API's routes that take query parameters, in a router made as the platform makes its own (the
 * same router, with its defaults): the same paths match (a trailing slash, repeated slashes, any
 * case, escapes) and the same query is parsed, into a record where `__proto__` is a key.
 */
const router = FindMyWay.make<Route>()
for (const group of Object.values(CitegateApi.groups)) {
  for (const endpoint of Object.values(group.endpoints)) {
    if (Option.isNone(endpoint.urlParamsSchema)) continue
    const schema = endpoint.urlParamsSchema.value as Schema.Schema<unknown, unknown>
    router.on(endpoint.method, endpoint.path, { names: new Set(propertyNames(schema.ast)), decode: Schema.decodeUnknownEither(schema) })
  }
}

function propertyNames(ast: Schema.Schema.Any["ast"]): Array<string> {
  switch (ast._tag) {
    case "TypeLiteral":
      return ast.propertySignatures.map((p) => String(p.name))
    case "Refinement":
    case "Transformation":
      return propertyNames(ast.from)
    default:
      return []
  }
}

/**
 * The decode failure of a request to a route with query parameters whose query names `__proto__`
 * (`undefined` for every other request: the platform decodes those as they are).
 */
export const refusal = (method: string, url: string) => {
  // A key spelled with percent escapes decodes to `__proto__` too; any other request costs nothing more.
  if (!url.includes("__proto__") && !url.includes("%")) return undefined
  const found = router.find(method, url) ?? (method === "HEAD" ? router.find("GET", url) : undefined)
  if (found === undefined || !Object.hasOwn(found.searchParams, "__proto__")) return undefined
  // Every parameter an own key (defined, not assigned), normalised as the platform normalises: a
  // declared parameter as given (an array when repeated), any other as an array.
  const record: Record<string, unknown> = {}
  for (const key of Object.keys(found.searchParams)) {
    const given = found.searchParams[key]!
    const value = Array.isArray(given) || found.handler.names.has(key) ? given : [given]
    Object.defineProperty(record, key, { value, enumerable: true, writable: true, configurable: true })
  }
  const decoded = found.handler.decode(record)
  return Either.isLeft(decoded) ? decoded.left : undefined
}

/** The API middleware: a request `refusal` names fails with the platform's 400; any other goes on. */
export const guard = (app: HttpApp.Default): HttpApp.Default<HttpApiDecodeError> =>
  Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) => {
    const failure = refusal(request.method, request.url)
    return failure === undefined ? app : HttpApiDecodeError.refailParseError(failure)
  })

export const layer = HttpApiBuilder.middleware(CitegateApi, guard)
