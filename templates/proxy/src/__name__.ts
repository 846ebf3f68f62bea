// {{name}}: a Cordon proxy. It offers the slash command /{{name}}, answers it itself, and passes
// everything else on unchanged (every hook's default forwards). The SDK's README lists the hooks
// and helpers: node_modules/@cordon/sdk-as/README.md.
import { PromptRequest, Proxy, register } from "@cordon/sdk-as";

class {{className}} extends Proxy {
  constructor() {
    super();
    // Merged into the agent's available_commands_update, so the client offers it.
    this.addCommand("{{name}}", "Answered by the {{name}} proxy, not the agent", "what to greet");
  }

  onPrompt(prompt: PromptRequest): void {
    if (prompt.command == "{{name}}") {
      const who = prompt.commandInput.length > 0 ? prompt.commandInput : "world";
      const greeting = this.config.getString("greeting", "Hello");
      this.answerPrompt(prompt, `${greeting}, ${who}! (from the {{name}} proxy)`);
      return;
    }
    this.forward(prompt);
  }
}

register(new {{className}}());
