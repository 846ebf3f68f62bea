// context: prepends a configured text block to every `session/prompt`, the way an AGENTS.md adds
// standing instructions to each turn. Config: {"text": "..."}; with no text it passes prompts on
// untouched.
import { PromptRequest, Proxy, TextBlock, register } from "@cordon/sdk-as";

class Context extends Proxy {
  onPrompt(prompt: PromptRequest): void {
    const text = this.config.getString("text");
    if (text.length > 0) prompt.prepend(TextBlock.of(text));
    this.forward(prompt);
  }
}

register(new Context());
