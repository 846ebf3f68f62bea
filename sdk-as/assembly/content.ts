// ACP content blocks (`session/prompt` prompts, message chunks, tool call content).
// A ContentBlock is a view over the block's JSON object: unknown fields, `annotations` and `_meta`
// stay as they are; edits through the view mark the message that holds it as changed.
import { JSON } from "json-as";
import { getString } from "./json";

/** Anything whose JSON can be edited in place and must then be re-serialized (a message). */
export class Editable {
  /** True once anything was edited; an unedited message is forwarded as the exact text received. */
  changed: bool = false;

  markChanged(): void {
    this.changed = true;
  }
}

export class ContentBlock {
  /** The block's JSON object. Editing it directly? Call `markChanged()` on the owning message. */
  obj: JSON.Obj;
  /** The message this block belongs to, told about edits made through the view. */
  owner: Editable | null;

  constructor(obj: JSON.Obj, owner: Editable | null = null) {
    this.obj = obj;
    this.owner = owner;
  }

  /** `text`, `image`, `audio`, `resource_link`, `resource`, or anything newer ("" when missing). */
  get type(): string {
    const t = getString(this.obj, "type");
    return t == null ? "" : t;
  }

  get isText(): bool {
    return this.type == "text";
  }

  /** The text of a text block ("" for other blocks). */
  get text(): string {
    if (!this.isText) return "";
    const t = getString(this.obj, "text");
    return t == null ? "" : t;
  }

  /** Replaces the text (only meaningful on a text block). */
  set text(value: string) {
    this.obj.set<string>("text", value);
    const owner = this.owner;
    if (owner != null) owner.markChanged();
  }

  toJson(): string {
    return JSON.stringify(this.obj);
  }
}

export class TextBlock {
  /** A new `{"type":"text","text":...}` block. */
  static of(text: string): ContentBlock {
    const obj = new JSON.Obj();
    obj.set<string>("type", "text");
    obj.set<string>("text", text);
    return new ContentBlock(obj);
  }
}

export class ResourceLinkBlock {
  /** A new `{"type":"resource_link","uri":...,"name":...}` block. */
  static of(uri: string, name: string): ContentBlock {
    const obj = new JSON.Obj();
    obj.set<string>("type", "resource_link");
    obj.set<string>("uri", uri);
    obj.set<string>("name", name);
    return new ContentBlock(obj);
  }
}
