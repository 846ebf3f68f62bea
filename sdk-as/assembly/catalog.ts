// What an MCP server of a proxy offers besides tools: resources, resource templates and prompts, as
// `resources/list`, `resources/templates/list` and `prompts/list` list them, and the one-page
// cursor pagination every list (tools too) uses.
import { Builder, quote } from "./json";

/** One MCP resource: a URI the agent can read, what it is called, and (optionally) its text. */
export class Resource {
  /** Display title ("" for none). */
  title: string = "";
  /** Size in bytes, when known (-1: not listed). */
  size: i64 = -1;

  constructor(
    public uri: string,
    public name: string,
    public description: string = "",
    public mimeType: string = "text/plain",
    /** The text `resources/read` returns by default ("" : the proxy answers in `onResourceRead`). */
    public text: string = "",
  ) {}

  toJson(): string {
    const b = new Builder().str('{"uri":').str(quote(this.uri)).str(',"name":').str(quote(this.name));
    if (this.title.length) b.str(',"title":').str(quote(this.title));
    if (this.description.length) b.str(',"description":').str(quote(this.description));
    if (this.mimeType.length) b.str(',"mimeType":').str(quote(this.mimeType));
    if (this.size >= 0) b.str(',"size":').str(this.size.toString());
    return b.str("}").build();
  }
}

/** One resource template (RFC 6570 `uriTemplate`): reads of matching URIs reach `onResourceRead`. */
export class ResourceTemplate {
  constructor(
    public uriTemplate: string,
    public name: string,
    public description: string = "",
    public mimeType: string = "",
  ) {}

  toJson(): string {
    const b = new Builder().str('{"uriTemplate":').str(quote(this.uriTemplate)).str(',"name":').str(quote(this.name));
    if (this.description.length) b.str(',"description":').str(quote(this.description));
    if (this.mimeType.length) b.str(',"mimeType":').str(quote(this.mimeType));
    return b.str("}").build();
  }
}

/** One argument of a prompt. */
export class PromptArgument {
  constructor(
    public name: string,
    public description: string = "",
    public required: bool = false,
  ) {}

  toJson(): string {
    const b = new Builder().str('{"name":').str(quote(this.name));
    if (this.description.length) b.str(',"description":').str(quote(this.description));
    if (this.required) b.str(',"required":true');
    return b.str("}").build();
  }
}

/** One MCP prompt: a name, a description, its arguments and (optionally) a fixed text. */
export class McpPrompt {
  arguments: PromptArgument[] = new Array<PromptArgument>(0);
  title: string = "";

  constructor(
    public name: string,
    public description: string = "",
    /** The user message `prompts/get` returns by default ("" : the proxy answers in `onMcpPromptGet`). */
    public text: string = "",
  ) {}

  /** Declares an argument (chainable). */
  argument(name: string, description: string = "", required: bool = false): McpPrompt {
    this.arguments.push(new PromptArgument(name, description, required));
    return this;
  }

  toJson(): string {
    const b = new Builder().str('{"name":').str(quote(this.name));
    if (this.title.length) b.str(',"title":').str(quote(this.title));
    if (this.description.length) b.str(',"description":').str(quote(this.description));
    if (this.arguments.length) {
      b.str(',"arguments":[');
      for (let i = 0; i < this.arguments.length; i++) {
        if (i > 0) b.str(",");
        b.str(this.arguments[i].toJson());
      }
      b.str("]");
    }
    return b.str("}").build();
  }
}

/**
 * One page of a list: `{"<key>":[items from the cursor's offset],"nextCursor":…}` (no `nextCursor`
 * on the last page). The cursor is the offset as decimal text behind a prefix; `items` are JSON
 * texts. Returns "" for a cursor this SDK did not make (the caller answers invalid params).
 */
export function page(key: string, items: string[], cursor: string | null, pageSize: i32): string {
  let from = 0;
  if (cursor != null) {
    if (!cursor.startsWith(CURSOR_PREFIX)) return "";
    const digits = cursor.substring(CURSOR_PREFIX.length);
    if (digits.length == 0 || digits.length > 9) return "";
    for (let i = 0; i < digits.length; i++) {
      const c = digits.charCodeAt(i);
      if (c < 0x30 || c > 0x39) return "";
    }
    from = I32.parseInt(digits);
    if (from > items.length) return "";
  }
  const size = pageSize > 0 ? pageSize : items.length;
  const to = min(items.length, from + size);
  const b = new Builder().str('{"').str(key).str('":[');
  for (let i = from; i < to; i++) {
    if (i > from) b.str(",");
    b.str(items[i]);
  }
  b.str("]");
  if (to < items.length) b.str(',"nextCursor":').str(quote(CURSOR_PREFIX + to.toString()));
  return b.str("}").build();
}

const CURSOR_PREFIX = "page:";
