/**
 * Zod nodes whose rule is a plain function, for schemas on a hot path (the send payload).
 *
 * `rule(input, fn)` validates and normalizes a value in one node: `fn(value, ctx)` returns the output
 * and reports problems with `ctx.addIssue` (ctx.path is the field's full path, as in a zod
 * transform), so the schema stays the one source of its rules and messages. `stringRule(fn)` is
 * the same after zod's own string check (its invalid_type issue, worded by the parse's error
 * map). `optional(schema)` is `schema` with null and absent both read as undefined. Each node
 * reads to schema tools (zod-to-json-schema, /openapi.json) as a refinement of the zod schema of
 * what it accepts, so the documented shape is what it was with plain zod nodes.
 *
 * Why not `z.string().transform()` / `.superRefine()` / `.nullish().transform()`: zod 3's
 * ZodEffects allocates a refinement context with an accessor and a bound addIssue, a ParseStatus
 * and result objects on every call, and an optional field written that way is three nodes. For a
 * send payload that was about 100 µs and most of the request's garbage, twice the gateway's own
 * CPU per send. These nodes allocate one small context (zod's is made only when an issue is
 * reported) and keep ZodEffects' results: a reported problem leaves the value
 * dirty (an enclosing object's refinements still run, as after a superRefine), a wrong type or a
 * failed optional field aborts it. `fields(shape)` is z.object(shape) (unknown keys dropped, a
 * key given as undefined or null kept) without z.object's per-key bookkeeping objects.
 * These nodes extend ZodType through zod 3's parse protocol (`_parse`, ParseStatus, OK/DIRTY/
 * INVALID), so libs/contracts pins zod to one exact version: an upgrade is a deliberate change,
 * checked by rule.test.ts (these nodes against the zod nodes they stand for), send.test.ts,
 * send-generated.test.ts and the openapi test.
 */
import { z } from 'zod';

/** What a rule reads and reports through: zod's refinement context. */
export type RuleCtx = z.RefinementCtx;

/** The refinement context of one node's run, made only when read. */
class LazyRuleCtx implements RuleCtx {
  failed = false;
  aborted = false;
  private ctx: z.ParseContext | undefined;

  constructor(
    private readonly input: z.ParseInput,
    private readonly owner: ZodRule<unknown, unknown>,
  ) {}

  get path(): (string | number)[] {
    return this.input.path;
  }

  addIssue(arg: z.IssueData): void {
    this.ctx ??= this.owner.contextOf(this.input);
    // `fatal` ends this node's run (INVALID, as zod's own type checks do); the issue is zod's.
    const { fatal, ...issue } = arg;
    z.addIssueToContext(this.ctx, issue);
    this.failed = true;
    if (fatal) this.aborted = true;
  }
}

/** The context of `key` inside the value a rule checks (a field of an object, an item of a list). */
class FieldCtx implements RuleCtx {
  constructor(
    private readonly parent: RuleCtx,
    private readonly key: string | number,
  ) {}

  get path(): (string | number)[] {
    return [...this.parent.path, this.key];
  }

  addIssue(arg: z.IssueData): void {
    this.parent.addIssue({ ...arg, path: [this.key, ...(arg.path ?? [])] });
  }
}

/** Where a rule checks `key` of its value with another rule. */
export const at = (ctx: RuleCtx, key: string | number): RuleCtx => new FieldCtx(ctx, key);

/**
 * zod's own issue for a value of the wrong type (worded by the parse's error map, e.g. `from
 * must be an object`, `to[0].email is required`); it ends the value's checks, as a type check does.
 */
export function typeIssue(ctx: RuleCtx, expected: z.ZodParsedType, value: unknown): typeof z.NEVER {
  ctx.addIssue({
    code: z.ZodIssueCode.invalid_type,
    expected,
    received: z.getParsedType(value),
    fatal: true,
  });
  return z.NEVER;
}

/** `value` is what zod reads as an object (a plain record: not an array, date, map, set or promise). */
export const isObject = (value: unknown): value is Record<string, unknown> =>
  z.getParsedType(value) === z.ZodParsedType.object;

/**
 * What tools that read a schema's definition (zod-to-json-schema for /openapi.json) see of a
 * rule node: a refinement of `input`, the shape of what it accepts. Parsing never reads it.
 */
interface Described extends z.ZodTypeDef {
  typeName: z.ZodFirstPartyTypeKind.ZodEffects;
  schema: z.ZodTypeAny;
  effect: { type: 'refinement'; refinement: () => void };
}

const described = (input: z.ZodTypeAny): Described => ({
  typeName: z.ZodFirstPartyTypeKind.ZodEffects,
  schema: input,
  effect: { type: 'refinement', refinement: () => {} },
});

interface ZodRuleDef<Out> extends Described {
  check: (value: unknown, ctx: RuleCtx) => Out;
  strings: boolean;
}

class ZodRule<Out, In = unknown> extends z.ZodType<Out, ZodRuleDef<Out>, In> {
  contextOf(input: z.ParseInput): z.ParseContext {
    return this._getOrReturnCtx(input);
  }

  _parse(input: z.ParseInput): z.ParseReturnType<Out> {
    if (this._def.strings && typeof input.data !== 'string') {
      const ctx = this._getOrReturnCtx(input);
      z.addIssueToContext(ctx, {
        code: z.ZodIssueCode.invalid_type,
        expected: z.ZodParsedType.string,
        received: ctx.parsedType,
      });
      return z.INVALID;
    }
    const ctx = new LazyRuleCtx(input, this);
    const value = this._def.check(input.data, ctx);
    return ctx.aborted ? z.INVALID : ctx.failed ? z.DIRTY(value) : z.OK(value);
  }
}

/** A node whose rule is `check` on any value; `input` describes what it accepts (for JSON Schema). */
export function rule<Out>(
  input: z.ZodTypeAny,
  check: (value: unknown, ctx: RuleCtx) => Out,
): z.ZodType<Out, z.ZodTypeDef, unknown> {
  return new ZodRule<Out>({ ...described(input), check, strings: false });
}

/** A node whose rule is `check` on a string (anything else: zod's invalid_type issue). */
export function stringRule<Out>(
  check: (value: string, ctx: RuleCtx) => Out,
): z.ZodType<Out, z.ZodTypeDef, string> {
  return new ZodRule<Out, string>({
    ...described(z.string()),
    check: check as (value: unknown, ctx: RuleCtx) => Out,
    strings: true,
  });
}

interface ZodOptionalFieldDef<T extends z.ZodTypeAny> extends Described {
  inner: T;
}

class ZodOptionalField<T extends z.ZodTypeAny> extends z.ZodType<
  z.output<T> | undefined,
  ZodOptionalFieldDef<T>,
  z.input<T> | null | undefined
> {
  _parse(input: z.ParseInput): z.ParseReturnType<z.output<T> | undefined> {
    if (input.data === null || input.data === undefined) return ABSENT;
    const result = this._def.inner._parse(input) as z.SyncParseReturnType<z.output<T>>;
    return z.isValid(result) ? result : z.INVALID;
  }
}

/** What an absent optional field parses to (one object: zod only reads parse results). */
const ABSENT: z.OK<undefined> = Object.freeze(z.OK(undefined));

/** null and absent mean the same for optional fields (many JSON clients send null). */
export function optional<T extends z.ZodTypeAny>(
  schema: T,
): z.ZodType<z.output<T> | undefined, z.ZodTypeDef, z.input<T> | null | undefined> {
  return new ZodOptionalField<T>({ ...described(schema.nullish()), inner: schema });
}

/** A field's parse input: its path is made only when read (an issue, a message). */
class FieldInput implements z.ParseInput {
  constructor(
    readonly parent: z.ParseContext,
    readonly data: unknown,
    private readonly key: string,
  ) {}

  get path(): (string | number)[] {
    return [...this.parent.path, this.key];
  }
}

type FieldsOutput<Shape extends z.ZodRawShape> = z.objectOutputType<Shape, z.ZodTypeAny, 'strip'>;
type FieldsInput<Shape extends z.ZodRawShape> = z.objectInputType<Shape, z.ZodTypeAny, 'strip'>;

interface ZodFieldsDef<Shape extends z.ZodRawShape> extends Described {
  shape: Shape;
  keys: string[];
}

class ZodFields<Shape extends z.ZodRawShape> extends z.ZodType<
  FieldsOutput<Shape>,
  ZodFieldsDef<Shape>,
  FieldsInput<Shape>
> {
  _parse(input: z.ParseInput): z.ParseReturnType<FieldsOutput<Shape>> {
    const ctx = this._getOrReturnCtx(input);
    if (ctx.parsedType !== z.ZodParsedType.object) {
      z.addIssueToContext(ctx, {
        code: z.ZodIssueCode.invalid_type,
        expected: z.ZodParsedType.object,
        received: ctx.parsedType,
      });
      return z.INVALID;
    }
    const data = ctx.data as Record<string, unknown>;
    const out: Record<string, unknown> = {};
    let aborted = false;
    let dirty = false;
    for (const key of this._def.keys) {
      const result = this._def.shape[key]!._parse(
        new FieldInput(ctx, data[key], key),
      ) as z.SyncParseReturnType;
      if (result.status === 'aborted') aborted = true;
      else {
        if (result.status === 'dirty') dirty = true;
        if (result.value !== undefined || key in data) out[key] = result.value;
      }
    }
    if (aborted) return z.INVALID;
    return (dirty ? z.DIRTY(out) : z.OK(out)) as z.SyncParseReturnType<FieldsOutput<Shape>>;
  }
}

/** z.object(shape) for a hot path: same issues, same output (unknown keys dropped). */
export function fields<Shape extends z.ZodRawShape>(
  shape: Shape,
): z.ZodType<FieldsOutput<Shape>, z.ZodTypeDef, FieldsInput<Shape>> {
  return new ZodFields<Shape>({ ...described(z.object(shape)), shape, keys: Object.keys(shape) });
}
