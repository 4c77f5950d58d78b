/** JSON rendering: machine-readable, decodable with `RenderedResult`. */
import { Schema } from "effect"
import { RenderedResult, type Rendering, toResult } from "./Rendering.js"

const encode = Schema.encodeSync(RenderedResult)

export const render = (rendering: Rendering): string => JSON.stringify(encode(toResult(rendering)), null, 2) + "\n"
