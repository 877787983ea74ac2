/**
 * JSON Schema checks of a tool's parameters with ajv: the schema against the meta-schema of its
 * draft (2020-12 unless `$schema` names draft-07), and what the meta-schema cannot see: regular
 * expressions that do not compile, `required` names that are not properties, `$ref`s that do not
 * resolve inside the schema. Only the meta-schemas are compiled (ajv generates their validators);
 * a workspace schema is only ever validated as data, never compiled, so no code is generated from
 * workspace text and no `$ref` is fetched.
 */
import Ajv from 'ajv';
import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';

export type JsonPath = Array<string | number>;

export interface SchemaProblem {
  /** Path inside the schema of the node the problem is about. */
  path: JsonPath;
  message: string;
}

const DRAFT_07 = /json-schema\.org\/draft-07\/schema/;
const DRAFT_2020 = /json-schema\.org\/draft\/2020-12\/schema/;

let ajv07: Ajv | undefined;
let ajv2020: Ajv2020 | undefined;

function validator(draft: '07' | '2020'): Ajv | Ajv2020 {
  if (draft === '07') {
    if (!ajv07) {
      ajv07 = new Ajv({ strict: false, allErrors: true, validateSchema: false });
      addFormats(ajv07);
    }
    return ajv07;
  }
  if (!ajv2020) {
    ajv2020 = new Ajv2020({ strict: false, allErrors: true, validateSchema: false });
    addFormats(ajv2020);
  }
  return ajv2020;
}

const isRecord = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

/** `/properties/a~1b/type` -> ['properties', 'a/b', 'type']. */
export function pointerPath(pointer: string): JsonPath {
  if (!pointer) return [];
  return pointer
    .replace(/^#/, '')
    .split('/')
    .slice(1)
    .map((s) => decodeURIComponent(s.replace(/~1/g, '/').replace(/~0/g, '~')))
    .map((s) => (/^(0|[1-9]\d*)$/.test(s) ? Number(s) : s));
}

/** The node at `path` in a JSON value, or undefined. */
export function nodeAt(root: unknown, path: JsonPath): unknown {
  let v: unknown = root;
  for (const seg of path) {
    if (Array.isArray(v) && typeof seg === 'number') v = v[seg];
    else if (isRecord(v) && Object.prototype.hasOwnProperty.call(v, String(seg))) v = v[String(seg)];
    else return undefined;
  }
  return v;
}

/** Keywords whose values are schemas, lists of schemas or maps of schemas (draft-07 and 2020-12). */
const SCHEMA_MAPS = new Set(['properties', 'patternProperties', '$defs', 'definitions', 'dependentSchemas']);
const SCHEMA_LISTS = new Set(['allOf', 'anyOf', 'oneOf', 'prefixItems']);
const SCHEMA_ONE = new Set(['items', 'additionalProperties', 'not', 'if', 'then', 'else', 'contains', 'propertyNames', 'unevaluatedItems', 'unevaluatedProperties', 'additionalItems']);

/** Visits every subschema with its path (depth-bounded). */
function eachSchema(root: unknown, visit: (schema: Record<string, unknown>, path: JsonPath) => void): void {
  const walk = (s: unknown, path: JsonPath, depth: number) => {
    if (!isRecord(s) || depth > 64) return;
    visit(s, path);
    for (const [k, v] of Object.entries(s)) {
      if (SCHEMA_MAPS.has(k) && isRecord(v)) for (const [name, sub] of Object.entries(v)) walk(sub, [...path, k, name], depth + 1);
      else if (SCHEMA_LISTS.has(k) && Array.isArray(v)) v.forEach((sub, i) => walk(sub, [...path, k, i], depth + 1));
      else if (SCHEMA_ONE.has(k)) {
        if (Array.isArray(v)) v.forEach((sub, i) => walk(sub, [...path, k, i], depth + 1));
        else walk(v, [...path, k], depth + 1);
      }
    }
  };
  walk(root, [], 0);
}

/** Problems of a parameters schema, each at the node it is about (paths relative to the schema). */
export function schemaProblems(schema: Record<string, unknown>): SchemaProblem[] {
  const out: SchemaProblem[] = [];
  const declared = schema.$schema;
  let draft: '07' | '2020' = '2020';
  if (declared !== undefined) {
    if (typeof declared === 'string' && DRAFT_07.test(declared)) draft = '07';
    else if (!(typeof declared === 'string' && DRAFT_2020.test(declared))) {
      out.push({ path: ['$schema'], message: `$schema ${JSON.stringify(declared)} is not a draft Context Lens checks (JSON Schema 2020-12 or draft-07)` });
      return out;
    }
  }
  const ajv = validator(draft);
  const metaKey = draft === '07' ? 'http://json-schema.org/draft-07/schema' : 'https://json-schema.org/draft/2020-12/schema';
  const valid = ajv.validate(metaKey, schema);
  if (!valid) {
    // anyOf and friends report several errors for one node: the first one per node says the most.
    const seen = new Set<string>();
    for (const e of ajv.errors ?? []) {
      if (seen.has(e.instancePath)) continue;
      seen.add(e.instancePath);
      const allowed = (e.params as { allowedValues?: unknown[] }).allowedValues;
      out.push({ path: pointerPath(e.instancePath), message: `${e.instancePath || 'the schema'} ${e.message ?? 'is invalid'}${allowed ? ` (${allowed.map(String).join(', ')})` : ''}` });
    }
  }
  eachSchema(schema, (s, path) => {
    if (typeof s.pattern === 'string') {
      try {
        new RegExp(s.pattern, 'u');
      } catch {
        out.push({ path: [...path, 'pattern'], message: `pattern ${JSON.stringify(s.pattern)} is not a valid regular expression` });
      }
    }
    if (isRecord(s.patternProperties)) {
      for (const p of Object.keys(s.patternProperties)) {
        try {
          new RegExp(p, 'u');
        } catch {
          out.push({ path: [...path, 'patternProperties', p], message: `patternProperties key ${JSON.stringify(p)} is not a valid regular expression` });
        }
      }
    }
    if (Array.isArray(s.required) && isRecord(s.properties)) {
      s.required.forEach((name, i) => {
        if (typeof name === 'string' && !Object.prototype.hasOwnProperty.call(s.properties, name)) out.push({ path: [...path, 'required', i], message: `required names '${name}', which is not in properties` });
      });
    }
    if (typeof s.$ref === 'string') {
      const ref = s.$ref;
      if (!ref.startsWith('#')) out.push({ path: [...path, '$ref'], message: `$ref ${JSON.stringify(ref)} points outside the schema; providers resolve only local references such as #/$defs/name` });
      else if (nodeAt(schema, pointerPath(ref)) === undefined) out.push({ path: [...path, '$ref'], message: `$ref ${JSON.stringify(ref)} does not resolve inside the schema` });
    }
  });
  return out;
}
